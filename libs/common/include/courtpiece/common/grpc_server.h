// The gRPC server every service uses: listen address (port 0 picks a free port), the
// standard health service (grpc.health.v1.Health), reflection, message size limits, and an
// interceptor that records, for each finished RPC, labels {method, code}:
//   courtpiece_<service>_grpc_server_handled_total          counter
//   courtpiece_<service>_grpc_server_handling_seconds       histogram (default buckets)
// method is the full path ("/courtpiece.lobby.v1.Lobby/Join"), or "unknown" for a method no
// linked service defines; code is the canonical name ("OK", "NOT_FOUND", ...). An RPC that
// ends without a status (client went away) counts as CANCELLED. Bidi streams are not
// intercepted (an interceptor costs every message a second pass through the completion
// queue): a service counts its streams itself (the table: streams, streams_cut; the gateway's
// async Play records itself with the CallRecorder).
//
//   ASSIGN_OR_RETURN(auto server, GrpcServer::Start({.listen_address = "0.0.0.0:7001"},
//                                                   {&lobby_service}, *metrics));
//   ServeUntilShutdownSignal(*server, absl::Seconds(10));   // main.cc: SIGTERM -> drain
//
// Contract: services and metrics must outlive the GrpcServer. Shutdown(deadline) drains:
//  1. health goes NOT_SERVING;
//  2. every call a sync handler has not yet started is refused with UNAVAILABLE ("server is
//     shutting down; the call was not run") without running: nothing was applied, retry
//     elsewhere/later. Calls already admitted run to completion; Shutdown waits for them
//     until `deadline`;
//  3. the gate keeps refusing for 100 ms more (capped at `deadline`): a client whose call
//     just finished may send its next one at once;
//  4. then the listener and all connections are closed within a short grace (100 ms, capped
//     at `deadline`), so idle client connections do not hold the shutdown; calls still
//     running at that point (only if the drain deadline passed) are cancelled and their
//     clients see UNAVAILABLE (handlers should watch ServerContext::IsCancelled()).
// Shutdown returns once every handler has returned. Calls arriving after it get UNAVAILABLE
// (nothing listens). The gate covers the sync methods of the services passed to Start
// (methods with a request message: unary and server-streaming); health and reflection are
// not gated. The destructor shuts down immediately if Shutdown() was not called. A service
// object may be passed to Start again after the earlier server was destroyed. Transport is
// plaintext (inside the cluster).
// Async-API methods: a service that is also an AsyncService gets the server's completion
// queues (options.async_queues of them, each polled by a thread of the server) once the
// server has started, and requests its calls on them. Shutdown, after gRPC's own shutdown
// (which cancels every call left), refuses every further operation (AsyncQueues::TryStart),
// shuts the queues down and returns once every operation's Done has run.
// Thread-safety: every method is safe from any thread; Shutdown() is idempotent.
#ifndef COURTPIECE_COMMON_GRPC_SERVER_H_
#define COURTPIECE_COMMON_GRPC_SERVER_H_

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/grpc_async.h"
#include "courtpiece/common/metrics.h"
#include "grpcpp/channel.h"
#include "grpcpp/impl/codegen/service_type.h"
#include "grpcpp/server.h"
#include "grpcpp/server_context.h"

namespace courtpiece::common {

class DrainGate;  // grpc_server.cc: admits calls until Shutdown, counts them in flight

// Records one finished RPC in the server's metrics ({method, code} count and latency), as
// the server's interceptor does for every other method. Thread-safe.
class CallRecorder {
 public:
  virtual void Record(const std::string& method, grpc::StatusCode code, double seconds) = 0;

 protected:
  ~CallRecorder() = default;
};

// The recorder a GrpcServer uses, for a server of our own beside it (the gateway's mobile
// front, services/gateway/h2_front.h): the same metric families on `metrics`, which must
// outlive it. A method path is labelled as the server labels it (unknown names: "unknown").
std::shared_ptr<CallRecorder> NewCallRecorder(Metrics& metrics);
std::string MethodLabel(const char* path);

// A service with async-API methods (beside sync or callback ones). GrpcServer::Start calls
// ServeOn once the server has started; the service requests its first calls there, on
// queues.server_queue(i), through queues.TryStart. The server's metrics interceptor leaves
// the async methods alone (with an interceptor every operation of a call passes through its
// completion queue twice): the service records each finished call with `recorder`.
class AsyncService {
 public:
  virtual void ServeOn(AsyncQueues& queues, CallRecorder& recorder) = 0;

