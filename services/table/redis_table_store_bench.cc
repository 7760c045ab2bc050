// courtpiece-table-store-bench: the latency and throughput of RedisTableStore::Save, the
// table service's write per input, against a real Redis. Not a test: prints figures.
//
//   build/bin/courtpiece-table-store-bench --redis_addr=127.0.0.1:56379 --saves=10000
//       --state_bytes=2048 --events_per_save=10   (one line)
//
// One table, one calling thread, `connections` clients in the store (1 = one connection:
// every Save is one EVALSHA round trip). Uses the key prefix "cpbench:<pid>:" and removes
// its table at the end.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "services/table/redis_table_store.h"

ABSL_FLAG(std::string, redis_addr, "127.0.0.1:56379", "Redis host:port");
ABSL_FLAG(int, saves, 10'000, "Saves to time");
ABSL_FLAG(int, state_bytes, 2048, "bytes of state per Save");
ABSL_FLAG(int, events_per_save, 10, "events appended per Save");
ABSL_FLAG(int, event_bytes, 100, "bytes per event");
ABSL_FLAG(int, events_max, 200, "events kept per table");
ABSL_FLAG(int, connections, 1, "clients in the store's pool");

namespace courtpiece::table_service {
namespace {

int Run() {
  absl::StatusOr<storage::RedisOptions> redis =
      storage::ParseRedisAddr(absl::GetFlag(FLAGS_redis_addr));
  if (!redis.ok()) {
    std::fprintf(stderr, "bad --redis_addr: %s\n", redis.status().ToString().c_str());
    return 2;
  }
  const int saves = absl::GetFlag(FLAGS_saves);
  const int events_max = absl::GetFlag(FLAGS_events_max);
  if (saves < 1 || events_max < 0 || absl::GetFlag(FLAGS_connections) < 1) {
    std::fprintf(stderr, "--saves and --connections must be >= 1, --events_max >= 0\n");
    return 2;
  }
  RedisTableStore store({.redis = *redis,
                         .connections = absl::GetFlag(FLAGS_connections),
                         .key_prefix = absl::StrCat("cpbench:", ::getpid(), ":")});
  const std::string table = "bench-table";
  absl::StatusOr<Owner> owner = store.Create(table, "bench", "");
  if (!owner.ok()) {
    std::fprintf(stderr, "create: %s\n", owner.status().ToString().c_str());
    return 1;
  }
  std::string state(absl::GetFlag(FLAGS_state_bytes), 's');
  std::vector<std::string> events(absl::GetFlag(FLAGS_events_per_save),
                                  std::string(absl::GetFlag(FLAGS_event_bytes), 'e'));
  // Warm up: the script gets loaded, the connection opened.
  for (int i = 0; i < 100; ++i) {
    if (absl::Status s = store.Save(table, *owner, state, events, events_max); !s.ok()) {
      std::fprintf(stderr, "save: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  std::vector<double> latency_us;
  latency_us.reserve(saves);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < saves; ++i) {
    state[i % state.size()] = static_cast<char>('a' + i % 26);
    const auto before = std::chrono::steady_clock::now();
    absl::Status s = store.Save(table, *owner, state, events, events_max);
    const auto after = std::chrono::steady_clock::now();
    if (!s.ok()) {
      std::fprintf(stderr, "save %d: %s\n", i, s.ToString().c_str());
      return 1;
    }
    latency_us.push_back(std::chrono::duration<double, std::micro>(after - before).count());
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  (void)store.Remove(table, *owner);
  std::sort(latency_us.begin(), latency_us.end());
  auto at = [&](double q) { return latency_us[static_cast<size_t>(q * (latency_us.size() - 1))]; };
  std::printf(
      "saves=%d state_bytes=%zu events_per_save=%zu event_bytes=%d events_max=%d "
      "connections=%d\n"
      "p50_us=%.0f p99_us=%.0f max_us=%.0f ops_per_s=%.0f\n",
      saves, state.size(), events.size(), absl::GetFlag(FLAGS_event_bytes), events_max,
      absl::GetFlag(FLAGS_connections), at(0.50), at(0.99), latency_us.back(), saves / total_s);
  return 0;
}

}  // namespace
}  // namespace courtpiece::table_service

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return courtpiece::table_service::Run();
}
