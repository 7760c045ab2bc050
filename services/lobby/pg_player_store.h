// PgPlayerStore: PlayerStore (player_store.h) on Postgres, schema `lobby`
// (migrations/0001_accounts.sql), through storage::PgPool. Also the admin operations of
// courtpiece-admin (not part of the PlayerStore interface: never reachable from the API).
//
// SignIn is one statement (one round trip, one commit): INSERT the device ON CONFLICT DO
// UPDATE its last login (a concurrent sign-in of the same device waits for the other's
// commit), then the player row when the device row was new (the device's foreign key is
// deferred to commit), else read the existing player and store the refresh token. Reads
// retry on Unavailable (RunIdempotent); writes only on Aborted.
// Thread-safety: thread-safe (the pool is).
#ifndef COURTPIECE_SERVICES_LOBBY_PG_PLAYER_STORE_H_
#define COURTPIECE_SERVICES_LOBBY_PG_PLAYER_STORE_H_

#include <string>
#include <vector>

#include "courtpiece/storage/pg_pool.h"
#include "services/lobby/player_store.h"

namespace courtpiece::lobby {

struct AdminGrant {
  std::string player_id;
  std::string action;  // "grant" / "revoke"
  std::string operator_name;
  std::string reason;
  absl::Time at;
};

struct AdminEntry {
  std::string player_id;
  std::string display_name;
  absl::Time granted_at;  // the latest grant
  std::string granted_by;
};

class PgPlayerStore final : public PlayerStore {
 public:
  explicit PgPlayerStore(storage::PgPool& pool) : pool_(pool) {}

  absl::StatusOr<SignInResult> SignIn(const std::string& device_hash, const NewPlayer& candidate,
                                      const std::optional<RefreshTokenRecord>& token,
                                      absl::Time now, absl::Time deadline) override;
  absl::StatusOr<PlayerRecord> IssueRefreshToken(const RefreshTokenRecord& token,
                                                 bool mark_wallet_opened, absl::Time now,
                                                 absl::Time deadline) override;
  absl::StatusOr<PlayerRecord> RotateRefreshToken(const std::string& old_hash,
                                                  const RefreshTokenRecord& next, absl::Time now,
                                                  absl::Time deadline) override;
  absl::StatusOr<PlayerRecord> GetPlayer(const std::string& player_id,
                                         absl::Time deadline) override;
  // One statement, one round trip: `id = ANY($1::text[])` (the primary key), sorted by id
  // in byte order. Unavailable is retried (a read).
  absl::StatusOr<std::vector<PlayerRecord>> GetPlayers(const std::vector<std::string>& player_ids,
                                                       absl::Time deadline) override;
  absl::StatusOr<PlayerRecord> UpdateProfile(const std::string& player_id,
                                             const std::optional<std::string>& name,
                                             std::optional<int> avatar_id, absl::Time now,
                                             absl::Time deadline) override;

  // courtpiece-admin. SetRole writes the role and its audit row in one transaction.
  // NotFound unknown player; FailedPrecondition when the player has that role already
  // (nothing written). `reason` 1..500 chars, `operator_name` 1..128 (InvalidArgument).
  absl::Status SetRole(const std::string& player_id, auth::Role role,
                       const std::string& operator_name, const std::string& reason);
  absl::StatusOr<std::vector<AdminEntry>> ListAdmins();
  // The audit rows of one player, oldest first ("" = every player).
  absl::StatusOr<std::vector<AdminGrant>> ListGrants(const std::string& player_id);

 private:
  storage::PgPool& pool_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_PG_PLAYER_STORE_H_
