// courtpiece-lobby-records-bench: RecordGame throughput and latency of the records domain on
// the Postgres store (the part under LobbyRecords.RecordGame; no gRPC), on a fresh test
// database (COURTPIECE_TEST_PG_URL).
//
//   courtpiece-lobby-records-bench --threads 8 --games 4000 --players 200
//
// Each game is new (distinct key) with two people drawn from `players`, so stats rows are
// contended like a busy lobby's. Prints games/s and p50/p99 latency in ms.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/testing.h"
#include "services/lobby/pg_records_store.h"
#include "services/lobby/records.h"

ABSL_FLAG(int, threads, 8, "concurrent callers");
ABSL_FLAG(int, games, 4000, "RecordGame calls in all");
ABSL_FLAG(int, players, 200, "distinct players");
ABSL_FLAG(int, pool, 8, "Postgres connections");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  using namespace courtpiece;
  absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db =
      storage::TestDatabase::Create({.migrations = {{"lobby", ::courtpiece::common::SourceDir() +
                                                                  "/services/lobby/migrations"}}});
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 2;
  }
  storage::PgPoolOptions options = (*db)->PoolOptions();
  options.size_max = absl::GetFlag(FLAGS_pool);
  options.acquire_timeout_ms = 10'000;
  storage::PgPool pool(options);
  lobby::PgRecordsStore store(pool);
  lobby::Records records(store, RealClock::Instance(), lobby::RecordsOptions{}, nullptr);
  const int threads = absl::GetFlag(FLAGS_threads), games = absl::GetFlag(FLAGS_games),
            players = absl::GetFlag(FLAGS_players);
  std::atomic<int> next{0}, failed{0};
  std::vector<std::vector<double>> latency_ms(threads);
  const absl::Time start = absl::Now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = next++; i < games; i = next++) {
        const std::string table = absl::StrCat("bench-", i / 10);
        const uint64_t game_no = static_cast<uint64_t>(i % 10 + 1);
        const std::string a = absl::StrCat("p", (i * 7) % players);
        const std::string b = absl::StrCat("p", (i * 7 + 1) % players);
        lobby::GameRecordData g{.key = absl::StrCat(table, ":game:", game_no),
                                .table_id = table,
                                .game_no = game_no,
                                .game = "classic",
                                .counts_for_stats = true,
                                .ended_early = false,
                                .winning_team = i % 2,
                                .scores = {i % 2 == 0 ? 5 : 3, i % 2 == 0 ? 3 : 5},
                                .courts = {1, 0},
                                .goon_courts = {0, 0},
                                .players = {{a, 0, i % 2 == 0}, {b, 1, i % 2 == 1}}};
        const absl::Time t0 = absl::Now();
        if (!records.RecordGame(g, t0 + absl::Seconds(10)).ok()) ++failed;
        latency_ms[t].push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
      }
    });
  }
  for (std::thread& w : workers) w.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::vector<double> all;
  for (auto& v : latency_ms) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all.empty() ? 0.0 : all[static_cast<size_t>(p * (all.size() - 1))];
  };
  std::printf(
      "RecordGame: %d games, %d threads, %d failed: %.0f games/s, p50 %.2f ms, p99 %.2f ms\n",
      games, threads, failed.load(), games / seconds, pct(0.50), pct(0.99));
  return failed.load() == 0 ? 0 : 1;
}
