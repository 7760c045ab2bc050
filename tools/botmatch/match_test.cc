#include "match.h"

#include <gtest/gtest.h>

namespace courtpiece::botmatch {
namespace {

MatchConfig Small(int threads) {
  MatchConfig c;
  c.rules = rules::DefaultRules(rules::GameType::kPiles);
  c.a = bots::LevelOptions(bots::Level::kNormal);
  c.a.samples = 2;
  c.a.node_budget = 400;
  c.b = bots::LevelOptions(bots::Level::kEasy);
  c.deals = 6;
  c.seed = 3;
  c.threads = threads;
  return c;
}

// The same seed gives the same deals and moves, whatever the thread count.
TEST(BotMatchTest, ReproducibleAcrossThreadCounts) {
  const MatchResult one = RunMatch(Small(1));
  const MatchResult three = RunMatch(Small(3));
  ASSERT_EQ(one.deals.size(), 6u);
  for (size_t i = 0; i < one.deals.size(); ++i) {
    for (int h = 0; h < 2; ++h) {
      EXPECT_EQ(one.deals[i].score_a[h], three.deals[i].score_a[h]);
      EXPECT_EQ(one.deals[i].points_a[h], three.deals[i].points_a[h]);
    }
  }
  EXPECT_EQ(one.a.nodes, three.a.nodes);
  EXPECT_EQ(one.a.decision_ms.size(), three.a.decision_ms.size());
}

// Easy against easy: each deal is played the same way twice with the seats swapped, so
// each side wins exactly one half of every deal.
TEST(BotMatchTest, SameLevelsCancelExactly) {
  MatchConfig c = Small(2);
  c.a = c.b;
  const MatchResult r = RunMatch(c);
  for (const DealResult& d : r.deals) {
    EXPECT_EQ(d.score_a[0] + d.score_a[1], 1.0);
    EXPECT_EQ(d.points_a[0] + d.points_a[1], 0);
  }
}

TEST(BotMatchTest, IntervalsAndPercentiles) {
  const Interval iv = MeanInterval({0, 1, 0, 1});
  EXPECT_DOUBLE_EQ(iv.mean, 0.5);
  EXPECT_NEAR(iv.high - iv.mean, 1.96 * 0.288675, 1e-5);
  EXPECT_EQ(Percentile({5, 1, 3, 2, 4}, 50), 3);
  EXPECT_EQ(Percentile({5, 1, 3, 2, 4}, 99), 5);
  EXPECT_EQ(Percentile({}, 99), 0);
}

}  // namespace
}  // namespace courtpiece::botmatch
