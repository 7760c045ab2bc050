#include "services/moderation/pg_moderation_store.h"

#include <algorithm>
#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/client_errors.h"
#include "courtpiece/common/status_macros.h"

namespace courtpiece::moderation {
namespace {

using storage::PgParam;
using storage::PgResult;
using storage::PgRow;
using storage::PgTransaction;

constexpr int kAttemptsMax = 3;  // writes: Aborted only; reads also Unavailable

// Columns read back, in the order the Parse* functions expect. Times as microseconds.
constexpr char kNoteCols[] =
    "note_id, table_id, round, author, duration_ms, format, content_type, size_bytes, "
    "moderation.us(created_at), purged";
constexpr char kReportCols[] =
    "report_id, key, note_id, table_id, round, author, reporter, status, "
    "moderation.us(reported_at), moderation.us(resolved_at), resolved_by, resolution_reason";
constexpr char kMuteCols[] =
    "mute_id, player_id, moderation.us(created_at), moderation.us(until), muted_by, reason, "
    "coalesce(report_id, 0), moderation.us(lifted_at), lifted_by";
constexpr char kAuditCols[] =
    "audit_id, admin_id, action, target_player, coalesce(report_id, 0), note_id, reason, detail, "
    "moderation.us(at)";
// Active at $now: not lifted, and no end or an end after now (until == now is over).
#define MUTE_ACTIVE_AT(now) "lifted_at IS NULL AND (until IS NULL OR until > " now ")"

// The text form of a timestamptz, exact to the microsecond (truncated, like the fake).
std::string Ts(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%E6S+00", absl::FromUnixMicros(absl::ToUnixMicros(t)),
                          absl::UTCTimeZone());
}
PgParam Ts(const std::optional<absl::Time>& t) {
  if (!t) return PgParam(nullptr);
  return PgParam(Ts(*t));
}
PgParam IdOrNull(int64_t id) {
  if (id == 0) return PgParam(nullptr);
  return PgParam(id);
}

absl::StatusOr<absl::Time> Time(const PgRow& row, size_t col) {
  ASSIGN_OR_RETURN(int64_t us, row.Int64(col));
  return absl::FromUnixMicros(us);
}
absl::StatusOr<std::optional<absl::Time>> OptTime(const PgRow& row, size_t col) {
  if (row.IsNull(col)) return std::optional<absl::Time>();
  ASSIGN_OR_RETURN(absl::Time t, Time(row, col));
  return std::optional<absl::Time>(t);
}

absl::StatusOr<NoteRow> ParseNote(const PgRow& row) {
  NoteRow n;
  ASSIGN_OR_RETURN(n.note_id, row.String(0));
  ASSIGN_OR_RETURN(n.table_id, row.String(1));
  ASSIGN_OR_RETURN(int64_t round, row.Int64(2));
  n.round = static_cast<uint64_t>(round);
  ASSIGN_OR_RETURN(n.author, row.String(3));
  ASSIGN_OR_RETURN(n.duration_ms, row.Int64(4));
  ASSIGN_OR_RETURN(n.format, row.String(5));
  ASSIGN_OR_RETURN(n.content_type, row.String(6));
  ASSIGN_OR_RETURN(n.size_bytes, row.Int64(7));
  ASSIGN_OR_RETURN(n.created_at, Time(row, 8));
  ASSIGN_OR_RETURN(n.purged, row.Bool(9));
  return n;
}

absl::StatusOr<ReportRow> ParseReport(const PgRow& row) {
  ReportRow r;
  ASSIGN_OR_RETURN(r.report_id, row.Int64(0));
  ASSIGN_OR_RETURN(r.key, row.String(1));
  ASSIGN_OR_RETURN(r.note_id, row.String(2));
  ASSIGN_OR_RETURN(r.table_id, row.String(3));
  ASSIGN_OR_RETURN(int64_t round, row.Int64(4));
  r.round = static_cast<uint64_t>(round);
  ASSIGN_OR_RETURN(r.author, row.String(5));
  ASSIGN_OR_RETURN(r.reporter, row.String(6));
  ASSIGN_OR_RETURN(int64_t status, row.Int64(7));
  if (status < 1 || status > 3) return absl::InternalError("report status out of range");
  r.status = static_cast<ReportStatus>(status);
  ASSIGN_OR_RETURN(r.reported_at, Time(row, 8));
  ASSIGN_OR_RETURN(r.resolved_at, OptTime(row, 9));
  ASSIGN_OR_RETURN(r.resolved_by, row.String(10));
  ASSIGN_OR_RETURN(r.resolution_reason, row.String(11));
  return r;
}

absl::StatusOr<MuteRow> ParseMute(const PgRow& row) {
  MuteRow m;
  ASSIGN_OR_RETURN(m.mute_id, row.Int64(0));
  ASSIGN_OR_RETURN(m.player_id, row.String(1));
  ASSIGN_OR_RETURN(m.created_at, Time(row, 2));
  ASSIGN_OR_RETURN(m.until, OptTime(row, 3));
  ASSIGN_OR_RETURN(m.muted_by, row.String(4));
  ASSIGN_OR_RETURN(m.reason, row.String(5));
  ASSIGN_OR_RETURN(m.report_id, row.Int64(6));
  ASSIGN_OR_RETURN(m.lifted_at, OptTime(row, 7));
  ASSIGN_OR_RETURN(m.lifted_by, row.String(8));
  return m;
}

absl::StatusOr<AuditRow> ParseAudit(const PgRow& row) {
  AuditRow a;
  ASSIGN_OR_RETURN(a.audit_id, row.Int64(0));
  ASSIGN_OR_RETURN(a.admin_id, row.String(1));
  ASSIGN_OR_RETURN(a.action, row.String(2));
  ASSIGN_OR_RETURN(a.target_player, row.String(3));
  ASSIGN_OR_RETURN(a.report_id, row.Int64(4));
  ASSIGN_OR_RETURN(a.note_id, row.String(5));
  ASSIGN_OR_RETURN(a.reason, row.String(6));
  ASSIGN_OR_RETURN(a.detail, row.String(7));
  ASSIGN_OR_RETURN(a.at, Time(row, 8));
  return a;
}

template <typename T>
absl::StatusOr<std::vector<T>> ParseAll(const PgResult& result,
                                        absl::StatusOr<T> (*parse)(const PgRow&)) {
  std::vector<T> out;
  out.reserve(result.size());
  for (const PgRow& row : result.rows()) {
    ASSIGN_OR_RETURN(T v, parse(row));
    out.push_back(std::move(v));
  }
  return out;
}

// The caller clamps page sizes to 1..200 (moderation_store.h); clamped here again so a
// bad size cannot make an empty page with a token.
int PageSize(int page_size) { return std::clamp(page_size, 1, 200); }

// 0 for an empty token (the first page); InvalidArgument for a malformed one.
absl::StatusOr<int64_t> ParseToken(const std::string& token) {
  if (token.empty()) return 0;
  int64_t id = 0;
  if (!absl::SimpleAtoi(token, &id) || id <= 0) {
    return absl::InvalidArgumentError("bad_request: malformed page token");
  }
  return id;
}

absl::Status InsertAudit(PgTransaction& tx, const AuditRow& a) {
  return tx
      .Exec(
          "INSERT INTO moderation.audit (admin_id, action, target_player, report_id, note_id, "
          "reason, detail, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz)",
          {a.admin_id, a.action, a.target_player, IdOrNull(a.report_id), a.note_id, a.reason,
           a.detail, Ts(a.at)})
      .status();
}

// Serializes mute changes of one player (at most one active mute).
absl::Status LockPlayerMutes(PgTransaction& tx, const std::string& player_id) {
  return tx
      .Exec("SELECT pg_advisory_xact_lock(hashtextextended('moderation.mutes:' || $1, 0))",
            {player_id})
      .status();
}

// Lifts the player's active mute at m.created_at (lifted_by) and inserts m.
absl::StatusOr<MuteRow> InsertMute(PgTransaction& tx, const MuteRow& m,
                                   const std::string& lifted_by) {
  RETURN_IF_ERROR(LockPlayerMutes(tx, m.player_id));
  ASSIGN_OR_RETURN(
      PgRow row,
      tx.ExecOneRow(absl::StrCat("WITH lifted AS (UPDATE moderation.mutes SET lifted_at = "
                                 "$2::timestamptz, lifted_by = $7 WHERE player_id = $1 AND ",
                                 MUTE_ACTIVE_AT("$2::timestamptz"),
                                 " RETURNING 1) "
                                 "INSERT INTO moderation.mutes (player_id, created_at, until, "
                                 "muted_by, reason, report_id) VALUES ($1, $2::timestamptz, "
                                 "$3::timestamptz, $4, $5, $6) RETURNING ",
                                 kMuteCols),
                    {m.player_id, Ts(m.created_at), Ts(m.until), m.muted_by, m.reason,
                     IdOrNull(m.report_id), lifted_by}));
  return ParseMute(row);
}

}  // namespace

