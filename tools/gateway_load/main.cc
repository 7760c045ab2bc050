// courtpiece-load: simulated players through the gateway (docs/gateway.md "Load tool").
//
//   courtpiece-load --mode=idle --http=127.0.0.1:8080 --connections=20000 --gateway_pid=PID
//   courtpiece-load --mode=rate --http=127.0.0.1:8080 --connections=800 --rate=10000 --seconds=20
//   courtpiece-load --mode=rate --transport=grpc --grpc=127.0.0.1:50051 --http=127.0.0.1:8080 ...
//   courtpiece-load --mode=rate --direct=127.0.0.1:50054 --http=127.0.0.1:8080 ...  (baseline)
//
// Setup (sequential phases, each bounded): sign-in of one player per connection with
// GuestLogin over the gateway's HTTP API (a random 40-character device secret each, so every
// run makes new players), CreateTable by the first player of every group of
// --players_per_table, then the connections: each opens its group's table and `join`s.
// Run: idle holds the connections --hold_seconds and prints the gateway's RSS growth per
// connection (VmRSS of /proc/<--gateway_pid>/status before and after connecting); rate sends
// `vote` commands (answered by the table at once, FAILED_PRECONDITION: nothing changes) at
// --rate per second in total, spread round robin over the ready connections by one pacer
// thread, for --seconds, and prints command -> result latency p50/p90/p99/max (ms), the
// achieved rate and the result codes. Exit 1 when fewer than all connections got ready or
// (rate) nothing was answered.
// The client side: Beast on one io_context run by --threads threads (a strand per
// connection), gRPC's callback API, no thread per connection; RLIMIT_NOFILE raised to its
// hard limit. Loopback has ~28k ephemeral ports per destination (ip_local_port_range).
#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdio>
#include <iostream>
#include <random>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "courtpiece/client/v1/client.pb.h"
#include "load.h"
#include "play.h"
#include "services/gateway/testing/http_client.h"
#include "tools/gateway_load/async_stream.h"

ABSL_FLAG(std::string, mode, "idle",
          "idle: open --connections and hold them; rate: commands; play: --players playing "
          "games (docs/load.md)");
ABSL_FLAG(std::string, transport, "websocket",
          "websocket (the gateway's /v1/play, JSON) or grpc (CourtPiece.Play on --grpc)");
ABSL_FLAG(std::string, http, "127.0.0.1:8080",
          "the gateway's HTTP/WebSocket HOST:PORT (sign-in, CreateTable, WebSockets)");
ABSL_FLAG(std::string, grpc, "127.0.0.1:50051", "the gateway's gRPC HOST:PORT (--transport=grpc)");
ABSL_FLAG(std::string, direct, "",
          "a table instance's gRPC HOST:PORT: Play straight there with courtpiece-player-id "
          "(the baseline without the gateway; sign-in and CreateTable still go through --http)");
ABSL_FLAG(int, connections, 100, "connections (WebSockets or Play streams) to open");
ABSL_FLAG(bool, auth, true, "sign in (GuestLogin) a player per connection and send its token");
ABSL_FLAG(bool, open, true,
          "open a Play stream on a table (CreateTable per --players_per_table, then join); "
          "rate mode needs it");
ABSL_FLAG(int, players_per_table, 4, "connections sharing one table (1..4)");
ABSL_FLAG(std::string, game_options, R"({"game":"classic","target":100})", "CreateTable's game");
ABSL_FLAG(int64_t, bet_coins, 25, "CreateTable's bet");
ABSL_FLAG(int, gateway_pid, 0, "the gateway's pid, for its RSS (idle mode); 0: not measured");
ABSL_FLAG(int, hold_seconds, 10, "idle: how long the connections are held after all are ready");
ABSL_FLAG(double, rate, 1000, "rate: commands per second in total");
ABSL_FLAG(int, seconds, 10, "rate: how long commands are sent");
ABSL_FLAG(bool, each_second, false,
          "rate: also print every second's answered count, p50, p99 and max (the summary "
          "still covers the whole run)");
ABSL_FLAG(int, threads, 1, "threads running the WebSocket io_context (1 or 2)");
ABSL_FLAG(int, grpc_channels, 0,
          "gRPC channels (TCP connections) the streams are spread over; 0: one per connection, "
          "as phones have (8 with --direct)");
