#include "services/moderation/admin.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "services/moderation/voice_notes.h"

namespace courtpiece::moderation {
namespace {

absl::Status NoReport(const std::string& report_id) {
  return absl::NotFoundError(absl::StrCat("no_report: no report ", report_id));
}

// A report id as the API shows it (the store's id in decimal).
std::optional<int64_t> ParseReportId(const std::string& text) {
  int64_t id = 0;
  if (text.empty() || text.size() > 19 || !absl::SimpleAtoi(text, &id) || id <= 0) {
    return std::nullopt;
  }
  if (text.front() == '+' || text.front() == '0') return std::nullopt;  // one spelling per id
  return id;
}

// The store's page tokens are ids in decimal; anything else is the caller's mistake.
absl::Status CheckPageToken(const std::string& token) {
  if (token.empty()) return absl::OkStatus();
  int64_t id = 0;
  if (token.size() > 19 || !absl::SimpleAtoi(token, &id) || id <= 0 ||
      !std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return absl::InvalidArgumentError("bad_request: page_token is not one this API gave");
  }
  return absl::OkStatus();
}

absl::Status CheckReason(const std::string& reason) {
  const int chars = Utf8Chars(reason);
  if (chars < 1 || chars > kReasonCharsMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad_request: reason must be 1..", kReasonCharsMax, " characters"));
  }
  // The audit log keeps the reason to say why: blanks alone say nothing.
  if (std::all_of(reason.begin(), reason.end(),
                  [](char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); })) {
    return absl::InvalidArgumentError("bad_request: reason must say why (it is only blanks)");
  }
  return absl::OkStatus();
}

// A filter's player id: empty (any player) or well formed.
absl::Status CheckFilterId(const std::string& id, const char* field) {
  if (id.empty() || ValidId(id)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("bad_request: ", field, " is not a player id"));
}

absl::Status CheckMuteFor(int64_t mute_for_ms) {
  if (mute_for_ms < kMuteForMsMin || mute_for_ms > kMuteForMsMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad_request: mute_for_ms must be ", kMuteForMsMin, "..", kMuteForMsMax));
  }
  return absl::OkStatus();
}

}  // namespace

int ClampPageSize(int requested) {
  if (requested <= 0) return kPageSizeDefault;
  return std::min(requested, kPageSizeMax);
}

int Utf8Chars(const std::string& text) {
  int n = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++n;  // not a continuation byte
  }
  return n;
}

std::string ActionDetail(AdminAction action, int64_t mute_for_ms) {
  switch (action) {
    case AdminAction::kDismiss:
      return "dismiss";
    case AdminAction::kMuteFor:
      return absl::StrCat("mute_for ", mute_for_ms, " ms");
    case AdminAction::kMuteUntilLifted:
      return "mute_until_lifted";
    case AdminAction::kUnspecified:
      break;
  }
  return "unspecified";
}

ModerationAdmin::ModerationAdmin(ModerationStore& store, LobbyPort& lobby, const Clock& clock)
    : store_(store), lobby_(lobby), clock_(clock) {}

absl::Status ModerationAdmin::CheckDeadline(absl::Time deadline) const {
  if (clock_.Now() >= deadline) return absl::DeadlineExceededError("the call's deadline passed");
  return absl::OkStatus();
}

absl::StatusOr<ReportPage> ModerationAdmin::ListReports(ReportFilter filter, absl::Time deadline) {
  if (absl::Status s = CheckPageToken(filter.page_token); !s.ok()) return s;
  if (absl::Status s = CheckFilterId(filter.author, "author"); !s.ok()) return s;
  filter.page_size = ClampPageSize(filter.page_size);
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  return store_.ListReports(filter, deadline);
}