absl::Status PgModerationStore::Write(absl::Time deadline, const Body& body) {
  return Run(true, deadline, body);
}
absl::Status PgModerationStore::Read(absl::Time deadline, const Body& body) {
  return Run(false, deadline, body);
}

absl::Status PgModerationStore::Run(bool write, absl::Time deadline, const Body& body) {
  if (absl::Now() >= deadline) return absl::DeadlineExceededError("moderation store: deadline");
  absl::Status outcome;
  auto fn = [&](PgTransaction& tx) -> absl::Status {
    outcome = absl::OkStatus();
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) {
      outcome = absl::DeadlineExceededError("moderation store: deadline");
      return outcome;
    }
    int64_t timeout_ms = std::min<int64_t>(left_ms, INT_MAX);
    if (pool_.options().statement_timeout_ms > 0) {
      timeout_ms = std::min<int64_t>(timeout_ms, pool_.options().statement_timeout_ms);
    }
    RETURN_IF_ERROR(tx.SetStatementTimeout(static_cast<int>(timeout_ms)));
    return body(tx, outcome);
  };
  const absl::Status status =
      write ? pool_.RunWithRetry(kAttemptsMax, fn) : pool_.RunIdempotent(kAttemptsMax, fn);
  if (!outcome.ok()) return outcome;
  if (status.ok() || !common::IsClientMessageCode(status.code())) return status;
  return absl::InternalError(status.message());
}

