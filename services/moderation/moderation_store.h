// ModerationStore: the durable state of the moderation service (docs/moderation.md
// "Storage"): voice notes and their audio, reports, mutes and the append-only audit log.
// pg_moderation_store.h is the real one (Postgres schema `moderation`); fake_moderation_
// store.h the in-memory one with the same contract and failure injection.
//
// Contract (every implementation):
// - Each call is one transaction: it happens whole or not at all.
// - Expected outcomes come back with exact codes and the reason word of moderation.proto at
//   the start of the message: NOT_FOUND ("no_note: ...", "no_report: ...", "not_muted: ..."),
//   FAILED_PRECONDITION ("already_resolved: ..."). UNAVAILABLE: the store is unreachable or
//   timed out (the caller may retry idempotent calls); DEADLINE_EXCEEDED past `deadline`.
// - Times are absl::Time; `now` is always the caller's (the store never reads a clock), so
//   tests drive retention and mutes with a fake clock.
// - Pages: `page_size` is already clamped by the caller (1..200); the page token is opaque
//   to the caller (an id as a decimal string); an empty next token means no more.
// Thread-safety: implementations are thread-safe.
#ifndef COURTPIECE_SERVICES_MODERATION_MODERATION_STORE_H_
#define COURTPIECE_SERVICES_MODERATION_MODERATION_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace courtpiece::moderation {

inline constexpr absl::Duration kNoteRetention = absl::Hours(24 * 7);  // RULES.md §5.5

struct NoteRow {
  std::string note_id;  // "n-" + 32 hex, chosen by the caller
  std::string table_id;
  uint64_t round = 0;
  std::string author;
  int64_t duration_ms = 0;
  std::string format;        // "webm/opus", ...
  std::string content_type;  // "audio/webm", ...
  int64_t size_bytes = 0;
  absl::Time created_at;
  bool purged = false;  // the audio is gone
};

enum class ReportStatus { kOpen = 1, kDismissed = 2, kActioned = 3 };

struct ReportRow {
  int64_t report_id = 0;  // assigned by the store, increasing
  std::string key;        // the table's idempotency key
  std::string note_id;
  std::string table_id;
  uint64_t round = 0;
  std::string author;
  std::string reporter;
  ReportStatus status = ReportStatus::kOpen;
  absl::Time reported_at;
  std::optional<absl::Time> resolved_at;
  std::string resolved_by;
  std::string resolution_reason;
};

struct MuteRow {
  int64_t mute_id = 0;  // assigned by the store
  std::string player_id;
  absl::Time created_at;
  std::optional<absl::Time> until;  // nullopt: until lifted
  std::string muted_by;
  std::string reason;
  int64_t report_id = 0;  // 0: none
  std::optional<absl::Time> lifted_at;
  std::string lifted_by;
};

struct AuditRow {
  int64_t audit_id = 0;  // assigned by the store
  std::string admin_id;
  std::string action;  // "resolve_report", "mute", "lift_mute", "listen_note"
  std::string target_player;
  int64_t report_id = 0;  // 0: none
  std::string note_id;
  std::string reason;
  std::string detail;
  absl::Time at;
};

struct ReportFilter {
  std::optional<ReportStatus> status;  // nullopt: any
  std::string author;                  // empty: any
  int page_size = 50;
  std::string page_token;
};
struct ReportPage {
  std::vector<ReportRow> reports;  // oldest first (by report_id)
  std::string next_page_token;
  int64_t open_total = 0;
};

struct MuteFilter {
  bool include_inactive = false;  // lifted or expired (until <= now) too
  std::string player_id;          // empty: any
  int page_size = 50;
  std::string page_token;
};
struct MutePage {
  std::vector<MuteRow> mutes;  // newest first (by mute_id)
  std::string next_page_token;
};

struct AuditFilter {
  std::string admin_id;       // empty: any
  std::string target_player;  // empty: any
  int page_size = 50;
  std::string page_token;
};
struct AuditPage {
  std::vector<AuditRow> entries;  // newest first (by audit_id)
  std::string next_page_token;
};

// What ResolveReport does, decided by the domain.
struct Resolution {
  int64_t report_id = 0;
  ReportStatus status = ReportStatus::kDismissed;  // kDismissed or kActioned
  std::string admin_id;
  std::string reason;
  std::optional<MuteRow> mute;  // kActioned: the author's new mute (replaces an active one)
  AuditRow audit;               // written in the same transaction
  absl::Time now;
};
struct Resolved {
  std::vector<ReportRow> reports;  // every report the resolution closed, oldest first
  std::optional<MuteRow> mute;
};

struct PurgeResult {
  int64_t notes_deleted = 0;  // unreported notes removed whole
  int64_t audio_deleted = 0;  // reported notes whose audio was removed (metadata kept)
  int64_t bytes_freed = 0;
};

