#include "courtpiece/common/shutdown_signal.h"

#include <signal.h>
#include <unistd.h>

#include <optional>
#include <thread>

#include "gtest/gtest.h"

namespace courtpiece::common {
namespace {

TEST(ShutdownSignalTest, NothingPendingTimesOut) {
  ShutdownSignal& signal = ShutdownSignal::Install();
  EXPECT_EQ(signal.WaitFor(absl::ZeroDuration()), std::nullopt);
}

TEST(ShutdownSignalTest, RaisedSigtermWakesWait) {
  ShutdownSignal& signal = ShutdownSignal::Install();
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_EQ(signal.Wait(), SIGTERM);
  EXPECT_EQ(signal.WaitFor(absl::ZeroDuration()), std::nullopt);
}

TEST(ShutdownSignalTest, ProcessSigintFromAnotherThreadWakesWaiterThread) {
  ShutdownSignal::Install();
  int received = -1;
  std::thread waiter([&received] { received = WaitForShutdownSignal(); });
  ASSERT_EQ(kill(getpid(), SIGINT), 0);
  waiter.join();
  EXPECT_EQ(received, SIGINT);
}

TEST(ShutdownSignalTest, NotifyWakesWithZero) {
  ShutdownSignal& signal = ShutdownSignal::Install();
  signal.Notify();
  EXPECT_EQ(signal.WaitFor(absl::Seconds(10)), std::optional<int>(0));
}

TEST(ShutdownSignalTest, EachSignalWakesOneWait) {
  ShutdownSignal& signal = ShutdownSignal::Install();
  ASSERT_EQ(raise(SIGTERM), 0);
  ASSERT_EQ(raise(SIGINT), 0);
  EXPECT_EQ(signal.Wait(), SIGTERM);
  EXPECT_EQ(signal.Wait(), SIGINT);
  EXPECT_EQ(signal.WaitFor(absl::ZeroDuration()), std::nullopt);
}

}  // namespace
}  // namespace courtpiece::common
