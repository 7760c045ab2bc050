#include "courtpiece/rules/rules.h"

#include <sodium.h>

#include "courtpiece/rules/deal.h"
#include "courtpiece/rules/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::rules {
namespace {

using ::testing::HasSubstr;

absl::Status Parse(OptionMap m) { return ParseRules(m).status(); }

void ExpectBad(OptionMap m, const std::string& text) {
  absl::Status st = Parse(m);
  EXPECT_EQ(GetErrorCode(st), ErrorCode::kBadRules) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr(text));
}

TEST(Cards, ParseAndName) {
  EXPECT_EQ(*ParseCard("2C"), 0);
  EXPECT_EQ(*ParseCard("AC"), 12);
  EXPECT_EQ(*ParseCard("2D"), 13);
  EXPECT_EQ(*ParseCard("AS"), 51);
  EXPECT_EQ(CardName(*ParseCard("TD")), "TD");
  EXPECT_FALSE(ParseCard("10S").has_value());
  EXPECT_FALSE(ParseCard("as").has_value());
  EXPECT_FALSE(ParseCard("AX").has_value());
  EXPECT_EQ(CardName(kHiddenCard), "??");
  EXPECT_EQ(*ParseSuit("H"), 2);
  EXPECT_FALSE(ParseSuit("h").has_value());
  CardSet s;
  s.Add(51);
  s.Add(0);
  EXPECT_EQ(s.size(), 2);
  EXPECT_EQ(CardSetText(s), "2C AS");
  EXPECT_EQ(s.Nth(1), 51);
  EXPECT_EQ(CardSet::Suit(3).size(), 13);
  EXPECT_EQ((~s).size(), 50);
}

TEST(Cards, NthMatchesIteration) {
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (int k = 0; k < 20000; ++k) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    CardSet s(x & CardSet::Deck().bits());
    int i = 0;
    for (Card c : s) ASSERT_EQ(s.Nth(i++), c);
  }
}

