// courtpiece-lobby: wiring only. Reads the environment, opens the Postgres pool, loads the
// token keys, connects the wallet and Redis, builds store -> domain -> gRPC services
// (Accounts, Directory, Stats and LobbyAdmin for clients through the gateway; LobbyRecords
// for table instances on the internal network), serves until SIGTERM/SIGINT, then drains. Applies
// no migrations: `courtpiece-migrate --schema lobby
// --dir services/lobby/migrations` does (deploy/local/up.sh, the tests).
//
//   COURTPIECE_PG_URL                     Postgres URL (required); schema `lobby` migrated
//   COURTPIECE_LOBBY_ADDR                 gRPC listen HOST:PORT          (default 0.0.0.0:7001)
//   COURTPIECE_LOBBY_METRICS_ADDR         GET /metrics HOST:PORT, or off (default 127.0.0.1:9102)
//   COURTPIECE_LOBBY_WALLET_ADDR          the wallet's gRPC HOST:PORT    (default 127.0.0.1:7004)
//   COURTPIECE_REDIS_ADDR                 the table tier's Redis HOST:PORT (codes, the
//                                         registry, owner records)   (default 127.0.0.1:6379)
//   COURTPIECE_LOBBY_REDIS_DB             its database index: the table tier's
//                                         COURTPIECE_TABLE_REDIS_DB   (default 0)
//   COURTPIECE_LOBBY_REDIS_CONNECTIONS    Redis connections            (default 8)
//   COURTPIECE_LOBBY_INVITE_BASE_URL      invite links are <base>/t/<code>
//                                                                (default http://localhost:8080)
//   COURTPIECE_LOBBY_CODE_COOLOFF         a closed table's code is reusable after (default 24h)
//   COURTPIECE_LOBBY_CODE_TRIES           code draws per CreateTable   (default 20)
//   COURTPIECE_LOBBY_TABLE_RPC_TIMEOUT    each call to a table instance (default 2s)
//   COURTPIECE_LOBBY_FANOUT_MAX           instances asked by one list  (default 64)
//   COURTPIECE_LOBBY_OPEN_TABLES_CACHE    open-table list reuse        (default 1s)
//   COURTPIECE_LOBBY_LIVE_INSTANCES_CACHE ResolveCode's instance view  (default 1s)
//   COURTPIECE_LOBBY_RESOLVE_CLOSE_GRACE  a code is not closed by ResolveCode before its
//                                         table is this old            (default 60s)
//   COURTPIECE_LOBBY_RESOLVE_THREADS      threads answering ResolveCode in batches (default 2)
//   COURTPIECE_LOBBY_RESOLVE_BATCH_MAX    codes resolved at once       (default 64)
//   COURTPIECE_LOBBY_RESOLVE_QUEUE_MAX    ResolveCode calls waiting; past it
//                                         RESOURCE_EXHAUSTED           (default 4096)
//   COURTPIECE_LOBBY_QUICK_JOIN_TRIES     open tables a quick join tries (default 8)
//   COURTPIECE_LOBBY_QUICK_JOIN_BET       a quick-join table's bet     (default 100)
//   COURTPIECE_LOBBY_QUICK_JOIN_TURN_TIME a quick-join table's turn time (default 15s)
//   COURTPIECE_LOBBY_QUICK_JOIN_LOCK_TTL  the shared quick-join lock   (default 10s)
//   COURTPIECE_LOBBY_SIGNING_KEY          "<kid>:<base64 32-byte seed>" (required; or
//   COURTPIECE_LOBBY_SIGNING_KEY_FILE     a file holding it). courtpiece-keygen prints one.
//   COURTPIECE_LOBBY_VERIFY_KEYS          "<kid>:<base64 pub>[,...]": the keys whose tokens
//   COURTPIECE_LOBBY_VERIFY_KEYS_FILE     are accepted (or a file). Default: the signing key's
//                                         public key alone. When set it must hold the signing
//                                         key's kid with its public key.
//   COURTPIECE_LOBBY_ACCESS_TTL           access-token lifetime        (default 15m; 10s..24h)
//   COURTPIECE_LOBBY_REFRESH_TTL          refresh-token lifetime       (default 720h; ..8760h)
//   COURTPIECE_LOBBY_TOKEN_SKEW           clock skew allowed on expiry (default 30s; 0..5m)
//   COURTPIECE_LOBBY_TOKEN_CACHE_MAX      verified tokens remembered   (default 8192; 0: none)
//   COURTPIECE_LOBBY_AVATAR_MAX           avatar ids are 1..this       (default 64)
//   COURTPIECE_LOBBY_WALLET_READ_TIMEOUT  the profile's balance read   (default 500ms)
//   COURTPIECE_LOBBY_PG_POOL_SIZE         Postgres connections         (default 16)
//   COURTPIECE_LOBBY_RPC_DEADLINE_MAX     cap on every RPC's deadline  (default 5s)
//   COURTPIECE_LOG_LEVEL                  debug|info|warn|error        (default info)
#include <unistd.h>  // environ

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "courtpiece/auth/keys.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/auth/token_caller_auth.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/config.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/common/shutdown_signal.h"
#include "courtpiece/storage/pg_pool.h"
#include "courtpiece/storage/pg_pool_metrics.h"
#include "courtpiece/storage/redis_client.h"
#include "courtpiece/table/rules_engine.h"
#include "services/lobby/accounts.h"
#include "services/lobby/accounts_server.h"
#include "services/lobby/admin_server.h"
#include "services/lobby/directory.h"
#include "services/lobby/directory_server.h"
#include "services/lobby/grpc_table_port.h"
#include "services/lobby/grpc_wallet_port.h"
#include "services/lobby/pg_directory_store.h"
#include "services/lobby/pg_player_store.h"
#include "services/lobby/pg_records_store.h"
#include "services/lobby/records.h"
#include "services/lobby/records_server.h"
#include "services/lobby/redis_directory.h"
#include "services/lobby/stats_server.h"