ABSL_FLAG(int, grpc_queues, 2,
          "completion queues (a thread each) the gRPC streams are spread over (1..64)");
ABSL_FLAG(int, setup_threads, 4, "parallel HTTP clients for sign-in and CreateTable");
ABSL_FLAG(double, connect_rate, 2000, "new connections per second while connecting");
ABSL_FLAG(int, ready_timeout_seconds, 120, "how long connecting may take in all");
ABSL_FLAG(int, players, 100, "play: players, a multiple of 4 (4 per table)");
ABSL_FLAG(double, grpc_share, 0.5, "play: the share of players on gRPC (the rest WebSocket)");
ABSL_FLAG(int, think_ms, 1500, "play: think time per move (ms)");
ABSL_FLAG(double, think_jitter, 0.5, "play: think time times a uniform [1-j, 1+j]");
ABSL_FLAG(int, ramp_seconds, 60, "play: the groups of 4 start spread over this");
ABSL_FLAG(int, report_seconds, 30, "play: a report every this many seconds");
ABSL_FLAG(std::string, play_game_options, R"({"game":"classic"})",
          "play: CreateTable's game (classic to 5 by default: games end, the next starts)");
ABSL_FLAG(int, turn_time_ms, 30'000, "play: CreateTable's turn time");
ABSL_FLAG(std::string, service_pids, "",
          "play: name:pid,... whose CPU seconds and RSS are reported (/proc)");
ABSL_FLAG(std::string, service_pids_file, "",
          "play: a file of name:pid lines, read at every report (a restarted service)");
ABSL_FLAG(int, drain_seconds, 30, "play: after --seconds, how long leaving and closing may take");

namespace courtpiece::gateway_load {
namespace {

namespace cv1 = ::courtpiece::client::v1;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct Player {
  std::string id, authorization;
};

bool SplitHostPort(const std::string& hp, std::string* host, uint16_t* port) {
  const size_t colon = hp.rfind(':');
  uint32_t p = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(hp.substr(colon + 1), &p) || p > 65535) {
    return false;
  }
  *host = hp.substr(0, colon);
  *port = static_cast<uint16_t>(p);
  return true;
}

std::string RandomToken(std::mt19937_64& rng, int n) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
  std::string out;
  for (int i = 0; i < n; ++i) out.push_back(kAlphabet[rng() % 64]);
  return out;
}

void RaiseFileLimit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return;
  r.rlim_cur = r.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &r) != 0) std::perror("setrlimit(RLIMIT_NOFILE)");
  std::cout << "RLIMIT_NOFILE " << r.rlim_cur << "\n";
}

int64_t RssKib(int pid) {
  if (pid <= 0) return -1;
  absl::StatusOr<int64_t> b = table_load::ReadRssBytes(pid);
  return b.ok() ? *b / 1024 : -1;
}

// Runs `work(i)` for i in [0, n) on `threads` threads, each with its own HTTP client.
template <typename Work>
void Parallel(int n, int threads, const std::string& host, uint16_t port, Work work) {
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      gateway::testing::HttpClient http(host, port, absl::Seconds(10));
      for (int i = next.fetch_add(1); i < n; i = next.fetch_add(1)) work(http, i);
    });
  }
  for (auto& t : pool) t.join();
}

int GrpcQueues() {
  return std::clamp(absl::GetFlag(FLAGS_grpc_queues), 1, common::AsyncQueues::kQueuesMax);
}

