// courtpiece-wallet: wiring only. Reads the environment, opens the Postgres pool, builds
// store -> ledger -> gRPC service, serves until SIGTERM/SIGINT, then drains.
//
//   COURTPIECE_PG_URL                   Postgres URL (required); schema `wallet` migrated
//   COURTPIECE_WALLET_ADDR              gRPC listen HOST:PORT      (default 0.0.0.0:7004)
//   COURTPIECE_WALLET_METRICS_ADDR      GET /metrics HOST:PORT, or off (default 127.0.0.1:9101)
//                                       (COURTPIECE_WALLET_METRICS_PORT is retired: an error)
//   COURTPIECE_WALLET_STARTING_GRANT    coins for a new player     (default 1000)
//   COURTPIECE_WALLET_HOUSE_SHARDS      house sub-accounts         (default 16)
//   COURTPIECE_WALLET_PG_POOL_SIZE      Postgres connections       (default 16)
//   COURTPIECE_WALLET_RPC_DEADLINE_MAX  cap on every RPC's deadline (default 5s)
//   Group commit (docs/wallet.md "Group commit"): concurrent transfers are committed
//   together, one Postgres transaction (one round trip, one WAL flush) per batch:
//   COURTPIECE_WALLET_BATCH_TRANSFERS_MAX   transfers per batch, 1..1000 (default 32;
//                                           1 = every transfer alone)
//   COURTPIECE_WALLET_BATCH_WAIT            how long a batch waits to fill, 0..100ms
//                                           (default 0: a batch takes what queued up while
//                                           the previous one was committing)
//   COURTPIECE_WALLET_BATCHES_IN_FLIGHT_MAX batches committing at once, 1..64 (default 1)
//   COURTPIECE_LOG_LEVEL                debug|info|warn|error      (default info)
#include <unistd.h>  // environ

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/config.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/common/shutdown_signal.h"
#include "courtpiece/storage/pg_pool.h"
#include "courtpiece/storage/pg_pool_metrics.h"
#include "services/wallet/batching_ledger_store.h"
#include "services/wallet/ledger.h"
#include "services/wallet/pg_ledger_store.h"
#include "services/wallet/server.h"

