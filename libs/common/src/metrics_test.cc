#include "courtpiece/common/metrics.h"

#include "courtpiece/common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::common {
namespace {

TEST(MetricsTest, CounterNamingAndLabels) {
  Metrics metrics("lobby");
  CounterFamily joins = metrics.Counter("joins", "Table joins.");
  joins.WithLabels({{"result", "ok"}}).Increment();
  joins.WithLabels({{"result", "ok"}}).Increment(2);
  metrics.Counter("joins", "Table joins.").WithLabels({{"result", "full"}}).Increment();
  EXPECT_EQ(metrics.Serialize(),
            "# HELP courtpiece_lobby_joins_total Table joins.\n"
            "# TYPE courtpiece_lobby_joins_total counter\n"
            "courtpiece_lobby_joins_total{result=\"full\"} 1\n"
            "courtpiece_lobby_joins_total{result=\"ok\"} 3\n");
}

TEST(MetricsTest, HistogramUsesSecondsAndBuckets) {
  Metrics metrics("wallet");
  HistogramFamily latency = metrics.LatencyHistogram("transfer", "Transfer time.", {0.01, 0.1});
  latency.WithLabels({{"kind", "stake"}}).Observe(0.05);
  latency.WithLabels({{"kind", "stake"}}).Observe(0.5);
  EXPECT_EQ(metrics.Serialize(),
            "# HELP courtpiece_wallet_transfer_seconds Transfer time.\n"
            "# TYPE courtpiece_wallet_transfer_seconds histogram\n"
            "courtpiece_wallet_transfer_seconds_count{kind=\"stake\"} 2\n"
            "courtpiece_wallet_transfer_seconds_sum{kind=\"stake\"} 0.55\n"
            "courtpiece_wallet_transfer_seconds_bucket{kind=\"stake\",le=\"0.01\"} 0\n"
            "courtpiece_wallet_transfer_seconds_bucket{kind=\"stake\",le=\"0.1\"} 1\n"
            "courtpiece_wallet_transfer_seconds_bucket{kind=\"stake\",le=\"+Inf\"} 2\n");
}

TEST(MetricsTest, ScopedLatencyObservesOnce) {
  Metrics metrics("wallet");
  prometheus::Histogram& histogram =
      metrics.LatencyHistogram("op", "Op time.").WithLabels({{"op", "x"}});
  { ScopedLatency timer(histogram); }
  const prometheus::ClientMetric collected = histogram.Collect();
  EXPECT_EQ(collected.histogram.sample_count, 1u);
  EXPECT_GE(collected.histogram.sample_sum, 0.0);
  EXPECT_LT(collected.histogram.sample_sum, 10.0);
}

TEST(MetricsTest, DefaultBucketsAndGauge) {
  EXPECT_EQ(DefaultLatencyBucketsSeconds(),
            (std::vector<double>{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
                                 10}));
  Metrics metrics("table");
  metrics.Gauge("live_tables", "Tables in memory.").WithLabels({}).Set(3);
  EXPECT_EQ(metrics.Serialize(),
            "# HELP courtpiece_table_live_tables Tables in memory.\n"
            "# TYPE courtpiece_table_live_tables gauge\n"
            "courtpiece_table_live_tables 3\n");
}

TEST(MetricsTest, CreateWithoutAddressHasNoPort) {
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Create({.service = "gateway"});
  ASSERT_THAT(metrics, IsOk());
  EXPECT_EQ((*metrics)->port(), 0);
  EXPECT_EQ((*metrics)->service(), "gateway");
}

TEST(MetricsTest, CreateRejectsAddressWithoutPort) {
  EXPECT_THAT(Metrics::Create({.service = "gateway", .listen_address = "localhost"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "metrics listen address \"localhost\": want host:port"));
}

TEST(MetricsDeathTest, BadMetricNameIsAProgrammerError) {
  Metrics metrics("lobby");
  EXPECT_DEATH(metrics.Counter("Bad-Name", "x"), "metric name must be");
}

}  // namespace
}  // namespace courtpiece::common
