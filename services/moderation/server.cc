#include "services/moderation/server.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/grpc_status.h"

namespace courtpiece::moderation {
namespace {

int64_t Ms(absl::Time t) { return absl::ToUnixMillis(t); }
int64_t Ms(const std::optional<absl::Time>& t) { return t.has_value() ? Ms(*t) : 0; }

std::string IdText(int64_t id) { return id == 0 ? std::string() : absl::StrCat(id); }

v1::ReportStatus ToProto(ReportStatus status) {
  switch (status) {
    case ReportStatus::kOpen:
      return v1::REPORT_STATUS_OPEN;
    case ReportStatus::kDismissed:
      return v1::REPORT_STATUS_DISMISSED;
    case ReportStatus::kActioned:
      return v1::REPORT_STATUS_ACTIONED;
  }
  return v1::REPORT_STATUS_UNSPECIFIED;
}

std::optional<ReportStatus> FromProto(v1::ReportStatus status) {
  switch (status) {
    case v1::REPORT_STATUS_OPEN:
      return ReportStatus::kOpen;
    case v1::REPORT_STATUS_DISMISSED:
      return ReportStatus::kDismissed;
    case v1::REPORT_STATUS_ACTIONED:
      return ReportStatus::kActioned;
    default:
      return std::nullopt;
  }
}

AdminAction FromProto(v1::Action action) {
  switch (action) {
    case v1::ACTION_DISMISS:
      return AdminAction::kDismiss;
    case v1::ACTION_MUTE_FOR:
      return AdminAction::kMuteFor;
    case v1::ACTION_MUTE_UNTIL_LIFTED:
      return AdminAction::kMuteUntilLifted;
    default:
      return AdminAction::kUnspecified;
  }
}

void ToProto(const ReportRow& in, v1::Report* out) {
  out->set_report_id(IdText(in.report_id));
  out->set_note_id(in.note_id);
  out->set_table_id(in.table_id);
  out->set_round(in.round);
  out->set_author(in.author);
  out->set_reporter(in.reporter);
  out->set_status(ToProto(in.status));
  out->set_reported_at_ms(Ms(in.reported_at));
  out->set_resolved_at_ms(Ms(in.resolved_at));
  out->set_resolved_by(in.resolved_by);
  out->set_resolution_reason(in.resolution_reason);
}

void ToProto(const MuteRow& in, v1::Mute* out) {
  out->set_player_id(in.player_id);
  out->set_created_at_ms(Ms(in.created_at));
  out->set_until_ms(Ms(in.until));
  out->set_muted_by(in.muted_by);
  out->set_reason(in.reason);
  out->set_report_id(IdText(in.report_id));
  out->set_lifted_at_ms(Ms(in.lifted_at));
  out->set_lifted_by(in.lifted_by);
}

void ToProto(const AuditRow& in, v1::AuditEntry* out) {
  out->set_audit_id(in.audit_id);
  out->set_admin_id(in.admin_id);
  out->set_action(in.action);
  out->set_target_player(in.target_player);
  out->set_report_id(IdText(in.report_id));
  out->set_note_id(in.note_id);
  out->set_reason(in.reason);
  out->set_detail(in.detail);
  out->set_at_ms(Ms(in.at));
}

void ToProto(const NoteRow& in, v1::NoteInfo* out) {
  out->set_note_id(in.note_id);
  out->set_table_id(in.table_id);
  out->set_round(in.round);
  out->set_author(in.author);
  out->set_duration_ms(in.duration_ms);
  out->set_format(in.format);
  out->set_content_type(in.content_type);
  out->set_size_bytes(in.size_bytes);
  out->set_created_at_ms(Ms(in.created_at));
  out->set_purged(in.purged);
}

std::string Metadata(const grpc::ServerContext& context, const std::string& key) {
  auto it = context.client_metadata().find(key);
  if (it == context.client_metadata().end()) return {};
  return std::string(it->second.data(), it->second.size());
}

// admin_actions{action}: resolve_dismiss, resolve_mute_for, resolve_mute_until_lifted.
std::string ResolveLabel(AdminAction action) {
  switch (action) {
    case AdminAction::kDismiss:
      return "resolve_dismiss";
    case AdminAction::kMuteFor:
      return "resolve_mute_for";
    case AdminAction::kMuteUntilLifted:
      return "resolve_mute_until_lifted";
    case AdminAction::kUnspecified:
      break;
  }
  return "resolve_unspecified";
}

grpc::Status Refuse(const common::Logger& log, std::string_view rpc, const absl::Status& status) {
  if (!common::IsClientMessageCode(status.code())) {
    log.Warn("rpc failed", {{"rpc", rpc}, {"status", status}});
  }
  return common::ToClientGrpcStatus(status);
}

}  // namespace

std::string ResultLabel(const absl::Status& status) {
  if (status.ok()) return "ok";
  std::string_view word = ReasonWord(status);
  if (!word.empty() && common::IsClientMessageCode(status.code())) return std::string(word);
  return absl::AsciiStrToLower(common::GrpcCodeName(static_cast<grpc::StatusCode>(status.code())));
}

// --- metrics ---------------------------------------------------------------------------------

ModerationMetrics::ModerationMetrics(common::Metrics& metrics)
    : notes_(metrics.Counter("notes",
                             "UploadNote by result: accepted, replayed, or the "
                             "refusal's reason word (too_big, muted, ...).")),
      bytes_stored_(metrics.Counter("note_bytes_stored", "Audio bytes of accepted new notes.")),
      reports_(metrics.Counter("reports", "FileReport by result: filed, replayed, or the reason.")),
      admin_actions_(metrics.Counter("admin_actions", "Admin actions by action.")),
      purge_runs_(metrics.Counter("purge_runs", "Purge runs by result.")),
      purged_(metrics.Counter("purged_notes",
                              "Notes purged: whole (unreported) or audio (reported, kept).")),
      purged_bytes_(metrics.Counter("purged_bytes", "Audio bytes freed by the purge.")),
      open_reports_(metrics.Gauge("open_reports", "Open reports in the admin queue.")),
      oldest_open_report_age_(metrics.Gauge("oldest_open_report_age_seconds",
                                            "Age of the oldest open report (0: none).")),
      notes_stored_(metrics.Gauge("notes_stored", "Notes with their audio stored.")),
      audio_bytes_(metrics.Gauge("audio_bytes", "Audio bytes stored.")),
      active_mutes_(metrics.Gauge("active_mutes", "Players muted now.")) {
  // The everyday results exist from the start at 0 (a dashboard shows 0, not "no data").
  for (const char* result : {"accepted", "replayed"}) notes_.WithLabels({{"result", result}});
  for (const char* result : {"filed", "replayed"}) reports_.WithLabels({{"result", result}});
}

void ModerationMetrics::Upload(const absl::Status& status, bool replayed, int64_t bytes) {
  const std::string result =
      status.ok() ? (replayed ? "replayed" : "accepted") : ResultLabel(status);
  notes_.WithLabels({{"result", result}}).Increment();
  if (status.ok() && !replayed) bytes_stored_.WithLabels({}).Increment(static_cast<double>(bytes));
}

void ModerationMetrics::Report(const absl::Status& status, bool replayed) {
  const std::string result = status.ok() ? (replayed ? "replayed" : "filed") : ResultLabel(status);
  reports_.WithLabels({{"result", result}}).Increment();
}

void ModerationMetrics::AdminAction(std::string_view action) {
  admin_actions_.WithLabels({{"action", std::string(action)}}).Increment();
}

void ModerationMetrics::Purge(const absl::StatusOr<PurgeRun>& run) {
  purge_runs_.WithLabels({{"result", ResultLabel(run.status())}}).Increment();
  if (!run.ok()) return;
  purged_.WithLabels({{"kind", "whole"}}).Increment(static_cast<double>(run->result.notes_deleted));
  purged_.WithLabels({{"kind", "audio"}}).Increment(static_cast<double>(run->result.audio_deleted));
  purged_bytes_.WithLabels({}).Increment(static_cast<double>(run->result.bytes_freed));
}

void ModerationMetrics::Gauges(const StoreGauges& gauges, absl::Time now) {
  open_reports_.WithLabels({}).Set(static_cast<double>(gauges.open_reports));
  oldest_open_report_age_.WithLabels({}).Set(
      gauges.oldest_open_report_at.has_value()
          ? absl::ToDoubleSeconds(now - *gauges.oldest_open_report_at)
          : 0.0);
  notes_stored_.WithLabels({}).Set(static_cast<double>(gauges.notes));
  audio_bytes_.WithLabels({}).Set(static_cast<double>(gauges.audio_bytes));
  active_mutes_.WithLabels({}).Set(static_cast<double>(gauges.active_mutes));
}

// --- VoiceNotes --------------------------------------------------------------------------------

VoiceNotesService::VoiceNotesService(VoiceNotes& notes, const auth::CallerAuth& auth,
                                     const Clock& clock, ServerOptions options,
                                     ModerationMetrics& metrics, const common::Logger& log)
    : notes_(notes), auth_(auth), clock_(clock), options_(options), metrics_(metrics), log_(log) {}

grpc::Status VoiceNotesService::Failed(std::string_view rpc, const absl::Status& status) const {
  return Refuse(log_, rpc, status);
}

grpc::Status VoiceNotesService::UploadNote(grpc::ServerContext* context,
                                           const v1::UploadNoteRequest* request,
                                           v1::UploadNoteResponse* response) {
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) return Failed("UploadNote", caller.status());
  absl::StatusOr<UploadResult> r =
      notes_.UploadNote(UploadRequest{.author = caller->player_id,
                                      .table_id = request->table_id(),
                                      .round = request->round(),
                                      .audio = request->audio()},
                        common::ServerDeadline(*context, clock_, options_.rpc_deadline_max));
  metrics_.Upload(r.status(), r.ok() && r->replayed, r.ok() ? r->note.size_bytes : 0);
  if (!r.ok()) return Failed("UploadNote", r.status());
  response->set_note_id(r->note.note_id);
  response->set_round(r->note.round);
  response->set_duration_ms(r->note.duration_ms);
  response->set_format(r->note.format);
  response->set_replayed(r->replayed);
  return grpc::Status::OK;
}

