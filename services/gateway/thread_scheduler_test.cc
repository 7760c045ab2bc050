// ThreadScheduler on its real threads: no sleeps, only waits for tasks that are due now.
#include <atomic>
#include <future>
#include <mutex>
#include <vector>

#include "gtest/gtest.h"
#include "services/gateway/upstream.h"

namespace courtpiece::gateway {
namespace {

TEST(ThreadSchedulerTest, RunsDueTasksInOrderAndNeverACancelledOne) {
  ThreadScheduler scheduler(1);
  std::atomic<bool> late_ran{false};
  const Scheduler::TaskId late = scheduler.After(absl::Hours(1), [&] { late_ran = true; });
  std::atomic<bool> cancelled_ran{false};
  const Scheduler::TaskId soon = scheduler.After(absl::Hours(1), [&] { cancelled_ran = true; });
  scheduler.Cancel(soon);
  std::mutex mu;
  std::vector<int> order;
  std::promise<void> done;
  for (int i = 0; i < 5; ++i) {
    scheduler.After(absl::ZeroDuration(), [&, i] {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
      if (i == 4) done.set_value();
    });
  }
  ASSERT_EQ(done.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(cancelled_ran.load());
  EXPECT_FALSE(late_ran.load());
  scheduler.Cancel(late);
  scheduler.Cancel(late);  // twice: harmless
}

TEST(ThreadSchedulerTest, ManyThreadsRunEveryTaskOnceAndTheDestructorDropsPendingOnes) {
  std::atomic<int> ran{0};
  std::promise<void> done;
  {
    ThreadScheduler scheduler(4);
    for (int i = 0; i < 1000; ++i) {
      scheduler.After(absl::ZeroDuration(), [&] {
        if (++ran == 1000) done.set_value();
      });
    }
    for (int i = 0; i < 10; ++i) scheduler.After(absl::Hours(1), [&] { ++ran; });
    ASSERT_EQ(done.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  }  // joins without waiting an hour
  EXPECT_EQ(ran.load(), 1000);
}

}  // namespace
}  // namespace courtpiece::gateway
