#include "courtpiece/bots/sampler.h"

#include <gtest/gtest.h>

#include <set>

#include "courtpiece/bots/bot.h"
#include "courtpiece/common/test_scale.h"
#include "test_positions.h"

namespace courtpiece::bots {
namespace {

using testing::AllVariants;
using testing::SeedOf;
using testing::Variant;

void ExpectSameTrick(const rules::TrickRecord& a, const rules::TrickRecord& b, int n) {
  EXPECT_EQ(a.leader, b.leader);
  for (int i = 0; i < n; ++i) EXPECT_EQ(a.cards[i], b.cards[i]) << "card " << i;
  EXPECT_EQ(a.face_down & ((1 << n) - 1), b.face_down & ((1 << n) - 1));
  EXPECT_EQ(a.trump & ((1 << n) - 1), b.trump & ((1 << n) - 1));
}

// Everything the seat sees in the sample is what it sees in the real round.
void ExpectSameView(const rules::SeatView& a, const rules::SeatView& b) {
  EXPECT_EQ(a.hand, b.hand);
  EXPECT_EQ(a.trump, b.trump);
  EXPECT_EQ(a.face_down_card, b.face_down_card);
  EXPECT_EQ(a.has_face_down, b.has_face_down);
  EXPECT_EQ(a.turn, b.turn);
  EXPECT_EQ(a.hand_size, b.hand_size);
  EXPECT_EQ(a.trump_shown.trick, b.trump_shown.trick);
  EXPECT_EQ(a.trump_shown.seat, b.trump_shown.seat);
  EXPECT_EQ(a.trump_set.trick, b.trump_set.trick);
  EXPECT_EQ(a.trump_set.seat, b.trump_set.seat);
  ASSERT_EQ(a.num_tricks, b.num_tricks);
  for (int t = 0; t < a.num_tricks; ++t) {
    ExpectSameTrick(a.tricks[t], b.tricks[t], 4);
    EXPECT_EQ(a.tricks[t].winner, b.tricks[t].winner);
  }
  ASSERT_EQ(a.current_size, b.current_size);
  ExpectSameTrick(a.current, b.current, a.current_size);
  ASSERT_EQ(a.num_pickups, b.num_pickups);
  for (int i = 0; i < a.num_pickups; ++i) {
    EXPECT_EQ(a.pickups[i].seat, b.pickups[i].seat);
    EXPECT_EQ(a.pickups[i].count, b.pickups[i].count);
  }
  EXPECT_EQ(a.num_payouts, b.num_payouts);
  EXPECT_EQ(a.pile, b.pile);
  EXPECT_EQ(a.tricks_won, b.tricks_won);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.stack, b.stack);
  EXPECT_EQ(a.marker, b.marker);
  ASSERT_EQ(a.legal.size, b.legal.size);
  for (int i = 0; i < a.legal.size; ++i) EXPECT_TRUE(a.legal[i] == b.legal[i]);
}

// Voids the view reveals, checked here independently of the sampler: a seat that did not
// follow the led suit holds none of it afterwards (the hidden caller's face-down card
// aside, which is outside the hand until shown).
void ExpectVoidsRespected(const rules::SeatView& v, const rules::Round& sample) {
  for (int t = 0; t <= v.num_tricks; ++t) {
    const rules::TrickRecord& tr = t < v.num_tricks ? v.tricks[t] : v.current;
    const int n = t < v.num_tricks ? 4 : v.current_size;
    if (n == 0) continue;
    const int led = rules::SuitOf(tr.cards[0]);
    for (int i = 1; i < n; ++i) {
      const int seat = (tr.leader + i) % 4;
      const rules::Card c = tr.cards[i];
      if (c != rules::kHiddenCard && rules::SuitOf(c) == led) continue;
      rules::CardSet h = sample.hand(seat);
      if (sample.hidden_card() >= 0) h.Remove(static_cast<rules::Card>(sample.hidden_card()));
      EXPECT_FALSE(h.HasSuit(led)) << "seat " << seat << " showed a void in suit " << led;
    }
  }
}

class SamplerRespectsTheView : public ::testing::TestWithParam<Variant> {};

// Rounds played by the heuristic bot (random moves mixed in so that asks, shows and
// face-down throws happen), sampled at every decision of a seat to move.
TEST_P(SamplerRespectsTheView, EverySampleShowsTheSameView) {
  const Variant& v = GetParam();
  const int kRounds = ScaledIterations(100);
  int64_t samples = 0, failed = 0;
  std::set<uint64_t> distinct;
  for (int n = 0; n < kRounds; ++n) {
    rules::Round rd = rules::Round::FromSeed(v.rules, n % 4, SeedOf(static_cast<uint64_t>(n)));
    uint64_t rng_state = static_cast<uint64_t>(n) * 7 + 1;
    SplitMix64 rng{static_cast<uint64_t>(n) + 1000};
    while (!rd.over()) {
      const int seat = rd.turn();
      const rules::SeatView view = rd.View(seat);
      if (view.phase == rules::Phase::kPlay) {
        DealSampler sampler(v.rules, view);
        for (int k = 0; k < 3; ++k) {
          rules::Round sample = rd;
          if (!sampler.Sample(rng, &sample)) {
            ++failed;
            continue;
          }
          ++samples;
          ExpectSameView(sample.View(seat), view);
          ExpectVoidsRespected(view, sample);
          for (int s = 0; s < 4; ++s) distinct.insert(sample.hand(s).bits() * (s + 1));
          // The seat's own cards are its own; the others' hand sizes are theirs.
          EXPECT_EQ(sample.hand(seat), rd.hand(seat));
          for (int s = 0; s < 4; ++s) EXPECT_EQ(sample.hand(s).size(), rd.hand(s).size());
        }
      }
      const rules::Move m = (rng_state % 3 == 0) ? RandomMove(view, rng_state)
                                                 : (++rng_state, ChooseMove(v.rules, view));
      rd.ApplyChecked(m);
    }
  }
  EXPECT_EQ(failed, 0) << v.name;
  EXPECT_GT(samples, 0);
  EXPECT_GT(distinct.size(), static_cast<size_t>(samples) / 4) << "samples are not random";
}

INSTANTIATE_TEST_SUITE_P(AllVariants, SamplerRespectsTheView, ::testing::ValuesIn(AllVariants()),
                         [](const ::testing::TestParamInfo<Variant>& i) { return i.param.name; });

TEST(SamplerTest, KnownCardsStayPutAndUnseenOnesMove) {
  const rules::Rules r = rules::DefaultRules(rules::GameType::kClassic);
  rules::Round rd = testing::RandomPosition(r, 3, 40);
  const int seat = rd.turn();
  DealSampler sampler(r, rd.View(seat));
  SplitMix64 rng{1};
  rules::Round a = rd, b = rd;
  ASSERT_TRUE(sampler.Sample(rng, &a));
  ASSERT_TRUE(sampler.Sample(rng, &b));
  EXPECT_EQ(a.hand(seat), rd.hand(seat));
  EXPECT_EQ(b.hand(seat), rd.hand(seat));
  bool moved = false;
  for (int s = 0; s < 4; ++s) moved |= a.hand(s) != b.hand(s);
  EXPECT_TRUE(moved);
  // Draws the call model turned down are redrawn.
  EXPECT_EQ(sampler.draws(), 2 + sampler.rejected());
}

}  // namespace
}  // namespace courtpiece::bots