grpc::Status VoiceNotesService::GetNote(grpc::ServerContext* context,
                                        const v1::GetNoteRequest* request,
                                        v1::GetNoteResponse* response) {
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) return Failed("GetNote", caller.status());
  absl::StatusOr<NoteWithAudio> r =
      notes_.GetNote(caller->player_id, request->note_id(),
                     common::ServerDeadline(*context, clock_, options_.rpc_deadline_max));
  if (!r.ok()) return Failed("GetNote", r.status());
  response->set_note_id(r->note.note_id);
  response->set_table_id(r->note.table_id);
  response->set_round(r->note.round);
  response->set_author(r->note.author);
  response->set_duration_ms(r->note.duration_ms);
  response->set_format(r->note.format);
  response->set_content_type(r->note.content_type);
  response->set_audio(std::move(r->audio));
  response->set_created_at_ms(Ms(r->note.created_at));
  return grpc::Status::OK;
}

// --- ModerationAdmin -----------------------------------------------------------------------------

ModerationAdminService::ModerationAdminService(ModerationAdmin& admin, const auth::CallerAuth& auth,
                                               const Clock& clock, ServerOptions options,
                                               ModerationMetrics& metrics,
                                               const common::Logger& log)
    : admin_(admin), auth_(auth), clock_(clock), options_(options), metrics_(metrics), log_(log) {}

