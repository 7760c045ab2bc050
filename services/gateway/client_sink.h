// The front's side of one client Play connection (a WebSocket or a gRPC stream), as the
// play relay (play_session.h) sees it.
//
// Contract: Send queues one message for the client and returns at once; it returns false
// (and queues nothing) when the connection's bounded send queue is full or the connection
// is closed. A full queue is the front's business: it closes the client with
// RESOURCE_EXHAUSTED ("slow reader") by itself. Finish ends the client's stream with the
// status (OK: a normal end) after the messages already queued; calls after the first Finish,
// or after the client went away, are ignored.
// Thread-safety: both methods may be called from any thread.
#ifndef COURTPIECE_SERVICES_GATEWAY_CLIENT_SINK_H_
#define COURTPIECE_SERVICES_GATEWAY_CLIENT_SINK_H_

#include "absl/status/status.h"
#include "courtpiece/client/v1/client.pb.h"

namespace courtpiece::gateway {

class ClientSink {
 public:
  virtual ~ClientSink() = default;
  virtual bool Send(client::v1::PlayResponse message) = 0;
  virtual void Finish(const absl::Status& status) = 0;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_CLIENT_SINK_H_
