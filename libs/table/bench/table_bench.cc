// courtpiece-table-bench: many bot-played tables in one process, in virtual time.
//
// Each table has one person (the host, whom a bot plays for after five timeouts, as for a
// player who never acts) and three bots, on the real rules engine; every game type in turn.
// The driver feeds each table its next deadline and answers its awaited wallet transfers.
// "Actions" are engine moves (calls, hides, plays, asks, shows) plus driver inputs.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <memory>
#include <string>
#include <vector>

#include "courtpiece/table/rules_engine.h"
#include "courtpiece/table/table.h"

namespace courtpiece::table {
namespace {

const char* kGames[] = {
    R"({"game":"classic"})", R"({"game":"piles"})", R"({"game":"hidden"})",
    R"({"game":"kaat"})",    R"({"game":"stack"})",
};

struct Live {
  std::unique_ptr<Table> table;
  int64_t now = 0;
};

class Fleet {
 public:
  explicit Fleet(int n) : seeds_("bench", "fleet") {
    tables_.reserve(n);
    for (int i = 0; i < n; ++i) {
      TableOptions o{.table_id = "b" + std::to_string(i),
                     .host_player = "h" + std::to_string(i),
                     .bet_coins = 25,
                     .turn_time_ms = 5'000,
                     .game_options = kGames[i % 5]};
      absl::StatusOr<std::unique_ptr<Table>> t = Table::Create(o, &engines_, &seeds_, 0);
      Live l{std::move(*t), 0};
      (void)l.table->Handle({.type = CommandType::kStartNow, .player = o.host_player}, 0);
      Drain(l);
      tables_.push_back(std::move(l));
    }
  }
  // Moves every table to its next deadline once. Returns the actions taken.
  int64_t Tick() {
    int64_t actions = 0;
    for (Live& l : tables_) {
      std::optional<int64_t> next = l.table->NextDeadline();
      if (!next) continue;
      l.now = *next;
      l.table->Advance(l.now);
      ++actions;
      actions += Drain(l);
    }
    return actions;
  }
  size_t size() const { return tables_.size(); }

 private:
  int64_t Drain(Live& l) {
    int64_t moves = 0;
    for (int guard = 0; guard < 100; ++guard) {
      for (const Event& e : l.table->TakeEvents()) {
        moves += e.to_seat == 0 && (e.type == "played" || e.type == "trump" || e.type == "hidden" ||
                                    e.type == "asked" || e.type == "shown");
      }
      std::vector<Effect> fx = l.table->TakeEffects();
      if (fx.empty()) return moves;
      for (const Effect& f : fx) {
        if (f.type == EffectType::kTransfer && f.transfer.awaited) {
          (void)l.table->OnWalletReply(f.transfer.key, true, {}, l.now);
          ++moves;
        }
      }
    }
    return moves;
  }
  RulesEngineFactory engines_;
  DeterministicSeedSource seeds_;
  std::vector<Live> tables_;
};

void BM_BotTables(benchmark::State& state) {
  Fleet fleet(static_cast<int>(state.range(0)));
  for (int i = 0; i < 50; ++i) fleet.Tick();  // past the host's five timeouts
  int64_t actions = 0;
  for (auto _ : state) actions += fleet.Tick();
  state.SetItemsProcessed(actions);
  state.counters["actions_per_s"] =
      benchmark::Counter(static_cast<double>(actions), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BotTables)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_MemoryPerLiveTable(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  double per_table = 0;
  for (auto _ : state) {
    size_t before = mallinfo2().uordblks;
    auto fleet = std::make_unique<Fleet>(n);
    for (int i = 0; i < 3; ++i) fleet->Tick();  // every table mid-game
    size_t after = mallinfo2().uordblks;
    per_table = static_cast<double>(after - before) / n;
    benchmark::DoNotOptimize(fleet);
  }
  state.counters["bytes_per_table"] = per_table;
}
BENCHMARK(BM_MemoryPerLiveTable)->Arg(1000)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace courtpiece::table

BENCHMARK_MAIN();