// ---- notes ----

absl::StatusOr<NoteRow> PgModerationStore::InsertNote(const NoteRow& note, const std::string& audio,
                                                      bool* inserted, absl::Time deadline) {
  NoteRow out;
  *inserted = false;
  absl::Status s = Write(deadline, [&](PgTransaction& tx, absl::Status&) -> absl::Status {
    *inserted = false;
    // One statement: the note and its audio, or (a note of this author and round exists)
    // nothing; ON CONFLICT waits for a concurrent insert of the same triple to finish.
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Exec("WITH note AS (INSERT INTO moderation.notes (note_id, table_id, round, author, "
                "duration_ms, format, content_type, size_bytes, created_at, keep_until) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::timestamptz, $10::timestamptz) "
                "ON CONFLICT (table_id, round, author) DO NOTHING RETURNING note_id) "
                "INSERT INTO moderation.note_audio (note_id, audio) SELECT note_id, $11::bytea "
                "FROM note",
                {note.note_id, note.table_id, note.round, note.author, note.duration_ms,
                 note.format, note.content_type, note.size_bytes, Ts(note.created_at),
                 Ts(note.created_at + kNoteRetention), PgParam::Bytes(audio)}));
    if (r.affected_rows() == 1) {
      *inserted = true;
      out = note;
      out.created_at = absl::FromUnixMicros(absl::ToUnixMicros(note.created_at));
      out.purged = false;
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(PgRow row, tx.ExecOneRow(absl::StrCat("SELECT ", kNoteCols,
                                                           " FROM moderation.notes WHERE "
                                                           "table_id = $1 AND round = $2 AND "
                                                           "author = $3"),
                                              {note.table_id, note.round, note.author}));
    ASSIGN_OR_RETURN(out, ParseNote(row));
    return absl::OkStatus();
  });
  if (!s.ok()) {
    *inserted = false;
    return s;
  }
  return out;
}

absl::StatusOr<NoteRow> PgModerationStore::GetNote(const std::string& note_id,
                                                   absl::Time deadline) {
  NoteRow out;
  const absl::Status run =
      Read(deadline, [&](PgTransaction& tx, absl::Status& outcome) -> absl::Status {
        ASSIGN_OR_RETURN(
            PgResult r,
            tx.Exec(absl::StrCat("SELECT ", kNoteCols, " FROM moderation.notes WHERE note_id = $1"),
                    {note_id}));
        if (r.empty()) return outcome = absl::NotFoundError(absl::StrCat("no_note: ", note_id));
        ASSIGN_OR_RETURN(out, ParseNote(r.row(0)));
        return absl::OkStatus();
      });
  if (!run.ok()) return run;
  return out;
}