absl::StatusOr<ReportContextResult> ModerationAdmin::GetReport(const AdminCaller& caller,
                                                               const std::string& report_id,
                                                               absl::Time deadline) {
  std::optional<int64_t> id = ParseReportId(report_id);
  if (!id.has_value()) return NoReport(report_id);
  ReportContextResult out;
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<ReportRow> report = store_.GetReport(*id, deadline);
  if (!report.ok()) return report.status();
  out.report = *std::move(report);
  absl::StatusOr<NoteRow> note = store_.GetNote(out.report.note_id, deadline);
  if (!note.ok()) return note.status();
  out.note = *std::move(note);
  absl::StatusOr<std::vector<ReportRow>> note_reports =
      store_.ReportsOfNote(out.note.note_id, deadline);
  if (!note_reports.ok()) return note_reports.status();
  out.note_reports = *std::move(note_reports);
  absl::StatusOr<std::vector<ReportRow>> author_reports = store_.ReportsOfAuthor(
      out.note.author, kAuthorReportsMax + static_cast<int>(out.note_reports.size()), deadline);
  if (!author_reports.ok()) return author_reports.status();
  for (ReportRow& r : *author_reports) {
    if (r.note_id == out.note.note_id) continue;  // in note_reports already
    if (static_cast<int>(out.author_reports.size()) == kAuthorReportsMax) break;
    out.author_reports.push_back(std::move(r));
  }
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<std::optional<MuteRow>> mute =
      store_.ActiveMute(out.note.author, clock_.Now(), deadline);
  if (!mute.ok()) return mute.status();
  out.author_mute = *std::move(mute);

  if (!out.note.purged) {
    absl::StatusOr<std::string> audio = store_.GetAudio(out.note.note_id, deadline);
    if (audio.ok()) {
      // Listening is an admin action: its audit row is committed before the audio leaves.
      absl::Status audited =
          store_.AppendAudit(AuditRow{.admin_id = caller.admin_id,
                                      .action = "listen_note",
                                      .target_player = out.note.author,
                                      .report_id = out.report.report_id,
                                      .note_id = out.note.note_id,
                                      .detail = absl::StrCat(audio->size(), " bytes"),
                                      .at = clock_.Now()},
                             deadline);
      if (!audited.ok()) return audited;
      out.audio = *std::move(audio);
    } else if (audio.status().code() == absl::StatusCode::kNotFound) {
      out.note.purged = true;  // purged since the note was read
    } else {
      return audio.status();
    }
  }
  AddLobbyContext(caller, out, deadline);
  return out;
}

void ModerationAdmin::AddLobbyContext(const AdminCaller& caller, ReportContextResult& out,
                                      absl::Time deadline) {
  if (clock_.Now() >= deadline) {
    out.lobby_error = "no time left for the lobby";
    return;
  }
  absl::StatusOr<LobbyPlayer> player =
      lobby_.GetPlayer(caller.authorization, out.note.author, deadline);
  if (!player.ok()) {
    out.lobby_error = absl::StrCat("lobby GetPlayer: ", player.status().ToString());
    return;
  }
  out.author_name = player->display_name;
  out.author_quits_total = player->quits_total;
  absl::StatusOr<std::vector<LobbyQuit>> quits =
      lobby_.ListQuits(caller.authorization, out.note.author, kAuthorQuitsMax, deadline);
  if (!quits.ok()) {
    out.lobby_error = absl::StrCat("lobby ListQuits: ", quits.status().ToString());
    return;
  }
  out.author_quits = *std::move(quits);
}

absl::StatusOr<Resolved> ModerationAdmin::ResolveReport(const AdminCaller& caller,
                                                        const ResolveRequest& request,
                                                        absl::Time deadline) {
  if (request.action == AdminAction::kUnspecified) {
    return absl::InvalidArgumentError("bad_request: action is required");
  }
  if (absl::Status s = CheckReason(request.reason); !s.ok()) return s;
  if (request.action == AdminAction::kMuteFor) {
    if (absl::Status s = CheckMuteFor(request.mute_for_ms); !s.ok()) return s;
  }
  std::optional<int64_t> id = ParseReportId(request.report_id);
  if (!id.has_value()) return NoReport(request.report_id);
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<ReportRow> report = store_.GetReport(*id, deadline);
  if (!report.ok()) return report.status();
  if (report->status != ReportStatus::kOpen) {
    return absl::FailedPreconditionError(
        absl::StrCat("already_resolved: report ", request.report_id, " was resolved"));
  }
  const absl::Time now = clock_.Now();
  Resolution resolution{.report_id = *id,
                        .status = request.action == AdminAction::kDismiss ? ReportStatus::kDismissed
                                                                          : ReportStatus::kActioned,
                        .admin_id = caller.admin_id,
                        .reason = request.reason,
                        .now = now};
  if (request.action != AdminAction::kDismiss) {
    MuteRow mute{.player_id = report->author,
                 .created_at = now,
                 .muted_by = caller.admin_id,
                 .reason = request.reason,
                 .report_id = *id};
    if (request.action == AdminAction::kMuteFor) {
      mute.until = now + absl::Milliseconds(request.mute_for_ms);
    }
    resolution.mute = std::move(mute);
  }
  resolution.audit = AuditRow{.admin_id = caller.admin_id,
                              .action = "resolve_report",
                              .target_player = report->author,
                              .report_id = *id,
                              .note_id = report->note_id,
                              .reason = request.reason,
                              .detail = ActionDetail(request.action, request.mute_for_ms),
                              .at = now};
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  return store_.ResolveReport(resolution, deadline);
}

