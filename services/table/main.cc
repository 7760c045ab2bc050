// courtpiece-table: wiring only. Reads the environment, connects Redis and the wallet, lobby
// and moderation channels, builds store -> host -> gRPC service, serves until
// SIGTERM/SIGINT, then hands its tables over (docs/table-service.md) and drains.
//
//   COURTPIECE_REDIS_ADDR                 Redis HOST:PORT (required)
//   COURTPIECE_TABLE_REDIS_DB             Redis database index (SELECT)   (default 0)
//   COURTPIECE_TABLE_ADDR                 gRPC listen HOST:PORT           (default 0.0.0.0:7002)
//   COURTPIECE_TABLE_ADVERTISE_ADDR       HOST:PORT peers and gateways dial: not a wildcard,
//                                         port > 0 (default 127.0.0.1:<bound port>)
//   COURTPIECE_TABLE_INSTANCE_ID          1..64 of [A-Za-z0-9_.-], stable across restarts
//                                         (default table-<advertised host>-<port>)
//   COURTPIECE_TABLE_METRICS_ADDR         GET /metrics HOST:PORT, or off (default 127.0.0.1:9104)
//   COURTPIECE_TABLE_WALLET_ADDR          wallet gRPC                     (default 127.0.0.1:7004)
//   COURTPIECE_TABLE_LOBBY_ADDR           lobby gRPC (LobbyRecords)       (default 127.0.0.1:7001)
//   COURTPIECE_TABLE_MODERATION_ADDR      moderation gRPC (ReportIntake)  (default 127.0.0.1:7005)
//   COURTPIECE_TABLE_WORKERS              table worker threads            (default: cores)
//   COURTPIECE_TABLE_TABLES_MAX           tables hosted at most           (default 20000)
//   COURTPIECE_TABLE_BOT_THREADS          searching bots' threads (normal/strong bots and
//                                         auto-play, off the workers)     (default: cores)
//   COURTPIECE_TABLE_BOT_QUEUE_MAX        bot searches waiting; past it the heuristic plays
//                                         at once                         (default 1024)
//   COURTPIECE_TABLE_HEARTBEAT_TTL        an instance silent this long is dead (default 3s)
//   COURTPIECE_TABLE_RPC_TIMEOUT          per wallet/lobby/moderation call (default 2s)
//   COURTPIECE_TABLE_REDIS_CONNECTIONS    Redis connections               (default workers + 2)
//   COURTPIECE_TABLE_STREAM_QUEUE_MAX     messages queued per Play stream (default 512)
//   COURTPIECE_TABLE_COMMANDS_PER_SECOND  sustained commands per stream   (default 20)
//   COURTPIECE_TABLE_COMMANDS_BURST       command bucket per stream       (default 40)
//   COURTPIECE_TABLE_ADOPT_GRACE          after a takeover, how long people have to come
//                                         back before they count as disconnected (default 15s)
//   COURTPIECE_TABLE_SWEEP_INTERVAL       orphaned-pot sweep period; 0 = off (default 60s);
//                                         only the instance PickOwner("pot-sweeper", live
//                                         instances) names sweeps (pot_sweeper.h)
//   COURTPIECE_TABLE_SWEEP_GRACE          a pot untouched this long may be refunded
//                                         (default 60s)
//   COURTPIECE_LOG_LEVEL                  debug|info|warn|error           (default info)
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/config.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/common/shutdown_signal.h"
#include "courtpiece/storage/redis_client.h"
#include "courtpiece/table/rules_engine.h"
#include "services/table/grpc_ports.h"
#include "services/table/pot_sweeper.h"
#include "services/table/redis_table_store.h"
#include "services/table/seed_source.h"
#include "services/table/server.h"
#include "services/table/table_host.h"

