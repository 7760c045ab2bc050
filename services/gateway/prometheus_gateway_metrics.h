// GatewayMetrics (gateway_metrics.h) over common::Metrics (service "gateway"):
//   courtpiece_gateway_connections{kind}                     gauge
//   courtpiece_gateway_connections_refused_total{reason}     counter
//   courtpiece_gateway_messages_in_total{kind}               counter
//   courtpiece_gateway_messages_out_total{kind}              counter
//   courtpiece_gateway_send_queue_drops_total{kind}          counter
//   courtpiece_gateway_rate_limited_total{kind}              counter
//   courtpiece_gateway_upstream_seconds{method,code}         histogram (code: "OK", ...)
//   courtpiece_gateway_reconnects_total{outcome}             counter
// The series of the three kinds ("grpc", "websocket", "http") are made up front, so the hot
// per-message counters need no label lookup.
// Thread-safety: safe from many threads; `metrics` must outlive it.
#ifndef COURTPIECE_SERVICES_GATEWAY_PROMETHEUS_GATEWAY_METRICS_H_
#define COURTPIECE_SERVICES_GATEWAY_PROMETHEUS_GATEWAY_METRICS_H_

#include <array>
#include <string_view>

#include "courtpiece/common/metrics.h"
#include "services/gateway/gateway_metrics.h"

namespace courtpiece::gateway {

class PrometheusGatewayMetrics final : public GatewayMetrics {
 public:
  explicit PrometheusGatewayMetrics(common::Metrics& metrics);

  void ConnectionOpened(std::string_view kind) override;
  void ConnectionClosed(std::string_view kind) override;
  void ConnectionRefused(std::string_view reason) override;
  void MessageIn(std::string_view kind) override;
  void MessageOut(std::string_view kind) override;
  void SendQueueDrop(std::string_view kind) override;
  void RateLimited(std::string_view kind) override;
  void UpstreamCall(std::string_view method, int code, double seconds) override;
  void Reconnect(std::string_view outcome) override;

 private:
  static constexpr int kKinds = 3;
  // The series of `kind` in `family`: cached for the known kinds.
  template <typename Family, typename Series>
  Series& For(Family& family, const std::array<Series*, kKinds>& cached, std::string_view kind);

  common::GaugeFamily connections_;
  common::CounterFamily refused_;
  common::CounterFamily in_;
  common::CounterFamily out_;
  common::CounterFamily drops_;
  common::CounterFamily rate_limited_;
  common::HistogramFamily upstream_;
  common::CounterFamily reconnects_;
  std::array<prometheus::Gauge*, kKinds> connections_by_kind_{};
  std::array<prometheus::Counter*, kKinds> in_by_kind_{};
  std::array<prometheus::Counter*, kKinds> out_by_kind_{};
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_PROMETHEUS_GATEWAY_METRICS_H_
