// courtpiece-rules-bench: random playouts per game type, legal-move generation and trick
// resolution. Run a Release build: build-rel/bin/courtpiece-rules-bench
#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>

#include "courtpiece/common/splitmix64.h"
#include "courtpiece/rules/round.h"

namespace courtpiece::rules {
namespace {

using Rng = ::courtpiece::SplitMix64;

std::vector<Round::Hands> Deals(int n) {
  Rng rng{42};
  std::vector<Round::Hands> out(n);
  for (auto& h : out) {
    std::array<Card, 52> deck;
    std::iota(deck.begin(), deck.end(), Card{0});
    for (int i = 51; i > 0; --i) std::swap(deck[i], deck[rng.Below(i + 1)]);
    for (int s = 0; s < 4; ++s) {
      for (int k = 0; k < 13; ++k) h[s][k] = deck[13 * s + k];
    }
  }
  return out;
}

void BM_RandomPlayoutMoveList(benchmark::State& state) {
  const Rules rules = DefaultRules(static_cast<GameType>(state.range(0)));
  const auto deals = Deals(4096);
  Rng rng{7};
  MoveList legal;
  size_t i = 0;
  for (auto _ : state) {
    Round r = *Round::FromHands(rules, static_cast<int>(i & 3), deals[i & 4095]);
    while (!r.over()) {
      r.LegalMoves(&legal);
      r.ApplyChecked(legal[rng.Below(legal.size)]);
    }
    benchmark::DoNotOptimize(r.result());
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string(GameTypeName(rules.game)) + " via LegalMoves");
}
BENCHMARK(BM_RandomPlayoutMoveList)->Arg(1);

// One whole random round from given hands: not inlined, so that
// `valgrind --tool=callgrind --toggle-collect='*PlayRandomRound*'` counts its instructions
// per call exactly (docs/rules-engine.md, Performance).
[[gnu::noinline]] RoundResult PlayRandomRound(const Rules& rules, int dealer,
                                              const Round::Hands& hands, Rng& rng) {
  Round r = *Round::FromHands(rules, dealer, hands);
  r.PlayOutRandom(rng);
  return r.result();
}

void BM_RandomPlayout(benchmark::State& state) {
  const Rules rules = DefaultRules(static_cast<GameType>(state.range(0)));
  const auto deals = Deals(4096);
  Rng rng{7};
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(PlayRandomRound(rules, static_cast<int>(i & 3), deals[i & 4095], rng));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string(GameTypeName(rules.game)));
}
BENCHMARK(BM_RandomPlayout)->DenseRange(0, 4);

[[gnu::noinline]] RoundResult PlaySeededRound(const Rules& rules, int dealer, const Seed& seed,
                                              Rng& rng) {
  Round r = Round::FromSeed(rules, dealer, seed);
  r.PlayOutRandom(rng);
  return r.result();
}

void BM_SeededRoundPlayout(benchmark::State& state) {
  const Rules rules = DefaultRules(static_cast<GameType>(state.range(0)));
  Rng rng{9};
  uint64_t i = 0;
  for (auto _ : state) {
    Seed seed{};
    for (int k = 0; k < 8; ++k) seed[k] = static_cast<uint8_t>(i >> (8 * k));
    benchmark::DoNotOptimize(PlaySeededRound(rules, static_cast<int>(i & 3), seed, rng));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string(GameTypeName(rules.game)) + " (ChaCha20 deal + fairness)");
}
BENCHMARK(BM_SeededRoundPlayout)->DenseRange(0, 4);

// States in mid-play (after the call and 0..40 random cards).
std::vector<Round> MidStates(GameType g, int n) {
  const Rules rules = DefaultRules(g);
  const auto deals = Deals(n);
  Rng rng{3};
  std::vector<Round> out;
  MoveList legal;
  for (int i = 0; i < n; ++i) {
    Round r = *Round::FromHands(rules, i & 3, deals[i]);
    const int steps = 1 + rng.Below(30);
    for (int k = 0; k < steps && !r.over(); ++k) {
      r.LegalMoves(&legal);
      r.ApplyChecked(legal[rng.Below(legal.size)]);
    }
    if (!r.over() && r.phase() == Phase::kPlay) out.push_back(r);
  }
  return out;
}

void BM_LegalMoves(benchmark::State& state) {
  const auto states = MidStates(static_cast<GameType>(state.range(0)), 1024);
  MoveList legal;
  size_t i = 0;
  for (auto _ : state) {
    states[i++ % states.size()].LegalMoves(&legal);
    benchmark::DoNotOptimize(legal.size);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LegalMoves)->Arg(1)->Arg(2);

// One whole trick (four checked plays and the resolution) from trick-start states.
void BM_TrickResolution(benchmark::State& state) {
  const GameType g = static_cast<GameType>(state.range(0));
  std::vector<Round> starts;
  for (Round& r : MidStates(g, 4096)) {
    if (r.current_trick().empty()) starts.push_back(r);
  }
  std::vector<std::array<Move, 4>> plays;
  MoveList legal;
  for (Round r : starts) {
    std::array<Move, 4> p{};
    for (int k = 0; k < 4; ++k) {
      r.LegalMoves(&legal);
      Move m = legal[0];
      for (const Move& l : legal) {
        if (l.type == MoveType::kPlay) m = l;
      }
      p[k] = m;
      r.ApplyChecked(m);
    }
    plays.push_back(p);
  }
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % starts.size();
    Round r = starts[k];
    for (const Move& m : plays[k]) r.ApplyChecked(m);
    benchmark::DoNotOptimize(r.completed_tricks());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TrickResolution)->Arg(1)->Arg(4);

}  // namespace
}  // namespace courtpiece::rules

BENCHMARK_MAIN();