namespace courtpiece::table_service {
namespace {

constexpr absl::Duration kDrain = absl::Seconds(10);
constexpr absl::Duration kGaugeInterval = absl::Seconds(2);
// Play messages are small (a command is tens of bytes): one over 16 KiB is refused by the
// stream (or the PlayMux session) it came on (kPlayMessageBytesMax); gRPC refuses a message
// over this, room for a PlayMux batch (the gateway sends at most 32 KiB), by ending its
// whole stream.
constexpr int kReceiveMessageBytesMax = 64 * 1024;
// An instance id is a Redis key part and a registry member (the store's id rule).
constexpr int kInstanceIdCharsMax = 64;

struct Config {
  std::string redis_addr, listen_address, advertise_address, instance_id, metrics_address;
  std::string wallet_addr, lobby_addr, moderation_addr;
  int workers = 2, tables_max = 20'000, redis_connections = 0, redis_db = 0;
  int bot_threads = 1, bot_queue_max = 1024;
  absl::Duration heartbeat_ttl, rpc_timeout, adopt_grace, sweep_interval, sweep_grace;
  StreamLimits limits;
  common::LogLevel log_level = common::LogLevel::kInfo;
  // COURTPIECE_TABLE_* variables set but never read (misspelt?): warned about at start.
  std::vector<std::string> unknown_settings;
};

absl::StatusOr<Config> ReadConfig() {
  common::EnvConfig env;
  Config c;
  c.redis_addr = env.RequiredString("COURTPIECE_REDIS_ADDR");
  c.redis_db = static_cast<int>(env.Int("COURTPIECE_TABLE_REDIS_DB", 0, 0, 1023));
  c.listen_address = env.ListenAddress("COURTPIECE_TABLE_ADDR", "0.0.0.0:7002");
  c.advertise_address = env.DialAddress("COURTPIECE_TABLE_ADVERTISE_ADDR", "");
  c.instance_id = env.Identifier("COURTPIECE_TABLE_INSTANCE_ID", "", kInstanceIdCharsMax);
  c.metrics_address =
      env.ListenAddress("COURTPIECE_TABLE_METRICS_ADDR", "127.0.0.1:9104", /*allow_off=*/true);
  c.wallet_addr = env.String("COURTPIECE_TABLE_WALLET_ADDR", "127.0.0.1:7004");
  c.lobby_addr = env.String("COURTPIECE_TABLE_LOBBY_ADDR", "127.0.0.1:7001");
  c.moderation_addr = env.String("COURTPIECE_TABLE_MODERATION_ADDR", "127.0.0.1:7005");
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  c.workers = static_cast<int>(env.Int("COURTPIECE_TABLE_WORKERS", cores, 1, 256));
  c.tables_max = static_cast<int>(env.Int("COURTPIECE_TABLE_TABLES_MAX", 20'000, 1, 1'000'000));
  c.bot_threads = static_cast<int>(env.Int("COURTPIECE_TABLE_BOT_THREADS", cores, 1, 64));
  c.bot_queue_max = static_cast<int>(env.Int("COURTPIECE_TABLE_BOT_QUEUE_MAX", 1024, 1, 1'000'000));
  c.heartbeat_ttl = env.Duration("COURTPIECE_TABLE_HEARTBEAT_TTL", absl::Seconds(3),
                                 absl::Milliseconds(500), absl::Minutes(5));
  c.rpc_timeout = env.Duration("COURTPIECE_TABLE_RPC_TIMEOUT", absl::Seconds(2),
                               absl::Milliseconds(50), absl::Minutes(1));
  c.redis_connections =
      static_cast<int>(env.Int("COURTPIECE_TABLE_REDIS_CONNECTIONS", c.workers + 2, 1, 256));
  c.limits.queue_max =
      static_cast<int>(env.Int("COURTPIECE_TABLE_STREAM_QUEUE_MAX", 512, 16, 1'000'000));
  c.limits.commands_per_second =
      static_cast<double>(env.Int("COURTPIECE_TABLE_COMMANDS_PER_SECOND", 20, 1, 100'000));
  c.limits.commands_burst =
      static_cast<double>(env.Int("COURTPIECE_TABLE_COMMANDS_BURST", 40, 1, 100'000));
  c.adopt_grace = env.Duration("COURTPIECE_TABLE_ADOPT_GRACE", absl::Seconds(15),
                               absl::Milliseconds(0), absl::Minutes(10));
  c.log_level = common::ReadLogLevel(env);
  c.sweep_interval = env.Duration("COURTPIECE_TABLE_SWEEP_INTERVAL", absl::Seconds(60),
                                  absl::ZeroDuration(), absl::Hours(24));
  c.sweep_grace = env.Duration("COURTPIECE_TABLE_SWEEP_GRACE", absl::Seconds(60),
                               absl::ZeroDuration(), absl::Hours(24));
  if (absl::Status s = env.Finish(); !s.ok()) return s;
  c.unknown_settings = env.Unread(environ, "COURTPIECE_TABLE_");
  return c;
}

// "table-<host>-<port>" with every character outside [A-Za-z0-9_.-] made '-'.
std::string DefaultInstanceId(const std::string& advertise) {
  std::string id = "table-" + advertise;
  for (char& ch : id) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.' && ch != '-') {
      ch = '-';
    }
  }
  return id;
}

// Runs a sweep pass every `interval` on the instance PickOwner("pot-sweeper", live
// instances) names, until Stop. Its wallet calls block this thread only.
class SweeperThread {
 public:
  SweeperThread(PotSweeper& sweeper, TableStore& store, std::string instance_id,
                absl::Duration interval, const common::Logger& log)
      : sweeper_(sweeper),
        store_(store),
        instance_id_(std::move(instance_id)),
        interval_(interval),
        log_(log),
        thread_([this] { Loop(); }) {}
  ~SweeperThread() { Stop(); }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!wake_.wait_for(
        lock,
        absl::ToChronoSeconds(interval_) + absl::ToChronoMilliseconds(interval_ % absl::Seconds(1)),
        [this] { return stopping_; })) {
      lock.unlock();
      absl::StatusOr<std::vector<InstanceInfo>> live = store_.LiveInstances();
      if (!live.ok()) {
        log_.Warn("pot sweep: live instances unreadable", {{"status", live.status()}});
      } else if (PickOwner("pot-sweeper", *live) == instance_id_) {
        absl::StatusOr<SweepReport> report = sweeper_.RunPass();
        if (!report.ok()) log_.Warn("pot sweep failed", {{"status", report.status()}});
      }
      lock.lock();
    }
  }

  PotSweeper& sweeper_;
  TableStore& store_;
  const std::string instance_id_;
  const absl::Duration interval_;
  const common::Logger& log_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;     // last: starts after every member above
};

int Run() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  common::ShutdownSignal& signal = common::ShutdownSignal::Install();
  absl::StatusOr<Config> config = ReadConfig();
  common::Logger log("table", config.ok() ? config->log_level : common::LogLevel::kInfo);
  if (!config.ok()) {
    log.Error("bad configuration", {{"status", config.status()}});
    return 2;
  }
  common::WarnUnknownSettings(log, config->unknown_settings);
  absl::StatusOr<storage::RedisOptions> redis = storage::ParseRedisAddr(config->redis_addr);
  if (!redis.ok()) {
    log.Error("bad configuration", {{"status", redis.status()}});
    return 2;
  }
  redis->db = config->redis_db;
  absl::StatusOr<std::unique_ptr<common::Metrics>> metrics =
      common::Metrics::Create({.service = "table", .listen_address = config->metrics_address});
  if (!metrics.ok()) {
    log.Error("metrics exposer failed", {{"status", metrics.status()}});
    return 1;
  }
  TableMetrics table_metrics(**metrics);
  RedisTableStore store({.redis = *redis, .connections = config->redis_connections});
  GrpcWalletPort wallet(common::CreateGrpcChannel(config->wallet_addr, metrics->get()));
  GrpcRecordsPort records(common::CreateGrpcChannel(config->lobby_addr, metrics->get()),
                          common::CreateGrpcChannel(config->moderation_addr, metrics->get()));
  table::RulesEngineFactory engines;
  CsprngSeedSource seeds;

  // The advertised address is what peers and gateways dial; with a fixed listen port it
  // defaults to loopback at that port (local runs), port 0 needs it given explicitly.
  const std::string& listen = config->listen_address;
  const int port = std::stoi(listen.substr(listen.rfind(':') + 1));
  if (port == 0 && config->advertise_address.empty()) {
    log.Error("bad configuration", {{"status",
                                     "COURTPIECE_TABLE_ADDR with port 0 needs "
                                     "COURTPIECE_TABLE_ADVERTISE_ADDR"}});
    return 2;
  }
  HostOptions host_options;
  host_options.instance_addr = config->advertise_address.empty() ? absl::StrCat("127.0.0.1:", port)
                                                                 : config->advertise_address;
  host_options.instance_id = config->instance_id.empty()
                                 ? DefaultInstanceId(host_options.instance_addr)
                                 : config->instance_id;
  if (static_cast<int>(host_options.instance_id.size()) > kInstanceIdCharsMax) {
    log.Error(
        "bad configuration",
        {{"status", absl::StrCat("the instance id made from the advertised address, \"",
                                 host_options.instance_id, "\", is over ", kInstanceIdCharsMax,
                                 " characters: set COURTPIECE_TABLE_INSTANCE_ID")}});
    return 2;
  }
  host_options.workers = config->workers;
  host_options.tables_max = config->tables_max;
  host_options.bot_threads = config->bot_threads;
  host_options.bot_queue_max = config->bot_queue_max;
  host_options.heartbeat_ttl_ms = absl::ToInt64Milliseconds(config->heartbeat_ttl);
  host_options.heartbeat_every_ms = std::max<int64_t>(100, host_options.heartbeat_ttl_ms / 6);
  host_options.rpc_timeout_ms = absl::ToInt64Milliseconds(config->rpc_timeout);
  host_options.adopt_grace_ms = absl::ToInt64Milliseconds(config->adopt_grace);
  std::unique_ptr<common::GrpcServer> server;
  auto host = std::make_unique<TableHost>(host_options, RealClock::Instance(), store, wallet,
                                          records, engines, seeds, &table_metrics);
  auto service = std::make_unique<TableServiceImpl>(*host, &table_metrics, config->limits);
  absl::StatusOr<std::unique_ptr<common::GrpcServer>> started =
      common::GrpcServer::Start({.listen_address = config->listen_address,
                                 .max_receive_message_bytes = kReceiveMessageBytesMax},
                                {service.get()}, **metrics);
  if (!started.ok()) {
    log.Error("gRPC server failed", {{"status", started.status()}});
    return 1;
  }
  server = std::move(*started);
  if (absl::Status s = host->Start(); !s.ok()) {
    log.Error("host did not start", {{"status", s}});
    return 1;
  }
  log.Info("serving", {{"grpc_address", config->listen_address},
                       {"grpc_port", server->port()},
                       {"advertise_address", host_options.instance_addr},
                       {"instance_id", host_options.instance_id},
                       {"metrics_address", config->metrics_address},
                       {"metrics_port", (*metrics)->port()},
                       {"workers", config->workers}});
  // Orphaned pots (docs/table-service.md): one instance at a time sweeps.
  GrpcPotLedgerPort pot_ledger(common::CreateGrpcChannel(config->wallet_addr, metrics->get()));
  PotSweeperOptions sweep_options;
  sweep_options.grace_ms = absl::ToInt64Milliseconds(config->sweep_grace);
  sweep_options.call_timeout_ms = host_options.rpc_timeout_ms;
  PotSweeper sweeper(pot_ledger, store, RealClock::Instance(), sweep_options, log);
  std::unique_ptr<SweeperThread> sweeper_thread;
  if (config->sweep_interval > absl::ZeroDuration()) {
    sweeper_thread = std::make_unique<SweeperThread>(sweeper, store, host_options.instance_id,
                                                     config->sweep_interval, log);
  }
  std::optional<int> signo;
  while (!(signo = signal.WaitFor(kGaugeInterval))) table_metrics.Refresh(host->Stats());
  log.Info("shutting down", {{"signal", *signo}});
  const absl::Time start = absl::Now();
  if (sweeper_thread) sweeper_thread->Stop();
  host->Shutdown();  // tables saved and handed over; their streams told to reconnect
  server->Shutdown(start + kDrain);
  // Wallet and records calls still in flight end (each has its deadline, RPC_TIMEOUT), and
  // their `done`s return, before the metrics their channels record to and the host their
  // `done`s post to go: one finishing on a gRPC thread after that would use freed memory (it
  // did in the gateway: docs/gateway.md).
  const absl::Time calls_until = absl::Now() + config->rpc_timeout + absl::Seconds(1);
  while ((wallet.calls_unfinished() > 0 || records.calls_unfinished() > 0) &&
         absl::Now() < calls_until) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  log.Info("stopped",
           {{"shutdown_ms", absl::ToInt64Milliseconds(absl::Now() - start)},
            {"calls_unfinished", wallet.calls_unfinished() + records.calls_unfinished()}});
  return 0;
}

}  // namespace
}  // namespace courtpiece::table_service

int main() { return courtpiece::table_service::Run(); }