struct StoreGauges {
  int64_t notes = 0;        // notes with audio
  int64_t audio_bytes = 0;  // sum of their sizes
  int64_t open_reports = 0;
  std::optional<absl::Time> oldest_open_report_at;
  int64_t active_mutes = 0;
};

class ModerationStore {
 public:
  virtual ~ModerationStore() = default;

  // --- notes ---
  // Stores the note and its audio with keep_until = created_at + kNoteRetention. When a
  // note with the same (table_id, round, author) exists, stores nothing and returns that
  // one with *inserted = false.
  virtual absl::StatusOr<NoteRow> InsertNote(const NoteRow& note, const std::string& audio,
                                             bool* inserted, absl::Time deadline) = 0;
  // NOT_FOUND "no_note: ..." when unknown.
  virtual absl::StatusOr<NoteRow> GetNote(const std::string& note_id, absl::Time deadline) = 0;
  // NOT_FOUND "no_note: ..." when unknown or purged.
  virtual absl::StatusOr<std::string> GetAudio(const std::string& note_id, absl::Time deadline) = 0;
  virtual absl::StatusOr<std::optional<NoteRow>> FindNote(const std::string& table_id,
                                                          uint64_t round, const std::string& author,
                                                          absl::Time deadline) = 0;
  // Deletes a note nobody has reported (the table refused to announce it). NOT_FOUND
  // "no_note" when unknown; FAILED_PRECONDITION when it has reports (then kept).
  virtual absl::Status DeleteUnannouncedNote(const std::string& note_id, absl::Time deadline) = 0;

  // --- reports ---
  // Files a report and holds the note (keep_until NULL). Idempotent: the same key, or the
  // same (note, reporter), returns the existing report with *replayed = true. NOT_FOUND
  // "no_note: ..." when the note is unknown.
  virtual absl::StatusOr<ReportRow> FileReport(const std::string& key, const std::string& note_id,
                                               const std::string& reporter, absl::Time now,
                                               bool* replayed, absl::Time deadline) = 0;
  virtual absl::StatusOr<ReportPage> ListReports(const ReportFilter& filter,
                                                 absl::Time deadline) = 0;
  // NOT_FOUND "no_report: ..." when unknown.
  virtual absl::StatusOr<ReportRow> GetReport(int64_t report_id, absl::Time deadline) = 0;
  // Every report on the note, oldest first.
  virtual absl::StatusOr<std::vector<ReportRow>> ReportsOfNote(const std::string& note_id,
                                                               absl::Time deadline) = 0;
  // The author's reports, newest first, at most `limit`.
  virtual absl::StatusOr<std::vector<ReportRow>> ReportsOfAuthor(const std::string& author,
                                                                 int limit,
                                                                 absl::Time deadline) = 0;
  // Closes the report and every other open report on its note with `status`, sets the
  // note's keep_until to now + kNoteRetention, adds the mute if any (lifting the author's
  // active one, lifted_by = the admin) and appends the audit row, all in one transaction.
  // NOT_FOUND "no_report"; FAILED_PRECONDITION "already_resolved" when the report is not
  // open (nothing changes).
  virtual absl::StatusOr<Resolved> ResolveReport(const Resolution& resolution,
                                                 absl::Time deadline) = 0;

  // --- mutes ---
  // The player's active mute at `now` (not lifted, and until is nullopt or after now).
  virtual absl::StatusOr<std::optional<MuteRow>> ActiveMute(const std::string& player_id,
                                                            absl::Time now,
                                                            absl::Time deadline) = 0;
  // Adds the mute (lifting an active one of the same player) and the audit row.
  virtual absl::StatusOr<MuteRow> AddMute(const MuteRow& mute, const AuditRow& audit,
                                          absl::Time deadline) = 0;
  // Lifts the active mute and appends the audit row. NOT_FOUND "not_muted: ..." when none.
  virtual absl::StatusOr<MuteRow> LiftMute(const std::string& player_id,
                                           const std::string& admin_id, absl::Time now,
                                           const AuditRow& audit, absl::Time deadline) = 0;
  virtual absl::StatusOr<MutePage> ListMutes(const MuteFilter& filter, absl::Time now,
                                             absl::Time deadline) = 0;

  // --- audit ---
  virtual absl::Status AppendAudit(const AuditRow& audit, absl::Time deadline) = 0;
  virtual absl::StatusOr<AuditPage> ListAudit(const AuditFilter& filter, absl::Time deadline) = 0;

  // --- retention and gauges ---
  // Deletes at most `batch_max` notes whose keep_until <= now, oldest keep_until first:
  // unreported ones whole, reported ones keep their row and lose their audio (purged).
  virtual absl::StatusOr<PurgeResult> Purge(absl::Time now, int batch_max, absl::Time deadline) = 0;
  virtual absl::StatusOr<StoreGauges> Gauges(absl::Time deadline) = 0;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_MODERATION_STORE_H_