namespace courtpiece::wallet {
namespace {

constexpr absl::Duration kDrain = absl::Seconds(10);
constexpr absl::Duration kGaugeInterval = absl::Seconds(1);

struct Config {
  std::string pg_url;
  std::string listen_address;
  std::string metrics_address;  // "" = no metrics endpoint
  int pool_size = 0;
  absl::Duration rpc_deadline_max;
  LedgerOptions ledger;
  BatchOptions batch;
  common::LogLevel log_level = common::LogLevel::kInfo;
  // COURTPIECE_WALLET_* variables set but never read (misspelt?): warned about at start.
  std::vector<std::string> unknown_settings;
};

absl::StatusOr<Config> ReadConfig() {
  common::EnvConfig env;
  Config c;
  c.pg_url = env.RequiredString("COURTPIECE_PG_URL");
  c.listen_address = env.ListenAddress("COURTPIECE_WALLET_ADDR", "0.0.0.0:7004");
  // Loopback by default: the metrics endpoint is opened to other hosts only on purpose.
  c.metrics_address =
      env.ListenAddress("COURTPIECE_WALLET_METRICS_ADDR", "127.0.0.1:9101", /*allow_off=*/true);
  env.Retired("COURTPIECE_WALLET_METRICS_PORT", "COURTPIECE_WALLET_METRICS_ADDR");
  c.ledger.starting_grant = env.Int("COURTPIECE_WALLET_STARTING_GRANT", 1000, 1, 1'000'000'000);
  c.ledger.house_shard_count =
      static_cast<int>(env.Int("COURTPIECE_WALLET_HOUSE_SHARDS", 16, 1, 1024));
  c.pool_size = static_cast<int>(env.Int("COURTPIECE_WALLET_PG_POOL_SIZE", 16, 1, 512));
  c.rpc_deadline_max = env.Duration("COURTPIECE_WALLET_RPC_DEADLINE_MAX", absl::Seconds(5),
                                    absl::Milliseconds(10), absl::Minutes(1));
  c.batch.transfers_max =
      static_cast<int>(env.Int("COURTPIECE_WALLET_BATCH_TRANSFERS_MAX", 32, 1, 1000));
  c.batch.wait_max = env.Duration("COURTPIECE_WALLET_BATCH_WAIT", absl::ZeroDuration(),
                                  absl::ZeroDuration(), absl::Milliseconds(100));
  c.batch.batches_in_flight_max =
      static_cast<int>(env.Int("COURTPIECE_WALLET_BATCHES_IN_FLIGHT_MAX", 1, 1, 64));
  c.log_level = common::ReadLogLevel(env);
  if (absl::Status s = env.Finish(); !s.ok()) return s;
  c.unknown_settings = env.Unread(environ, "COURTPIECE_WALLET_");
  if (absl::Status s = Ledger::ValidateOptions(c.ledger); !s.ok()) return s;
  if (absl::Status s = BatchingLedgerStore::ValidateOptions(c.batch); !s.ok()) return s;
  return c;
}

int Run() {
  // Debian's Abseil is built with Mutex deadlock detection on: every lock updates a global
  // lock-order graph (about 5% of the wallet's CPU under load). The only absl::Mutex on the
  // transfer path is PgPool's, never held while taking another lock, so there is no order
  // to check; the unit and pg tests keep the check on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  common::ShutdownSignal& signal = common::ShutdownSignal::Install();
  absl::StatusOr<Config> config = ReadConfig();
  common::Logger log("wallet", config.ok() ? config->log_level : common::LogLevel::kInfo);
  if (!config.ok()) {
    log.Error("bad configuration", {{"status", config.status()}});
    return 2;
  }
  common::WarnUnknownSettings(log, config->unknown_settings);
  absl::StatusOr<std::unique_ptr<common::Metrics>> metrics =
      common::Metrics::Create({.service = "wallet", .listen_address = config->metrics_address});
  if (!metrics.ok()) {
    log.Error("metrics exposer failed", {{"status", metrics.status()}});
    return 1;
  }
  common::GaugeFamily pool_gauge =
      (*metrics)->Gauge("pg_pool_connections", "Postgres pool connections by state.");
  // The statement timeout backs up the RPC deadline: no statement outlives the longest RPC.
  storage::PgPool pool(
      {.url = config->pg_url,
       .size_max = config->pool_size,
       .acquire_timeout_ms = static_cast<int>(absl::ToInt64Milliseconds(config->rpc_deadline_max)),
       .statement_timeout_ms =
           static_cast<int>(absl::ToInt64Milliseconds(config->rpc_deadline_max)),
       .application_name = "courtpiece-wallet"});
  PgLedgerStore pg_store(pool);
  BatchingLedgerStore store(pg_store, RealClock::Instance(), config->batch);
  Ledger ledger(store, RealClock::Instance(), config->ledger);
  if (absl::Status s = ledger.Init(absl::Now() + absl::Seconds(30)); !s.ok()) {
    log.Error("cannot create house shards (is the schema migrated?)", {{"status", s}});
    return 1;
  }
  WalletService service(ledger, RealClock::Instance(), config->rpc_deadline_max, **metrics, log);
  absl::StatusOr<std::unique_ptr<common::GrpcServer>> server =
      common::GrpcServer::Start({.listen_address = config->listen_address}, {&service}, **metrics);
  if (!server.ok()) {
    log.Error("gRPC server failed", {{"status", server.status()}});
    return 1;
  }
  log.Info("serving", {{"grpc_address", config->listen_address},
                       {"grpc_port", (*server)->port()},
                       {"metrics_address", config->metrics_address},
                       {"metrics_port", (*metrics)->port()},
                       {"house_shards", config->ledger.house_shard_count},
                       {"starting_grant", config->ledger.starting_grant},
                       {"batch_transfers_max", config->batch.transfers_max},
                       {"batch_wait_us", absl::ToInt64Microseconds(config->batch.wait_max)},
                       {"batches_in_flight_max", config->batch.batches_in_flight_max}});
  std::optional<int> signo;
  while (!(signo = signal.WaitFor(kGaugeInterval))) storage::SetPoolGauges(pool, pool_gauge);
  log.Info("shutting down", {{"signal", *signo}});
  const absl::Time start = absl::Now();
  (*server)->Shutdown(start + kDrain);
  log.Info("stopped", {{"shutdown_ms", absl::ToInt64Milliseconds(absl::Now() - start)},
                       {"cancelled_at_drain_end", (*server)->running_at_drain_end()}});
  return 0;
}

}  // namespace
}  // namespace courtpiece::wallet

int main() { return courtpiece::wallet::Run(); }