namespace courtpiece::lobby {
namespace {

constexpr absl::Duration kDrain = absl::Seconds(10);
constexpr absl::Duration kGaugeInterval = absl::Seconds(1);

struct Config {
  std::string pg_url;
  std::string listen_address;
  std::string metrics_address;  // "" = no metrics endpoint
  std::string wallet_address;
  std::string redis_address;
  int redis_db = 0;
  int redis_connections = 0;
  DirectoryOptions directory;
  ResolveBatchOptions resolve;
  int pool_size = 0;
  absl::Duration rpc_deadline_max;
  absl::Duration token_skew;
  size_t token_cache_max = 0;
  AccountsOptions accounts;
  std::optional<auth::SigningKey> signing_key;
  auth::VerifyKeys verify_keys;
  common::LogLevel log_level = common::LogLevel::kInfo;
  // COURTPIECE_LOBBY_* variables set but never read (misspelt?): warned about at start.
  std::vector<std::string> unknown_settings;
};

// The signing key and the verify keys (files or environment). Errors name the variable.
absl::Status ReadKeys(Config& c) {
  absl::StatusOr<std::optional<std::string>> signing =
      auth::ReadEnvOrFile("COURTPIECE_LOBBY_SIGNING_KEY");
  if (!signing.ok()) return signing.status();
  if (!signing->has_value()) {
    return absl::InvalidArgumentError(
        "COURTPIECE_LOBBY_SIGNING_KEY (or _FILE) is required: run courtpiece-keygen");
  }
  absl::StatusOr<auth::SigningKey> key = auth::SigningKey::Parse(**signing);
  if (!key.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("COURTPIECE_LOBBY_SIGNING_KEY: ", key.status().message()));
  }
  c.signing_key = *std::move(key);
  absl::StatusOr<std::optional<std::string>> verify =
      auth::ReadEnvOrFile("COURTPIECE_LOBBY_VERIFY_KEYS");
  if (!verify.ok()) return verify.status();
  if (!verify->has_value()) {
    c.verify_keys.by_key_id[c.signing_key->key_id] = c.signing_key->public_key;
    return absl::OkStatus();
  }
  absl::StatusOr<auth::VerifyKeys> keys = auth::VerifyKeys::Parse(**verify);
  if (!keys.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("COURTPIECE_LOBBY_VERIFY_KEYS: ", keys.status().message()));
  }
  auto own = keys->by_key_id.find(c.signing_key->key_id);
  if (own == keys->by_key_id.end() || own->second != c.signing_key->public_key) {
    return absl::InvalidArgumentError(absl::StrCat(
        "COURTPIECE_LOBBY_VERIFY_KEYS must hold the signing key's kid ", c.signing_key->key_id,
        " with its public key (else the lobby's own tokens would not verify)"));
  }
  c.verify_keys = *std::move(keys);
  return absl::OkStatus();
}

