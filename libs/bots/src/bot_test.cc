#include "courtpiece/bots/bot.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "courtpiece/common/test_scale.h"
#include "courtpiece/rules/game.h"

namespace courtpiece::bots {
namespace {

using rules::GameType;

rules::Seed SeedOf(uint64_t n) {
  rules::Seed s{};
  for (int i = 0; i < 32; ++i) {
    n = n * 6364136223846793005ull + 1442695040888963407ull;
    s[i] = static_cast<uint8_t>(n >> 56);
  }
  return s;
}

// Plays one game: team 0 (seats 0, 2) heuristic bots, team 1 random. Returns the winner.
int PlayGame(const rules::Rules& r, uint64_t game_index, int64_t* moves) {
  rules::Game g(r, static_cast<int>(game_index % 4));
  uint64_t rng = game_index * 7919 + 1;
  for (int round = 0; !g.over() && round < 1000; ++round) {
    rules::Round rd = g.StartRound(SeedOf(game_index * 1000 + round));
    while (!rd.over()) {
      int seat = rd.turn();
      rules::SeatView v = rd.View(seat);
      rules::Move m = seat % 2 == 0 ? ChooseMove(r, v) : RandomMove(v, rng);
      EXPECT_EQ(rd.Check(m), rules::ErrorCode::kOk);
      rd.ApplyChecked(m);
      ++*moves;
    }
    g.FinishRound(rd);
  }
  return g.winner();
}

struct Case {
  const char* name;
  rules::Rules rules;
};

class BotVsRandom : public ::testing::TestWithParam<Case> {};

TEST_P(BotVsRandom, BotsWinFarMoreOften) {
  const Case& c = GetParam();
  const int kGames = ScaledIterations(10'000);
  int wins = 0, losses = 0;
  int64_t moves = 0;
  for (int i = 0; i < kGames; ++i) {
    int w = PlayGame(c.rules, static_cast<uint64_t>(i), &moves);
    wins += w == 0;
    losses += w == 1;
  }
  double rate = static_cast<double>(wins) / kGames;
  std::printf("[bot-vs-random] %s: %d games, bots won %d, random won %d, draws %d: %.1f%%\n",
              c.name, kGames, wins, losses, kGames - wins - losses, 100.0 * rate);
  EXPECT_GE(rate, 0.75) << c.name;
}

rules::Rules With(GameType g, bool ace_rule = false) {
  rules::Rules r = rules::DefaultRules(g);
  r.ace_cannot_win_pile = ace_rule && r.IsPileGame();
  return r;
}

INSTANTIATE_TEST_SUITE_P(AllGameTypes, BotVsRandom,
                         ::testing::Values(Case{"classic", With(GameType::kClassic)},
                                           Case{"piles", With(GameType::kPiles)},
                                           Case{"piles_ace_rule", With(GameType::kPiles, true)},
                                           Case{"hidden", With(GameType::kHidden)},
                                           Case{"kaat", With(GameType::kKaat)},
                                           Case{"stack", With(GameType::kStack)}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::string(i.param.name);
                         });

TEST(BotTest, CallsTheStrongestSuitOfTheFirstFive) {
  rules::Rules r = rules::DefaultRules(GameType::kClassic);
  for (uint64_t n = 0; n < 200; ++n) {
    rules::Round rd = rules::Round::FromSeed(r, 0, SeedOf(n));
    rules::SeatView v = rd.View(1);
    ASSERT_EQ(v.hand.size(), 5);
    // The strongest suit, computed here independently: a suit scores 10 points per card
    // plus the card's rank (2 = 0 .. A = 12); on a tie, the first suit in C D H S order.
    std::array<int, 4> points{};
    for (rules::Card c : v.hand) points[rules::SuitOf(c)] += 10 + rules::RankOf(c);
    int expected = 0;
    for (int suit = 1; suit < 4; ++suit) {
      if (points[suit] > points[expected]) expected = suit;
    }
    rules::Move m = ChooseMove(r, v);
    ASSERT_EQ(m.type, rules::MoveType::kCall);
    EXPECT_EQ(m.value, expected) << "seed " << n;
  }
}

TEST(BotTest, CallsTwoHighCardsOverThreeLowOnes) {
  // A fixed hand with an exact answer: AS KS (10+12 + 10+11 = 43) beat 2H 3H 4H (30+0+1+2 = 33).
  rules::Rules r = rules::DefaultRules(GameType::kClassic);
  for (uint64_t n = 0; n < 5000; ++n) {
    rules::Round rd = rules::Round::FromSeed(r, 0, SeedOf(n));
    rules::SeatView v = rd.View(1);
    std::array<int, 4> count{}, ranks{};
    for (rules::Card c : v.hand) {
      count[rules::SuitOf(c)]++;
      ranks[rules::SuitOf(c)] += rules::RankOf(c);
    }
    // Find a deal where a 2-card suit outscores a 3-card suit, and check the bot names it.
    for (int two = 0; two < 4; ++two) {
      for (int three = 0; three < 4; ++three) {
        if (count[two] == 2 && count[three] == 3 && 20 + ranks[two] > 30 + ranks[three]) {
          EXPECT_EQ(ChooseMove(r, v).value, two) << "seed " << n;
          return;
        }
      }
    }
  }
  FAIL() << "no deal with a strong 2-card suit over a weak 3-card suit";
}

TEST(BotTest, DoesNotOvertakeAWinningPartnerAndWinsCheaply) {
  rules::Rules r = rules::DefaultRules(GameType::kClassic);
  int checked = 0;
  for (uint64_t n = 0; n < 300 && checked < 200; ++n) {
    rules::Round rd = rules::Round::FromSeed(r, 0, SeedOf(n + 5000));
    while (!rd.over()) {
      int seat = rd.turn();
      rules::SeatView v = rd.View(seat);
      rules::Move m = ChooseMove(r, v);
      if (v.phase == rules::Phase::kPlay && v.current_size == 3) {
        // Last to play: partner's card is cards[1] (leader is seat+1).
        rules::Card led = v.current.cards[0];
        auto strength = [&](rules::Card c) {
          if (rules::SuitOf(c) == v.trump) return 100 + rules::RankOf(c);
          return rules::SuitOf(c) == rules::SuitOf(led) ? rules::RankOf(c) : -1;
        };
        int best = 0;
        for (int i = 1; i < 3; ++i) {
          if (strength(v.current.cards[i]) > strength(v.current.cards[best])) best = i;
        }
        bool partner_winning = best == 1;
        if (partner_winning) {
          // It plays its cheapest legal card: none is lower in rank among non-trumps.
          for (const rules::Move& o : v.legal) {
            if (rules::SuitOf(o.value) != v.trump && rules::SuitOf(m.value) != v.trump) {
              EXPECT_LE(rules::RankOf(m.value), rules::RankOf(o.value));
            }
          }
        } else {
          // It wins if it can, with the cheapest winning card.
          int cheapest_win = 1000;
          for (const rules::Move& o : v.legal) {
            if (strength(o.value) > strength(v.current.cards[best])) {
              cheapest_win = std::min(cheapest_win, strength(o.value));
            }
          }
          if (cheapest_win < 1000) {
            EXPECT_EQ(strength(m.value), cheapest_win);
          }
        }
        ++checked;
      }
      rd.ApplyChecked(m);
    }
  }
  EXPECT_GE(checked, 200);
}

}  // namespace
}  // namespace courtpiece::bots
