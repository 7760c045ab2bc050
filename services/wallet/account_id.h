// Account ids of the ledger, as clients see them and as they are stored.
//
//   "player:<player-id>"      a player's account (<player-id>: 1..64 of [A-Za-z0-9_-])
//   "house"                   the house, as clients name it
//   "pot:<table-id>:<round>"  a pot (<table-id> as a player id; <round>: canonical decimal)
//   "house:<n>"               a house shard: internal only, never accepted from a client
//
// Pure functions; thread-safe.
#ifndef COURTPIECE_SERVICES_WALLET_ACCOUNT_ID_H_
#define COURTPIECE_SERVICES_WALLET_ACCOUNT_ID_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace courtpiece::wallet {

enum class AccountKind { kPlayer, kHouse, kPot };

inline constexpr absl::string_view kHouseAccount = "house";
inline constexpr int kNameLengthMax = 64;

// The kind of a client-supplied account id; InvalidArgument when malformed (house shards
// included: they are internal).
absl::StatusOr<AccountKind> ParseAccountId(absl::string_view account_id);

// True for 1..64 chars of [A-Za-z0-9_-] (player ids, table ids).
bool IsValidName(absl::string_view name);

std::string PlayerAccountId(absl::string_view player_id);
std::string HouseShardId(int shard);
bool IsHouseShard(absl::string_view account_id);

// Stable across builds and machines (FNV-1a 64), used to pick a house shard for a key.
uint64_t StableHash(absl::string_view text);

}  // namespace courtpiece::wallet

#endif  // COURTPIECE_SERVICES_WALLET_ACCOUNT_ID_H_
