#include "courtpiece/bots/search_bot.h"

#include <algorithm>
#include <array>

#include "courtpiece/bots/bot.h"
#include "courtpiece/bots/sampler.h"
#include "courtpiece/common/check.h"
#include "courtpiece/common/splitmix64.h"

namespace courtpiece::bots {
namespace {

using rules::Move;
using rules::SeatView;

uint64_t DecisionSeed(uint64_t seed, const SeatView& v) {
  SplitMix64 mix{seed ^ (static_cast<uint64_t>(v.seat) << 56) ^
                 (static_cast<uint64_t>(v.num_tricks) << 48) ^
                 (static_cast<uint64_t>(v.current_size) << 40) ^
                 (static_cast<uint64_t>(v.trump_shown.trick + 1) << 32) ^ v.hand.bits()};
  return mix.Next();
}

// Any valid round: Sample() overwrites it (Round has no empty state).
rules::Round PlaceholderRound(const rules::Rules& rules) {
  rules::Round::Hands hands{};
  for (int s = 0; s < 4; ++s) {
    for (int k = 0; k < 13; ++k) hands[s][k] = static_cast<rules::Card>(13 * s + k);
  }
  return *rules::Round::FromHands(rules, 0, hands);
}

}  // namespace

absl::string_view LevelName(Level level) {
  switch (level) {
    case Level::kEasy:
      return "easy";
    case Level::kNormal:
      return "normal";
    case Level::kStrong:
      return "strong";
  }
  return "?";
}

absl::StatusOr<Level> ParseLevel(absl::string_view name) {
  for (Level l : {Level::kEasy, Level::kNormal, Level::kStrong}) {
    if (name == LevelName(l)) return l;
  }
  return absl::InvalidArgumentError("level must be easy, normal or strong");
}

SearchOptions LevelOptions(Level level, uint64_t seed) {
  SearchOptions o;
  o.level = level;
  o.seed = seed;
  if (level == Level::kStrong) {
    o.samples = 32;
    o.node_budget = 600'000;
    o.call_samples = 64;
    o.tt_entries_log2 = 14;
  }
  return o;
}

SearchBot::SearchBot(const SearchOptions& options)
    : options_(options),
      solver_(SolverLimits{std::max<int64_t>(1, options.node_budget), options.tt_entries_log2,
                           options.rollout_at_horizon, options.count_at_end}) {
  COURTPIECE_CHECK(options.samples >= 1, "at least one sample per decision");
}

Move SearchBot::ChooseMove(const rules::Rules& rules, const SeatView& view) {
  COURTPIECE_CHECK(view.legal.size > 0, "a move is chosen only by the seat to move");
  last_ = DecisionStats{};
  const Move heuristic = bots::ChooseMove(rules, view);
  if (options_.level == Level::kEasy || view.legal.size == 1) return heuristic;
  if (view.phase == rules::Phase::kCall) {
    return options_.call_samples > 0 ? ChooseCall(rules, view, heuristic) : heuristic;
  }
  DealSampler sampler(rules, view);
  SplitMix64 rng{DecisionSeed(options_.seed, view)};
  const int n = view.legal.size;
  std::array<int64_t, 16> sums{};
  std::array<int, 16> values{};
  const int64_t per_sample = std::max<int64_t>(1, options_.node_budget / options_.samples);
  const int team = rules::TeamOf(view.seat);
  rules::Round round = PlaceholderRound(rules);
  last_.min_horizon = 13;
  for (int k = 0; k < options_.samples; ++k) {
    if (!sampler.Sample(rng, &round, options_.sample_tries_max)) continue;
    const Solver::MovesResult res =
        solver_.SolveMoves(round, team, {view.legal.begin(), view.legal.end()},
                           {values.data(), static_cast<size_t>(n)}, per_sample);
    for (int i = 0; i < n; ++i) sums[i] += values[i];
    ++last_.samples;
    last_.nodes += res.nodes;
    last_.min_horizon = std::min(last_.min_horizon, res.horizon);
  }
  if (last_.samples == 0) {
    last_.min_horizon = 0;
    return heuristic;
  }
  last_.searched = true;
  int best = -1;
  for (int i = 0; i < n; ++i) {
    if (best < 0 || sums[i] > sums[best] || (sums[i] == sums[best] && view.legal[i] == heuristic)) {
      best = i;
    }
  }
  return view.legal[best];
}

// The call (or hide) from the first five cards: deal the other 47 at random, play each
// candidate out with the solver's greedy rollout, all on the same deals, and take the best
// total (ties: the heuristic's). Hide candidates: the lowest card of each suit held, the
// heuristic's way of hiding.
Move SearchBot::ChooseCall(const rules::Rules& rules, const SeatView& view, const Move& heuristic) {
  std::array<Move, 16> candidates{};
  int n = 0;
  for (const Move& m : view.legal) {
    if (m.type == rules::MoveType::kHide) {
      const int suit = rules::SuitOf(m.value);
      bool lowest = true;
      for (rules::Card c : view.hand.InSuit(suit))
        lowest &= rules::RankOf(c) >= rules::RankOf(m.value);
      if (!lowest) continue;
    }
    candidates[n++] = m;
  }
  if (n == 1) return candidates[0];
  SplitMix64 rng{DecisionSeed(options_.seed, view) ^ 0xCA11};
  std::array<int64_t, 16> sums{};
  const int team = rules::TeamOf(view.seat);
  const rules::CardSet unseen = ~view.hand;
  for (int k = 0; k < options_.call_samples; ++k) {
    std::array<rules::Card, 52> deck{};
    int size = 0;
    for (rules::Card c : unseen) deck[size++] = c;
    for (int i = size - 1; i > 0; --i) std::swap(deck[i], deck[rng.Below(i + 1)]);
    rules::Round::Hands hands{};
    int next = 0;
    for (int s = 0; s < 4; ++s) {
      int i = 0;
      if (s == view.seat) {
        for (rules::Card c : view.hand) hands[s][i++] = c;
      }
      while (i < 13) hands[s][i++] = deck[next++];
    }
    for (int i = 0; i < n; ++i) {
      rules::Round r = *rules::Round::FromHands(rules, view.dealer, hands);
      r.ApplyChecked(candidates[i]);
      sums[i] += RolloutValue(r, team, &last_.nodes);
    }
    ++last_.samples;
  }
  last_.searched = true;
  int best = 0;
  for (int i = 1; i < n; ++i) {
    if (sums[i] > sums[best] || (sums[i] == sums[best] && candidates[i] == heuristic)) best = i;
  }
  return candidates[best];
}

Move ChooseMove(const rules::Rules& rules, const SeatView& view, const SearchOptions& options) {
  SearchBot bot(options);
  return bot.ChooseMove(rules, view);
}

}  // namespace courtpiece::bots
