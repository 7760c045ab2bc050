#include "services/gateway/conn_limiter.h"

#include <string>

#include "gtest/gtest.h"

namespace courtpiece::gateway {
namespace {

TEST(ConnLimiterTest, RefusesPastThePerIpLimitAndReleasesOnTicketEnd) {
  ConnLimiter limiter(/*connections_max=*/10, /*per_ip_max=*/2);
  auto a = limiter.TryAcquire("10.0.0.1");
  auto b = limiter.TryAcquire("10.0.0.1");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::string reason;
  EXPECT_EQ(limiter.TryAcquire("10.0.0.1", &reason), nullptr);
  EXPECT_EQ(reason, "per_ip");
  EXPECT_NE(limiter.TryAcquire("10.0.0.2"), nullptr);  // released at once
  EXPECT_EQ(limiter.open(), 2u);
  EXPECT_EQ(limiter.open_from("10.0.0.1"), 2u);
  a.reset();
  EXPECT_EQ(limiter.open_from("10.0.0.1"), 1u);
  EXPECT_NE(limiter.TryAcquire("10.0.0.1"), nullptr);
  b.reset();
  EXPECT_EQ(limiter.open(), 0u);
  EXPECT_EQ(limiter.open_from("10.0.0.1"), 0u);
}

TEST(ConnLimiterTest, RefusesPastTheTotalLimit) {
  ConnLimiter limiter(/*connections_max=*/3, /*per_ip_max=*/64);
  auto a = limiter.TryAcquire("1.1.1.1");
  auto b = limiter.TryAcquire("2.2.2.2");
  auto c = limiter.TryAcquire("3.3.3.3");
  std::string reason;
  EXPECT_EQ(limiter.TryAcquire("4.4.4.4", &reason), nullptr);
  EXPECT_EQ(reason, "total");
  EXPECT_EQ(limiter.open(), 3u);
  b.reset();
  auto d = limiter.TryAcquire("4.4.4.4");
  EXPECT_NE(d, nullptr);
  EXPECT_EQ(limiter.open(), 3u);
}

TEST(ConnLimiterTest, ZeroLimitsRefuseEverything) {
  ConnLimiter no_total(0, 5);
  std::string reason;
  EXPECT_EQ(no_total.TryAcquire("1.1.1.1", &reason), nullptr);
  EXPECT_EQ(reason, "total");
  ConnLimiter no_ip(5, 0);
  EXPECT_EQ(no_ip.TryAcquire("1.1.1.1", &reason), nullptr);
  EXPECT_EQ(reason, "per_ip");
  EXPECT_EQ(no_ip.open(), 0u);
}

}  // namespace
}  // namespace courtpiece::gateway
