#include "services/gateway/prometheus_gateway_metrics.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace courtpiece::gateway {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return absl::StrContains(text, line + "\n");
}

TEST(PrometheusGatewayMetricsTest, ExportsEveryFamilyWithItsLabels) {
  common::Metrics metrics("gateway");
  PrometheusGatewayMetrics m(metrics);
  m.ConnectionOpened("websocket");
  m.ConnectionOpened("websocket");
  m.ConnectionClosed("websocket");
  m.ConnectionOpened("grpc");
  m.ConnectionRefused("per_ip");
  m.MessageIn("grpc");
  m.MessageIn("grpc");
  m.MessageOut("http");
  m.SendQueueDrop("websocket");
  m.RateLimited("grpc");
  m.UpstreamCall("GuestLogin", 0, 0.003);
  m.UpstreamCall("GuestLogin", 14, 0.2);
  m.Reconnect("resumed");
  m.Reconnect("failed");
  const std::string text = metrics.Serialize();
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_connections{kind="websocket"} 1)")) << text;
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_connections{kind="grpc"} 1)"));
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_connections{kind="http"} 0)"));
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_connections_refused_total{reason="per_ip"} 1)"));
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_messages_in_total{kind="grpc"} 2)"));
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_messages_out_total{kind="http"} 1)"));
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_send_queue_drops_total{kind="websocket"} 1)"));
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_rate_limited_total{kind="grpc"} 1)"));
  EXPECT_TRUE(
      Has(text, R"(courtpiece_gateway_upstream_seconds_count{code="OK",method="GuestLogin"} 1)"));
  EXPECT_TRUE(Has(
      text,
      R"(courtpiece_gateway_upstream_seconds_count{code="UNAVAILABLE",method="GuestLogin"} 1)"));
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_reconnects_total{outcome="resumed"} 1)"));
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_reconnects_total{outcome="failed"} 1)"));
  // The series nothing has counted yet are there at 0 (no "no data" panels).
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_connections_refused_total{reason="total"} 0)"));
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_send_queue_drops_total{kind="grpc"} 0)"));
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_rate_limited_total{kind="websocket"} 0)"));
  EXPECT_TRUE(Has(text, R"(courtpiece_gateway_reconnects_total{outcome="snapshot"} 0)"));
}

}  // namespace
}  // namespace courtpiece::gateway
