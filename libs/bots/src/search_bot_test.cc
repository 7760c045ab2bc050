#include "courtpiece/bots/search_bot.h"

#include <gtest/gtest.h>

#include <vector>

#include "courtpiece/bots/bot.h"
#include "courtpiece/common/test_scale.h"
#include "test_positions.h"

namespace courtpiece::bots {
namespace {

using testing::AllVariants;
using testing::SeedOf;
using testing::Variant;

SearchOptions Small(uint64_t seed) {
  SearchOptions o = LevelOptions(Level::kNormal, seed);
  o.samples = 3;
  o.node_budget = 1'500;
  return o;
}

// Plays a round with a search bot in every seat; returns its moves.
std::vector<rules::Move> PlayRound(const rules::Rules& r, uint64_t n, const SearchOptions& o,
                                   int* searched) {
  rules::Round rd = rules::Round::FromSeed(r, static_cast<int>(n % 4), SeedOf(n));
  SearchBot bot(o);
  std::vector<rules::Move> moves;
  while (!rd.over()) {
    const rules::SeatView view = rd.View(rd.turn());
    const rules::Move m = bot.ChooseMove(r, view);
    EXPECT_EQ(rd.Check(m), rules::ErrorCode::kOk);
    if (rd.Check(m) != rules::ErrorCode::kOk) break;
    *searched += bot.last_decision().searched;
    rd.ApplyChecked(m);
    moves.push_back(m);
  }
  return moves;
}

class SearchBotPlays : public ::testing::TestWithParam<Variant> {};

// Every decision point of every game type gets a legal move, and the same seed gives the
// same moves.
TEST_P(SearchBotPlays, LegalAndDeterministic) {
  const Variant& v = GetParam();
  const int kRounds = ScaledIterations(10);
  int searched = 0, again = 0;
  for (int n = 0; n < kRounds; ++n) {
    const auto a = PlayRound(v.rules, static_cast<uint64_t>(n), Small(42), &searched);
    const auto b = PlayRound(v.rules, static_cast<uint64_t>(n), Small(42), &again);
    EXPECT_EQ(a, b) << v.name << " round " << n;
  }
  EXPECT_EQ(searched, again);
  EXPECT_GT(searched, 10 * kRounds) << "the search decided most moves";
}

INSTANTIATE_TEST_SUITE_P(AllVariants, SearchBotPlays, ::testing::ValuesIn(AllVariants()),
                         [](const ::testing::TestParamInfo<Variant>& i) { return i.param.name; });

TEST(SearchBotTest, EasyIsTheHeuristicBot) {
  for (const Variant& v : AllVariants()) {
    for (uint64_t n = 0; n < 5; ++n) {
      rules::Round rd = rules::Round::FromSeed(v.rules, 0, SeedOf(n));
      while (!rd.over()) {
        const rules::SeatView view = rd.View(rd.turn());
        const rules::Move m = ChooseMove(v.rules, view);
        ASSERT_EQ(ChooseMove(v.rules, view, LevelOptions(Level::kEasy, n)), m) << v.name;
        rd.ApplyChecked(m);
      }
    }
  }
}

// The call is searched (rollouts over deals of the unseen cards) unless call_samples is 0,
// when it is the heuristic's; either way it is legal and the same for the same seed.
TEST(SearchBotTest, Calls) {
  for (const Variant& v : AllVariants()) {
    if (!v.rules.HasCall()) continue;
    for (uint64_t n = 0; n < 10; ++n) {
      rules::Round rd = rules::Round::FromSeed(v.rules, 0, SeedOf(n));
      const rules::SeatView view = rd.View(rd.turn());
      SearchOptions o = LevelOptions(Level::kNormal, n);
      SearchBot bot(o);
      const rules::Move m = bot.ChooseMove(v.rules, view);
      EXPECT_EQ(rd.Check(m), rules::ErrorCode::kOk);
      EXPECT_TRUE(bot.last_decision().searched);
      EXPECT_EQ(bot.last_decision().samples, o.call_samples);
      EXPECT_EQ(SearchBot(o).ChooseMove(v.rules, view), m);
      o.call_samples = 0;
      EXPECT_EQ(SearchBot(o).ChooseMove(v.rules, view), ChooseMove(v.rules, view));
    }
  }
}

// Near the end every sample is solved to the round's end (horizon 13).
TEST(SearchBotTest, SolvesEndingsExactly) {
  const rules::Rules r = rules::DefaultRules(rules::GameType::kPiles);
  int checked = 0;
  for (uint64_t n = 0; n < 40; ++n) {
    rules::Round rd = testing::RandomPosition(r, n, 12);
    if (rd.over()) continue;
    const rules::SeatView view = rd.View(rd.turn());
    if (view.legal.size < 2) continue;
    SearchBot bot(LevelOptions(Level::kStrong, n));
    const rules::Move m = bot.ChooseMove(r, view);
    ASSERT_EQ(rd.Check(m), rules::ErrorCode::kOk);
    EXPECT_TRUE(bot.last_decision().searched);
    EXPECT_EQ(bot.last_decision().samples, 32);
    EXPECT_EQ(bot.last_decision().min_horizon, 13) << "round " << n;
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

TEST(SearchBotTest, Levels) {
  EXPECT_EQ(*ParseLevel("strong"), Level::kStrong);
  EXPECT_EQ(ParseLevel("hard").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LevelName(kTimeoutLevel), "normal");
  EXPECT_EQ(SearchBot(LevelOptions(Level::kStrong)).table_bytes(), (int64_t{1} << 14) * 16);
}

}  // namespace
}  // namespace courtpiece::bots
