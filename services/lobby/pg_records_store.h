// PgRecordsStore: the RecordsStore in PostgreSQL (schema `lobby`, migrations/0003_records.sql),
// through libs/storage's PgPool. Each Apply* is ONE transaction (READ COMMITTED): it first
// claims the key in lobby.record_keys (INSERT ... ON CONFLICT DO NOTHING: a concurrent
// duplicate waits for the first one's commit and then sees its row), compares the stored
// content hash on a conflict, and only for a new key writes the record and its stats. Stats
// rows are upserted in player-id order, so concurrent games never deadlock on them; an
// Aborted transaction (deadlock, serialization) is re-run (RunWithRetry), the key claim
// included. Unavailable (connection broken, commit outcome unknown) is passed up for the
// domain to retry with the key. Reads run with RunIdempotent.
// The pool's statement timeout bounds every statement (the deadline is not used here).
// Errors: AlreadyExists for a key applied with other content; an unexpected database error
// whose code would pass its text to clients becomes Internal.
// Thread-safety: safe for concurrent use (as PgPool).
#ifndef COURTPIECE_SERVICES_LOBBY_PG_RECORDS_STORE_H_
#define COURTPIECE_SERVICES_LOBBY_PG_RECORDS_STORE_H_

#include "courtpiece/storage/pg_pool.h"
#include "services/lobby/records_store.h"

namespace courtpiece::lobby {

class PgRecordsStore final : public RecordsStore {
 public:
  // `pool` must outlive the store.
  explicit PgRecordsStore(storage::PgPool& pool) : pool_(pool) {}

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

 private:
  using WriteFn = std::function<absl::Status(storage::PgTransaction&)>;
  // Claims the key, then (new key only) runs `write`; one transaction.
  absl::StatusOr<ApplyResult> Apply(std::string_view key, std::string_view kind,
                                    std::string_view content_hash, absl::Time at,
                                    const WriteFn& write);

  storage::PgPool& pool_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_PG_RECORDS_STORE_H_
