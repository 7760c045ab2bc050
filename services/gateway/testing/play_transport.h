// One client Play connection to the gateway, as a test or the load tool sees it: the
// WebSocket JSON client (ws_play_client.h) and the gRPC client (grpc_play_client.h) both
// implement it, so the scripted player (scripted_player.h) plays over either.
//
// Contract: Send writes one PlayRequest (UNAVAILABLE once the stream has ended). Read
// returns the next PlayResponse; DEADLINE_EXCEEDED when none came within `timeout` (the
// stream stays open); once the stream has ended and every message before the end was read,
// OUT_OF_RANGE "stream ended", and end() says how. Cancel ends the stream from the client's
// side (the gateway sees the client go away).
// StreamEnd.status is the gRPC status, or for a WebSocket the close code's meaning: 1000 OK,
// 4000 + c the gRPC code c (reason = message), 1001 UNAVAILABLE (going away), 1009
// RESOURCE_EXHAUSTED (message too big), anything else (1006: the connection was lost without
// a close frame) UNAVAILABLE.
// Thread-safety: not thread-safe; one thread at a time (Cancel of GrpcPlayClient excepted).
#ifndef COURTPIECE_SERVICES_GATEWAY_TESTING_PLAY_TRANSPORT_H_
#define COURTPIECE_SERVICES_GATEWAY_TESTING_PLAY_TRANSPORT_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/client/v1/client.pb.h"

namespace courtpiece::gateway::testing {

struct StreamEnd {
  absl::Status status;
  int ws_close_code = 0;  // WebSocket only: the close code (1006: no close frame)
  std::string ws_reason;  // WebSocket only: the close reason
};

class PlayTransport {
 public:
  virtual ~PlayTransport() = default;
  virtual absl::Status Send(const client::v1::PlayRequest& request) = 0;
  virtual absl::StatusOr<client::v1::PlayResponse> Read(absl::Duration timeout) = 0;
  virtual std::optional<StreamEnd> end() const = 0;
  virtual void Cancel() = 0;
  virtual const char* kind() const = 0;  // "websocket" or "grpc"
};

// The status a WebSocket close code stands for (see above).
absl::Status StatusFromCloseCode(int code, const std::string& reason);

}  // namespace courtpiece::gateway::testing

#endif  // COURTPIECE_SERVICES_GATEWAY_TESTING_PLAY_TRANSPORT_H_
