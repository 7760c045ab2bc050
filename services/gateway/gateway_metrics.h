// What the gateway counts (docs/gateway.md "Metrics"). The fronts and the relay report
// through this interface; main wires PrometheusGatewayMetrics (common::Metrics,
// courtpiece_gateway_*); unit tests use NullGatewayMetrics or a counting fake.
// `kind` is "websocket", "grpc" or "http".
// Thread-safety: implementations are safe from many threads.
#ifndef COURTPIECE_SERVICES_GATEWAY_GATEWAY_METRICS_H_
#define COURTPIECE_SERVICES_GATEWAY_GATEWAY_METRICS_H_

#include <string_view>

namespace courtpiece::gateway {

class GatewayMetrics {
 public:
  virtual ~GatewayMetrics() = default;
  // A client connection (an HTTP keep-alive connection, a WebSocket, a gRPC Play stream)
  // opened / closed: the gauge of connections by kind.
  virtual void ConnectionOpened(std::string_view kind) = 0;
  virtual void ConnectionClosed(std::string_view kind) = 0;
  // A connection refused at accept: reason "total" or "per_ip"; a mobile Play stream refused
  // by its limits: "grpc_total" or "grpc_per_ip".
  virtual void ConnectionRefused(std::string_view reason) = 0;
  // Client messages in / out (Play messages, unary requests and responses).
  virtual void MessageIn(std::string_view kind) = 0;
  virtual void MessageOut(std::string_view kind) = 0;
  // A client closed because its send queue was full.
  virtual void SendQueueDrop(std::string_view kind) = 0;
  // A command refused by the per-connection token bucket.
  virtual void RateLimited(std::string_view kind) = 0;
  // An upstream unary call finished: `method` ("GuestLogin"), its gRPC code, seconds.
  virtual void UpstreamCall(std::string_view method, int code, double seconds) = 0;
  // A Play relay moved to a table's new owner: outcome "resumed" (by seq), "snapshot"
  // (a fresh view) or "failed" (gave up after the resume timeout).
  virtual void Reconnect(std::string_view outcome) = 0;
};

class NullGatewayMetrics : public GatewayMetrics {
 public:
  void ConnectionOpened(std::string_view) override {}
  void ConnectionClosed(std::string_view) override {}
  void ConnectionRefused(std::string_view) override {}
  void MessageIn(std::string_view) override {}
  void MessageOut(std::string_view) override {}
  void SendQueueDrop(std::string_view) override {}
  void RateLimited(std::string_view) override {}
  void UpstreamCall(std::string_view, int, double) override {}
  void Reconnect(std::string_view) override {}
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_GATEWAY_METRICS_H_