int64_t Ms(absl::Duration d) { return absl::ToInt64Milliseconds(d); }

void ReadDirectoryConfig(common::EnvConfig& env, DirectoryOptions& d) {
  d.invite_base_url = env.String("COURTPIECE_LOBBY_INVITE_BASE_URL", d.invite_base_url);
  d.code_cooloff_ms = Ms(env.Duration("COURTPIECE_LOBBY_CODE_COOLOFF", absl::Hours(24),
                                      absl::ZeroDuration(), absl::Hours(24 * 365)));
  d.code_tries_max = static_cast<int>(env.Int("COURTPIECE_LOBBY_CODE_TRIES", 20, 1, 1000));
  d.table_rpc_timeout_ms = Ms(env.Duration("COURTPIECE_LOBBY_TABLE_RPC_TIMEOUT", absl::Seconds(2),
                                           absl::Milliseconds(10), absl::Minutes(1)));
  d.fanout_instances_max = static_cast<int>(env.Int("COURTPIECE_LOBBY_FANOUT_MAX", 64, 1, 1024));
  d.open_tables_cache_ms = Ms(env.Duration("COURTPIECE_LOBBY_OPEN_TABLES_CACHE", absl::Seconds(1),
                                           absl::ZeroDuration(), absl::Minutes(1)));
  d.live_instances_cache_ms =
      Ms(env.Duration("COURTPIECE_LOBBY_LIVE_INSTANCES_CACHE", absl::Seconds(1),
                      absl::ZeroDuration(), absl::Minutes(1)));
  d.resolve_close_grace_ms = Ms(env.Duration("COURTPIECE_LOBBY_RESOLVE_CLOSE_GRACE",
                                             absl::Seconds(60), absl::Seconds(1), absl::Hours(24)));
  d.quick_join_tries_max = static_cast<int>(env.Int("COURTPIECE_LOBBY_QUICK_JOIN_TRIES", 8, 1, 64));
  d.quick_join_bet_coins = env.Int("COURTPIECE_LOBBY_QUICK_JOIN_BET", 100, 25, 1000);
  d.quick_join_turn_time_ms =
      Ms(env.Duration("COURTPIECE_LOBBY_QUICK_JOIN_TURN_TIME", absl::Seconds(15), absl::Seconds(5),
                      absl::Seconds(30)));
  d.quick_join_lock_ttl_ms =
      Ms(env.Duration("COURTPIECE_LOBBY_QUICK_JOIN_LOCK_TTL", absl::Seconds(10), absl::Seconds(1),
                      absl::Minutes(5)));
}

