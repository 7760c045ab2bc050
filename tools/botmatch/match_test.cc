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

// Whole games: every half is a game to the target (the winner's final score reaches it),
// the same for any thread count, and equal levels cancel exactly game by game.
TEST(BotMatchTest, WholeGamesToTheTarget) {
  MatchConfig c = Small(1);
  c.rules = rules::DefaultRules(rules::GameType::kClassic);  // target 5
  c.games = true;
  c.deals = 4;
  const MatchResult one = RunMatch(c);
  c.threads = 3;
  const MatchResult three = RunMatch(c);
  ASSERT_EQ(one.deals.size(), 4u);
  for (size_t i = 0; i < one.deals.size(); ++i) {
    for (int h = 0; h < 2; ++h) {
      const DealResult& d = one.deals[i];
      EXPECT_TRUE(d.score_a[h] == 0 || d.score_a[h] == 1) << i;  // classic has no draw
      // The loser has at most target - 1 and the winner at least the target: A's final
      // margin is positive exactly when A won, and a game of 5 takes at least 3 rounds.
      EXPECT_EQ(d.points_a[h] > 0, d.score_a[h] == 1) << i;
      EXPECT_NE(d.points_a[h], 0) << i;
      EXPECT_GE(d.rounds[h], 3) << i;
      EXPECT_EQ(d.score_a[h], three.deals[i].score_a[h]) << i;
      EXPECT_EQ(d.points_a[h], three.deals[i].points_a[h]) << i;
      EXPECT_EQ(d.rounds[h], three.deals[i].rounds[h]) << i;
    }
  }
  EXPECT_GT(one.a.decision_ms.size(), 4u * 2 * 3 * 13);  // over 3 rounds per half

  c.a = c.b;
  for (const DealResult& d : RunMatch(c).deals) {
    EXPECT_EQ(d.score_a[0] + d.score_a[1], 1.0);
    EXPECT_EQ(d.points_a[0] + d.points_a[1], 0);
    EXPECT_EQ(d.rounds[0], d.rounds[1]);
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