int RunPlayMode() {
  PlayConfig c;
  if (!SplitHostPort(absl::GetFlag(FLAGS_http), &c.http_host, &c.http_port)) {
    std::cerr << "--http: HOST:PORT expected\n";
    return 2;
  }
  RaiseFileLimit();
  c.grpc_target = absl::GetFlag(FLAGS_grpc);
  c.players = absl::GetFlag(FLAGS_players);
  c.grpc_share = absl::GetFlag(FLAGS_grpc_share);
  c.think_ms = absl::GetFlag(FLAGS_think_ms);
  c.think_jitter = absl::GetFlag(FLAGS_think_jitter);
  c.ramp_seconds = absl::GetFlag(FLAGS_ramp_seconds);
  c.seconds = absl::GetFlag(FLAGS_seconds);
  c.report_seconds = absl::GetFlag(FLAGS_report_seconds);
  c.game_options = absl::GetFlag(FLAGS_play_game_options);
  c.bet_coins = absl::GetFlag(FLAGS_bet_coins);
  c.turn_time_ms = absl::GetFlag(FLAGS_turn_time_ms);
  c.io_threads = absl::GetFlag(FLAGS_threads);
  c.setup_threads = absl::GetFlag(FLAGS_setup_threads);
  c.grpc_channels = absl::GetFlag(FLAGS_grpc_channels);
  c.grpc_queues = absl::GetFlag(FLAGS_grpc_queues);
  c.service_pids = absl::GetFlag(FLAGS_service_pids);
  c.service_pids_file = absl::GetFlag(FLAGS_service_pids_file);
  c.drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  return RunPlay(c);
}

