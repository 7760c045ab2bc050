// Records: the lobby's side of what tables record (records.proto), and the stats and admin
// reads built on them (docs/lobby.md "Records and stats").
//
// Writes (Record*): validated (InvalidArgument naming the field), then applied by the store
// in ONE transaction, idempotent by key: the same key with the same content answers OK with
// replayed = true and changes nothing; the same key with other content is AlreadyExists and
// changes nothing. "The same content" is a SHA-256 over a canonical encoding of every field
// of the record (CanonicalHash). A store failure that may have committed (Unavailable,
// Aborted) is retried with the same key, at most store_attempts_max times in all and never
// past the deadline; DeadlineExceeded when the deadline passed before a store call.
// RecordTableClosed calls `on_table_closed(table_id)` after every OK (a replay too: the
// first call may have been lost in a crash), so the callback must be idempotent.
//
// Trust: the records come from table instances on the internal network (the gateway never
// exposes LobbyRecords); the domain checks the records are well formed and consistent, and
// trusts counts_for_stats (the table applies RULES.md §4.12).
// Thread-safety: safe for concurrent use (the store is; the callback must be).
#ifndef COURTPIECE_SERVICES_LOBBY_RECORDS_H_
#define COURTPIECE_SERVICES_LOBBY_RECORDS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "services/lobby/records_store.h"

namespace courtpiece::lobby {

struct RecordsOptions {
  int store_attempts_max = 3;
  int recent_results_default = 20;
  int recent_results_max = 100;
  int quits_default = 50;
  int quits_max = 500;
  int rounds_default = 100;
  int rounds_max = 1000;
};

// A player's stats: one entry per game type (sorted by game) and their sum (game "").
struct StatsView {
  std::string player_id;
  std::vector<GameTypeStats> by_game;
  GameTypeStats total;
};

// The game types of RULES.md §2.
bool IsGameType(std::string_view game);
// Lowercase hex SHA-256 of the canonical encoding of each record (every field, in a fixed
// order, length-prefixed).
std::string CanonicalHash(const GameRecordData& r);
std::string CanonicalHash(const QuitRecordData& r);
std::string CanonicalHash(const RoundRecordData& r);
std::string CanonicalHash(const TableClosedData& r);

absl::Status ValidateGame(const GameRecordData& r);
absl::Status ValidateQuit(const QuitRecordData& r);
absl::Status ValidateRound(const RoundRecordData& r);
absl::Status ValidateTableClosed(const TableClosedData& r);
// A table or player id as the records carry it: 1..64 chars of [A-Za-z0-9_-] (as the table
// service).
absl::Status ValidateId(std::string_view field, std::string_view id);

class Records {
 public:
  using TableClosedFn = std::function<void(std::string_view table_id)>;
  // `store` and `clock` must outlive this. `on_table_closed` may be empty.
  Records(RecordsStore& store, const Clock& clock, RecordsOptions options,
          TableClosedFn on_table_closed);

  absl::StatusOr<ApplyResult> RecordGame(const GameRecordData& record, absl::Time deadline);
  absl::StatusOr<ApplyResult> RecordQuit(const QuitRecordData& record, absl::Time deadline);
  absl::StatusOr<ApplyResult> RecordRound(const RoundRecordData& record, absl::Time deadline);
  absl::StatusOr<ApplyResult> RecordTableClosed(const TableClosedData& record, absl::Time deadline);

  // Reads. `limit` 0 is the default; above the maximum is InvalidArgument naming it.
  absl::StatusOr<StatsView> Stats(std::string_view player, absl::Time deadline);
  absl::StatusOr<std::vector<PlayerGameResult>> RecentResults(std::string_view player, int limit,
                                                              absl::Time deadline);
  absl::StatusOr<std::vector<QuitRow>> Quits(std::string_view player, int limit,
                                             absl::Time deadline);
  absl::StatusOr<int64_t> QuitsTotal(std::string_view player, absl::Time deadline);
  absl::StatusOr<std::vector<RoundRow>> Rounds(std::string_view table_id, uint64_t after_round,
                                               int limit, absl::Time deadline);

 private:
  template <typename Fn>
  auto WithRetries(absl::Time deadline, Fn fn) -> decltype(fn());
  absl::StatusOr<int> Limit(std::string_view name, int limit, int fallback, int max) const;

  RecordsStore& store_;
  const Clock& clock_;
  const RecordsOptions options_;
  const TableClosedFn on_table_closed_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_RECORDS_H_
