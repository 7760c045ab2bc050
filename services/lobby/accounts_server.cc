#include "services/lobby/accounts_server.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "courtpiece/common/client_errors.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/grpc_status.h"

namespace courtpiece::lobby {

void ToProto(const Session& in, v1::Session* out) {
  out->set_player_id(in.player_id);
  out->set_role(auth::RoleName(in.role));
  out->set_access_token(in.access_token);
  out->set_access_expires_at_ms(in.access_expires_at_ms);
  out->set_refresh_token(in.refresh_token);
  out->set_refresh_expires_at_ms(in.refresh_expires_at_ms);
  out->set_created(in.created);
}

void ToProto(const Profile& in, v1::Profile* out) {
  out->set_player_id(in.player_id);
  out->set_display_name(in.display_name);
  out->set_avatar_id(in.avatar_id);
  out->set_role(auth::RoleName(in.role));
  out->set_coins(in.coins);
  out->set_created_at_ms(in.created_at_ms);
}

void ToProto(const PublicProfile& in, v1::PublicProfile* out) {
  out->set_player_id(in.player_id);
  out->set_display_name(in.display_name);
  out->set_avatar_id(in.avatar_id);
}

AccountsService::AccountsService(Accounts& accounts, const auth::CallerAuth& auth,
                                 const Clock& clock, absl::Duration rpc_deadline_max,
                                 common::Metrics& metrics, const common::Logger& log)
    : accounts_(accounts),
      auth_(auth),
      clock_(clock),
      rpc_deadline_max_(rpc_deadline_max),
      logins_(metrics.Counter("logins", "GuestLogin RPCs by result.")),
      login_latency_(metrics.LatencyHistogram("login_latency", "GuestLogin RPC latency.")),
      log_(log) {}

absl::Time AccountsService::Deadline(const grpc::ServerContext& context) const {
  return common::ServerDeadline(context, clock_, rpc_deadline_max_);
}

grpc::Status AccountsService::Failed(std::string_view rpc, const absl::Status& status) const {
  if (!common::IsClientMessageCode(status.code())) {
    log_.Warn("rpc failed", {{"rpc", rpc}, {"status", status}});
  }
  return common::ToClientGrpcStatus(status);
}

grpc::Status AccountsService::GuestLogin(grpc::ServerContext* context,
                                         const v1::GuestLoginRequest* request,
                                         v1::Session* response) {
  const absl::Time start = clock_.Now();
  absl::StatusOr<Session> session =
      accounts_.GuestLogin(request->device_secret(), request->display_name(), Deadline(*context));
  const std::string result = session.ok()
                                 ? (session->created ? "created" : "signed_in")
                                 : absl::AsciiStrToLower(common::GrpcCodeName(
                                       static_cast<grpc::StatusCode>(session.status().code())));
  logins_.WithLabels({{"result", result}}).Increment();
  login_latency_.WithLabels({}).Observe(absl::ToDoubleSeconds(clock_.Now() - start));
  if (!session.ok()) return Failed("GuestLogin", session.status());
  ToProto(*session, response);
  return grpc::Status::OK;
}

grpc::Status AccountsService::Refresh(grpc::ServerContext* context,
                                      const v1::RefreshRequest* request, v1::Session* response) {
  absl::StatusOr<Session> session = accounts_.Refresh(request->refresh_token(), Deadline(*context));
  if (!session.ok()) return Failed("Refresh", session.status());
  ToProto(*session, response);
  return grpc::Status::OK;
}

grpc::Status AccountsService::GetProfile(grpc::ServerContext* context, const v1::GetProfileRequest*,
                                         v1::Profile* response) {
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) return Failed("GetProfile", caller.status());
  absl::StatusOr<Profile> profile = accounts_.GetProfile(caller->player_id, Deadline(*context));
  if (!profile.ok()) return Failed("GetProfile", profile.status());
  ToProto(*profile, response);
  return grpc::Status::OK;
}

grpc::Status AccountsService::UpdateProfile(grpc::ServerContext* context,
                                            const v1::UpdateProfileRequest* request,
                                            v1::Profile* response) {
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) return Failed("UpdateProfile", caller.status());
  absl::StatusOr<Profile> profile = accounts_.UpdateProfile(
      caller->player_id, request->display_name(), request->avatar_id(), Deadline(*context));
  if (!profile.ok()) return Failed("UpdateProfile", profile.status());
  ToProto(*profile, response);
  return grpc::Status::OK;
}

grpc::Status AccountsService::GetPublicProfiles(grpc::ServerContext* context,
                                                const v1::GetPublicProfilesRequest* request,
                                                v1::GetPublicProfilesResponse* response) {
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) return Failed("GetPublicProfiles", caller.status());
  const std::vector<std::string> ids(request->player_ids().begin(), request->player_ids().end());
  absl::StatusOr<std::vector<PublicProfile>> profiles =
      accounts_.GetPublicProfiles(ids, Deadline(*context));
  if (!profiles.ok()) return Failed("GetPublicProfiles", profiles.status());
  for (const PublicProfile& p : *profiles) ToProto(p, response->add_profiles());
  return grpc::Status::OK;
}

}  // namespace courtpiece::lobby