absl::StatusOr<Config> ReadConfig() {
  common::EnvConfig env;
  Config c;
  c.pg_url = env.RequiredString("COURTPIECE_PG_URL");
  c.listen_address = env.ListenAddress("COURTPIECE_LOBBY_ADDR", "0.0.0.0:7001");
  c.metrics_address =
      env.ListenAddress("COURTPIECE_LOBBY_METRICS_ADDR", "127.0.0.1:9102", /*allow_off=*/true);
  c.wallet_address = env.String("COURTPIECE_LOBBY_WALLET_ADDR", "127.0.0.1:7004");
  c.redis_address = env.String("COURTPIECE_REDIS_ADDR", "127.0.0.1:6379");
  c.redis_db = static_cast<int>(env.Int("COURTPIECE_LOBBY_REDIS_DB", 0, 0, 1023));
  c.redis_connections = static_cast<int>(env.Int("COURTPIECE_LOBBY_REDIS_CONNECTIONS", 8, 1, 256));
  ReadDirectoryConfig(env, c.directory);
  c.resolve.threads = static_cast<int>(
      env.Int("COURTPIECE_LOBBY_RESOLVE_THREADS", 2, 1, ResolveBatchOptions::kThreadsMax));
  c.resolve.batch_max = static_cast<int>(
      env.Int("COURTPIECE_LOBBY_RESOLVE_BATCH_MAX", 64, 1, ResolveBatchOptions::kBatchMax));
  c.resolve.queue_max = static_cast<int>(
      env.Int("COURTPIECE_LOBBY_RESOLVE_QUEUE_MAX", 4096, 1, ResolveBatchOptions::kQueueMax));
  c.accounts.access_ttl = env.Duration("COURTPIECE_LOBBY_ACCESS_TTL", absl::Minutes(15),
                                       absl::Seconds(10), absl::Hours(24));
  c.accounts.refresh_ttl = env.Duration("COURTPIECE_LOBBY_REFRESH_TTL", absl::Hours(24 * 30),
                                        absl::Seconds(10), absl::Hours(24 * 365));
  c.token_skew = env.Duration("COURTPIECE_LOBBY_TOKEN_SKEW", auth::TokenVerifier::kDefaultSkew,
                              absl::ZeroDuration(), absl::Minutes(5));
  c.token_cache_max = static_cast<size_t>(env.Int(
      "COURTPIECE_LOBBY_TOKEN_CACHE_MAX", auth::TokenVerifier::kDefaultCacheMax, 0, 1'000'000));
  c.accounts.avatar_max = static_cast<int>(env.Int("COURTPIECE_LOBBY_AVATAR_MAX", 64, 1, 10000));
  c.accounts.wallet_read_timeout =
      env.Duration("COURTPIECE_LOBBY_WALLET_READ_TIMEOUT", absl::Milliseconds(500),
                   absl::Milliseconds(10), absl::Seconds(10));
  c.pool_size = static_cast<int>(env.Int("COURTPIECE_LOBBY_PG_POOL_SIZE", 16, 1, 512));
  c.rpc_deadline_max = env.Duration("COURTPIECE_LOBBY_RPC_DEADLINE_MAX", absl::Seconds(5),
                                    absl::Milliseconds(10), absl::Minutes(1));
  c.log_level = common::ReadLogLevel(env);
  if (absl::Status s = env.Finish(); !s.ok()) return s;
  env.Known("COURTPIECE_LOBBY_SIGNING_KEY");  // auth::ReadEnvOrFile
  env.Known("COURTPIECE_LOBBY_SIGNING_KEY_FILE");
  env.Known("COURTPIECE_LOBBY_VERIFY_KEYS");  // auth::ReadEnvOrFile
  env.Known("COURTPIECE_LOBBY_VERIFY_KEYS_FILE");
  c.unknown_settings = env.Unread(environ, "COURTPIECE_LOBBY_");
  if (absl::Status s = Accounts::ValidateOptions(c.accounts); !s.ok()) return s;
  if (absl::Status s = ReadKeys(c); !s.ok()) return s;
  return c;
}

