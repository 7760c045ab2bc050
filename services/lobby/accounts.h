// Accounts: the decisions behind the lobby's Accounts service (lobby.proto): guest sign-in
// by device secret, session tokens (access: short-lived Ed25519 token; refresh: opaque,
// single use), the profile. Pure C++ over PlayerStore, WalletPort, the token signer and a
// Clock; no I/O of its own.
//
// GuestLogin(device_secret, display_name):
//   INVALID_ARGUMENT  device secret not 32..128 chars of [A-Za-z0-9_-]; a non-empty name
//                     that breaks the name rules (display_name.h) (empty: "Guest <4 hex>")
//   UNAVAILABLE       the wallet did not open the new player's account: nothing is lost,
//                     the player exists with wallet_opened = false, and the next GuestLogin
//                     of that device opens it (the wallet's OpenAccount is idempotent)
//   Session.created is true when this call finished making the player: it opened the
//   account (so a retry after UNAVAILABLE still reports the creation).
// Refresh(refresh_token): UNAUTHENTICATED for a malformed, unknown, used or expired token;
//   the role in the new access token is the one stored now (a revoke shows within one
//   access-token lifetime).
// GetProfile / UpdateProfile(player_id from the verified token): NOT_FOUND unknown player;
//   coins come from the wallet, -1 if it does not answer within wallet_read_timeout.
// GetPublicProfiles(player_ids): any signed-in caller (the server checks the token). At most
//   public_profiles_max (16) ids, duplicates counted, each IsValidPlayerId, else
//   INVALID_ARGUMENT naming the first bad one; the known players, sorted by id, duplicates
//   once; unknown ids (and the table's bot ids, "bot-<seat>": not players) are absent. No
//   ids: an empty answer without a store call. One store read, no wallet call.
// Every call checks its deadline before each store or wallet call (DEADLINE_EXCEEDED).
// Storage errors keep their codes (UNAVAILABLE, ABORTED, DEADLINE_EXCEEDED); a few
// Aborted/AlreadyExists (a random id collision) are retried, bounded by store_attempts_max.
// Thread-safety: thread-safe (the store, the port and the signer are).
#ifndef COURTPIECE_SERVICES_LOBBY_ACCOUNTS_H_
#define COURTPIECE_SERVICES_LOBBY_ACCOUNTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/common/clock.h"
#include "services/lobby/player_store.h"
#include "services/lobby/wallet_port.h"

namespace courtpiece::lobby {

struct AccountsOptions {
  absl::Duration access_ttl = absl::Minutes(15);
  absl::Duration refresh_ttl = absl::Hours(24 * 30);
  int avatar_max = 64;                                           // avatar ids are 1..avatar_max
  absl::Duration wallet_read_timeout = absl::Milliseconds(500);  // the profile's coins
  int store_attempts_max = 3;
  int public_profiles_max = 16;  // ids per GetPublicProfiles call
};

struct Session {
  std::string player_id;
  auth::Role role = auth::Role::kPlayer;
  std::string access_token;
  int64_t access_expires_at_ms = 0;
  std::string refresh_token;
  int64_t refresh_expires_at_ms = 0;
  bool created = false;
};

struct Profile {
  std::string player_id;
  std::string display_name;
  int avatar_id = 0;
  auth::Role role = auth::Role::kPlayer;
  int64_t coins = -1;  // -1: the wallet did not answer in time
  int64_t created_at_ms = 0;
};

// What any signed-in player may see of another (no coins, no role).
struct PublicProfile {
  std::string player_id;
  std::string display_name;
  int avatar_id = 0;
};

// Where new player ids and refresh tokens come from (random in production; tests inject).
struct AccountsRandomness {
  std::function<std::string()> player_id;      // IsValidPlayerId
  std::function<std::string()> refresh_token;  // RefreshTokenLooksValid
};
// "p-" and 24 lowercase hex digits (96 random bits); refresh tokens: 32 random bytes,
// base64url (43 chars).
AccountsRandomness RealRandomness();
bool RefreshTokenLooksValid(std::string_view token);

class Accounts {
 public:
  static absl::Status ValidateOptions(const AccountsOptions& options);

  // Every reference must outlive the Accounts; `options` must pass ValidateOptions.
  Accounts(PlayerStore& store, WalletPort& wallet, const auth::TokenSigner& signer,
           const Clock& clock, AccountsOptions options,
           AccountsRandomness randomness = RealRandomness());

  absl::StatusOr<Session> GuestLogin(std::string_view device_secret, std::string_view display_name,
                                     absl::Time deadline);
  absl::StatusOr<Session> Refresh(std::string_view refresh_token, absl::Time deadline);
  absl::StatusOr<Profile> GetProfile(const std::string& player_id, absl::Time deadline);
  // display_name empty and avatar_id 0 mean unchanged.
  absl::StatusOr<Profile> UpdateProfile(const std::string& player_id, std::string_view display_name,
                                        int avatar_id, absl::Time deadline);

  absl::StatusOr<std::vector<PublicProfile>> GetPublicProfiles(
      const std::vector<std::string>& player_ids, absl::Time deadline);

  const AccountsOptions& options() const { return options_; }

 private:
  absl::Status CheckDeadline(absl::Time deadline) const;
  absl::StatusOr<SignInResult> SignIn(const std::string& device_hash, std::string_view name,
                                      const RefreshTokenRecord& token, absl::Time deadline);
  // Access token + a fresh refresh token stored for the player.
  absl::StatusOr<Session> NewSession(const std::string& player_id, bool mark_wallet_opened,
                                     absl::Time deadline);
  Session SessionFor(const PlayerRecord& player, std::string refresh_token,
                     absl::Time refresh_expires_at) const;
  Profile WithCoins(const PlayerRecord& player, absl::Time deadline);

  PlayerStore& store_;
  WalletPort& wallet_;
  const auth::TokenSigner& signer_;
  const Clock& clock_;
  const AccountsOptions options_;
  const AccountsRandomness randomness_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_ACCOUNTS_H_
