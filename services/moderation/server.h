// The moderation service's gRPC face: VoiceNotes (players, through the gateway),
// ModerationAdmin (admins, through the gateway) and ReportIntake (table instances, on the
// internal network). Translation only: the caller from auth::CallerAuth (VoiceNotes: any
// valid token; ModerationAdmin: RequireAdmin), proto <-> domain, absl::Status ->
// grpc::Status (codes 1:1; infrastructure messages replaced by common::ToClientGrpcStatus
// and logged), the RPC's deadline capped by rpc_deadline_max. ReportIntake trusts its caller
// (the table tier, as the lobby's LobbyRecords does).
// Metrics (ModerationMetrics, courtpiece_moderation_*): notes by result (accepted, replayed,
// or the refusal's reason word), bytes stored, reports by result, admin actions by action,
// purge runs and purged notes, and the store's gauges (refreshed by main's loop).
// Thread-safety: safe for concurrent RPCs.
#ifndef COURTPIECE_SERVICES_MODERATION_SERVER_H_
#define COURTPIECE_SERVICES_MODERATION_SERVER_H_

#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "courtpiece/auth/caller_auth.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/moderation/v1/moderation.grpc.pb.h"
#include "courtpiece/moderation/v1/reports.grpc.pb.h"
#include "services/moderation/admin.h"
#include "services/moderation/retention.h"
#include "services/moderation/voice_notes.h"

namespace courtpiece::moderation {

// "ok"/"accepted"-style results, or the refusal's reason word, or the code's lower-case name.
std::string ResultLabel(const absl::Status& status);

class ModerationMetrics {
 public:
  explicit ModerationMetrics(common::Metrics& metrics);

  void Upload(const absl::Status& status, bool replayed, int64_t bytes);
  void Report(const absl::Status& status, bool replayed);
  void AdminAction(std::string_view action);
  void Purge(const absl::StatusOr<PurgeRun>& run);
  void Gauges(const StoreGauges& gauges, absl::Time now);

 private:
  common::CounterFamily notes_;
  common::CounterFamily bytes_stored_;
  common::CounterFamily reports_;
  common::CounterFamily admin_actions_;
  common::CounterFamily purge_runs_;
  common::CounterFamily purged_;
  common::CounterFamily purged_bytes_;
  common::GaugeFamily open_reports_;
  common::GaugeFamily oldest_open_report_age_;
  common::GaugeFamily notes_stored_;
  common::GaugeFamily audio_bytes_;
  common::GaugeFamily active_mutes_;
};

struct ServerOptions {
  absl::Duration rpc_deadline_max = absl::Seconds(5);
};

class VoiceNotesService final : public v1::VoiceNotes::Service {
 public:
  // Every reference must outlive the service.
  VoiceNotesService(VoiceNotes& notes, const auth::CallerAuth& auth, const Clock& clock,
                    ServerOptions options, ModerationMetrics& metrics, const common::Logger& log);

  grpc::Status UploadNote(grpc::ServerContext* context, const v1::UploadNoteRequest* request,
                          v1::UploadNoteResponse* response) override;
  grpc::Status GetNote(grpc::ServerContext* context, const v1::GetNoteRequest* request,
                       v1::GetNoteResponse* response) override;

 private:
  grpc::Status Failed(std::string_view rpc, const absl::Status& status) const;

  VoiceNotes& notes_;
  const auth::CallerAuth& auth_;
  const Clock& clock_;
  const ServerOptions options_;
  ModerationMetrics& metrics_;
  const common::Logger& log_;
};

class ModerationAdminService final : public v1::ModerationAdmin::Service {
 public:
  // Every reference must outlive the service.
  ModerationAdminService(ModerationAdmin& admin, const auth::CallerAuth& auth, const Clock& clock,
                         ServerOptions options, ModerationMetrics& metrics,
                         const common::Logger& log);

  grpc::Status ListReports(grpc::ServerContext* context, const v1::ListReportsRequest* request,
                           v1::ListReportsResponse* response) override;
  grpc::Status GetReport(grpc::ServerContext* context, const v1::GetReportRequest* request,
                         v1::ReportContext* response) override;
  grpc::Status ResolveReport(grpc::ServerContext* context, const v1::ResolveReportRequest* request,
                             v1::ResolveReportResponse* response) override;
  grpc::Status MutePlayer(grpc::ServerContext* context, const v1::MutePlayerRequest* request,
                          v1::Mute* response) override;
  grpc::Status ListMutes(grpc::ServerContext* context, const v1::ListMutesRequest* request,
                         v1::ListMutesResponse* response) override;
  grpc::Status LiftMute(grpc::ServerContext* context, const v1::LiftMuteRequest* request,
                        v1::Mute* response) override;
  grpc::Status ListAudit(grpc::ServerContext* context, const v1::ListAuditRequest* request,
                         v1::ListAuditResponse* response) override;

 private:
  // The admin calling, or the status to answer (UNAUTHENTICATED / PERMISSION_DENIED).
  absl::StatusOr<AdminCaller> Admin(const grpc::ServerContext& context) const;
  grpc::Status Failed(std::string_view rpc, const absl::Status& status) const;

  ModerationAdmin& admin_;
  const auth::CallerAuth& auth_;
  const Clock& clock_;
  const ServerOptions options_;
  ModerationMetrics& metrics_;
  const common::Logger& log_;
};

class ReportIntakeService final : public v1::ReportIntake::Service {
 public:
  // Every reference must outlive the service.
  ReportIntakeService(VoiceNotes& notes, const Clock& clock, ServerOptions options,
                      ModerationMetrics& metrics, const common::Logger& log);

  grpc::Status FileReport(grpc::ServerContext* context, const v1::FileReportRequest* request,
                          v1::FileReportReply* response) override;
  grpc::Status CheckVoice(grpc::ServerContext* context, const v1::CheckVoiceRequest* request,
                          v1::CheckVoiceReply* response) override;

 private:
  VoiceNotes& notes_;
  const Clock& clock_;
  const ServerOptions options_;
  ModerationMetrics& metrics_;
  const common::Logger& log_;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_SERVER_H_
