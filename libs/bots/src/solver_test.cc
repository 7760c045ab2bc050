#include "courtpiece/bots/solver.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "courtpiece/common/test_scale.h"
#include "test_positions.h"

namespace courtpiece::bots {
namespace {

using testing::AllVariants;
using testing::RandomPosition;
using testing::Variant;

class SolverExact : public ::testing::TestWithParam<Variant> {};

// Random endings (12 to 16 cards left, often mid-trick, hidden trumps shown or not): the
// solver's value equals plain minimax exactly, for both teams, with a table small enough
// to see collisions and replacements.
// The i-th small ending of a variant: 12 to 16 cards left (hidden: 11 to 13, its endings
// branch most with asks and shows, and brute force gets smaller ones).
rules::Round SmallEnding(const Variant& v, int i) {
  const bool hidden = v.rules.game == rules::GameType::kHidden;
  const int cards_left = hidden ? 11 + i % 3 : 12 + i % 5;
  return RandomPosition(v.rules, static_cast<uint64_t>(i) * 31 + 7, cards_left);
}

TEST_P(SolverExact, EqualsBruteForceOnSmallEndings) {
  const Variant& v = GetParam();
  const int kEndings = ScaledIterations(100);
  Solver big(SolverLimits{});
  Solver tiny(SolverLimits{.node_budget = 10'000'000, .tt_entries_log2 = 10});
  int checked = 0;
  for (int i = 0; i < kEndings; ++i) {
    const rules::Round r = SmallEnding(v, i);
    if (r.over()) continue;
    for (int team = 0; team < 2; ++team) {
      const int brute = BruteForceValue(r, team);
      const Solver::Result a = big.Solve(r, team);
      const Solver::Result b = tiny.Solve(r, team);
      ASSERT_TRUE(a.complete);
      ASSERT_TRUE(b.complete);
      ASSERT_EQ(a.value, brute) << v.name << " ending " << i << " team " << team;
      ASSERT_EQ(b.value, brute) << v.name << " ending " << i << " team " << team;
      // Zero-sum in the team's points; the count tie-break is antisymmetric too.
      ++checked;
    }
    EXPECT_EQ(BruteForceValue(r, 0), -BruteForceValue(r, 1)) << v.name << " ending " << i;
  }
  EXPECT_GE(checked, kEndings);  // two teams per live ending, most endings live
}

// count_at_end: every finished line is worth EndValue (the count difference added), and the
// solver still equals plain minimax under that scoring; and the two scorings differ on
// some endings (else the option would change nothing).
TEST_P(SolverExact, WithCountAtEndEqualsBruteForce) {
  const Variant& v = GetParam();
  const int kEndings = ScaledIterations(60);
  Solver solver(SolverLimits{.count_at_end = true});
  int differs = 0;
  for (int i = 0; i < kEndings; ++i) {
    const rules::Round r = SmallEnding(v, i);
    if (r.over()) continue;
    for (int team = 0; team < 2; ++team) {
      const int brute = BruteForceValue(r, team, /*count_at_end=*/true);
      const Solver::Result a = solver.Solve(r, team);
      ASSERT_TRUE(a.complete);
      ASSERT_EQ(a.value, brute) << v.name << " ending " << i << " team " << team;
      differs += brute != BruteForceValue(r, team) ? 1 : 0;
    }
  }
  EXPECT_GT(differs, 0) << v.name;
}

// SolveMoves at full depth gives each move the brute-force value of the position after it.
TEST_P(SolverExact, MoveValuesEqualBruteForce) {
  const Variant& v = GetParam();
  const int kEndings = ScaledIterations(100);
  Solver solver(SolverLimits{});
  for (int i = 0; i < kEndings; ++i) {
    const rules::Round r = RandomPosition(v.rules, static_cast<uint64_t>(i) * 53 + 3, 13);
    if (r.over()) continue;
    rules::MoveList legal;
    r.LegalMoves(&legal);
    std::array<int, 16> values{};
    const int team = rules::TeamOf(r.turn());
    const Solver::MovesResult res = solver.SolveMoves(r, team, {legal.begin(), legal.end()},
                                                      {values.data(), 16}, 1'000'000'000);
    ASSERT_EQ(res.horizon, 13);
    for (int k = 0; k < legal.size; ++k) {
      rules::Round child = r;
      child.ApplyChecked(legal[k]);
      ASSERT_EQ(values[k], BruteForceValue(child, team)) << v.name << " ending " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, SolverExact, ::testing::ValuesIn(AllVariants()),
                         [](const ::testing::TestParamInfo<Variant>& i) { return i.param.name; });

TEST(SolverTest, StopsAtTheNodeBudget) {
  const rules::Rules r = rules::DefaultRules(rules::GameType::kPiles);
  Solver solver(SolverLimits{.node_budget = 500, .tt_entries_log2 = 10});
  const rules::Round start = RandomPosition(r, 1, 52);
  const Solver::Result res = solver.Solve(start, 0);
  EXPECT_FALSE(res.complete);
  EXPECT_EQ(res.nodes, 501);  // the node past the budget is where it stops
  EXPECT_EQ(solver.tt_entries(), 1024);
}

TEST(SolverTest, MovesKeepTheDeepestCompleteHorizon) {
  const rules::Rules r = rules::DefaultRules(rules::GameType::kClassic);
  Solver solver(SolverLimits{});
  const rules::Round start = RandomPosition(r, 5, 52);
  rules::MoveList legal;
  start.LegalMoves(&legal);
  std::array<int, 16> values{};
  const Solver::MovesResult small = solver.SolveMoves(
      start, rules::TeamOf(start.turn()), {legal.begin(), legal.end()}, {values.data(), 16}, 1);
  EXPECT_EQ(small.horizon, 0);  // the rollouts only
  std::array<int, 16> again{};
  const Solver::MovesResult more = solver.SolveMoves(
      start, rules::TeamOf(start.turn()), {legal.begin(), legal.end()}, {again.data(), 16}, 1);
  EXPECT_EQ(more.horizon, 0);
  for (int k = 0; k < legal.size; ++k) {
    rules::Round child = start;
    child.ApplyChecked(legal[k]);
    EXPECT_EQ(values[k], RolloutValue(child, rules::TeamOf(start.turn())));
  }
  EXPECT_EQ(values, again);  // deterministic
}

TEST(SolverTest, TerminalValueIsSignedPoints) {
  const rules::Rules r = rules::DefaultRules(rules::GameType::kClassic);
  rules::Round rd = RandomPosition(r, 11, 0);
  ASSERT_TRUE(rd.over());
  const rules::RoundResult& res = rd.result();
  const int w = res.winner;
  EXPECT_EQ(TerminalValue(rd, w), kPointValue * res.points);
  EXPECT_EQ(TerminalValue(rd, 1 - w), -kPointValue * res.points);
}

// With rollouts the horizon is scored by the greedy playout: a search whose horizon is the
// trick just finished returns exactly the rollout's value.
TEST(SolverTest, RolloutScoresTheHorizon) {
  for (const Variant& v : AllVariants()) {
    Solver solver(
        SolverLimits{.node_budget = 1'000, .tt_entries_log2 = 10, .rollout_at_horizon = true});
    for (uint64_t n = 0; n < 20; ++n) {
      const rules::Round r = RandomPosition(v.rules, n, 32 - static_cast<int>(n % 2) * 4);
      if (r.over() || !r.current_trick().empty()) continue;
      int64_t moves = 0;
      const int value = RolloutValue(r, 0, &moves);
      EXPECT_GT(moves, 0);
      EXPECT_LT(std::abs(value % kPointValue), 14) << v.name;  // points, then the count
      EXPECT_EQ(solver.Solve(r, 0, r.completed_tricks()).value, value) << v.name;
    }
  }
}

}  // namespace
}  // namespace courtpiece::bots
