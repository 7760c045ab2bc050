#include "services/moderation/fake_moderation_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace courtpiece::moderation {
namespace {

// Postgres keeps microseconds; so does the fake.
absl::Time Us(absl::Time t) { return absl::FromUnixMicros(absl::ToUnixMicros(t)); }
std::optional<absl::Time> Us(std::optional<absl::Time> t) {
  if (!t) return std::nullopt;
  return Us(*t);
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

bool ActiveAt(const MuteRow& m, absl::Time now) {
  return !m.lifted_at && (!m.until || *m.until > now);
}

}  // namespace

absl::Status FakeModerationStore::Enter() {
  ++calls_;
  if (fail_next_ > 0) {
    --fail_next_;
    return fail_status_;
  }
  return absl::OkStatus();
}

absl::Status FakeModerationStore::Leave() {
  if (lose_replies_ > 0) {
    --lose_replies_;
    return absl::UnavailableError("fake: the reply was lost after commit");
  }
  return absl::OkStatus();
}

void FakeModerationStore::FailNext(int count, absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_ = count;
  fail_status_ = std::move(status);
}

void FakeModerationStore::LoseNextReplies(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  lose_replies_ = count;
}

int FakeModerationStore::Calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

std::optional<absl::Time> FakeModerationStore::KeepUntil(const std::string& note_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = notes_.find(note_id);
  if (it == notes_.end()) return std::nullopt;
  return it->second.keep_until;
}

bool FakeModerationStore::HasAudio(const std::string& note_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = notes_.find(note_id);
  return it != notes_.end() && it->second.audio.has_value();
}

bool FakeModerationStore::Reported(const std::string& note_id) const {
  for (const auto& [id, r] : reports_) {
    if (r.note_id == note_id) return true;
  }
  return false;
}

// ---- notes ----

absl::StatusOr<NoteRow> FakeModerationStore::InsertNote(const NoteRow& note,
                                                        const std::string& audio, bool* inserted,
                                                        absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  *inserted = false;
  for (const auto& [id, n] : notes_) {
    if (n.row.table_id == note.table_id && n.row.round == note.round &&
        n.row.author == note.author) {
      if (absl::Status s = Leave(); !s.ok()) return s;
      return n.row;
    }
  }
  if (notes_.count(note.note_id) > 0) {
    // Postgres: a primary-key violation, which the store reports as Internal.
    return absl::InternalError(absl::StrCat("note id ", note.note_id, " is used by another note"));
  }
  Note n;
  n.row = note;
  n.row.created_at = Us(note.created_at);
  n.row.purged = false;
  n.keep_until = n.row.created_at + kNoteRetention;
  n.audio = audio;
  NoteRow out = n.row;
  notes_.emplace(note.note_id, std::move(n));
  *inserted = true;
  if (absl::Status s = Leave(); !s.ok()) return s;
  return out;
}

absl::StatusOr<NoteRow> FakeModerationStore::GetNote(const std::string& note_id, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  auto it = notes_.find(note_id);
  if (it == notes_.end()) return absl::NotFoundError(absl::StrCat("no_note: ", note_id));
  if (absl::Status s = Leave(); !s.ok()) return s;
  return it->second.row;
}

absl::StatusOr<std::string> FakeModerationStore::GetAudio(const std::string& note_id, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  auto it = notes_.find(note_id);
  if (it == notes_.end() || !it->second.audio) {
    return absl::NotFoundError(absl::StrCat("no_note: ", note_id));
  }
  if (absl::Status s = Leave(); !s.ok()) return s;
  return *it->second.audio;
}

absl::StatusOr<std::optional<NoteRow>> FakeModerationStore::FindNote(const std::string& table_id,
                                                                     uint64_t round,
                                                                     const std::string& author,
                                                                     absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  std::optional<NoteRow> found;
  for (const auto& [id, n] : notes_) {
    if (n.row.table_id == table_id && n.row.round == round && n.row.author == author) {
      found = n.row;
    }
  }
  if (absl::Status s = Leave(); !s.ok()) return s;
  return found;
}

absl::Status FakeModerationStore::DeleteUnannouncedNote(const std::string& note_id, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  auto it = notes_.find(note_id);
  if (it == notes_.end()) return absl::NotFoundError(absl::StrCat("no_note: ", note_id));
  if (Reported(note_id)) {
    return absl::FailedPreconditionError(
        absl::StrCat("reported: note ", note_id, " has reports, it is kept"));
  }
  notes_.erase(it);
  return Leave();
}

// ---- reports ----

absl::StatusOr<ReportRow> FakeModerationStore::FileReport(const std::string& key,
                                                          const std::string& note_id,
                                                          const std::string& reporter,
                                                          absl::Time now, bool* replayed,
                                                          absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  *replayed = false;
  auto note = notes_.find(note_id);
  if (note == notes_.end()) return absl::NotFoundError(absl::StrCat("no_note: ", note_id));
  const ReportRow* existing = nullptr;
  for (const auto& [id, r] : reports_) {
    if (r.key == key) {
      existing = &r;
      break;
    }
  }
  if (existing == nullptr) {
    for (const auto& [id, r] : reports_) {
      if (r.note_id == note_id && r.reporter == reporter) existing = &r;
    }
  }
  if (existing != nullptr) {
    *replayed = true;
    ReportRow out = *existing;
    if (absl::Status s = Leave(); !s.ok()) return s;
    return out;
  }
  ReportRow r;
  r.report_id = next_report_id_++;
  r.key = key;
  r.note_id = note_id;
  r.table_id = note->second.row.table_id;
  r.round = note->second.row.round;
  r.author = note->second.row.author;
  r.reporter = reporter;
  r.status = ReportStatus::kOpen;
  r.reported_at = Us(now);
  reports_.emplace(r.report_id, r);
  note->second.keep_until = std::nullopt;  // held while a report is open
  if (absl::Status s = Leave(); !s.ok()) return s;
  return r;
}

absl::StatusOr<ReportPage> FakeModerationStore::ListReports(const ReportFilter& filter,
                                                            absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  absl::StatusOr<int64_t> after = ParseToken(filter.page_token);
  if (!after.ok()) return after.status();
  ReportPage page;
  for (const auto& [id, r] : reports_) {
    if (r.status == ReportStatus::kOpen) ++page.open_total;
  }
  for (auto it = reports_.upper_bound(*after); it != reports_.end(); ++it) {
    const ReportRow& r = it->second;
    if (filter.status && r.status != *filter.status) continue;
    if (!filter.author.empty() && r.author != filter.author) continue;
    if (static_cast<int>(page.reports.size()) == PageSize(filter.page_size)) {
      page.next_page_token = std::to_string(page.reports.back().report_id);
      break;
    }
    page.reports.push_back(r);
  }
  if (absl::Status s = Leave(); !s.ok()) return s;
  return page;
}

absl::StatusOr<ReportRow> FakeModerationStore::GetReport(int64_t report_id, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  auto it = reports_.find(report_id);
  if (it == reports_.end()) return absl::NotFoundError(absl::StrCat("no_report: ", report_id));
  if (absl::Status s = Leave(); !s.ok()) return s;
  return it->second;
}

absl::StatusOr<std::vector<ReportRow>> FakeModerationStore::ReportsOfNote(
    const std::string& note_id, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  std::vector<ReportRow> out;
  for (const auto& [id, r] : reports_) {
    if (r.note_id == note_id) out.push_back(r);
  }
  if (absl::Status s = Leave(); !s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<ReportRow>> FakeModerationStore::ReportsOfAuthor(
    const std::string& author, int limit, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  std::vector<ReportRow> out;
  for (auto it = reports_.rbegin(); it != reports_.rend(); ++it) {
    if (static_cast<int>(out.size()) >= limit) break;
    if (it->second.author == author) out.push_back(it->second);
  }
  if (absl::Status s = Leave(); !s.ok()) return s;
  return out;
}

absl::StatusOr<Resolved> FakeModerationStore::ResolveReport(const Resolution& res, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  auto it = reports_.find(res.report_id);
  if (it == reports_.end()) return absl::NotFoundError(absl::StrCat("no_report: ", res.report_id));
  if (it->second.status != ReportStatus::kOpen) {
    return absl::FailedPreconditionError(
        absl::StrCat("already_resolved: report ", res.report_id, " is closed"));
  }
  const absl::Time now = Us(res.now);
  const std::string note_id = it->second.note_id;
  Resolved out;
  for (auto& [id, r] : reports_) {
    if (r.note_id != note_id || r.status != ReportStatus::kOpen) continue;
    r.status = res.status;
    r.resolved_at = now;
    r.resolved_by = res.admin_id;
    r.resolution_reason = res.reason;
    out.reports.push_back(r);
  }
  notes_.at(note_id).keep_until = now + kNoteRetention;
  if (res.mute) {
    out.mute = AddMuteLocked(*res.mute, res.admin_id);
  }
  AppendAuditLocked(res.audit);
  if (absl::Status s = Leave(); !s.ok()) return s;
  return out;
}

// ---- mutes ----

std::optional<MuteRow*> FakeModerationStore::ActiveMuteLocked(const std::string& player_id,
                                                              absl::Time now) {
  for (auto& [id, m] : mutes_) {
    if (m.player_id == player_id && ActiveAt(m, now)) return &m;
  }
  return std::nullopt;
}

MuteRow FakeModerationStore::AddMuteLocked(const MuteRow& mute, const std::string& lifted_by) {
  MuteRow m = mute;
  m.created_at = Us(mute.created_at);
  m.until = Us(mute.until);
  m.lifted_at = std::nullopt;
  m.lifted_by.clear();
  if (std::optional<MuteRow*> active = ActiveMuteLocked(m.player_id, m.created_at)) {
    (*active)->lifted_at = m.created_at;
    (*active)->lifted_by = lifted_by;
  }
  m.mute_id = next_mute_id_++;
  mutes_.emplace(m.mute_id, m);
  return m;
}

void FakeModerationStore::AppendAuditLocked(const AuditRow& audit) {
  AuditRow a = audit;
  a.at = Us(audit.at);
  a.audit_id = next_audit_id_++;
  audit_.emplace(a.audit_id, std::move(a));
}

absl::StatusOr<std::optional<MuteRow>> FakeModerationStore::ActiveMute(const std::string& player_id,
                                                                       absl::Time now, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  std::optional<MuteRow> out;
  if (std::optional<MuteRow*> active = ActiveMuteLocked(player_id, now)) out = **active;
  if (absl::Status s = Leave(); !s.ok()) return s;
  return out;
}

absl::StatusOr<MuteRow> FakeModerationStore::AddMute(const MuteRow& mute, const AuditRow& audit,
                                                     absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  MuteRow out = AddMuteLocked(mute, mute.muted_by);
  AppendAuditLocked(audit);
  if (absl::Status s = Leave(); !s.ok()) return s;
  return out;
}

absl::StatusOr<MuteRow> FakeModerationStore::LiftMute(const std::string& player_id,
                                                      const std::string& admin_id, absl::Time now,
                                                      const AuditRow& audit, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  std::optional<MuteRow*> active = ActiveMuteLocked(player_id, now);
  if (!active) return absl::NotFoundError(absl::StrCat("not_muted: ", player_id));
  (*active)->lifted_at = Us(now);
  (*active)->lifted_by = admin_id;
  MuteRow out = **active;
  AppendAuditLocked(audit);
  if (absl::Status s = Leave(); !s.ok()) return s;
  return out;
}

absl::StatusOr<MutePage> FakeModerationStore::ListMutes(const MuteFilter& filter, absl::Time now,
                                                        absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  absl::StatusOr<int64_t> before = ParseToken(filter.page_token);
  if (!before.ok()) return before.status();
  MutePage page;
  auto start = *before == 0 ? mutes_.end() : mutes_.lower_bound(*before);
  for (auto it = std::make_reverse_iterator(start); it != mutes_.rend(); ++it) {
    const MuteRow& m = it->second;
    if (!filter.include_inactive && !ActiveAt(m, now)) continue;
    if (!filter.player_id.empty() && m.player_id != filter.player_id) continue;
    if (static_cast<int>(page.mutes.size()) == PageSize(filter.page_size)) {
      page.next_page_token = std::to_string(page.mutes.back().mute_id);
      break;
    }
    page.mutes.push_back(m);
  }
  if (absl::Status s = Leave(); !s.ok()) return s;
  return page;
}

// ---- audit ----

absl::Status FakeModerationStore::AppendAudit(const AuditRow& audit, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  AppendAuditLocked(audit);
  return Leave();
}

absl::StatusOr<AuditPage> FakeModerationStore::ListAudit(const AuditFilter& filter, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  absl::StatusOr<int64_t> before = ParseToken(filter.page_token);
  if (!before.ok()) return before.status();
  AuditPage page;
  auto start = *before == 0 ? audit_.end() : audit_.lower_bound(*before);
  for (auto it = std::make_reverse_iterator(start); it != audit_.rend(); ++it) {
    const AuditRow& a = it->second;
    if (!filter.admin_id.empty() && a.admin_id != filter.admin_id) continue;
    if (!filter.target_player.empty() && a.target_player != filter.target_player) continue;
    if (static_cast<int>(page.entries.size()) == PageSize(filter.page_size)) {
      page.next_page_token = std::to_string(page.entries.back().audit_id);
      break;
    }
    page.entries.push_back(a);
  }
  if (absl::Status s = Leave(); !s.ok()) return s;
  return page;
}

// ---- retention and gauges ----

absl::StatusOr<PurgeResult> FakeModerationStore::Purge(absl::Time now, int batch_max, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  if (batch_max < 1) return absl::InvalidArgumentError("purge: batch_max must be at least 1");
  std::vector<std::pair<absl::Time, std::string>> due;
  for (const auto& [id, n] : notes_) {
    if (!n.row.purged && n.keep_until && *n.keep_until <= now) due.emplace_back(*n.keep_until, id);
  }
  std::sort(due.begin(), due.end());
  if (static_cast<int>(due.size()) > batch_max) due.resize(batch_max);
  PurgeResult result;
  for (const auto& [keep_until, id] : due) {
    Note& n = notes_.at(id);
    result.bytes_freed += n.row.size_bytes;
    if (Reported(id)) {
      n.audio = std::nullopt;
      n.row.purged = true;
      ++result.audio_deleted;
    } else {
      notes_.erase(id);
      ++result.notes_deleted;
    }
  }
  if (absl::Status s = Leave(); !s.ok()) return s;
  return result;
}

absl::StatusOr<StoreGauges> FakeModerationStore::Gauges(absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Enter(); !s.ok()) return s;
  StoreGauges g;
  for (const auto& [id, n] : notes_) {
    if (n.row.purged) continue;
    ++g.notes;
    g.audio_bytes += n.row.size_bytes;
  }
  for (const auto& [id, r] : reports_) {
    if (r.status != ReportStatus::kOpen) continue;
    ++g.open_reports;
    if (!g.oldest_open_report_at || r.reported_at < *g.oldest_open_report_at) {
      g.oldest_open_report_at = r.reported_at;
    }
  }
  const absl::Time now = clock_.Now();
  for (const auto& [id, m] : mutes_) {
    if (ActiveAt(m, now)) ++g.active_mutes;
  }
  if (absl::Status s = Leave(); !s.ok()) return s;
  return g;
}

}  // namespace courtpiece::moderation
