// courtpiece-table-load: bot-driven clients over real gRPC against courtpiece-table
// instances that this tool starts itself (so that it can read their RSS, kill -9 and
// restart them). Not a test; tools/table_load/run_load.sh sets up Postgres, Redis, the wallet
// and the fake receivers around it. docs/table-load.md has the figures and their commands.
//
//   courtpiece-table-load --mode=load --table_bin=build-rel/bin/courtpiece-table
//       --wallet_addr=127.0.0.1:P --redis_addr=127.0.0.1:R --steps=500,1000,2000,5000
//   courtpiece-table-load --mode=failover --instances=2 --tables=300 --kills=20 ...
//
// The table instances get this process's environment (COURTPIECE_REDIS_ADDR, the wallet,
// lobby and moderation addresses, ...) plus their own COURTPIECE_TABLE_ADDR,
// _ADVERTISE_ADDR, _METRICS_ADDR and _INSTANCE_ID (free loopback ports).
// Exit status: 0 when every table was set up (and, with --smoke, moved, with no stream
// ended by the server and no refused command); 1 otherwise; 2 for bad flags.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "client.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/redis_client.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "stats.h"

extern char** environ;

ABSL_FLAG(std::string, mode, "load", "load | failover");
ABSL_FLAG(std::string, table_bin, "build-rel/bin/courtpiece-table", "the table service binary");
ABSL_FLAG(std::string, wallet_addr, "", "wallet gRPC HOST:PORT (players' accounts)");
ABSL_FLAG(std::string, redis_addr, "", "Redis HOST:PORT, for command counts (optional)");
ABSL_FLAG(std::string, log_dir, "/tmp", "where the instances' logs go");
ABSL_FLAG(int, instances, 1, "table instances to start (failover: 2 or 3)");
ABSL_FLAG(std::string, steps, "500,1000,2000,5000", "load: live tables per phase, growing");
ABSL_FLAG(int, phase_seconds, 30, "load: measured seconds per phase");
ABSL_FLAG(bool, each_second, false,
          "load: also print the latency of every second of a phase (waves, drift)");
ABSL_FLAG(int, ramp_seconds, 0,
          "load: each step's new tables are started evenly over this many seconds (0: at "
          "once, so their first rounds end together); set it to a round's length (~60 s at 1 "
          "action/s) to measure the steady state");
ABSL_FLAG(int, warmup_seconds, 12, "after tables are added: count-in (7 s) and the stake");
ABSL_FLAG(double, rate, 1.0, "actions per second per table");
ABSL_FLAG(double, p99_goal_ms, 50, "load: the largest step whose p99 is under this is named");
ABSL_FLAG(int, setup_concurrency, 64, "tables being set up at once");
ABSL_FLAG(int, channels, 8, "gRPC connections per instance for the Play streams");
ABSL_FLAG(int, tables, 300, "failover: tables on the victim");
ABSL_FLAG(int, kills, 20, "failover: rounds of kill -9 and restart");
ABSL_FLAG(bool, smoke, false, "10 tables for 5 s; exit 0 only if everything worked");
ABSL_FLAG(std::string, run_id, "", "prefix of table and player ids (default: from the pid)");
ABSL_FLAG(int, people, 4, "load: people per table (1..4); start_now seats bots in the rest");
ABSL_FLAG(std::string, bot_level, "", "load: the tables' bot level: easy, normal or strong");
ABSL_FLAG(bool, mux, false,
          "the players' streams as sessions of PlayMux streams (one per --channels connection, "
          "as a gateway's) instead of a Play call each");