grpc::Status ModerationAdminService::Failed(std::string_view rpc,
                                            const absl::Status& status) const {
  return Refuse(log_, rpc, status);
}

absl::StatusOr<AdminCaller> ModerationAdminService::Admin(
    const grpc::ServerContext& context) const {
  absl::StatusOr<auth::Caller> caller = auth_.RequireAdmin(context);
  if (!caller.ok()) return caller.status();
  return AdminCaller{.admin_id = caller->player_id,
                     .authorization = Metadata(context, "authorization")};
}

grpc::Status ModerationAdminService::ListReports(grpc::ServerContext* context,
                                                 const v1::ListReportsRequest* request,
                                                 v1::ListReportsResponse* response) {
  absl::StatusOr<AdminCaller> caller = Admin(*context);
  if (!caller.ok()) return Failed("ListReports", caller.status());
  if (request->status() != v1::REPORT_STATUS_UNSPECIFIED && !FromProto(request->status())) {
    return Failed("ListReports",
                  absl::InvalidArgumentError(absl::StrCat(
                      "bad_request: status ", static_cast<int>(request->status()),
                      " is none of REPORT_STATUS_OPEN, _DISMISSED, _ACTIONED (or unset: any)")));
  }
  absl::StatusOr<ReportPage> page =
      admin_.ListReports(ReportFilter{.status = FromProto(request->status()),
                                      .author = request->author(),
                                      .page_size = request->page_size(),
                                      .page_token = request->page_token()},
                         common::ServerDeadline(*context, clock_, options_.rpc_deadline_max));
  if (!page.ok()) return Failed("ListReports", page.status());
  for (const ReportRow& r : page->reports) ToProto(r, response->add_reports());
  response->set_next_page_token(page->next_page_token);
  response->set_open_total(page->open_total);
  return grpc::Status::OK;
}

