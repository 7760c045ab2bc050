// LobbyAdminService (lobby.proto LobbyAdmin): the reads for moderation and disputes. Admin
// tokens only (auth::CallerAuth::RequireAdmin: UNAUTHENTICATED / PERMISSION_DENIED).
// GetPlayer's profile comes from the injected ProfileFn (the accounts part): its NotFound
// (an unknown player) is the RPC's NOT_FOUND; the stats, recent results and quit count come
// from Records. Translation only.
// Thread-safety: safe for concurrent RPCs (the ProfileFn must be too).
#ifndef COURTPIECE_SERVICES_LOBBY_ADMIN_SERVER_H_
#define COURTPIECE_SERVICES_LOBBY_ADMIN_SERVER_H_

#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/auth/caller_auth.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/log.h"
#include "courtpiece/lobby/v1/lobby.grpc.pb.h"
#include "services/lobby/records.h"

namespace courtpiece::lobby {

struct AdminServerOptions {
  absl::Duration rpc_deadline_max = absl::Seconds(5);
  int dossier_results = 20;  // recent results in a PlayerDossier
};

class LobbyAdminService final : public v1::LobbyAdmin::Service {
 public:
  using ProfileFn = std::function<absl::StatusOr<v1::Profile>(std::string_view player_id)>;
  // Every reference must outlive the service.
  LobbyAdminService(Records& records, const auth::CallerAuth& auth, ProfileFn profile,
                    const Clock& clock, AdminServerOptions options, const common::Logger& log);

  grpc::Status GetPlayer(grpc::ServerContext* context, const v1::GetPlayerRequest* request,
                         v1::PlayerDossier* response) override;
  grpc::Status ListQuits(grpc::ServerContext* context, const v1::ListQuitsRequest* request,
                         v1::ListQuitsResponse* response) override;
  grpc::Status ListRounds(grpc::ServerContext* context, const v1::ListRoundsRequest* request,
                          v1::ListRoundsResponse* response) override;

 private:
  Records& records_;
  const auth::CallerAuth& auth_;
  const ProfileFn profile_;
  const Clock& clock_;
  const AdminServerOptions options_;
  const common::Logger& log_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_ADMIN_SERVER_H_