absl::StatusOr<MuteRow> ModerationAdmin::MutePlayer(const AdminCaller& caller,
                                                    const MuteRequest& request,
                                                    absl::Time deadline) {
  if (!ValidId(request.player_id)) {
    return absl::InvalidArgumentError("bad_request: player_id is not a player id");
  }
  if (request.mute_for_ms != 0) {
    if (absl::Status s = CheckMuteFor(request.mute_for_ms); !s.ok()) return s;
  }
  if (absl::Status s = CheckReason(request.reason); !s.ok()) return s;
  // Only a player can be muted: a mistyped id (or a bot's) must not look like a done mute.
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  if (absl::StatusOr<LobbyPlayer> player =
          lobby_.GetPlayer(caller.authorization, request.player_id, deadline);
      !player.ok()) {
    switch (player.status().code()) {
      case absl::StatusCode::kNotFound:
      case absl::StatusCode::kInvalidArgument:  // an id the lobby's rule calls malformed
        return absl::NotFoundError(absl::StrCat("no_player: no player ", request.player_id));
      case absl::StatusCode::kUnauthenticated:
      case absl::StatusCode::kPermissionDenied:
        return player.status();  // the lobby's own check of the admin
      default:
        break;
    }
    return absl::UnavailableError(absl::StrCat("the lobby could not confirm the player: retry (",
                                               player.status().message(), ")"));
  }
  const absl::Time now = clock_.Now();
  MuteRow mute{.player_id = request.player_id,
               .created_at = now,
               .muted_by = caller.admin_id,
               .reason = request.reason};
  if (request.mute_for_ms != 0) mute.until = now + absl::Milliseconds(request.mute_for_ms);
  const AdminAction action =
      request.mute_for_ms == 0 ? AdminAction::kMuteUntilLifted : AdminAction::kMuteFor;
  AuditRow audit{.admin_id = caller.admin_id,
                 .action = "mute",
                 .target_player = request.player_id,
                 .reason = request.reason,
                 .detail = ActionDetail(action, request.mute_for_ms),
                 .at = now};
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  return store_.AddMute(mute, audit, deadline);
}

absl::StatusOr<MutePage> ModerationAdmin::ListMutes(MuteFilter filter, absl::Time deadline) {
  if (absl::Status s = CheckPageToken(filter.page_token); !s.ok()) return s;
  if (absl::Status s = CheckFilterId(filter.player_id, "player_id"); !s.ok()) return s;
  filter.page_size = ClampPageSize(filter.page_size);
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  return store_.ListMutes(filter, clock_.Now(), deadline);
}

absl::StatusOr<MuteRow> ModerationAdmin::LiftMute(const AdminCaller& caller,
                                                  const std::string& player_id,
                                                  const std::string& reason, absl::Time deadline) {
  if (!ValidId(player_id)) {
    return absl::InvalidArgumentError("bad_request: player_id is not a player id");
  }
  if (absl::Status s = CheckReason(reason); !s.ok()) return s;
  const absl::Time now = clock_.Now();
  AuditRow audit{.admin_id = caller.admin_id,
                 .action = "lift_mute",
                 .target_player = player_id,
                 .reason = reason,
                 .detail = "lift",
                 .at = now};
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  return store_.LiftMute(player_id, caller.admin_id, now, audit, deadline);
}

absl::StatusOr<AuditPage> ModerationAdmin::ListAudit(AuditFilter filter, absl::Time deadline) {
  if (absl::Status s = CheckPageToken(filter.page_token); !s.ok()) return s;
  if (absl::Status s = CheckFilterId(filter.admin_id, "admin_id"); !s.ok()) return s;
  if (absl::Status s = CheckFilterId(filter.target_player, "target_player"); !s.ok()) return s;
  filter.page_size = ClampPageSize(filter.page_size);
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  return store_.ListAudit(filter, deadline);
}

}  // namespace courtpiece::moderation