grpc::Status ModerationAdminService::GetReport(grpc::ServerContext* context,
                                               const v1::GetReportRequest* request,
                                               v1::ReportContext* response) {
  absl::StatusOr<AdminCaller> caller = Admin(*context);
  if (!caller.ok()) return Failed("GetReport", caller.status());
  absl::StatusOr<ReportContextResult> r =
      admin_.GetReport(*caller, request->report_id(),
                       common::ServerDeadline(*context, clock_, options_.rpc_deadline_max));
  if (!r.ok()) return Failed("GetReport", r.status());
  if (!r->audio.empty()) metrics_.AdminAction("listen_note");
  ToProto(r->report, response->mutable_report());
  ToProto(r->note, response->mutable_note());
  response->set_audio(std::move(r->audio));
  for (const ReportRow& x : r->note_reports) ToProto(x, response->add_note_reports());
  for (const ReportRow& x : r->author_reports) ToProto(x, response->add_author_reports());
  response->set_author_name(r->author_name);
  response->set_author_quits_total(r->author_quits_total);
  for (const LobbyQuit& q : r->author_quits) {
    v1::QuitInfo* out = response->add_author_quits();
    out->set_table_id(q.table_id);
    out->set_game_no(q.game_no);
    out->set_game(q.game);
    out->set_recorded_at_ms(q.recorded_at_ms);
  }
  response->set_lobby_error(r->lobby_error);
  if (r->author_mute.has_value()) ToProto(*r->author_mute, response->mutable_author_mute());
  return grpc::Status::OK;
}

grpc::Status ModerationAdminService::ResolveReport(grpc::ServerContext* context,
                                                   const v1::ResolveReportRequest* request,
                                                   v1::ResolveReportResponse* response) {
  absl::StatusOr<AdminCaller> caller = Admin(*context);
  if (!caller.ok()) return Failed("ResolveReport", caller.status());
  const AdminAction action = FromProto(request->action());
  absl::StatusOr<Resolved> r =
      admin_.ResolveReport(*caller,
                           ResolveRequest{.report_id = request->report_id(),
                                          .action = action,
                                          .mute_for_ms = request->mute_for_ms(),
                                          .reason = request->reason()},
                           common::ServerDeadline(*context, clock_, options_.rpc_deadline_max));
  if (!r.ok()) return Failed("ResolveReport", r.status());
  metrics_.AdminAction(ResolveLabel(action));
  for (const ReportRow& x : r->reports) ToProto(x, response->add_resolved());
  if (r->mute.has_value()) ToProto(*r->mute, response->mutable_mute());
  return grpc::Status::OK;
}

grpc::Status ModerationAdminService::MutePlayer(grpc::ServerContext* context,
                                                const v1::MutePlayerRequest* request,
                                                v1::Mute* response) {
  absl::StatusOr<AdminCaller> caller = Admin(*context);
  if (!caller.ok()) return Failed("MutePlayer", caller.status());
  absl::StatusOr<MuteRow> r =
      admin_.MutePlayer(*caller,
                        MuteRequest{.player_id = request->player_id(),
                                    .mute_for_ms = request->mute_for_ms(),
                                    .reason = request->reason()},
                        common::ServerDeadline(*context, clock_, options_.rpc_deadline_max));
  if (!r.ok()) return Failed("MutePlayer", r.status());
  metrics_.AdminAction("mute");
  ToProto(*r, response);
  return grpc::Status::OK;
}

