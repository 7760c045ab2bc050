#include "services/lobby/fake_records_store.h"

#include <algorithm>

namespace courtpiece::lobby {

void FakeRecordsStore::FailNext(int n, absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_ = n;
  fail_with_ = std::move(status);
}

void FakeRecordsStore::LoseNextReplies(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  lose_next_ = n;
}

int FakeRecordsStore::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

size_t FakeRecordsStore::keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return keys_.size();
}

absl::Status FakeRecordsStore::Injected() {
  ++calls_;
  if (fail_next_ > 0) {
    --fail_next_;
    return fail_with_;
  }
  return absl::OkStatus();
}

std::optional<absl::StatusOr<ApplyResult>> FakeRecordsStore::Check(const std::string& key,
                                                                   std::string_view kind,
                                                                   std::string_view hash) {
  if (absl::Status s = Injected(); !s.ok()) return absl::StatusOr<ApplyResult>(s);
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    keys_[key] = Key{std::string(kind), std::string(hash)};
    return std::nullopt;
  }
  if (it->second.kind != kind || it->second.hash != hash) {
    return absl::StatusOr<ApplyResult>(
        absl::AlreadyExistsError("the key was recorded before with other content"));
  }
  return absl::StatusOr<ApplyResult>(ApplyResult{.replayed = true});
}

absl::StatusOr<ApplyResult> FakeRecordsStore::Applied() {
  if (lose_next_ > 0) {
    --lose_next_;
    return absl::UnavailableError("fake: committed, reply lost");
  }
  return ApplyResult{.replayed = false};
}

absl::StatusOr<ApplyResult> FakeRecordsStore::ApplyGame(const GameRecordData& r,
                                                        std::string_view hash, absl::Time at,
                                                        absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto done = Check(r.key, "game", hash)) return *done;
  for (const GamePlayerRecord& p : r.players) {
    results_.push_back({p.player, PlayerGameResult{.table_id = r.table_id,
                                                   .game_no = r.game_no,
                                                   .game = r.game,
                                                   .scores = r.scores,
                                                   .winning_team = r.winning_team,
                                                   .won = p.won,
                                                   .counts_for_stats = r.counts_for_stats,
                                                   .recorded_at = at}});
    if (!r.counts_for_stats) continue;
    GameTypeStats& s = stats_[{p.player, r.game}];
    s.game = r.game;
    s.played += 1;
    s.won += p.won ? 1 : 0;
    s.lost += p.won ? 0 : 1;
    s.courts += r.courts[p.seat % 2];
    s.goon_courts += r.goon_courts[p.seat % 2];
  }
  return Applied();
}

absl::StatusOr<ApplyResult> FakeRecordsStore::ApplyQuit(const QuitRecordData& r,
                                                        std::string_view hash, absl::Time at,
                                                        absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto done = Check(r.key, "quit", hash)) return *done;
  quits_.push_back(
      {r.player,
       QuitRow{.table_id = r.table_id, .game_no = r.game_no, .game = r.game, .recorded_at = at}});
  GameTypeStats& s = stats_[{r.player, r.game}];
  s.game = r.game;
  s.quits += 1;
  return Applied();
}

absl::StatusOr<ApplyResult> FakeRecordsStore::ApplyRound(const RoundRecordData& r,
                                                         std::string_view hash, absl::Time at,
                                                         absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto done = Check(r.key, "round", hash)) return *done;
  rounds_[{r.table_id, r.round}] = RoundRow{.round = r.round,
                                            .seed_hex = r.seed_hex,
                                            .result = r.result,
                                            .seed_only_to = r.seed_only_to,
                                            .recorded_at = at};
  return Applied();
}

absl::StatusOr<ApplyResult> FakeRecordsStore::ApplyTableClosed(const TableClosedData& r,
                                                               std::string_view hash, absl::Time at,
                                                               absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto done = Check(r.key, "closed", hash)) return *done;
  closed_[r.table_id] = at;
  return Applied();
}

absl::StatusOr<std::vector<GameTypeStats>> FakeRecordsStore::Stats(std::string_view player,
                                                                   absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  std::vector<GameTypeStats> out;
  for (const auto& [k, v] : stats_) {
    if (k.first == player) out.push_back(v);
  }
  return out;  // the map's order is by game within a player
}

absl::StatusOr<std::vector<PlayerGameResult>> FakeRecordsStore::RecentResults(
    std::string_view player, int limit, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  std::vector<PlayerGameResult> out;
  for (auto it = results_.rbegin(); it != results_.rend() && static_cast<int>(out.size()) < limit;
       ++it) {
    if (it->first == player) out.push_back(it->second);
  }
  return out;
}

absl::StatusOr<std::vector<QuitRow>> FakeRecordsStore::Quits(std::string_view player, int limit,
                                                             absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  std::vector<QuitRow> out;
  for (auto it = quits_.rbegin(); it != quits_.rend() && static_cast<int>(out.size()) < limit;
       ++it) {
    if (it->first == player) out.push_back(it->second);
  }
  return out;
}

absl::StatusOr<int64_t> FakeRecordsStore::QuitsTotal(std::string_view player, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  return static_cast<int64_t>(std::count_if(quits_.begin(), quits_.end(),
                                            [&](const auto& q) { return q.first == player; }));
}

absl::StatusOr<std::vector<RoundRow>> FakeRecordsStore::Rounds(std::string_view table_id,
                                                               uint64_t after_round, int limit,
                                                               absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  std::vector<RoundRow> out;
  for (auto it = rounds_.upper_bound({std::string(table_id), after_round});
       it != rounds_.end() && it->first.first == table_id && static_cast<int>(out.size()) < limit;
       ++it) {
    out.push_back(it->second);
  }
  return out;
}

absl::StatusOr<bool> FakeRecordsStore::TableClosed(std::string_view table_id, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(); !s.ok()) return s;
  return closed_.count(std::string(table_id)) > 0;
}

}  // namespace courtpiece::lobby