absl::StatusOr<std::string> PgModerationStore::GetAudio(const std::string& note_id,
                                                        absl::Time deadline) {
  std::string out;
  const absl::Status run =
      Read(deadline, [&](PgTransaction& tx, absl::Status& outcome) -> absl::Status {
        ASSIGN_OR_RETURN(PgResult r, tx.Exec("SELECT audio FROM moderation.note_audio "
                                             "WHERE note_id = $1",
                                             {note_id}));
        if (r.empty()) return outcome = absl::NotFoundError(absl::StrCat("no_note: ", note_id));
        ASSIGN_OR_RETURN(out, r.row(0).Bytes(0));
        return absl::OkStatus();
      });
  if (!run.ok()) return run;
  return out;
}

absl::StatusOr<std::optional<NoteRow>> PgModerationStore::FindNote(const std::string& table_id,
                                                                   uint64_t round,
                                                                   const std::string& author,
                                                                   absl::Time deadline) {
  std::optional<NoteRow> out;
  const absl::Status run = Read(deadline, [&](PgTransaction& tx, absl::Status&) -> absl::Status {
    out.reset();
    ASSIGN_OR_RETURN(PgResult r, tx.Exec(absl::StrCat("SELECT ", kNoteCols,
                                                      " FROM moderation.notes WHERE table_id = "
                                                      "$1 AND round = $2 AND author = $3"),
                                         {table_id, round, author}));
    if (r.empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(NoteRow n, ParseNote(r.row(0)));
    out = std::move(n);
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  return out;
}

absl::Status PgModerationStore::DeleteUnannouncedNote(const std::string& note_id,
                                                      absl::Time deadline) {
  return Write(deadline, [&](PgTransaction& tx, absl::Status& outcome) -> absl::Status {
    // The note's lock first: a FileReport on it either committed before (its report is
    // seen below) or waits and then finds no note.
    ASSIGN_OR_RETURN(PgResult note, tx.Exec("SELECT 1 FROM moderation.notes WHERE note_id = $1 "
                                            "FOR UPDATE",
                                            {note_id}));
    if (note.empty()) return outcome = absl::NotFoundError(absl::StrCat("no_note: ", note_id));
    ASSIGN_OR_RETURN(PgResult reports, tx.Exec("SELECT 1 FROM moderation.reports "
                                               "WHERE note_id = $1 LIMIT 1",
                                               {note_id}));
    if (!reports.empty()) {
      return outcome = absl::FailedPreconditionError(
                 absl::StrCat("reported: note ", note_id, " has reports, it is kept"));
    }
    // The audio row goes with it (ON DELETE CASCADE).
    return tx.Exec("DELETE FROM moderation.notes WHERE note_id = $1", {note_id}).status();
  });
}

// ---- reports ----

absl::StatusOr<ReportRow> PgModerationStore::FileReport(const std::string& key,
                                                        const std::string& note_id,
                                                        const std::string& reporter, absl::Time now,
                                                        bool* replayed, absl::Time deadline) {
  ReportRow out;
  *replayed = false;
  absl::Status s = Write(deadline, [&](PgTransaction& tx, absl::Status& outcome) -> absl::Status {
    *replayed = false;
    // The note's lock orders this with the purge (which skips locked notes) and with a
    // resolution of the same note.
    ASSIGN_OR_RETURN(PgResult note, tx.Exec("SELECT table_id, round, author FROM "
                                            "moderation.notes WHERE note_id = $1 FOR UPDATE",
                                            {note_id}));
    if (note.empty()) return outcome = absl::NotFoundError(absl::StrCat("no_note: ", note_id));
    ASSIGN_OR_RETURN(std::string table_id, note.row(0).String(0));
    ASSIGN_OR_RETURN(int64_t round, note.row(0).Int64(1));
    ASSIGN_OR_RETURN(std::string author, note.row(0).String(2));
    // No conflict target: either unique (key, or note + reporter) makes it a replay.
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Exec(absl::StrCat("INSERT INTO moderation.reports (key, note_id, table_id, round, "
                             "author, reporter, reported_at) VALUES ($1, $2, $3, $4, $5, $6, "
                             "$7::timestamptz) ON CONFLICT DO NOTHING RETURNING ",
                             kReportCols),
                {key, note_id, table_id, round, author, reporter, Ts(now)}));
    if (r.size() == 1) {
      ASSIGN_OR_RETURN(out, ParseReport(r.row(0)));
      return tx.Exec("UPDATE moderation.notes SET keep_until = NULL WHERE note_id = $1", {note_id})
          .status();
    }
    ASSIGN_OR_RETURN(PgResult existing,
                     tx.Exec(absl::StrCat("SELECT ", kReportCols,
                                          " FROM moderation.reports WHERE key = $1 OR "
                                          "(note_id = $2 AND reporter = $3) "
                                          "ORDER BY key = $1 DESC LIMIT 1"),
                             {key, note_id, reporter}));
    if (existing.empty()) {
      // The conflicting insert rolled back after ours gave way: run again.
      return absl::AbortedError("report conflict vanished");
    }
    ASSIGN_OR_RETURN(out, ParseReport(existing.row(0)));
    *replayed = true;
    return absl::OkStatus();
  });
  if (!s.ok()) {
    *replayed = false;
    return s;
  }
  return out;
}

absl::StatusOr<ReportPage> PgModerationStore::ListReports(const ReportFilter& filter,
                                                          absl::Time deadline) {
  ASSIGN_OR_RETURN(int64_t after, ParseToken(filter.page_token));
  ReportPage page;
  const absl::Status run = Read(deadline, [&](PgTransaction& tx, absl::Status&) -> absl::Status {
    page = ReportPage{};
    PgParam status(nullptr);
    if (filter.status) status = PgParam(static_cast<int>(*filter.status));
    ASSIGN_OR_RETURN(PgResult r,
                     tx.Exec(absl::StrCat("SELECT ", kReportCols,
                                          " FROM moderation.reports WHERE report_id > $1 AND "
                                          "($2::smallint IS NULL OR status = $2::smallint) AND "
                                          "($3 = '' OR author = $3) ORDER BY report_id LIMIT $4"),
                             {after, status, filter.author, PageSize(filter.page_size) + 1}));
    ASSIGN_OR_RETURN(page.reports, ParseAll<ReportRow>(r, &ParseReport));
    if (static_cast<int>(page.reports.size()) > PageSize(filter.page_size)) {
      page.reports.resize(PageSize(filter.page_size));
      page.next_page_token = std::to_string(page.reports.back().report_id);
    }
    ASSIGN_OR_RETURN(PgRow total,
                     tx.ExecOneRow("SELECT count(*) FROM moderation.reports WHERE status = 1"));
    ASSIGN_OR_RETURN(page.open_total, total.Int64(0));
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  return page;
}

absl::StatusOr<ReportRow> PgModerationStore::GetReport(int64_t report_id, absl::Time deadline) {
  ReportRow out;
  const absl::Status run =
      Read(deadline, [&](PgTransaction& tx, absl::Status& outcome) -> absl::Status {
        ASSIGN_OR_RETURN(PgResult r, tx.Exec(absl::StrCat("SELECT ", kReportCols,
                                                          " FROM moderation.reports "
                                                          "WHERE report_id = $1"),
                                             {report_id}));
        if (r.empty()) return outcome = absl::NotFoundError(absl::StrCat("no_report: ", report_id));
        ASSIGN_OR_RETURN(out, ParseReport(r.row(0)));
        return absl::OkStatus();
      });
  if (!run.ok()) return run;
  return out;
}

absl::StatusOr<std::vector<ReportRow>> PgModerationStore::ReportsOfNote(const std::string& note_id,
                                                                        absl::Time deadline) {
  std::vector<ReportRow> out;
  const absl::Status run = Read(deadline, [&](PgTransaction& tx, absl::Status&) -> absl::Status {
    ASSIGN_OR_RETURN(PgResult r, tx.Exec(absl::StrCat("SELECT ", kReportCols,
                                                      " FROM moderation.reports WHERE "
                                                      "note_id = $1 ORDER BY report_id"),
                                         {note_id}));
    ASSIGN_OR_RETURN(out, ParseAll<ReportRow>(r, &ParseReport));
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  return out;
}

absl::StatusOr<std::vector<ReportRow>> PgModerationStore::ReportsOfAuthor(const std::string& author,
                                                                          int limit,
                                                                          absl::Time deadline) {
  std::vector<ReportRow> out;
  const absl::Status run = Read(deadline, [&](PgTransaction& tx, absl::Status&) -> absl::Status {
    ASSIGN_OR_RETURN(PgResult r, tx.Exec(absl::StrCat("SELECT ", kReportCols,
                                                      " FROM moderation.reports WHERE "
                                                      "author = $1 ORDER BY report_id DESC "
                                                      "LIMIT $2"),
                                         {author, std::max(limit, 0)}));
    ASSIGN_OR_RETURN(out, ParseAll<ReportRow>(r, &ParseReport));
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  return out;
}

absl::StatusOr<Resolved> PgModerationStore::ResolveReport(const Resolution& res,
                                                          absl::Time deadline) {
  Resolved out;
  const absl::Status run =
      Write(deadline, [&](PgTransaction& tx, absl::Status& outcome) -> absl::Status {
        out = Resolved{};
        ASSIGN_OR_RETURN(PgResult found, tx.Exec("SELECT note_id FROM moderation.reports "
                                                 "WHERE report_id = $1",
                                                 {res.report_id}));
        if (found.empty()) {
          return outcome = absl::NotFoundError(absl::StrCat("no_report: ", res.report_id));
        }
        ASSIGN_OR_RETURN(std::string note_id, found.row(0).String(0));
        // The note's lock serializes resolutions of its reports and new reports on it; the
        // report's status is read after it.
        RETURN_IF_ERROR(
            tx.Exec("SELECT 1 FROM moderation.notes WHERE note_id = $1 FOR UPDATE", {note_id})
                .status());
        ASSIGN_OR_RETURN(PgRow status, tx.ExecOneRow("SELECT status FROM moderation.reports "
                                                     "WHERE report_id = $1",
                                                     {res.report_id}));
        ASSIGN_OR_RETURN(int64_t current, status.Int64(0));
        if (current != static_cast<int>(ReportStatus::kOpen)) {
          return outcome = absl::FailedPreconditionError(
                     absl::StrCat("already_resolved: report ", res.report_id, " is closed"));
        }
        ASSIGN_OR_RETURN(
            PgResult closed,
            tx.Exec(
                absl::StrCat("UPDATE moderation.reports SET status = $2, resolved_at = "
                             "$3::timestamptz, resolved_by = $4, resolution_reason = $5 "
                             "WHERE note_id = $1 AND status = 1 RETURNING ",
                             kReportCols),
                {note_id, static_cast<int>(res.status), Ts(res.now), res.admin_id, res.reason}));
        ASSIGN_OR_RETURN(out.reports, ParseAll<ReportRow>(closed, &ParseReport));
        std::sort(out.reports.begin(), out.reports.end(),
                  [](const ReportRow& a, const ReportRow& b) { return a.report_id < b.report_id; });
        RETURN_IF_ERROR(tx.Exec("UPDATE moderation.notes SET keep_until = $2::timestamptz "
                                "WHERE note_id = $1",
                                {note_id, Ts(res.now + kNoteRetention)})
                            .status());
        if (res.mute) {
          ASSIGN_OR_RETURN(MuteRow mute, InsertMute(tx, *res.mute, res.admin_id));
          out.mute = std::move(mute);
        }
        return InsertAudit(tx, res.audit);
      });
  if (!run.ok()) return run;
  return out;
}

// ---- mutes ----

absl::StatusOr<std::optional<MuteRow>> PgModerationStore::ActiveMute(const std::string& player_id,
                                                                     absl::Time now,
                                                                     absl::Time deadline) {
  std::optional<MuteRow> out;
  const absl::Status run = Read(deadline, [&](PgTransaction& tx, absl::Status&) -> absl::Status {
    out.reset();
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Exec(
            absl::StrCat("SELECT ", kMuteCols, " FROM moderation.mutes WHERE player_id = $1 AND ",
                         MUTE_ACTIVE_AT("$2::timestamptz"), " ORDER BY mute_id DESC LIMIT 1"),
            {player_id, Ts(now)}));
    if (r.empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(MuteRow m, ParseMute(r.row(0)));
    out = std::move(m);
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  return out;
}

absl::StatusOr<MuteRow> PgModerationStore::AddMute(const MuteRow& mute, const AuditRow& audit,
                                                   absl::Time deadline) {
  MuteRow out;
  const absl::Status run = Write(deadline, [&](PgTransaction& tx, absl::Status&) -> absl::Status {
    ASSIGN_OR_RETURN(out, InsertMute(tx, mute, mute.muted_by));
    return InsertAudit(tx, audit);
  });
  if (!run.ok()) return run;
  return out;
}

absl::StatusOr<MuteRow> PgModerationStore::LiftMute(const std::string& player_id,
                                                    const std::string& admin_id, absl::Time now,
                                                    const AuditRow& audit, absl::Time deadline) {
  MuteRow out;
  const absl::Status run =
      Write(deadline, [&](PgTransaction& tx, absl::Status& outcome) -> absl::Status {
        RETURN_IF_ERROR(LockPlayerMutes(tx, player_id));
        ASSIGN_OR_RETURN(
            PgResult r,
            tx.Exec(absl::StrCat("UPDATE moderation.mutes SET lifted_at = $2::timestamptz, "
                                 "lifted_by = $3 WHERE player_id = $1 AND ",
                                 MUTE_ACTIVE_AT("$2::timestamptz"), " RETURNING ", kMuteCols),
                    {player_id, Ts(now), admin_id}));
        if (r.empty()) return outcome = absl::NotFoundError(absl::StrCat("not_muted: ", player_id));
        ASSIGN_OR_RETURN(out, ParseMute(r.row(0)));
        return InsertAudit(tx, audit);
      });
  if (!run.ok()) return run;
  return out;
}

absl::StatusOr<MutePage> PgModerationStore::ListMutes(const MuteFilter& filter, absl::Time now,
                                                      absl::Time deadline) {
  ASSIGN_OR_RETURN(int64_t before, ParseToken(filter.page_token));
  MutePage page;
  const absl::Status run = Read(deadline, [&](PgTransaction& tx, absl::Status&) -> absl::Status {
    page = MutePage{};
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Exec(absl::StrCat(
                    "SELECT ", kMuteCols,
                    " FROM moderation.mutes WHERE ($1::bigint = 0 OR mute_id < $1::bigint) AND "
                    "($2 = '' OR player_id = $2) AND ($3 OR (",
                    MUTE_ACTIVE_AT("$4::timestamptz"), ")) ORDER BY mute_id DESC LIMIT $5"),
                {before, filter.player_id, filter.include_inactive, Ts(now),
                 PageSize(filter.page_size) + 1}));
    ASSIGN_OR_RETURN(page.mutes, ParseAll<MuteRow>(r, &ParseMute));
    if (static_cast<int>(page.mutes.size()) > PageSize(filter.page_size)) {
      page.mutes.resize(PageSize(filter.page_size));
      page.next_page_token = std::to_string(page.mutes.back().mute_id);
    }
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  return page;
}

// ---- audit ----

absl::Status PgModerationStore::AppendAudit(const AuditRow& audit, absl::Time deadline) {
  return Write(deadline, [&](PgTransaction& tx, absl::Status&) { return InsertAudit(tx, audit); });
}

absl::StatusOr<AuditPage> PgModerationStore::ListAudit(const AuditFilter& filter,
                                                       absl::Time deadline) {
  ASSIGN_OR_RETURN(int64_t before, ParseToken(filter.page_token));
  AuditPage page;
  const absl::Status run = Read(deadline, [&](PgTransaction& tx, absl::Status&) -> absl::Status {
    page = AuditPage{};
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Exec(absl::StrCat(
                    "SELECT ", kAuditCols,
                    " FROM moderation.audit WHERE ($1::bigint = 0 OR audit_id < $1::bigint) AND "
                    "($2 = '' OR admin_id = $2) AND ($3 = '' OR target_player = $3) "
                    "ORDER BY audit_id DESC LIMIT $4"),
                {before, filter.admin_id, filter.target_player, PageSize(filter.page_size) + 1}));
    ASSIGN_OR_RETURN(page.entries, ParseAll<AuditRow>(r, &ParseAudit));
    if (static_cast<int>(page.entries.size()) > PageSize(filter.page_size)) {
      page.entries.resize(PageSize(filter.page_size));
      page.next_page_token = std::to_string(page.entries.back().audit_id);
    }
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  return page;
}

// ---- retention and gauges ----

absl::StatusOr<PurgeResult> PgModerationStore::Purge(absl::Time now, int batch_max,
                                                     absl::Time deadline) {
  if (batch_max < 1) return absl::InvalidArgumentError("purge: batch_max must be at least 1");
  PurgeResult out;
  const absl::Status run = Write(deadline, [&](PgTransaction& tx, absl::Status&) -> absl::Status {
    out = PurgeResult{};
    // One statement: take at most $2 due notes (oldest keep_until first, over notes_due),
    // skipping notes another transaction holds (a concurrent purge, a report being filed);
    // delete the unreported ones (their audio by cascade), strip the audio of the reported
    // ones and mark them purged. A report cannot appear on a taken note before this
    // commits: FileReport locks the note first.
    ASSIGN_OR_RETURN(
        PgRow row,
        tx.ExecOneRow(
            "WITH taken AS (SELECT note_id, size_bytes FROM moderation.notes "
            "  WHERE NOT purged AND keep_until <= $1::timestamptz ORDER BY keep_until "
            "  LIMIT $2 FOR UPDATE SKIP LOCKED), "
            "due AS (SELECT t.note_id, t.size_bytes, EXISTS (SELECT 1 FROM "
            "moderation.reports r "
            "  WHERE r.note_id = t.note_id) AS reported FROM taken t), "
            "gone AS (DELETE FROM moderation.notes n USING due WHERE n.note_id = "
            "due.note_id "
            "  AND NOT due.reported RETURNING n.size_bytes), "
            "audio AS (DELETE FROM moderation.note_audio a USING due WHERE a.note_id = "
            "  due.note_id AND due.reported RETURNING a.note_id), "
            "stripped AS (UPDATE moderation.notes n SET purged = true, purged_at = "
            "  $1::timestamptz FROM due WHERE n.note_id = due.note_id AND due.reported "
            "  RETURNING n.size_bytes) "
            "SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM stripped), "
            "  (SELECT coalesce(sum(size_bytes), 0) FROM gone) + "
            "  (SELECT coalesce(sum(size_bytes), 0) FROM stripped), (SELECT count(*) FROM "
            "audio)",
            {Ts(now), batch_max}));
    ASSIGN_OR_RETURN(out.notes_deleted, row.Int64(0));
    ASSIGN_OR_RETURN(out.audio_deleted, row.Int64(1));
    ASSIGN_OR_RETURN(out.bytes_freed, row.Int64(2));
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  return out;
}

absl::StatusOr<StoreGauges> PgModerationStore::Gauges(absl::Time deadline) {
  StoreGauges g;
  const absl::Status run = Read(deadline, [&](PgTransaction& tx, absl::Status&) -> absl::Status {
    g = StoreGauges{};
    // notes/bytes: the 16 rows of note_counters (kept by triggers on notes); the rest over
    // small sets (open reports over reports_queue, not-lifted mutes over mutes_not_lifted).
    ASSIGN_OR_RETURN(
        PgRow row,
        tx.ExecOneRow(
            "SELECT l.n, l.bytes, o.n, moderation.us(o.oldest), m.n FROM "
            "(SELECT coalesce(sum(notes), 0) AS n, coalesce(sum(audio_bytes), 0) "
            "  AS bytes FROM moderation.note_counters) l, "
            "(SELECT count(*) AS n, min(reported_at) AS oldest "
            "  FROM moderation.reports WHERE status = 1) o, "
            "(SELECT count(*) AS n FROM moderation.mutes WHERE " MUTE_ACTIVE_AT("now()") ") m"));
    ASSIGN_OR_RETURN(g.notes, row.Int64(0));
    ASSIGN_OR_RETURN(g.audio_bytes, row.Int64(1));
    ASSIGN_OR_RETURN(g.open_reports, row.Int64(2));
    ASSIGN_OR_RETURN(g.oldest_open_report_at, OptTime(row, 3));
    ASSIGN_OR_RETURN(g.active_mutes, row.Int64(4));
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  return g;
}

}  // namespace courtpiece::moderation
