#include "services/gateway/prometheus_gateway_metrics.h"

#include <string>

#include "courtpiece/common/grpc_status.h"

namespace courtpiece::gateway {
namespace {

constexpr std::array<std::string_view, 3> kKindNames = {"grpc", "websocket", "http"};

int KindIndex(std::string_view kind) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == kind) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

PrometheusGatewayMetrics::PrometheusGatewayMetrics(common::Metrics& metrics)
    : connections_(metrics.Gauge("connections", "Open client connections by kind.")),
      refused_(metrics.Counter("connections_refused",
                               "Connections closed at accept, by reason (total, per_ip), and "
                               "mobile Play streams refused (grpc_total, grpc_per_ip).")),
      in_(metrics.Counter("messages_in", "Client messages received, by kind.")),
      out_(metrics.Counter("messages_out", "Messages sent to clients, by kind.")),
      drops_(metrics.Counter("send_queue_drops", "Clients cut because their send queue was full.")),
      rate_limited_(metrics.Counter("rate_limited", "Commands refused by the token bucket.")),
      upstream_(metrics.LatencyHistogram("upstream", "Upstream unary calls by method and code.")),
      reconnects_(metrics.Counter(
          "reconnects",
          "Play relays moved to a new owner, by outcome (resumed, snapshot, failed).")) {
  for (int i = 0; i < kKinds; ++i) {
    const prometheus::Labels labels = {{"kind", std::string(kKindNames[i])}};
    connections_by_kind_[i] = &connections_.WithLabels(labels);
    in_by_kind_[i] = &in_.WithLabels(labels);
    out_by_kind_[i] = &out_.WithLabels(labels);
  }
  // Every documented series exists from the start at 0, so a dashboard panel or a rate()
  // shows 0 rather than "no data" before the first event.
  for (std::string_view reason : {"total", "per_ip", "grpc_total", "grpc_per_ip"}) {
    refused_.WithLabels({{"reason", std::string(reason)}});
  }
  for (std::string_view kind : {"websocket", "grpc"}) {
    drops_.WithLabels({{"kind", std::string(kind)}});
    rate_limited_.WithLabels({{"kind", std::string(kind)}});
  }
  for (std::string_view outcome : {"resumed", "snapshot", "failed"}) {
    reconnects_.WithLabels({{"outcome", std::string(outcome)}});
  }
}

template <typename Family, typename Series>
Series& PrometheusGatewayMetrics::For(Family& family, const std::array<Series*, kKinds>& cached,
                                      std::string_view kind) {
  const int i = KindIndex(kind);
  if (i >= 0) return *cached[i];
  return family.WithLabels({{"kind", std::string(kind)}});
}

void PrometheusGatewayMetrics::ConnectionOpened(std::string_view kind) {
  For(connections_, connections_by_kind_, kind).Increment();
}
void PrometheusGatewayMetrics::ConnectionClosed(std::string_view kind) {
  For(connections_, connections_by_kind_, kind).Decrement();
}
void PrometheusGatewayMetrics::ConnectionRefused(std::string_view reason) {
  refused_.WithLabels({{"reason", std::string(reason)}}).Increment();
}
void PrometheusGatewayMetrics::MessageIn(std::string_view kind) {
  For(in_, in_by_kind_, kind).Increment();
}
void PrometheusGatewayMetrics::MessageOut(std::string_view kind) {
  For(out_, out_by_kind_, kind).Increment();
}
void PrometheusGatewayMetrics::SendQueueDrop(std::string_view kind) {
  drops_.WithLabels({{"kind", std::string(kind)}}).Increment();
}
void PrometheusGatewayMetrics::RateLimited(std::string_view kind) {
  rate_limited_.WithLabels({{"kind", std::string(kind)}}).Increment();
}
void PrometheusGatewayMetrics::UpstreamCall(std::string_view method, int code, double seconds) {
  upstream_.WithLabels({{"method", std::string(method)}, {"code", common::GrpcCodeName(code)}})
      .Observe(seconds);
}
void PrometheusGatewayMetrics::Reconnect(std::string_view outcome) {
  reconnects_.WithLabels({{"outcome", std::string(outcome)}}).Increment();
}

}  // namespace courtpiece::gateway
