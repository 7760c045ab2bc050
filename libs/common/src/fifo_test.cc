#include "courtpiece/common/fifo.h"

#include <deque>
#include <memory>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace courtpiece::common {
namespace {

TEST(Fifo, AnEmptyQueueHoldsNoMemory) {
  Fifo<std::string> q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.capacity(), 0u);
  q.push_back("a");
  EXPECT_EQ(q.capacity(), 4u);
  q.pop_front();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.capacity(), 4u);  // kept for the next burst
}

TEST(Fifo, KeepsOrderAcrossTheRingsWrapAndGrowth) {
  Fifo<int> q;
  for (int i = 0; i < 3; ++i) q.push_back(i);
  q.pop_front();
  q.pop_front();                                // head at 2: the next pushes wrap around
  for (int i = 3; i < 20; ++i) q.push_back(i);  // grows twice while wrapped
  EXPECT_EQ(q.size(), 18u);
  EXPECT_EQ(q.capacity(), 32u);
  for (int want = 2; want < 20; ++want) {
    ASSERT_FALSE(q.empty());
    EXPECT_EQ(q.front(), want);
    q.pop_front();
  }
  EXPECT_TRUE(q.empty());
}

TEST(Fifo, BehavesAsADequeUnderRandomPushesAndPops) {
  Fifo<std::unique_ptr<int>> q;  // move-only elements
  std::deque<int> model;
  std::mt19937 rng(7);
  int next = 0;
  for (int step = 0; step < 100'000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 5) {
      q.push_back(std::make_unique<int>(next));
      model.push_back(next++);
    } else if (op < 9) {
      if (model.empty()) continue;
      ASSERT_EQ(*q.front(), model.front());
      q.pop_front();
      model.pop_front();
    } else if (op == 9 && step % 1000 == 0) {
      q.clear();
      model.clear();
    }
    ASSERT_EQ(q.size(), model.size());
  }
}

TEST(Fifo, SwapAndMoveCarryTheElementsAndClearDestroysThem) {
  auto counted = std::make_shared<int>(0);
  Fifo<std::shared_ptr<int>> a;
  for (int i = 0; i < 5; ++i) a.push_back(counted);
  EXPECT_EQ(counted.use_count(), 6);
  Fifo<std::shared_ptr<int>> b;
  b.swap(a);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(b.size(), 5u);
  Fifo<std::shared_ptr<int>> c(std::move(b));
  EXPECT_EQ(c.size(), 5u);
  c.clear();
  EXPECT_EQ(counted.use_count(), 1);
  EXPECT_TRUE(c.empty());
}

}  // namespace
}  // namespace courtpiece::common