TEST(Errors, NamesAreReplayCodes) {
  EXPECT_EQ(ErrorCodeName(ErrorCode::kMustFollowSuit), "must_follow_suit");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kMissingMoves), "missing_moves");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kCardNotInHand), "card_not_in_hand");
  absl::Status st = MakeError(ErrorCode::kCannotShow, "x");
  EXPECT_EQ(GetErrorCode(st), ErrorCode::kCannotShow);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(MakeError(ErrorCode::kBadRules, "x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetErrorCode(absl::OkStatus()), ErrorCode::kOk);
}

TEST(Rules, Defaults) {
  auto c = ParseRules({{"game", "classic"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->court_bonus, CourtBonus::kCourt);
  EXPECT_EQ(c->kot_points, 3);
  EXPECT_EQ(c->target, 5);
  EXPECT_TRUE(c->deal_fairness);
  auto p = ParseRules({{"game", "piles"}});
  EXPECT_EQ(p->pile, PileSizes::k322);
  EXPECT_FALSE(p->ace_cannot_win_pile);
  EXPECT_EQ(p->last_card, -1);
  EXPECT_FALSE(p->six_point);
  EXPECT_EQ(p->target, 10);
  EXPECT_EQ(ParseRules({{"game", "hidden"}})->target, 10);
  EXPECT_EQ(ParseRules({{"game", "kaat"}})->target, 10);
  EXPECT_EQ(ParseRules({{"game", "stack"}})->target, 7);
}

TEST(Rules, EveryOptionInRange) {
  EXPECT_TRUE(
      Parse({{"game", "classic"}, {"court_bonus", "kot"}, {"kot_points", int64_t{2}}}).ok());
  EXPECT_TRUE(
      Parse({{"game", "classic"}, {"court_bonus", "kot"}, {"kot_points", int64_t{10}}}).ok());
  EXPECT_TRUE(Parse({{"game", "classic"}, {"court_bonus", "none"}, {"target", int64_t{1}}}).ok());
  EXPECT_TRUE(Parse({{"game", "classic"}, {"target", int64_t{100}}}).ok());
  EXPECT_TRUE(Parse({{"game", "piles"}, {"pile", "5-3-3"}, {"target", int64_t{100}}}).ok());
  EXPECT_TRUE(Parse({{"game", "hidden"}, {"last_card", "AS"}, {"six_point", true}}).ok());
  EXPECT_TRUE(
      Parse({{"game", "kaat"}, {"last_card", nullptr}, {"ace_cannot_win_pile", true}}).ok());
  EXPECT_TRUE(Parse({{"game", "piles"}, {"last_card", "none"}}).ok());
  for (int64_t t : {5, 7, 9}) EXPECT_TRUE(Parse({{"game", "stack"}, {"target", t}}).ok());
  EXPECT_TRUE(Parse({{"game", "stack"}, {"deal_fairness", false}}).ok());
}

TEST(Rules, BadValuesNameTheOptionAndAllowedValues) {
  ExpectBad({}, "option 'game' must be one of");
  ExpectBad({{"game", "bridge"}}, "\"classic\", \"piles\", \"hidden\", \"kaat\", \"stack\"");
  ExpectBad({{"game", "classic"}, {"court_bonus", "double"}},
            "'court_bonus' must be one of \"none\", \"court\", \"kot\"");
  ExpectBad({{"game", "classic"}, {"court_bonus", "kot"}, {"kot_points", int64_t{1}}},
            "'kot_points' must be an integer from 2 to 10");
  ExpectBad({{"game", "classic"}, {"court_bonus", "kot"}, {"kot_points", int64_t{11}}},
            "kot_points");
  ExpectBad({{"game", "classic"}, {"kot_points", int64_t{4}}}, "court_bonus \"kot\"");
  ExpectBad({{"game", "classic"}, {"target", int64_t{0}}},
            "'target' must be an integer from 1 to 100");
  ExpectBad({{"game", "classic"}, {"target", int64_t{101}}}, "target");
  ExpectBad({{"game", "classic"}, {"target", 5.5}}, "target");
  ExpectBad({{"game", "piles"}, {"target", int64_t{9}}}, "from 10 to 100");
  ExpectBad({{"game", "stack"}, {"target", int64_t{6}}}, "5, 7 or 9");
  ExpectBad({{"game", "piles"}, {"pile", "3-3-3"}}, "\"3-2-2\", \"5-3-3\"");
  ExpectBad({{"game", "piles"}, {"ace_cannot_win_pile", "yes"}},
            "'ace_cannot_win_pile' must be true or false");
  ExpectBad({{"game", "piles"}, {"last_card", "1S"}}, "'last_card' must be a card");
  ExpectBad({{"game", "piles"}, {"six_point", true}},
            "'six_point' may be true only with 'last_card'");
  ExpectBad({{"game", "piles"}, {"deal_fairness", int64_t{1}}},
            "'deal_fairness' must be true or false");
  ExpectBad({{"game", "classic"}, {"pile", "3-2-2"}}, "'pile' does not apply to game 'classic'");
  ExpectBad({{"game", "stack"}, {"court_bonus", "court"}}, "does not apply");
  ExpectBad({{"game", "piles"}, {"court_bonus", "court"}}, "does not apply");
  ExpectBad({{"game", "piles"}, {"colour", "red"}}, "unknown option 'colour'");
}

TEST(Rules, OptionsRoundTrip) {
  for (auto m : std::vector<OptionMap>{
           {{"game", "classic"}, {"court_bonus", "kot"}, {"kot_points", int64_t{7}}},
           {{"game", "hidden"}, {"last_card", "QH"}, {"six_point", true}, {"pile", "5-3-3"}},
           {{"game", "stack"}, {"target", int64_t{9}}, {"deal_fairness", false}}}) {
    auto r = ParseRules(m);
    ASSERT_TRUE(r.ok());
    auto back = ParseRules(RulesToOptions(*r));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, *r);
  }
}

}  // namespace
}  // namespace courtpiece::rules
