// courtpiece-bots-bench: the double-dummy solver's nodes per second and exact-solve cost,
// and decision time per bot level. Run a Release build:
//   build-rel/bin/courtpiece-bots-bench
// Decision-time percentiles (p50 / p99) come from courtpiece-botmatch, which times every
// decision of a match (docs/bots.md).
#include <benchmark/benchmark.h>

#include <vector>

#include "courtpiece/bots/search_bot.h"
#include "courtpiece/bots/solver.h"
#include "courtpiece/common/splitmix64.h"
#include "courtpiece/rules/round.h"

namespace courtpiece::bots {
namespace {

rules::Seed SeedOf(uint64_t n) {
  rules::Seed s{};
  SplitMix64 g{n * 0x9E3779B97F4A7C15ULL + 17};
  for (auto& b : s) b = static_cast<uint8_t>(g.Next() >> 56);
  return s;
}

// Seeded rounds played by the heuristic bot until `cards_left` cards are in the hands.
std::vector<rules::Round> Positions(rules::GameType game, int cards_left, int n) {
  const rules::Rules r = rules::DefaultRules(game);
  std::vector<rules::Round> out;
  for (uint64_t i = 0; static_cast<int>(out.size()) < n; ++i) {
    rules::Round rd = rules::Round::FromSeed(r, static_cast<int>(i % 4), SeedOf(i));
    while (!rd.over()) {
      int in_hands = 0;
      for (int s = 0; s < 4; ++s) in_hands += rd.hand(s).size();
      if (rd.phase() == rules::Phase::kPlay && in_hands <= cards_left) break;
      rd.ApplyChecked(ChooseMove(r, rd.View(rd.turn()), LevelOptions(Level::kEasy)));
    }
    if (!rd.over()) out.push_back(rd);
  }
  return out;
}

// Exact solves (horizon 13) from positions with range(1) cards left: nodes per solve and
// nodes per second.
void BM_SolveExact(benchmark::State& state) {
  const auto game = static_cast<rules::GameType>(state.range(0));
  const auto positions = Positions(game, static_cast<int>(state.range(1)), 64);
  Solver solver(SolverLimits{.node_budget = 50'000'000, .tt_entries_log2 = 18});
  int64_t nodes = 0, solves = 0;
  size_t i = 0;
  for (auto _ : state) {
    const rules::Round& r = positions[i++ % positions.size()];
    const Solver::Result res = solver.Solve(r, rules::TeamOf(r.turn()));
    benchmark::DoNotOptimize(res.value);
    nodes += res.nodes;
    ++solves;
  }
  state.counters["nodes_per_solve"] = static_cast<double>(nodes) / static_cast<double>(solves);
  state.counters["nodes_per_s"] =
      benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(rules::GameTypeName(game)));
}
BENCHMARK(BM_SolveExact)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {16, 20, 24, 28}})
    ->Unit(benchmark::kMillisecond);

// One decision of a level from positions with range(1) cards left.
void BM_Decision(benchmark::State& state) {
  const auto game = static_cast<rules::GameType>(state.range(0));
  const auto level = static_cast<Level>(state.range(2));
  const rules::Rules r = rules::DefaultRules(game);
  const auto positions = Positions(game, static_cast<int>(state.range(1)), 64);
  SearchBot bot(LevelOptions(level, 1));
  int64_t nodes = 0;
  size_t i = 0;
  for (auto _ : state) {
    const rules::Round& rd = positions[i++ % positions.size()];
    const rules::Move m = bot.ChooseMove(r, rd.View(rd.turn()));
    benchmark::DoNotOptimize(m);
    nodes += bot.last_decision().nodes;
  }
  state.counters["nodes_per_s"] =
      benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(rules::GameTypeName(game)) + " " + std::string(LevelName(level)));
}
BENCHMARK(BM_Decision)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {52, 32, 16}, {1, 2}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace courtpiece::bots

BENCHMARK_MAIN();
