// PgModerationStore: the ModerationStore in PostgreSQL (schema `moderation`,
// migrations/0001_moderation.sql), through libs/storage's PgPool. SQL lives only here.
//
// - Each call is ONE transaction (READ COMMITTED). Writes run with RunWithRetry (re-run on
//   Aborted: deadlock, serialization); reads with RunIdempotent (also on Unavailable).
//   Unavailable from a write means the commit outcome is unknown: the caller retries with
//   its key (FileReport) or its (table, round, author) (InsertNote).
// - Expected outcomes (no_note, no_report, already_resolved, not_muted, reported) are
//   decided from row values inside the transaction and returned as statuses; a database
//   error whose code would carry its text to a client (a CHECK or unique violation, a
//   RAISE) becomes Internal.
// - Deadlines: a call whose deadline has passed returns DEADLINE_EXCEEDED without a round
//   trip; otherwise every statement runs under SET LOCAL statement_timeout = the time left
//   (at most the pool's statement_timeout_ms), and a statement cut short is
//   DEADLINE_EXCEEDED.
// - Serialization of writers: FileReport, ResolveReport and DeleteUnannouncedNote lock the
//   note row first; the purge takes its batch FOR UPDATE SKIP LOCKED (two purging instances
//   never take the same note, and a note being reported is skipped until the next run);
//   AddMute, LiftMute and a resolution's mute take a per-player advisory transaction lock,
//   so a player has at most one active mute.
// - Gauges' active_mutes uses the server's now() (the one clock this store reads).
// Thread-safety: safe for concurrent use (as PgPool).
#ifndef COURTPIECE_SERVICES_MODERATION_PG_MODERATION_STORE_H_
#define COURTPIECE_SERVICES_MODERATION_PG_MODERATION_STORE_H_

#include <functional>

#include "courtpiece/storage/pg_pool.h"
#include "services/moderation/moderation_store.h"

namespace courtpiece::moderation {

class PgModerationStore final : public ModerationStore {
 public:
  // `pool` must outlive the store.
  explicit PgModerationStore(storage::PgPool& pool) : pool_(pool) {}

  absl::StatusOr<NoteRow> InsertNote(const NoteRow& note, const std::string& audio, bool* inserted,
                                     absl::Time deadline) override;
  absl::StatusOr<NoteRow> GetNote(const std::string& note_id, absl::Time deadline) override;
  absl::StatusOr<std::string> GetAudio(const std::string& note_id, absl::Time deadline) override;
  absl::StatusOr<std::optional<NoteRow>> FindNote(const std::string& table_id, uint64_t round,
                                                  const std::string& author,
                                                  absl::Time deadline) override;
  absl::Status DeleteUnannouncedNote(const std::string& note_id, absl::Time deadline) override;

  absl::StatusOr<ReportRow> FileReport(const std::string& key, const std::string& note_id,
                                       const std::string& reporter, absl::Time now, bool* replayed,
                                       absl::Time deadline) override;
  absl::StatusOr<ReportPage> ListReports(const ReportFilter& filter, absl::Time deadline) override;
  absl::StatusOr<ReportRow> GetReport(int64_t report_id, absl::Time deadline) override;
  absl::StatusOr<std::vector<ReportRow>> ReportsOfNote(const std::string& note_id,
                                                       absl::Time deadline) override;
  absl::StatusOr<std::vector<ReportRow>> ReportsOfAuthor(const std::string& author, int limit,
                                                         absl::Time deadline) override;
  absl::StatusOr<Resolved> ResolveReport(const Resolution& resolution,
                                         absl::Time deadline) override;

  absl::StatusOr<std::optional<MuteRow>> ActiveMute(const std::string& player_id, absl::Time now,
                                                    absl::Time deadline) override;
  absl::StatusOr<MuteRow> AddMute(const MuteRow& mute, const AuditRow& audit,
                                  absl::Time deadline) override;
  absl::StatusOr<MuteRow> LiftMute(const std::string& player_id, const std::string& admin_id,
                                   absl::Time now, const AuditRow& audit,
                                   absl::Time deadline) override;
  absl::StatusOr<MutePage> ListMutes(const MuteFilter& filter, absl::Time now,
                                     absl::Time deadline) override;

  absl::Status AppendAudit(const AuditRow& audit, absl::Time deadline) override;
  absl::StatusOr<AuditPage> ListAudit(const AuditFilter& filter, absl::Time deadline) override;

  absl::StatusOr<PurgeResult> Purge(absl::Time now, int batch_max, absl::Time deadline) override;
  absl::StatusOr<StoreGauges> Gauges(absl::Time deadline) override;

 private:
  // The body of a transaction: returns an error to roll back. An expected outcome is set in
  // `outcome` (and returned), so it reaches the caller as it is.
  using Body = std::function<absl::Status(storage::PgTransaction&, absl::Status& outcome)>;
  absl::Status Write(absl::Time deadline, const Body& body);
  absl::Status Read(absl::Time deadline, const Body& body);
  absl::Status Run(bool write, absl::Time deadline, const Body& body);

  storage::PgPool& pool_;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_PG_MODERATION_STORE_H_
