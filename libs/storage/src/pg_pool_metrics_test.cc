#include "courtpiece/storage/pg_pool_metrics.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::storage {
namespace {

// A pool that has not connected yet (construction never connects): nothing open or in use,
// its size limit as configured.
TEST(PgPoolMetricsTest, SetsTheFourStatesFromThePool) {
  common::Metrics metrics("svc");
  common::GaugeFamily gauge = metrics.Gauge("pg_pool_connections", "Pool connections.");
  PgPool pool({.url = "postgresql://127.0.0.1:1/none", .size_max = 7});
  SetPoolGauges(pool, gauge);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text,
              ::testing::HasSubstr("courtpiece_svc_pg_pool_connections{state=\"size_max\"} 7"));
  EXPECT_THAT(text, ::testing::HasSubstr("courtpiece_svc_pg_pool_connections{state=\"in_use\"} 0"));
  EXPECT_THAT(text, ::testing::HasSubstr("courtpiece_svc_pg_pool_connections{state=\"open\"} 0"));
  EXPECT_THAT(text,
              ::testing::HasSubstr("courtpiece_svc_pg_pool_connections{state=\"waiting\"} 0"));
}

}  // namespace
}  // namespace courtpiece::storage