int Run() {
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "play") return RunPlayMode();
  const std::string transport = absl::GetFlag(FLAGS_transport);
  const std::string direct = absl::GetFlag(FLAGS_direct);
  const int n = absl::GetFlag(FLAGS_connections);
  const int per_table = absl::GetFlag(FLAGS_players_per_table);
  const bool open = absl::GetFlag(FLAGS_open) || mode == "rate";
  const bool auth = absl::GetFlag(FLAGS_auth) || open;
  if ((mode != "idle" && mode != "rate") || (transport != "websocket" && transport != "grpc") ||
      n <= 0 || per_table < 1 || per_table > 4) {
    std::cerr << "bad flags: see --help\n";
    return 2;
  }
  std::string http_host;
  uint16_t http_port = 0;
  if (!SplitHostPort(absl::GetFlag(FLAGS_http), &http_host, &http_port)) {
    std::cerr << "--http: HOST:PORT expected\n";
    return 2;
  }
  RaiseFileLimit();
  std::mt19937_64 rng(std::random_device{}());
  const std::string run = RandomToken(rng, 8);

  // --- sign-in -------------------------------------------------------------------------
  std::vector<Player> players(n);
  std::atomic<int> setup_errors{0};
  if (auth) {
    std::vector<std::string> secrets(n);
    for (auto& s : secrets) s = RandomToken(rng, 40);
    const absl::Time t0 = absl::Now();
    Parallel(n, absl::GetFlag(FLAGS_setup_threads), http_host, http_port,
             [&](gateway::testing::HttpClient& http, int i) {
               cv1::GuestLoginRequest req;
               req.set_device_secret(secrets[i]);
               req.set_display_name(LoadPlayerName("Load", i));
               absl::StatusOr<cv1::Session> s = http.Call<cv1::Session>("GuestLogin", req);
               if (!s.ok()) {
                 if (setup_errors.fetch_add(1) < 5)
                   std::cerr << "GuestLogin: " << s.status() << "\n";
                 return;
               }
               players[i].id = s->player_id();
               players[i].authorization = absl::StrCat("Bearer ", s->access_token());
             });
    std::cout << absl::StrFormat("signed in %d players in %.1f s (%d errors)\n", n,
                                 absl::ToDoubleSeconds(absl::Now() - t0), setup_errors.load());
  }

  // --- tables ----------------------------------------------------------------------------
  const int tables = open ? (n + per_table - 1) / per_table : 0;
  std::vector<std::string> table_ids(tables);
  if (tables > 0) {
    const absl::Time t0 = absl::Now();
    Parallel(tables, absl::GetFlag(FLAGS_setup_threads), http_host, http_port,
             [&](gateway::testing::HttpClient& http, int t) {
               const Player& host = players[t * per_table];
               if (host.authorization.empty()) return;
               cv1::CreateTableRequest req;
               req.set_request_id(absl::StrCat("load-", run, "-", t));
               req.mutable_options()->set_game_options(absl::GetFlag(FLAGS_game_options));
               req.mutable_options()->set_bet_coins(absl::GetFlag(FLAGS_bet_coins));
               req.mutable_options()->set_turn_time_ms(30'000);
               absl::StatusOr<cv1::TableRef> ref =
                   http.Call<cv1::TableRef>("CreateTable", req, host.authorization);
               if (!ref.ok()) {
                 if (setup_errors.fetch_add(1) < 5)
                   std::cerr << "CreateTable: " << ref.status() << "\n";
                 return;
               }
               table_ids[t] = ref->table_id();
             });
    std::cout << absl::StrFormat("created %d tables in %.1f s\n", tables,
                                 absl::ToDoubleSeconds(absl::Now() - t0));
  }

  // --- connections -------------------------------------------------------------------------
  Stats stats;
  net::io_context ioc;
  auto work = net::make_work_guard(ioc);
  std::vector<std::thread> io_threads;
  for (int t = 0; t < std::clamp(absl::GetFlag(FLAGS_threads), 1, 2); ++t) {
    io_threads.emplace_back([&] { ioc.run(); });
  }
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  const bool use_grpc = transport == "grpc" || !direct.empty();
  auto queues = std::make_unique<ClientQueues>(GrpcQueues());
  if (use_grpc) {
    const std::string target = direct.empty() ? absl::GetFlag(FLAGS_grpc) : direct;
    // A phone has a TCP connection of its own. Straight to a table instance (--direct, the
    // baseline) there are 8, as a gateway's few PlayMux connections to an instance.
    int grpc_channels = absl::GetFlag(FLAGS_grpc_channels);
    if (grpc_channels <= 0) grpc_channels = direct.empty() ? n : 8;
    for (int c = 0; c < std::max(1, grpc_channels); ++c) {
      grpc::ChannelArguments args;
      args.SetInt("grpc.channel_id", c);  // distinct channels, not one shared subchannel
      channels.push_back(
          grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
    }
  }
  tcp::endpoint endpoint(net::ip::make_address(http_host == "localhost" ? "127.0.0.1" : http_host),
                         http_port);
  const int64_t rss_before = RssKib(absl::GetFlag(FLAGS_gateway_pid));
  std::vector<std::shared_ptr<Conn>> conns;
  conns.reserve(n);
  const absl::Time t0 = absl::Now();
  const absl::Time ready_deadline = t0 + absl::Seconds(absl::GetFlag(FLAGS_ready_timeout_seconds));
  const double connect_rate = std::max(1.0, absl::GetFlag(FLAGS_connect_rate));
  for (int i = 0; i < n; ++i) {
    ConnSpec spec;
    spec.authorization = players[i].authorization;
    spec.player_id = players[i].id;
    if (open) spec.table_id = table_ids[i / per_table];
    if (open && spec.table_id.empty()) {
      stats.failed.fetch_add(1);  // its table was not created
      continue;
    }
    std::shared_ptr<Conn> c =
        use_grpc ? MakeGrpcConn(channels[i % channels.size()], *queues, static_cast<size_t>(i),
                                !direct.empty(), spec, &stats)
                 : MakeWsConn(ioc, endpoint, absl::GetFlag(FLAGS_http), spec, &stats);
    conns.push_back(c);
    c->Start();
    const absl::Time due = t0 + absl::Seconds((i + 1) / connect_rate);
    if (absl::Now() < due) absl::SleepFor(due - absl::Now());
  }
  while (stats.ready.load() + stats.failed.load() < n && absl::Now() < ready_deadline) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  const double connect_s = absl::ToDoubleSeconds(absl::Now() - t0);
  const int64_t ready = stats.ready.load();
  std::cout << absl::StrFormat("connections: %d asked, %d ready, %d failed in %.1f s; ends: %s\n",
                               n, ready, stats.failed.load(), connect_s,
                               stats.ends.Format(stats.ends.Take()));
  int rc = ready == n ? 0 : 1;

  if (mode == "idle") {
    absl::SleepFor(absl::Seconds(1));  // let the gateway settle its buffers
    const int64_t rss_after = RssKib(absl::GetFlag(FLAGS_gateway_pid));
    if (rss_before >= 0 && rss_after >= 0 && ready > 0) {
      std::cout << absl::StrFormat(
          "idle: gateway VmRSS %d KiB -> %d KiB: %.0f bytes per connection (%d connections, "
          "%s%s%s)\n",
          rss_before, rss_after, 1024.0 * static_cast<double>(rss_after - rss_before) / ready,
          ready, use_grpc ? "grpc" : "websocket", auth ? ", authenticated" : "",
          open ? ", play stream open" : "");
    }
    absl::SleepFor(absl::Seconds(absl::GetFlag(FLAGS_hold_seconds)));
    const int64_t rss_held = RssKib(absl::GetFlag(FLAGS_gateway_pid));
    std::cout << absl::StrFormat("idle: after %d s held: %d ready, %d ended, VmRSS %d KiB\n",
                                 absl::GetFlag(FLAGS_hold_seconds),
                                 static_cast<int64_t>(stats.ready.load() - stats.ended.load()),
                                 stats.ended.load(), rss_held);
    if (stats.ended.load() > 0) rc = 1;
  } else {
    std::vector<std::shared_ptr<Conn>> live;
    for (auto& c : conns) {
      if (c->ready()) live.push_back(c);
    }
    const double rate = absl::GetFlag(FLAGS_rate);
    const absl::Duration length = absl::Seconds(absl::GetFlag(FLAGS_seconds));
    (void)stats.latency.Take();
    (void)stats.codes.Take();
    const absl::Time start = absl::Now();
    int64_t sent = 0;
    size_t next = 0;
    const bool each_second = absl::GetFlag(FLAGS_each_second);
    std::vector<int64_t> all;  // --each_second: the seconds' samples, for the summary
    int second = 0;
    const auto take_second = [&] {
      std::vector<int64_t> micros = stats.latency.TakeRaw();
      all.insert(all.end(), micros.begin(), micros.end());
      const Samples::Summary s = table_load::Summarize(std::move(micros));
      std::cout << absl::StrFormat("  second %d: answered %d, p50 %.3f p99 %.3f max %.3f ms\n",
                                   ++second, s.count, s.p50_ms, s.p99_ms, s.max_ms);
    };
    while (!live.empty()) {
      const absl::Time now = absl::Now();
      if (now - start >= length) break;
      if (each_second && now - start >= absl::Seconds(second + 1)) take_second();
      const int64_t due = static_cast<int64_t>(rate * absl::ToDoubleSeconds(now - start));
      for (; sent < due; ++sent) live[next++ % live.size()]->SendCommand();
      absl::SleepFor(absl::Microseconds(200));
    }
    const double sent_s = absl::ToDoubleSeconds(absl::Now() - start);
    absl::SleepFor(absl::Seconds(2));  // the last answers
    const int64_t answered = stats.answered.load();
    Samples::Summary sum;
    if (each_second) {
      take_second();  // the last second and the answers after it
      sum = table_load::Summarize(std::move(all));
    } else {
      sum = stats.latency.Take();
    }
    std::cout << absl::StrFormat(
        "rate: %s%s, %d connections, target %.0f/s: sent %d, answered %d = %.0f/s; "
        "latency ms p50 %.3f p90 %.3f p99 %.3f max %.3f; codes %s; ends %s\n",
        direct.empty() ? (use_grpc ? "grpc" : "websocket") : "direct to ",
        direct.empty() ? "" : direct, live.size(), rate, stats.sent.load(), answered,
        static_cast<double>(sum.count) / sent_s, sum.p50_ms, sum.p90_ms, sum.p99_ms, sum.max_ms,
        stats.codes.Format(stats.codes.Take()), stats.ends.Format(stats.ends.Take()));
    if (answered == 0) rc = 1;
  }

  for (auto& c : conns) c->Stop();
  absl::SleepFor(absl::Seconds(1));
  work.reset();
  ioc.stop();
  for (auto& t : io_threads) t.join();
  queues->CancelAllAndStop();
  conns.clear();
  return rc;
}

}  // namespace
}  // namespace courtpiece::gateway_load

int main(int argc, char** argv) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);  // docs/services.md
  absl::SetProgramUsageMessage(
      "courtpiece-load: simulated players through the gateway (docs/gateway.md, Load tool).\n"
      "  --mode=idle: open --connections and hold them, print the gateway's RSS per "
      "connection (--gateway_pid)\n"
      "  --mode=rate: send --rate commands/s for --seconds, print command->result latency; "
      "--direct=ADDR for the same straight to a table instance\n"
      "  --mode=play: --players play whole games at human pace (--think_ms), a report every "
      "--report_seconds (docs/load.md)");
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "gateway_load");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);
  return courtpiece::gateway_load::Run();
}
