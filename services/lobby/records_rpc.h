// What the records, stats and admin servers share: the RPC's domain deadline and the
// client's status for a failure. Header-only; part of the records/stats part of the lobby.
#ifndef COURTPIECE_SERVICES_LOBBY_RECORDS_RPC_H_
#define COURTPIECE_SERVICES_LOBBY_RECORDS_RPC_H_

#include <grpcpp/server_context.h>

#include <algorithm>
#include <chrono>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "courtpiece/common/client_errors.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/grpc_status.h"
#include "courtpiece/common/log.h"

namespace courtpiece::lobby::records_rpc {

// min(the client's deadline, now + rpc_deadline_max).
inline absl::Time Deadline(const grpc::ServerContext& context, const Clock& clock,
                           absl::Duration rpc_deadline_max) {
  return common::ServerDeadline(context, clock, rpc_deadline_max);
}

// The client's status; logs what the client does not see (infrastructure messages).
inline grpc::Status Failed(const common::Logger& log, std::string_view rpc,
                           const absl::Status& status) {
  if (!common::IsClientMessageCode(status.code())) {
    log.Warn("rpc failed", {{"rpc", rpc}, {"status", status}});
  }
  return common::ToClientGrpcStatus(status);
}

}  // namespace courtpiece::lobby::records_rpc

#endif  // COURTPIECE_SERVICES_LOBBY_RECORDS_RPC_H_