grpc::Status ModerationAdminService::ListMutes(grpc::ServerContext* context,
                                               const v1::ListMutesRequest* request,
                                               v1::ListMutesResponse* response) {
  absl::StatusOr<AdminCaller> caller = Admin(*context);
  if (!caller.ok()) return Failed("ListMutes", caller.status());
  absl::StatusOr<MutePage> page =
      admin_.ListMutes(MuteFilter{.include_inactive = request->include_inactive(),
                                  .player_id = request->player_id(),
                                  .page_size = request->page_size(),
                                  .page_token = request->page_token()},
                       common::ServerDeadline(*context, clock_, options_.rpc_deadline_max));
  if (!page.ok()) return Failed("ListMutes", page.status());
  for (const MuteRow& m : page->mutes) ToProto(m, response->add_mutes());
  response->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

grpc::Status ModerationAdminService::LiftMute(grpc::ServerContext* context,
                                              const v1::LiftMuteRequest* request,
                                              v1::Mute* response) {
  absl::StatusOr<AdminCaller> caller = Admin(*context);
  if (!caller.ok()) return Failed("LiftMute", caller.status());
  absl::StatusOr<MuteRow> r =
      admin_.LiftMute(*caller, request->player_id(), request->reason(),
                      common::ServerDeadline(*context, clock_, options_.rpc_deadline_max));
  if (!r.ok()) return Failed("LiftMute", r.status());
  metrics_.AdminAction("lift_mute");
  ToProto(*r, response);
  return grpc::Status::OK;
}

grpc::Status ModerationAdminService::ListAudit(grpc::ServerContext* context,
                                               const v1::ListAuditRequest* request,
                                               v1::ListAuditResponse* response) {
  absl::StatusOr<AdminCaller> caller = Admin(*context);
  if (!caller.ok()) return Failed("ListAudit", caller.status());
  absl::StatusOr<AuditPage> page =
      admin_.ListAudit(AuditFilter{.admin_id = request->admin_id(),
                                   .target_player = request->target_player(),
                                   .page_size = request->page_size(),
                                   .page_token = request->page_token()},
                       common::ServerDeadline(*context, clock_, options_.rpc_deadline_max));
  if (!page.ok()) return Failed("ListAudit", page.status());
  for (const AuditRow& a : page->entries) ToProto(a, response->add_entries());
  response->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

// --- ReportIntake --------------------------------------------------------------------------------

ReportIntakeService::ReportIntakeService(VoiceNotes& notes, const Clock& clock,
                                         ServerOptions options, ModerationMetrics& metrics,
                                         const common::Logger& log)
    : notes_(notes), clock_(clock), options_(options), metrics_(metrics), log_(log) {}

grpc::Status ReportIntakeService::FileReport(grpc::ServerContext* context,
                                             const v1::FileReportRequest* request,
                                             v1::FileReportReply* response) {
  absl::StatusOr<bool> replayed =
      notes_.FileReport(ReportRequest{.key = request->key(),
                                      .table_id = request->table_id(),
                                      .note_id = request->note_id(),
                                      .author = request->author(),
                                      .reporter = request->reporter(),
                                      .round = request->round()},
                        common::ServerDeadline(*context, clock_, options_.rpc_deadline_max));
  metrics_.Report(replayed.status(), replayed.ok() && *replayed);
  if (!replayed.ok()) return Refuse(log_, "FileReport", replayed.status());
  response->set_replayed(*replayed);
  return grpc::Status::OK;
}

grpc::Status ReportIntakeService::CheckVoice(grpc::ServerContext* context,
                                             const v1::CheckVoiceRequest* request,
                                             v1::CheckVoiceReply* response) {
  const absl::Status s = notes_.CheckVoice(
      request->player_id(), common::ServerDeadline(*context, clock_, options_.rpc_deadline_max));
  if (s.code() == absl::StatusCode::kPermissionDenied) {  // muted: the answer, not a failure
    response->set_muted(true);
    response->set_message(std::string(s.message()));
    return grpc::Status::OK;
  }
  if (!s.ok()) return Refuse(log_, "CheckVoice", s);
  response->set_muted(false);
  return grpc::Status::OK;
}

}  // namespace courtpiece::moderation
