// PlayerStore: the accounts' storage interface (players, devices, refresh tokens). The real
// one is PgPlayerStore (schema `lobby`, migrations/0001_accounts.sql); FakePlayerStore is the
// in-memory one for unit tests.
//
// Contract (both implementations):
//  - Secrets never reach the store: devices and refresh tokens are keyed by a 32-byte hash
//    (auth::SecretHash) computed by the domain.
//  - SignIn is find-or-create by device hash and atomic: concurrent calls with the same hash
//    make ONE player; all of them return it (created = true for exactly one).
//  - RotateRefreshToken uses up `old_hash` and stores `next` in one transaction: of two
//    concurrent calls with the same old hash one succeeds, the other gets Unauthenticated.
//    Unauthenticated messages say "unknown", "used" or "expired" refresh token.
//  - Errors: NotFound (unknown player), Unauthenticated (refresh), Unavailable /
//    DeadlineExceeded / Aborted (storage; the write may or may not have happened only for
//    Unavailable), Internal (a broken invariant).
// Thread-safety: implementations are thread-safe.
#ifndef COURTPIECE_SERVICES_LOBBY_PLAYER_STORE_H_
#define COURTPIECE_SERVICES_LOBBY_PLAYER_STORE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/auth/token.h"

namespace courtpiece::lobby {

struct PlayerRecord {
  std::string player_id;
  std::string display_name;
  int avatar_id = 1;
  auth::Role role = auth::Role::kPlayer;
  bool wallet_opened = false;  // the wallet's OpenAccount has succeeded for this player
  absl::Time created_at;
};

struct SignInResult {
  PlayerRecord player;
  bool created = false;         // this call made the player (device was unknown)
  bool refresh_issued = false;  // the `token` given to SignIn was stored
};

struct NewPlayer {
  std::string player_id;  // random; used only if the device is unknown
  std::string display_name;
  int avatar_id = 1;
};

struct RefreshTokenRecord {
  std::string token_hash;  // 32 bytes
  std::string player_id;
  absl::Time expires_at;
};

class PlayerStore {
 public:
  virtual ~PlayerStore() = default;

  // The device's player, or a new one (`candidate`) bound to the device. With `token`, when
  // the player existed and its wallet account is opened, also stores the token for it
  // (token->player_id is ignored) in the same transaction and sets refresh_issued: a
  // returning device signs in with one write.
  virtual absl::StatusOr<SignInResult> SignIn(const std::string& device_hash,
                                              const NewPlayer& candidate,
                                              const std::optional<RefreshTokenRecord>& token,
                                              absl::Time now, absl::Time deadline) = 0;
  // Stores a fresh refresh token and, with `mark_wallet_opened`, records that the player's
  // wallet account exists. Returns the player as it is now. NotFound for an unknown player.
  virtual absl::StatusOr<PlayerRecord> IssueRefreshToken(const RefreshTokenRecord& token,
                                                         bool mark_wallet_opened, absl::Time now,
                                                         absl::Time deadline) = 0;
  // Uses up the token whose hash is `old_hash` (unused, expires_at > now) and stores `next`
  // for the same player (next.player_id is ignored). Returns the player as it is now (its
  // current role).
  virtual absl::StatusOr<PlayerRecord> RotateRefreshToken(const std::string& old_hash,
                                                          const RefreshTokenRecord& next,
                                                          absl::Time now, absl::Time deadline) = 0;
  virtual absl::StatusOr<PlayerRecord> GetPlayer(const std::string& player_id,
                                                 absl::Time deadline) = 0;
  // The players among `player_ids` (distinct ids), sorted by id; unknown ids are absent (no
  // error). One read.
  virtual absl::StatusOr<std::vector<PlayerRecord>> GetPlayers(
      const std::vector<std::string>& player_ids, absl::Time deadline) = 0;
  // Sets what is given (nullopt: unchanged). NotFound for an unknown player.
  virtual absl::StatusOr<PlayerRecord> UpdateProfile(const std::string& player_id,
                                                     const std::optional<std::string>& name,
                                                     std::optional<int> avatar_id, absl::Time now,
                                                     absl::Time deadline) = 0;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_PLAYER_STORE_H_
