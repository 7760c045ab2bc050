// Not a test: ResolveCode throughput and latency of the Directory (the domain, no gRPC) on a
// real Redis. It writes `codes` open code entries, their tables' owner records and two live
// instances the way the table tier does (libs/placement keys, under a private prefix), then
// `threads` threads resolve random codes for `seconds` and it prints one JSON line.
//
//   build/bin/courtpiece-directory-resolve-bench --redis_addr=127.0.0.1:56502 --threads=8
#include <algorithm>
#include <atomic>
#include <iostream>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "courtpiece/placement/placement.h"
#include "courtpiece/table/rules_engine.h"
#include "services/lobby/directory.h"
#include "services/lobby/fake_directory_store.h"
#include "services/lobby/fake_table_port.h"
#include "services/lobby/redis_directory.h"

ABSL_FLAG(std::string, redis_addr, "127.0.0.1:6379", "Redis host:port");
ABSL_FLAG(int, redis_db, 12, "Redis database (its bench keys are deleted at the end)");
ABSL_FLAG(int, threads, 8, "resolving threads");
ABSL_FLAG(int, connections, 8, "Redis connections in the pool");
ABSL_FLAG(int, codes, 10000, "open codes");
ABSL_FLAG(int, seconds, 5, "run time");

namespace courtpiece::lobby {
namespace {

int Run() {
  absl::StatusOr<storage::RedisOptions> ro =
      storage::ParseRedisAddr(absl::GetFlag(FLAGS_redis_addr));
  if (!ro.ok()) {
    std::cerr << ro.status() << "\n";
    return 2;
  }
  ro->db = absl::GetFlag(FLAGS_redis_db);
  const std::string prefix = absl::StrCat("bench-", getpid(), ":");
  RedisDirectoryOptions options{
      .redis = *ro, .connections = absl::GetFlag(FLAGS_connections), .key_prefix = prefix};
  RedisCodeCache codes(options);
  RedisTableRegistry registry(options);
  placement::RegistryKeys keys(prefix);
  storage::RedisClient setup(*ro);
  const std::vector<placement::InstanceInfo> live = {{"bench-a", "127.0.0.1:1"},
                                                     {"bench-b", "127.0.0.1:2"}};
  for (const auto& i : live) {
    (void)setup.Command({"SADD", keys.InstancesKey(), i.id});
    (void)setup.Command({"SET", keys.InstanceKey(i.id), i.addr, "PX", "600000"});
  }
  const int n = absl::GetFlag(FLAGS_codes);
  std::vector<std::string> all;
  for (int c = 0; c < n; ++c) {
    DirectoryTable row{.table_id = absl::StrCat("t-bench-", c),
                       .code = absl::StrFormat("%06d", c),
                       .host_player = "host",
                       .request_id = "r",
                       .game_options = R"({"game":"classic"})",
                       .bet_coins = 100,
                       .turn_time_ms = 15000,
                       .listed = true,
                       .owner_instance = placement::PickOwner(absl::StrCat("t-bench-", c), live),
                       .created_at_ms = absl::ToUnixMillis(absl::Now())};
    (void)codes.Put(row.code, EncodeEntry(row));
    (void)setup.Command(
        {"HSET", keys.OwnerKey(row.table_id), "instance", row.owner_instance, "epoch", "1"});
    all.push_back(row.code);
  }
  FakeDirectoryStore store;  // never reached: Redis knows every code
  FakeTableTier tables;
  table::RulesEngineFactory engines;
  RandomCodeSource source;
  Directory dir({}, RealClock::Instance(), store, codes, registry, tables, engines, source);

  const int threads = absl::GetFlag(FLAGS_threads);
  const absl::Time end = absl::Now() + absl::Seconds(absl::GetFlag(FLAGS_seconds));
  std::atomic<int64_t> errors{0};
  std::vector<std::vector<int64_t>> lat(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  const absl::Time start = absl::Now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      absl::BitGen gen;
      while (absl::Now() < end) {
        const std::string& code = all[absl::Uniform<size_t>(gen, 0, all.size())];
        const absl::Time a = absl::Now();
        absl::StatusOr<TableRef> r = dir.ResolveCode(code);
        lat[static_cast<size_t>(t)].push_back(absl::ToInt64Microseconds(absl::Now() - a));
        if (!r.ok()) errors.fetch_add(1);
      }
    });
  }
  for (auto& th : pool) th.join();
  const double secs = absl::ToDoubleSeconds(absl::Now() - start);
  std::vector<int64_t> merged;
  for (auto& v : lat) merged.insert(merged.end(), v.begin(), v.end());
  std::sort(merged.begin(), merged.end());
  auto pct = [&merged](double p) {
    return merged.empty() ? 0 : merged[static_cast<size_t>(p * (merged.size() - 1))];
  };
  std::cout << absl::StrFormat(
      "{\"resolves\":%d,\"errors\":%d,\"per_second\":%.0f,\"p50_us\":%d,\"p99_us\":%d,"
      "\"threads\":%d,\"connections\":%d}\n",
      merged.size(), errors.load(), merged.size() / secs, pct(0.5), pct(0.99), threads,
      absl::GetFlag(FLAGS_connections));
  // Clean up the bench keys.
  for (const std::string& c : all) (void)setup.Command({"DEL", codes.CodeKey(c)});
  for (int c = 0; c < n; ++c) {
    (void)setup.Command({"DEL", keys.OwnerKey(absl::StrCat("t-bench-", c))});
  }
  for (const auto& i : live) (void)setup.Command({"DEL", keys.InstanceKey(i.id)});
  (void)setup.Command({"DEL", keys.InstancesKey()});
  return errors.load() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace courtpiece::lobby

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return courtpiece::lobby::Run();
}