int Run() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);  // docs/services.md
  common::ShutdownSignal& signal = common::ShutdownSignal::Install();
  absl::StatusOr<Config> config = ReadConfig();
  common::Logger log("lobby", config.ok() ? config->log_level : common::LogLevel::kInfo);
  if (!config.ok()) {
    log.Error("bad configuration", {{"status", config.status()}});
    return 2;
  }
  common::WarnUnknownSettings(log, config->unknown_settings);
  absl::StatusOr<std::unique_ptr<common::Metrics>> metrics =
      common::Metrics::Create({.service = "lobby", .listen_address = config->metrics_address});
  if (!metrics.ok()) {
    log.Error("metrics exposer failed", {{"status", metrics.status()}});
    return 1;
  }
  common::GaugeFamily pool_gauge =
      (*metrics)->Gauge("pg_pool_connections", "Postgres pool connections by state.");
  // The statement timeout backs up the RPC deadline: no statement outlives the longest RPC.
  const int deadline_ms = static_cast<int>(absl::ToInt64Milliseconds(config->rpc_deadline_max));
  storage::PgPool pool({.url = config->pg_url,
                        .size_max = config->pool_size,
                        .acquire_timeout_ms = deadline_ms,
                        .statement_timeout_ms = deadline_ms,
                        .application_name = "courtpiece-lobby"});
  // Fail at start, not at the first call, when Postgres is unreachable or not migrated.
  if (absl::Status s =
          pool.RunIdempotent(3,
                             [](storage::PgTransaction& tx) {
                               return tx.Exec("SELECT 1 FROM lobby.players LIMIT 0").status();
                             });
      !s.ok()) {
    log.Error("cannot read schema lobby (is Postgres up and the schema migrated?)",
              {{"status", s}});
    return 1;
  }
  const Clock& clock = RealClock::Instance();
  const auth::TokenSigner signer(*config->signing_key, clock);
  const auth::TokenVerifier verifier(config->verify_keys, clock, config->token_skew,
                                     config->token_cache_max);
  const auth::TokenCallerAuth caller_auth(verifier);
  GrpcWalletPort wallet(common::CreateGrpcChannel(config->wallet_address, metrics->get()));

  // --- accounts -------------------------------------------------------------------------
  PgPlayerStore player_store(pool);
  Accounts accounts(player_store, wallet, signer, clock, config->accounts);
  AccountsService accounts_service(accounts, caller_auth, clock, config->rpc_deadline_max,
                                   **metrics, log);

  // --- directory ------------------------------------------------------------------------
  absl::StatusOr<storage::RedisOptions> redis = storage::ParseRedisAddr(config->redis_address);
  if (!redis.ok()) {
    log.Error("bad COURTPIECE_REDIS_ADDR", {{"status", redis.status()}});
    return 2;
  }
  redis->db = config->redis_db;
  const RedisDirectoryOptions redis_options{.redis = *redis,
                                            .connections = config->redis_connections};
  PgDirectoryStore directory_store(pool);
  RedisCodeCache codes(redis_options);
  RedisTableRegistry registry(redis_options);
  RedisSharedLock quick_join_lock(redis_options);
  GrpcTablePort tables(metrics->get());
  table::RulesEngineFactory engines;
  RandomCodeSource code_source;
  Directory directory(config->directory, RealClock::Instance(), directory_store, codes, registry,
                      tables, engines, code_source, &quick_join_lock, &wallet);
  DirectoryService directory_service(directory, caller_auth, config->resolve);

  // --- records (from the tables), stats, admin reads -----------------------------------------
  // A table's close frees its code (after the cool-off); a failure here leaves the code held
  // until ResolveCode finds the table gone, so it is logged, not retried.
  PgRecordsStore records_store(pool);
  Records records(records_store, clock, RecordsOptions{}, [&](std::string_view table_id) {
    absl::Status s = directory.MarkClosed(table_id);
    if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
      log.Warn("closing a table in the directory failed",
               {{"table_id", std::string(table_id)}, {"status", s}});
    }
  });
  LobbyRecordsService records_service(
      records, clock, {.rpc_deadline_max = config->rpc_deadline_max}, **metrics, log);
  StatsService stats_service(records, caller_auth, clock,
                             {.rpc_deadline_max = config->rpc_deadline_max}, log);
  LobbyAdminService admin_service(
      records, caller_auth,
      [&](std::string_view player_id) -> absl::StatusOr<v1::Profile> {
        absl::StatusOr<Profile> p =
            accounts.GetProfile(std::string(player_id), absl::Now() + config->rpc_deadline_max);
        if (!p.ok()) return p.status();
        v1::Profile out;
        ToProto(*p, &out);
        return out;
      },
      clock, {.rpc_deadline_max = config->rpc_deadline_max}, log);

  std::vector<grpc::Service*> services = {&accounts_service, &directory_service, &records_service,
                                          &stats_service, &admin_service};

  absl::StatusOr<std::unique_ptr<common::GrpcServer>> server =
      common::GrpcServer::Start({.listen_address = config->listen_address}, services, **metrics);
  if (!server.ok()) {
    log.Error("gRPC server failed", {{"status", server.status()}});
    return 1;
  }
  std::string key_ids;
  for (const auto& [kid, pub] : config->verify_keys.by_key_id) {
    absl::StrAppend(&key_ids, key_ids.empty() ? "" : ",", kid);
  }
  log.Info("serving", {{"grpc_address", config->listen_address},
                       {"grpc_port", (*server)->port()},
                       {"metrics_address", config->metrics_address},
                       {"metrics_port", (*metrics)->port()},
                       {"wallet_address", config->wallet_address},
                       {"signing_key_id", config->signing_key->key_id},
                       {"verify_key_ids", key_ids},
                       {"access_ttl_s", absl::ToInt64Seconds(config->accounts.access_ttl)},
                       {"refresh_ttl_s", absl::ToInt64Seconds(config->accounts.refresh_ttl)}});
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
}  // namespace courtpiece::lobby

int main() { return courtpiece::lobby::Run(); }
