#include "services/lobby/fake_player_store.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace courtpiece::lobby {

absl::Status FakePlayerStore::Injected() {
  if (fail_calls_ == 0) return absl::OkStatus();
  --fail_calls_;
  return fail_status_;
}

void FakePlayerStore::FailNext(int calls, absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_calls_ = calls;
  fail_status_ = std::move(status);
}

absl::StatusOr<SignInResult> FakePlayerStore::SignIn(const std::string& device_hash,
                                                     const NewPlayer& candidate,
                                                     const std::optional<RefreshTokenRecord>& token,
                                                     absl::Time now, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  auto device = devices_.find(device_hash);
  if (device != devices_.end()) {
    const PlayerRecord& player = players_.at(device->second);
    const bool issue = token.has_value() && player.wallet_opened;
    if (issue) tokens_[token->token_hash] = Token{player.player_id, token->expires_at};
    return SignInResult{player, false, issue};
  }
  if (players_.count(candidate.player_id) > 0) {
    return absl::AlreadyExistsError(absl::StrCat("player id ", candidate.player_id, " taken"));
  }
  PlayerRecord player{.player_id = candidate.player_id,
                      .display_name = candidate.display_name,
                      .avatar_id = candidate.avatar_id,
                      .created_at = now};
  players_[player.player_id] = player;
  devices_[device_hash] = player.player_id;
  return SignInResult{std::move(player), true, false};
}

absl::StatusOr<PlayerRecord> FakePlayerStore::IssueRefreshToken(const RefreshTokenRecord& token,
                                                                bool mark_wallet_opened, absl::Time,
                                                                absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  auto player = players_.find(token.player_id);
  if (player == players_.end()) return absl::NotFoundError("unknown player");
  if (mark_wallet_opened) player->second.wallet_opened = true;
  tokens_[token.token_hash] = Token{token.player_id, token.expires_at};
  return player->second;
}

absl::StatusOr<PlayerRecord> FakePlayerStore::RotateRefreshToken(const std::string& old_hash,
                                                                 const RefreshTokenRecord& next,
                                                                 absl::Time now, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  auto old = tokens_.find(old_hash);
  if (old == tokens_.end()) return absl::UnauthenticatedError("unknown refresh token");
  if (old->second.used) return absl::UnauthenticatedError("used refresh token");
  if (old->second.expires_at <= now) return absl::UnauthenticatedError("expired refresh token");
  old->second.used = true;
  tokens_[next.token_hash] = Token{old->second.player_id, next.expires_at};
  return players_.at(old->second.player_id);
}

absl::StatusOr<PlayerRecord> FakePlayerStore::GetPlayer(const std::string& player_id, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  auto player = players_.find(player_id);
  if (player == players_.end()) return absl::NotFoundError("unknown player");
  return player->second;
}

absl::StatusOr<std::vector<PlayerRecord>> FakePlayerStore::GetPlayers(
    const std::vector<std::string>& player_ids, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  ++get_players_calls_;
  std::set<std::string> wanted(player_ids.begin(), player_ids.end());
  std::vector<PlayerRecord> out;
  for (const std::string& id : wanted) {  // sorted by id, like the pg store
    auto player = players_.find(id);
    if (player != players_.end()) out.push_back(player->second);
  }
  return out;
}

absl::StatusOr<PlayerRecord> FakePlayerStore::UpdateProfile(const std::string& player_id,
                                                            const std::optional<std::string>& name,
                                                            std::optional<int> avatar_id,
                                                            absl::Time, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  auto player = players_.find(player_id);
  if (player == players_.end()) return absl::NotFoundError("unknown player");
  if (name.has_value()) player->second.display_name = *name;
  if (avatar_id.has_value()) player->second.avatar_id = *avatar_id;
  return player->second;
}

absl::Status FakePlayerStore::SetRole(const std::string& player_id, auth::Role role) {
  std::lock_guard<std::mutex> lock(mu_);
  auto player = players_.find(player_id);
  if (player == players_.end()) return absl::NotFoundError("unknown player");
  player->second.role = role;
  return absl::OkStatus();
}

size_t FakePlayerStore::player_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return players_.size();
}

size_t FakePlayerStore::device_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return devices_.size();
}

size_t FakePlayerStore::refresh_token_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tokens_.size();
}

bool FakePlayerStore::HasDeviceHash(const std::string& hash) const {
  std::lock_guard<std::mutex> lock(mu_);
  return devices_.count(hash) > 0;
}

int FakePlayerStore::get_players_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return get_players_calls_;
}

}  // namespace courtpiece::lobby
