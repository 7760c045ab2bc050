// LiveCalls: each call still running is cancelled once, and the wait has a bound.
#include "services/gateway/live_calls.h"

#include <thread>

#include "gtest/gtest.h"

namespace courtpiece::gateway {
namespace {

// The wait is bounded: a call that never ends is given up after the timeout.
TEST(LiveCallsTest, CancelAndWaitCancelsEachCallAndGivesUpAfterTheTimeout) {
  LiveCalls live;
  int cancels = 0;
  const uint64_t ends = live.Started([&] { ++cancels; });
  const uint64_t hangs = live.Started([&] { ++cancels; });
  EXPECT_EQ(live.running(), 2);
  live.Finished(ends);
  EXPECT_EQ(live.CancelAndWait(absl::Milliseconds(20)), 1);
  EXPECT_EQ(cancels, 1);  // only the one still running
  live.Finished(hangs);
  EXPECT_EQ(live.CancelAndWait(absl::Seconds(10)), 0);
  EXPECT_EQ(cancels, 1);
}

// A call that ends on another thread once cancelled (as a gRPC call's OnDone does).
TEST(LiveCallsTest, CancelAndWaitReturnsOnceACancelledCallHasFinished) {
  LiveCalls live;
  std::thread ending;
  uint64_t id = 0;
  id = live.Started([&] { ending = std::thread([&] { live.Finished(id); }); });
  EXPECT_EQ(live.CancelAndWait(absl::Seconds(10)), 0);
  EXPECT_EQ(live.running(), 0);
  ending.join();
}

}  // namespace
}  // namespace courtpiece::gateway
