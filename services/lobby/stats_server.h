// StatsService (lobby.proto Stats): a player's stats per game type and recent results.
// Every call is authenticated through auth::CallerAuth; player_id empty means the caller; any
// signed-in player may read another player's stats and results (they are public).
// Translation only: proto <-> Records, the deadline, the status.
// Thread-safety: safe for concurrent RPCs.
#ifndef COURTPIECE_SERVICES_LOBBY_STATS_SERVER_H_
#define COURTPIECE_SERVICES_LOBBY_STATS_SERVER_H_

#include "absl/time/time.h"
#include "courtpiece/auth/caller_auth.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/log.h"
#include "courtpiece/lobby/v1/lobby.grpc.pb.h"
#include "services/lobby/records.h"

namespace courtpiece::lobby {

struct StatsServerOptions {
  absl::Duration rpc_deadline_max = absl::Seconds(5);
};

class StatsService final : public v1::Stats::Service {
 public:
  // Every reference must outlive the service.
  StatsService(Records& records, const auth::CallerAuth& auth, const Clock& clock,
               StatsServerOptions options, const common::Logger& log);

  grpc::Status GetStats(grpc::ServerContext* context, const v1::GetStatsRequest* request,
                        v1::StatsResponse* response) override;
  grpc::Status RecentResults(grpc::ServerContext* context, const v1::RecentResultsRequest* request,
                             v1::RecentResultsResponse* response) override;

 private:
  Records& records_;
  const auth::CallerAuth& auth_;
  const Clock& clock_;
  const StatsServerOptions options_;
  const common::Logger& log_;
};

// domain -> proto, shared with LobbyAdminService.
void StatsToProto(const StatsView& in, v1::StatsResponse* out);
void ResultToProto(const PlayerGameResult& in, v1::GameResult* out);

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_STATS_SERVER_H_
