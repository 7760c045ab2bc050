// The mobile front on our own HTTP/2 (h2_conn.h) instead of libgrpc: client.proto's CourtPiece
// for gRPC clients, on Asio, in a few KB per idle phone (docs/gateway.md "The mobile front on
// our own HTTP/2").
// It serves what GrpcFront (grpc_front.h) serves, with the same contract: unary methods through
// the UnaryRouter, Play through the TokenGate and the PlayService, the same limits, statuses and
// metrics; and grpc.health.v1.Health/Check ("" and "courtpiece.client.v1.CourtPiece":
// SERVING, NOT_SERVING once Shutdown began; other names NOT_FOUND).
//
// Beyond GrpcFront:
//   - TCP connections are limited at accept, in all and per address (connections_max,
//     connections_per_ip_max): past either the connection gets GOAWAY ENHANCE_YOUR_CALM with
//     the reason and is closed (metrics ConnectionRefused "grpc_conn_total"/"grpc_conn_per_ip");
//   - keepalive: a PING every ping_interval; no answer within ping_timeout closes the connection
//     (its calls end; Play's relay hears the client gone). A client pinging more often than
//     client_ping_min with nothing sent between, three times, gets GOAWAY ENHANCE_YOUR_CALM
//     "too_many_pings" (gRPC clients then ping less). A connection without a call for
//     idle_timeout gets GOAWAY NO_ERROR and is closed;
//   - a connection that reads nothing while its output grows past h2::ConnOptions'
//     output_bytes_max is cut; one opening more than 200 streams in a second gets GOAWAY
//     ENHANCE_YOUR_CALM "too many new streams"; unary requests waiting for their end hold at
//     most 2 MiB per connection (past it RESOURCE_EXHAUSTED), unfinished messages 2 MiB
//     (h2::ConnOptions::partial_bytes_max);
//   - closing, it sends what is queued, then FIN, and reads until the client closes (at most
//     2 s), so that the client gets the last frames rather than a reset.
//
// Contract: Start binds (port 0: any; port() reports it) and runs `threads` I/O threads.
// EndPlayStreams(status) ends every Play stream open now (after what is queued).
// Shutdown(deadline): health NOT_SERVING, no new connections, GOAWAY to every connection (new
// streams refused), waits for the calls open until `deadline` (Play streams end then: main ends
// them first), then closes every connection (each Play connection gets OnClientGone once) and stops
// the threads. The router, play service, gate and metrics must outlive the front; so must the
// UnaryRouter's callbacks (main: CancelAndWait before the front goes). Thread-safety: Start and
// Shutdown from one controlling thread; EndPlayStreams, open_play_streams from any.
#ifndef COURTPIECE_SERVICES_GATEWAY_H2_FRONT_H_
#define COURTPIECE_SERVICES_GATEWAY_H2_FRONT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/metrics.h"
#include "services/gateway/conn_limiter.h"
#include "services/gateway/gateway_metrics.h"
#include "services/gateway/grpc_front.h"
#include "services/gateway/play_service.h"
#include "services/gateway/token_gate.h"
#include "services/gateway/unary_router.h"

namespace courtpiece::gateway {

struct H2FrontOptions {
  std::string host = "0.0.0.0";
  int port = 0;
  int threads = 2;
  GrpcFrontOptions grpc;  // message sizes, send queue, Play stream limits: as GrpcFront
  size_t connections_max = 30'000;
  size_t connections_per_ip_max = 256;  // phones share addresses behind carrier NAT
  uint32_t streams_per_connection_max = 100;
  absl::Duration ping_interval = absl::Seconds(30);
  absl::Duration ping_timeout = absl::Seconds(20);
  absl::Duration client_ping_min = absl::Seconds(5);
  absl::Duration idle_timeout = absl::Minutes(5);
  // Checked at each ping (so within a ping interval after): a call whose end waits behind
  // data the client's windows do not admit is reset CANCEL after finish_timeout (a slow
  // reader is closed whatever the client does); a unary call whose request has not all
  // arrived after request_timeout is answered DEADLINE_EXCEEDED; a call past its client's
  // grpc-timeout ends DEADLINE_EXCEEDED.
  absl::Duration finish_timeout = absl::Seconds(10);
  absl::Duration request_timeout = absl::Seconds(30);
};

class H2Front {
 public:
  struct Shared;  // with the connections, which may outlive a Shutdown by a moment

  H2Front(H2FrontOptions options, UnaryRouter& router, PlayService& play, const TokenGate& gate,
          GatewayMetrics& metrics, common::Metrics& server_metrics);
  ~H2Front();
  H2Front(const H2Front&) = delete;
  H2Front& operator=(const H2Front&) = delete;

  absl::Status Start();
  int port() const { return port_; }
  std::string LoopbackAddress() const;
  void EndPlayStreams(const absl::Status& status);
  size_t open_play_streams() const;
  void Shutdown(absl::Time deadline);
  // Calls still open when Shutdown's deadline came (cut then).
  int running_at_drain_end() const { return running_at_drain_end_; }

 private:
  std::shared_ptr<Shared> shared_;
  std::vector<std::thread> threads_;
  int port_ = 0;
  int running_at_drain_end_ = 0;
  bool shut_down_ = false;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_H2_FRONT_H_
