// FakeRecordsStore: RecordsStore in memory, with the same contract, plus failure injection
// for tests: FailNext(n, status) fails the next n calls (nothing applied);
// LoseNextReplies(n) applies the next n Apply* calls and then answers Unavailable (a commit
// whose reply was lost).
// Thread-safety: safe for concurrent use (one mutex).
#ifndef COURTPIECE_SERVICES_LOBBY_FAKE_RECORDS_STORE_H_
#define COURTPIECE_SERVICES_LOBBY_FAKE_RECORDS_STORE_H_

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "services/lobby/records_store.h"

namespace courtpiece::lobby {

class FakeRecordsStore final : public RecordsStore {
 public:
  absl::StatusOr<ApplyResult> ApplyGame(const GameRecordData& record, std::string_view content_hash,
                                        absl::Time at, absl::Time deadline) override;
  absl::StatusOr<ApplyResult> ApplyQuit(const QuitRecordData& record, std::string_view content_hash,
                                        absl::Time at, absl::Time deadline) override;
  absl::StatusOr<ApplyResult> ApplyRound(const RoundRecordData& record,
                                         std::string_view content_hash, absl::Time at,
                                         absl::Time deadline) override;
  absl::StatusOr<ApplyResult> ApplyTableClosed(const TableClosedData& record,
                                               std::string_view content_hash, absl::Time at,
                                               absl::Time deadline) override;
  absl::StatusOr<std::vector<GameTypeStats>> Stats(std::string_view player,
                                                   absl::Time deadline) override;
  absl::StatusOr<std::vector<PlayerGameResult>> RecentResults(std::string_view player, int limit,
                                                              absl::Time deadline) override;
  absl::StatusOr<std::vector<QuitRow>> Quits(std::string_view player, int limit,
                                             absl::Time deadline) override;
  absl::StatusOr<int64_t> QuitsTotal(std::string_view player, absl::Time deadline) override;
  absl::StatusOr<std::vector<RoundRow>> Rounds(std::string_view table_id, uint64_t after_round,
                                               int limit, absl::Time deadline) override;
  absl::StatusOr<bool> TableClosed(std::string_view table_id, absl::Time deadline) override;

  void FailNext(int n, absl::Status status);
  void LoseNextReplies(int n);
  int calls() const;
  size_t keys() const;

 private:
  struct Key {
    std::string kind, hash;
  };
  // Checks the key under mu_: replayed / AlreadyExists / new (nullopt = go on and apply).
  std::optional<absl::StatusOr<ApplyResult>> Check(const std::string& key, std::string_view kind,
                                                   std::string_view hash);
  absl::StatusOr<ApplyResult> Applied();
  absl::Status Injected();

  mutable std::mutex mu_;
  int calls_ = 0;
  int fail_next_ = 0;
  absl::Status fail_with_;
  int lose_next_ = 0;
  std::map<std::string, Key> keys_;
  std::map<std::pair<std::string, std::string>, GameTypeStats> stats_;  // (player, game)
  std::vector<std::pair<std::string, PlayerGameResult>> results_;       // (player, result)
  std::vector<std::pair<std::string, QuitRow>> quits_;                  // (player, quit)
  std::map<std::pair<std::string, uint64_t>, RoundRow> rounds_;         // (table, round)
  std::map<std::string, absl::Time> closed_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_FAKE_RECORDS_STORE_H_