namespace courtpiece::table_load {
namespace {

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// One courtpiece-table process.
struct Instance {
  std::string id;
  int port = 0, metrics_port = 0;
  pid_t pid = -1;
  std::string addr() const { return absl::StrCat("127.0.0.1:", port); }
  std::string metrics_addr() const { return absl::StrCat("127.0.0.1:", metrics_port); }
};

bool Spawn(Instance& in, const std::string& bin, const std::string& log_dir) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (kv.starts_with("COURTPIECE_TABLE_ADDR=") ||
        kv.starts_with("COURTPIECE_TABLE_ADVERTISE_ADDR=") ||
        kv.starts_with("COURTPIECE_TABLE_METRICS_ADDR=") ||
        kv.starts_with("COURTPIECE_TABLE_INSTANCE_ID=")) {
      continue;
    }
    env.emplace_back(kv);
  }
  env.push_back(absl::StrCat("COURTPIECE_TABLE_ADDR=", in.addr()));
  env.push_back(absl::StrCat("COURTPIECE_TABLE_ADVERTISE_ADDR=", in.addr()));
  env.push_back(absl::StrCat("COURTPIECE_TABLE_METRICS_ADDR=", in.metrics_addr()));
  env.push_back(absl::StrCat("COURTPIECE_TABLE_INSTANCE_ID=", in.id));
  std::vector<char*> envp;
  for (std::string& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string path = bin;
  std::vector<char*> argv = {path.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = absl::StrCat(log_dir, "/", in.id, ".log");
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const int rc = posix_spawn(&in.pid, path.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    std::cerr << "cannot start " << bin << ": " << std::strerror(rc) << "\n";
    return false;
  }
  return true;
}

// Serving: GetTable of a table that does not exist answers NOT_FOUND.
bool WaitServing(InstanceEndpoint& endpoint, pid_t pid, Clock::duration timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    table::v1::GetTableRequest request;
    request.set_table_id("load-probe-none");
    table::v1::TableInfo info;
    const grpc::Status s = endpoint.stub->GetTable(&context, request, &info);
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) return true;
    if (waitpid(pid, nullptr, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

InstanceEndpoint Connect(const std::string& addr, int channels) {
  InstanceEndpoint e;
  e.addr = addr;
  for (int i = 0; i < channels; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("courtpiece.table_load.connection", i);  // its own connection
    e.channels.push_back(grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), args));
    e.stream_stubs.push_back(table::v1::TableService::NewStub(e.channels.back()));
  }
  e.stub = table::v1::TableService::NewStub(e.channels[0]);
  return e;
}

// What the service and Redis counted, read at a phase's edges.
struct Reading {
  double snapshot_writes = 0, snapshot_bytes = 0, live_tables = 0, commands = 0;
  int64_t rss_bytes = 0;
  int64_t redis_commands = 0, redis_evalsha = 0;
  // CPU seconds used so far by the instances (summed), this tool and the Redis server.
  double cpu_instances_s = 0, cpu_tool_s = 0, cpu_redis_s = 0;
  std::map<std::string, double> bot_moves{{"searched", 0}, {"late", 0}, {"pool_full", 0}};
  double bot_jobs_expired = 0;
};

int64_t InfoField(const std::string& info, const std::string& field) {
  for (absl::string_view line : absl::StrSplit(info, absl::ByAnyChar("\r\n"))) {
    if (!absl::StartsWith(line, field)) continue;
    absl::string_view rest = line.substr(field.size());
    const size_t end = rest.find_first_not_of("0123456789");
    int64_t v = 0;
    if (absl::SimpleAtoi(rest.substr(0, end), &v)) return v;
  }
  return 0;
}

Reading Read(const std::vector<Instance>& instances, storage::RedisClient* redis) {
  Reading r;
  for (const Instance& in : instances) {
    absl::StatusOr<std::string> m = FetchMetrics(in.metrics_addr());
    if (m.ok()) {
      r.snapshot_writes += SumMetric(*m, "courtpiece_table_snapshot_writes_total");
      r.snapshot_bytes += SumMetric(*m, "courtpiece_table_snapshot_bytes_total");
      r.live_tables += SumMetric(*m, "courtpiece_table_live_tables");
      r.commands += SumMetric(*m, "courtpiece_table_commands_total");
      for (const char* outcome : {"searched", "late", "pool_full"}) {
        for (const char* level : {"normal", "strong"}) {
          r.bot_moves[outcome] +=
              SumMetric(*m, absl::StrCat("courtpiece_table_bot_moves_total{level=\"", level,
                                         "\",outcome=\"", outcome, "\"}"));
        }
      }
      r.bot_jobs_expired += SumMetric(*m, "courtpiece_table_bot_jobs{state=\"expired\"}");
    }
    absl::StatusOr<int64_t> rss = ReadRssBytes(in.pid);
    if (rss.ok()) r.rss_bytes += *rss;
    absl::StatusOr<double> cpu = ReadCpuSeconds(in.pid);
    if (cpu.ok()) r.cpu_instances_s += *cpu;
  }
  r.cpu_tool_s = ReadCpuSeconds(0).value_or(0);
  if (redis != nullptr) {
    // Only a Redis on this machine has its CPU in our /proc (process_id is the server's pid).
    const std::string& host = redis->options().host;
    if (host == "127.0.0.1" || host == "localhost") {
      absl::StatusOr<storage::RedisReply> server = redis->Command({"INFO", "server"});
      const int64_t redis_pid = server.ok() ? InfoField(server->str, "process_id:") : 0;
      if (redis_pid > 0) r.cpu_redis_s = ReadCpuSeconds(static_cast<int>(redis_pid)).value_or(0);
    }
    absl::StatusOr<storage::RedisReply> stats = redis->Command({"INFO", "stats"});
    if (stats.ok()) r.redis_commands = InfoField(stats->str, "total_commands_processed:");
    absl::StatusOr<storage::RedisReply> cs = redis->Command({"INFO", "commandstats"});
    if (cs.ok()) r.redis_evalsha = InfoField(cs->str, "cmdstat_evalsha:calls=");
  }
  return r;
}

// The stored bytes of the first `sample` tables: STRLEN of the state key, MEMORY USAGE of
// the state and events keys (docs/table-service.md, Redis layout).
std::string RedisTableBytes(storage::RedisClient* redis, const std::string& run_id, int tables,
                            int sample) {
  if (redis == nullptr || tables == 0) return "";
  int64_t strlen_sum = 0, memory_sum = 0, n = 0;
  for (int i = 0; i < std::min(tables, sample); ++i) {
    const std::string tag = absl::StrCat("cp:{", run_id, "-t", i, "}:");
    absl::StatusOr<storage::RedisReply> len = redis->Command({"STRLEN", tag + "state"});
    absl::StatusOr<storage::RedisReply> m1 =
        redis->Command({"MEMORY", "USAGE", tag + "state", "SAMPLES", "0"});
    absl::StatusOr<storage::RedisReply> m2 =
        redis->Command({"MEMORY", "USAGE", tag + "events", "SAMPLES", "0"});
    if (!len.ok() || !m1.ok() || !m2.ok() || len->integer == 0) continue;
    strlen_sum += len->integer;
    memory_sum += m1->integer + m2->integer;
    ++n;
  }
  if (n == 0) return " redis_state_bytes=? ";
  return absl::StrFormat(" redis_state_bytes_per_table=%d redis_memory_per_table=%d (of %d tables)",
                         strlen_sum / n, memory_sum / n, n);
}

struct PhaseResult {
  int tables = 0;
  Samples::Summary latency;
  double actions_per_s = 0;
};

PhaseResult Measure(LoadClient& client, const std::vector<Instance>& instances,
                    storage::RedisClient* redis, const std::string& run_id, int seconds,
                    const Reading& baseline) {
  LoadStats& st = client.stats();
  // Everything before the window is dropped.
  st.command_latency.Take();
  st.rejected.Take();
  st.stream_ends.Take();
  st.notices.Take();
  const int64_t actions0 = st.actions.load(), commands0 = st.commands.load();
  const int64_t idle0 = st.idle_ticks.load(), busy0 = st.busy_ticks.load();
  const int64_t none0 = st.no_candidate.load();
  const Reading before = Read(instances, redis);
  const Clock::time_point start = Clock::now();
  // Second by second: the samples of each second are summarised (when asked) and kept.
  std::vector<int64_t> all;
  for (int i = 0; i < seconds; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    std::vector<int64_t> second = st.command_latency.TakeRaw();
    if (absl::GetFlag(FLAGS_each_second)) {
      const Samples::Summary s = Summarize(second);
      std::cout << absl::StrFormat("  second %d: n=%d p50=%.2fms p99=%.2fms max=%.2fms\n", i + 1,
                                   s.count, s.p50_ms, s.p99_ms, s.max_ms)
                << std::flush;
    }
    all.insert(all.end(), second.begin(), second.end());
  }
  const double elapsed = Seconds(Clock::now() - start);
  const Reading after = Read(instances, redis);
  PhaseResult out;
  out.tables = client.ready();
  out.latency = Summarize(std::move(all));
  const int64_t actions = st.actions.load() - actions0;
  out.actions_per_s = static_cast<double>(actions) / elapsed;
  const double writes = after.snapshot_writes - before.snapshot_writes;
  const double bytes = after.snapshot_bytes - before.snapshot_bytes;
  const double per_action = actions > 0 ? 1.0 / static_cast<double>(actions) : 0;
  const double tables = std::max(1.0, after.live_tables);
  std::cout << absl::StrFormat(
                   "phase tables=%d live_tables=%.0f seconds=%.1f actions=%d actions_per_s=%.1f "
                   "(offered %.1f) commands=%d idle_ticks=%d busy_ticks=%d no_candidate=%d\n",
                   out.tables, after.live_tables, elapsed, actions, out.actions_per_s,
                   out.tables * absl::GetFlag(FLAGS_rate), st.commands.load() - commands0,
                   st.idle_ticks.load() - idle0, st.busy_ticks.load() - busy0,
                   st.no_candidate.load() - none0)
            << absl::StrFormat(
                   "  latency command->result n=%d p50=%.2fms p90=%.2fms p99=%.2fms max=%.2fms\n",
                   out.latency.count, out.latency.p50_ms, out.latency.p90_ms, out.latency.p99_ms,
                   out.latency.max_ms)
            << "  rejected: " << st.rejected.Format(st.rejected.Take())
            << " | stream_ends: " << st.stream_ends.Format(st.stream_ends.Take())
            << " | notices: " << st.notices.Format(st.notices.Take()) << "\n"
            << absl::StrFormat(
                   "  rss=%.1fMiB rss_delta_per_table=%.1fKiB snapshot_writes_per_action=%.2f "
                   "snapshot_bytes_per_write=%.0f redis_commands_per_action=%.2f "
                   "redis_evalsha_per_action=%.2f\n",
                   after.rss_bytes / 1048576.0,
                   (after.rss_bytes - baseline.rss_bytes) / 1024.0 / tables, writes * per_action,
                   writes > 0 ? bytes / writes : 0,
                   (after.redis_commands - before.redis_commands) * per_action,
                   (after.redis_evalsha - before.redis_evalsha) * per_action)
            << absl::StrFormat(
                   "  bot_moves searched=%.0f late=%.0f pool_full=%.0f jobs_expired=%.0f\n",
                   after.bot_moves.at("searched") - before.bot_moves.at("searched"),
                   after.bot_moves.at("late") - before.bot_moves.at("late"),
                   after.bot_moves.at("pool_full") - before.bot_moves.at("pool_full"),
                   after.bot_jobs_expired - before.bot_jobs_expired)
            << absl::StrFormat(
                   "  cpu (%% of one core) instances=%.1f tool=%.1f redis=%.1f | per action: "
                   "instances=%.3fms tool=%.3fms redis=%.3fms\n",
                   100 * (after.cpu_instances_s - before.cpu_instances_s) / elapsed,
                   100 * (after.cpu_tool_s - before.cpu_tool_s) / elapsed,
                   100 * (after.cpu_redis_s - before.cpu_redis_s) / elapsed,
                   1000 * (after.cpu_instances_s - before.cpu_instances_s) * per_action,
                   1000 * (after.cpu_tool_s - before.cpu_tool_s) * per_action,
                   1000 * (after.cpu_redis_s - before.cpu_redis_s) * per_action)
            << " " << RedisTableBytes(redis, run_id, out.tables, 50) << "\n"
            << std::flush;
  return out;
}

int Run() {
  const std::string mode = absl::GetFlag(FLAGS_mode);
  const bool smoke = absl::GetFlag(FLAGS_smoke);
  const int instance_count = absl::GetFlag(FLAGS_instances);
  if ((mode != "load" && mode != "failover") || absl::GetFlag(FLAGS_wallet_addr).empty() ||
      instance_count < 1 || instance_count > 8 || absl::GetFlag(FLAGS_rate) <= 0 ||
      (mode == "failover" && instance_count < 2)) {
    std::cerr << "usage: --mode=load|failover --wallet_addr=HOST:PORT [--instances=N (failover: "
                 ">= 2)] [--rate>0] ...\n";
    return 2;
  }
  const int people = absl::GetFlag(FLAGS_people);
  const std::string bot_level = absl::GetFlag(FLAGS_bot_level);
  if (people < 1 || people > 4 || (mode == "failover" && people != 4) ||
      (bot_level != "" && bot_level != "easy" && bot_level != "normal" && bot_level != "strong")) {
    std::cerr << "--people must be 1..4 (4 in failover mode); --bot_level easy, normal or "
                 "strong\n";
    return 2;
  }
  std::vector<int> steps;
  for (absl::string_view s : absl::StrSplit(absl::GetFlag(FLAGS_steps), ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(s, &n) || n <= 0 || (!steps.empty() && n <= steps.back())) {
      std::cerr << "--steps must be growing positive counts, e.g. 500,1000,2000\n";
      return 2;
    }
    steps.push_back(n);
  }
  int phase_seconds = absl::GetFlag(FLAGS_phase_seconds);
  if (smoke) {
    steps = {10};
    phase_seconds = 5;
  }
  std::string run_id = absl::GetFlag(FLAGS_run_id);
  if (run_id.empty()) run_id = absl::StrCat("L", getpid());

  std::unique_ptr<storage::RedisClient> redis;
  if (!absl::GetFlag(FLAGS_redis_addr).empty()) {
    absl::StatusOr<storage::RedisOptions> o =
        storage::ParseRedisAddr(absl::GetFlag(FLAGS_redis_addr));
    if (!o.ok()) {
      std::cerr << "--redis_addr: " << o.status() << "\n";
      return 2;
    }
    redis = std::make_unique<storage::RedisClient>(*o);
  }

  std::vector<Instance> instances(instance_count);
  std::vector<InstanceEndpoint> endpoints;
  for (int i = 0; i < instance_count; ++i) {
    instances[i].id = absl::StrCat(run_id, "-inst", i);
    instances[i].port = ::courtpiece::common::FreeLoopbackPort();
    instances[i].metrics_port = ::courtpiece::common::FreeLoopbackPort();
    endpoints.push_back(Connect(instances[i].addr(), absl::GetFlag(FLAGS_channels)));
  }
  auto stop_all = [&] {
    for (Instance& in : instances) {
      if (in.pid <= 0) continue;
      kill(in.pid, SIGTERM);
      waitpid(in.pid, nullptr, 0);
      in.pid = -1;
    }
  };
  for (int i = 0; i < instance_count; ++i) {
    if (!Spawn(instances[i], absl::GetFlag(FLAGS_table_bin), absl::GetFlag(FLAGS_log_dir)) ||
        !WaitServing(endpoints[i], instances[i].pid, std::chrono::seconds(20))) {
      std::cerr << "instance " << instances[i].id << " did not start; see "
                << absl::GetFlag(FLAGS_log_dir) << "/" << instances[i].id << ".log\n";
      stop_all();
      return 1;
    }
  }
  std::cout << "instances:";
  for (const Instance& in : instances)
    std::cout << " " << in.id << "@" << in.addr() << " pid " << in.pid;
  std::cout << "\n" << std::flush;
  const Reading baseline = Read(instances, redis.get());

  LoadOptions options;
  options.actions_per_second = absl::GetFlag(FLAGS_rate);
  options.run_id = run_id;
  options.failover_mode = mode == "failover";
  options.people = absl::GetFlag(FLAGS_people);
  options.mux = absl::GetFlag(FLAGS_mux);
  options.bot_level = absl::GetFlag(FLAGS_bot_level);
  grpc::ChannelArguments wallet_args;
  auto client = std::make_unique<LoadClient>(
      &endpoints,
      grpc::CreateCustomChannel(absl::GetFlag(FLAGS_wallet_addr),
                                grpc::InsecureChannelCredentials(), wallet_args),
      options);
  LoadStats& st = client->stats();
  int exit_code = 0;

  if (mode == "load") {
    std::vector<PhaseResult> results;
    for (int n : steps) {
      const Clock::time_point setup_start = Clock::now();
      const int add = n - client->tables();
      for (int i = 0; i < instance_count; ++i) {
        const int share = add / instance_count + (i < add % instance_count ? 1 : 0);
        client->AddTables(
            share, i, absl::GetFlag(FLAGS_setup_concurrency),
            std::chrono::seconds(absl::GetFlag(FLAGS_ramp_seconds)) /
                instance_count,  // the instances' shares one after the other
            Clock::now() + std::chrono::seconds(120 + n / 20 + absl::GetFlag(FLAGS_ramp_seconds)));
      }
      std::cout << absl::StrFormat("setup tables=%d ready=%d failed=%d in %.1fs errors: %s\n", n,
                                   client->ready(), client->failed(),
                                   Seconds(Clock::now() - setup_start),
                                   st.setup_errors.Format(st.setup_errors.Take()))
                << std::flush;
      if (client->ready() < n) exit_code = 1;
      std::this_thread::sleep_for(std::chrono::seconds(absl::GetFlag(FLAGS_warmup_seconds)));
      results.push_back(Measure(*client, instances, redis.get(), run_id, phase_seconds, baseline));
    }
    int best = 0;
    for (const PhaseResult& r : results) {
      if (r.latency.count > 0 && r.latency.p99_ms < absl::GetFlag(FLAGS_p99_goal_ms)) {
        best = std::max(best, r.tables);
      }
    }
    std::cout << absl::StrFormat(
        "largest live tables with p99 < %.0f ms at %.2f actions/s/table: %d\n",
        absl::GetFlag(FLAGS_p99_goal_ms), absl::GetFlag(FLAGS_rate), best);
    if (smoke) {
      const int moved = client->TablesWithActions();
      const bool clean = st.stream_ends.Take().empty() && st.rejected.Take().empty();
      std::cout << "smoke: tables=" << client->ready() << " with moves=" << moved
                << " clean=" << clean << "\n";
      if (client->ready() != 10 || moved != 10 || !clean || results[0].latency.count == 0) {
        exit_code = 1;
      }
    }
  } else {
    const int tables = absl::GetFlag(FLAGS_tables);
    client->AddTables(tables, 0, absl::GetFlag(FLAGS_setup_concurrency), Clock::duration::zero(),
                      Clock::now() + std::chrono::seconds(120));
    std::cout << "setup tables=" << tables << " ready=" << client->ready()
              << " errors: " << st.setup_errors.Format(st.setup_errors.Take()) << "\n"
              << std::flush;
    if (client->ready() < tables) exit_code = 1;
    std::this_thread::sleep_for(std::chrono::seconds(absl::GetFlag(FLAGS_warmup_seconds)));
    // answered, accepted, accepted: mid-round / between rounds / after a timeout
    std::array<std::vector<int64_t>, 5> totals;
    int missed = 0;
    for (int k = 1; k <= absl::GetFlag(FLAGS_kills); ++k) {
      // Steady: every table's four streams open again (on its owner), then a second of play.
      const Clock::time_point steady_deadline = Clock::now() + std::chrono::seconds(30);
      while (client->Steady(Clock::time_point::min()) < client->ready() &&
             Clock::now() < steady_deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const int steady = client->Steady(Clock::time_point::min());
      const int victim = client->BusiestInstance();
      Instance& v = instances[victim];
      const Clock::time_point killed_at = Clock::now();
      kill(v.pid, SIGKILL);
      client->MarkKill(victim, killed_at);
      waitpid(v.pid, nullptr, 0);
      v.pid = -1;
      const Clock::time_point deadline = killed_at + std::chrono::seconds(60);
      while (client->AwaitingFailover() > 0 && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      const int left = client->AwaitingFailover();
      missed += left;
      // This kill's samples, in the order of `totals`.
      std::array<std::vector<int64_t>, 5> kill_samples;
      Samples* sources[] = {&st.failover_answered, &st.failover_accepted,
                            &st.failover_accepted_mid_round, &st.failover_accepted_between_rounds,
                            &st.failover_accepted_after_timeout};
      for (size_t i = 0; i < kill_samples.size(); ++i) {
        kill_samples[i] = sources[i]->TakeRaw();
        totals[i].insert(totals[i].end(), kill_samples[i].begin(), kill_samples[i].end());
      }
      const Samples::Summary a = Summarize(kill_samples[0]), c = Summarize(kill_samples[1]),
                             m = Summarize(kill_samples[2]);
      std::cout << absl::StrFormat(
                       "kill %d: victim %s steady=%d answered n=%d p50=%.0fms p99=%.0fms "
                       "max=%.0fms | accepted n=%d p50=%.0fms p99=%.0fms max=%.0fms | "
                       "mid-round accepted n=%d p99=%.0fms | not moved in 60 s: %d | "
                       "stream_ends: %s\n",
                       k, v.id, steady, a.count, a.p50_ms, a.p99_ms, a.max_ms, c.count, c.p50_ms,
                       c.p99_ms, c.max_ms, m.count, m.p99_ms, left,
                       st.stream_ends.Format(st.stream_ends.Take()))
                << std::flush;
      client->ClearFailover();
      // Restart the victim (same id and ports) before the next round.
      if (!Spawn(v, absl::GetFlag(FLAGS_table_bin), absl::GetFlag(FLAGS_log_dir)) ||
          !WaitServing(endpoints[victim], v.pid, std::chrono::seconds(20))) {
        std::cerr << "restart of " << v.id << " failed\n";
        exit_code = 1;
        break;
      }
    }
    const char* names[] = {"first command answered by the new owner",
                           "first command accepted by the new owner",
                           "first accepted, tables mid-round at the kill",
                           "first accepted, tables between rounds at the kill",
                           "first accepted, a turn timed out during the failover"};
    std::cout << "failover totals over " << absl::GetFlag(FLAGS_kills)
              << " kills (from kill -9):\n";
    for (int i = 0; i < 5; ++i) {
      const Samples::Summary s = Summarize(std::move(totals[i]));
      std::cout << absl::StrFormat("  %s: n=%d p50=%.0fms p90=%.0fms p99=%.0fms max=%.0fms\n",
                                   names[i], s.count, s.p50_ms, s.p90_ms, s.p99_ms, s.max_ms);
    }
    std::cout << "  tables that did not move within 60 s: " << missed << "\n";
  }
  client->Stop();
  std::cout << "client: commands=" << st.commands.load() << " actions=" << st.actions.load()
            << "\n";
  client.reset();
  stop_all();
  return exit_code;
}

}  // namespace
}  // namespace courtpiece::table_load

int main(int argc, char** argv) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);  // docs/services.md
  absl::ParseCommandLine(argc, argv);
  return courtpiece::table_load::Run();
}
