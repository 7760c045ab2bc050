// FakePlayerStore: the in-memory PlayerStore (player_store.h), same contract, plus failure
// injection: FailNext(n, status) makes the next n calls return `status` with no effect.
// Thread-safety: thread-safe (one mutex).
#ifndef COURTPIECE_SERVICES_LOBBY_FAKE_PLAYER_STORE_H_
#define COURTPIECE_SERVICES_LOBBY_FAKE_PLAYER_STORE_H_

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "services/lobby/player_store.h"

namespace courtpiece::lobby {

class FakePlayerStore final : public PlayerStore {
 public:
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
  absl::StatusOr<std::vector<PlayerRecord>> GetPlayers(const std::vector<std::string>& player_ids,
                                                       absl::Time deadline) override;
  absl::StatusOr<PlayerRecord> UpdateProfile(const std::string& player_id,
                                             const std::optional<std::string>& name,
                                             std::optional<int> avatar_id, absl::Time now,
                                             absl::Time deadline) override;

  void FailNext(int calls, absl::Status status);
  // What courtpiece-admin does in Postgres: sets the role. NotFound for an unknown player.
  absl::Status SetRole(const std::string& player_id, auth::Role role);
  // Test views.
  size_t player_count() const;
  size_t device_count() const;
  size_t refresh_token_count() const;  // stored, used or not
  bool HasDeviceHash(const std::string& hash) const;
  int get_players_calls() const;  // GetPlayers calls that reached the store

 private:
  struct Token {
    std::string player_id;
    absl::Time expires_at;
    bool used = false;
  };
  absl::Status Injected();  // requires mu_

  mutable std::mutex mu_;
  std::map<std::string, PlayerRecord> players_;  // by id
  std::map<std::string, std::string> devices_;   // hash -> player id
  std::map<std::string, Token> tokens_;          // hash -> token
  int fail_calls_ = 0;
  int get_players_calls_ = 0;
  absl::Status fail_status_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_FAKE_PLAYER_STORE_H_
