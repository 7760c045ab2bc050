// AccountsService: the gRPC face of Accounts (lobby.proto service Accounts). Translation
// only: proto -> domain, domain -> proto, absl::Status -> grpc::Status (codes 1:1;
// common::ToClientGrpcStatus hides infrastructure messages and they are logged), the RPC's
// deadline (the client's, capped at rpc_deadline_max) -> the domain's. GetProfile,
// UpdateProfile and GetPublicProfiles (any role) authenticate the caller with auth::CallerAuth
// first (UNAUTHENTICATED).
// Metrics: courtpiece_lobby_logins_total{result} (GuestLogin: created, signed_in, or the
// error code) and courtpiece_lobby_login_latency_seconds.
// Thread-safety: safe for concurrent RPCs.
#ifndef COURTPIECE_SERVICES_LOBBY_ACCOUNTS_SERVER_H_
#define COURTPIECE_SERVICES_LOBBY_ACCOUNTS_SERVER_H_

#include <string_view>

#include "absl/time/time.h"
#include "courtpiece/auth/caller_auth.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/lobby/v1/lobby.grpc.pb.h"
#include "services/lobby/accounts.h"

namespace courtpiece::lobby {

class AccountsService final : public v1::Accounts::Service {
 public:
  // Every reference must outlive the service.
  AccountsService(Accounts& accounts, const auth::CallerAuth& auth, const Clock& clock,
                  absl::Duration rpc_deadline_max, common::Metrics& metrics,
                  const common::Logger& log);

  grpc::Status GuestLogin(grpc::ServerContext* context, const v1::GuestLoginRequest* request,
                          v1::Session* response) override;
  grpc::Status Refresh(grpc::ServerContext* context, const v1::RefreshRequest* request,
                       v1::Session* response) override;
  grpc::Status GetProfile(grpc::ServerContext* context, const v1::GetProfileRequest* request,
                          v1::Profile* response) override;
  grpc::Status UpdateProfile(grpc::ServerContext* context, const v1::UpdateProfileRequest* request,
                             v1::Profile* response) override;
  grpc::Status GetPublicProfiles(grpc::ServerContext* context,
                                 const v1::GetPublicProfilesRequest* request,
                                 v1::GetPublicProfilesResponse* response) override;

 private:
  absl::Time Deadline(const grpc::ServerContext& context) const;
  grpc::Status Failed(std::string_view rpc, const absl::Status& status) const;

  Accounts& accounts_;
  const auth::CallerAuth& auth_;
  const Clock& clock_;
  const absl::Duration rpc_deadline_max_;
  common::CounterFamily logins_;
  common::HistogramFamily login_latency_;
  const common::Logger& log_;
};

// Domain -> proto (also for the other lobby services that return profiles).
void ToProto(const Session& in, v1::Session* out);
void ToProto(const Profile& in, v1::Profile* out);
void ToProto(const PublicProfile& in, v1::PublicProfile* out);

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_ACCOUNTS_SERVER_H_
