#include "stats.h"

#include <unistd.h>

#include <chrono>

#include "gtest/gtest.h"

namespace courtpiece::table_load {
namespace {

TEST(ReadProcStatTest, ReadsThisProcessParentAndCpu) {
  // Burn some CPU so the ticks cannot be zero (one tick is 10 ms at CLK_TCK 100).
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(60);
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1;
  std::optional<ProcStat> st = ReadProcStat("self");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->ppid, getppid());
  EXPECT_GE(st->ticks, 1);
  EXPECT_GE(st->children_ticks, 0);
  absl::StatusOr<double> cpu = ReadCpuSeconds(0);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_GE(*cpu, TicksToSeconds(st->ticks));
  EXPECT_EQ(ReadCpuSeconds(getpid()).ok(), true);
}

TEST(ReadProcStatTest, NoSuchProcess) {
  EXPECT_FALSE(ReadProcStat("not-a-pid").has_value());
  EXPECT_FALSE(ReadProcStat("2147483647").has_value());
  EXPECT_EQ(ReadCpuSeconds(2147483647).status().code(), absl::StatusCode::kNotFound);
}

TEST(SummarizeTest, NearestRankPercentiles) {
  std::vector<int64_t> micros;
  for (int64_t i = 100; i >= 1; --i) micros.push_back(i * 1000);  // 1..100 ms, unsorted
  const Samples::Summary s = Summarize(micros);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.p50_ms, 50.0);
  EXPECT_DOUBLE_EQ(s.p99_ms, 99.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 100.0);
}

}  // namespace
}  // namespace courtpiece::table_load