 protected:
  ~AsyncService() = default;
};

struct GrpcServerOptions {
  std::string listen_address = "0.0.0.0:0";         // host:port; port 0: any free port
  int max_receive_message_bytes = 4 * 1024 * 1024;  // larger requests: RESOURCE_EXHAUSTED
  int max_send_message_bytes = 4 * 1024 * 1024;     // larger responses: RESOURCE_EXHAUSTED
  int max_threads = 0;                              // sync-server thread cap; 0: gRPC's
  // Sync-server threads kept polling for calls between calls. gRPC's default (2) makes a
  // server with more concurrent calls start and end a thread for nearly every call.
  int sync_max_pollers = 32;
  bool enable_reflection = true;  // grpc.reflection.v1alpha
  // Completion queues, each with its own polling thread, for the services that are
  // AsyncServices (none are made without one; grpc_async.h says why several).
  int async_queues = 2;
  // HTTP/2 keepalive towards the clients (0 leaves gRPC's own default for each).
  // ping_interval_ms > 0: every connection, with calls or without, is pinged that often, and
  // one whose answer takes over ping_timeout_ms is closed, its calls cancelled: a client that
  // vanished without closing (a phone that lost its network) is gone within interval +
  // timeout instead of when TCP gives up (gRPC's default: no ping for 2 h).
  int ping_interval_ms = 0;
  int ping_timeout_ms = 0;
  // The shortest interval between a client's own pings when no data flows (gRPC's default:
  // 5 min; a client pinging more often is sent GOAWAY "too_many_pings" on its third early
  // ping).
  // Also lets clients ping while they have no call.
  int client_ping_interval_min_ms = 0;
  // A connection without a call for this long is sent GOAWAY (0: kept however long idle).
  int connection_idle_ms = 0;
  // Concurrent calls per connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS; 0: no limit).
  // A client over it waits for a slot (gRPC clients queue the call).
  int streams_per_connection_max = 0;
};

class GrpcServer {
 public:
  // Binds and starts serving. A port in use or a bad address is Unavailable.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(
      const GrpcServerOptions& options, const std::vector<grpc::Service*>& services,
      Metrics& metrics);
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // The bound port (the real one when the address asked for port 0).
  int port() const { return port_; }
  // "127.0.0.1:<port>": the address a test client on this host dials.
  std::string LoopbackAddress() const;
  // A channel into this server without a socket (unit tests of services).
  std::shared_ptr<grpc::Channel> InProcessChannel();

  // The health status reported for the server ("") and every service name.
  void SetServing(bool serving);
  void Shutdown(absl::Time deadline);
  // Blocks until Shutdown() has completed (from another thread).
  void Wait();
  // Admitted calls still running when the drain ended (0 = every one finished before the
  // deadline; the others were cancelled). Valid after Shutdown() returned.
  int running_at_drain_end();

 private:
  GrpcServer(std::unique_ptr<grpc::Server> server, std::shared_ptr<DrainGate> gate, int port,
             std::unique_ptr<AsyncQueues> queues, std::shared_ptr<CallRecorder> recorder);

  std::shared_ptr<CallRecorder> recorder_;  // the AsyncServices' (the interceptor's too)
  std::unique_ptr<AsyncQueues> queues_;     // null without an AsyncService; outlives server_
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<DrainGate> gate_;  // shared with the handlers it wraps
  const int port_;
  std::mutex mu_;                 // not absl::Mutex: visible to TSan with Debian's Abseil
  bool shut_down_ = false;        // guarded by mu_
  int running_at_drain_end_ = 0;  // guarded by mu_
};

// Waits for SIGTERM/SIGINT (ShutdownSignal), then server.Shutdown(now + drain). Returns the
// signal number (0 for ShutdownSignal::Notify()).
int ServeUntilShutdownSignal(GrpcServer& server, absl::Duration drain);

// Asks a grpc.health.v1.Health server whether `service` ("" = the whole server) is serving.
// Returns true for SERVING, false for any other reported state, or the RPC's error (e.g.
// NOT_FOUND for an unknown service, UNAVAILABLE when nothing listens).
absl::StatusOr<bool> CheckHealth(grpc::Channel& channel, std::string_view service,
                                 absl::Duration timeout);

// The deadline a handler passes down: the client's, capped at now + rpc_deadline_max (no
// client deadline: the cap alone).
absl::Time ServerDeadline(const grpc::ServerContextBase& context, const Clock& clock,
                          absl::Duration rpc_deadline_max);

// Polls the whole server at `address` (CheckHealth every 100 ms) until it reports SERVING or
// `timeout` has passed; whether it did. For tests and tools that start a server process.
bool WaitServing(const std::string& address, absl::Duration timeout);

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_GRPC_SERVER_H_
