// courtpiece-moderation: wiring only. Reads the environment, opens the Postgres pool, loads
// the token verify keys, connects Redis (the table tier's registry, to find a table's owner)
// and the lobby, builds store -> domain -> gRPC services (VoiceNotes and ModerationAdmin for
// clients and admins through the gateway; ReportIntake for table instances on the internal
// network), runs the retention purge on its own thread, serves until SIGTERM/SIGINT, then
// drains. Applies no migrations: `courtpiece-migrate --schema moderation --dir
// services/moderation/migrations` does (deploy/local/up.sh, the tests), as for the lobby.
//
//   COURTPIECE_PG_URL                       Postgres URL (required); schema `moderation` migrated
//   COURTPIECE_MODERATION_ADDR              gRPC listen HOST:PORT      (default 127.0.0.1:7005)
//   COURTPIECE_MODERATION_METRICS_ADDR      GET /metrics HOST:PORT, or off (default 127.0.0.1:9105)
//   COURTPIECE_REDIS_ADDR                   the table tier's Redis HOST:PORT (owner records)
//                                                                  (default 127.0.0.1:6379)
//   COURTPIECE_MODERATION_REDIS_DB          its database index: the table tier's (default 0)
//   COURTPIECE_MODERATION_LOBBY_ADDR        the lobby's gRPC HOST:PORT (LobbyAdmin)
//                                                                  (default 127.0.0.1:7001)
//   COURTPIECE_MODERATION_VERIFY_KEYS       "<kid>:<base64 pub>[,...]": the lobby's public keys
//   COURTPIECE_MODERATION_VERIFY_KEYS_FILE  (or a file holding them). Required.
//   COURTPIECE_MODERATION_TOKEN_SKEW        clock skew allowed on expiry (default 30s; 0..5m)
//   COURTPIECE_MODERATION_NOTE_BYTES_MAX    audio bytes per note   (default 524288 = 512 KiB)
//   COURTPIECE_MODERATION_PURGE_INTERVAL    between purge runs     (default 1m; 1s..24h)
//   COURTPIECE_MODERATION_PURGE_BATCH_MAX   notes per purge run    (default 1000; 1..100000)
//   COURTPIECE_MODERATION_TABLE_CHANNELS_MAX table instances with a kept channel (default 64)
//   COURTPIECE_MODERATION_PG_POOL_SIZE      Postgres connections   (default 16)
//   COURTPIECE_MODERATION_RPC_DEADLINE_MAX  cap on every RPC's deadline (default 5s)
//   COURTPIECE_LOG_LEVEL                    debug|info|warn|error  (default info)
#include <unistd.h>  // environ

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
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
#include "courtpiece/placement/placement.h"
#include "courtpiece/placement/redis_owner_lookup.h"
#include "courtpiece/storage/pg_pool.h"
#include "courtpiece/storage/pg_pool_metrics.h"
#include "courtpiece/storage/redis_client.h"
#include "services/moderation/admin.h"
#include "services/moderation/ffmpeg_audio_probe.h"
#include "services/moderation/grpc_lobby_port.h"
#include "services/moderation/grpc_table_port.h"
#include "services/moderation/pg_moderation_store.h"
#include "services/moderation/retention.h"
#include "services/moderation/server.h"
#include "services/moderation/voice_notes.h"

namespace courtpiece::moderation {
namespace {

constexpr absl::Duration kDrain = absl::Seconds(10);
constexpr absl::Duration kGaugeInterval = absl::Seconds(1);
constexpr int kStoreGaugeEveryTicks = 10;  // the store's gauges are counts over tables
constexpr int kPurgeRunsPerTickMax = 10;   // a backlog is worked off, within bounds

struct Config {
  std::string pg_url;
  std::string listen_address;
  std::string metrics_address;  // "" = no metrics endpoint
  std::string redis_address;
  int redis_db = 0;
  std::string lobby_address;
  absl::Duration token_skew;
  auth::VerifyKeys verify_keys;
  VoiceNotesOptions notes;
  absl::Duration purge_interval;
  RetentionOptions retention;
  int table_channels_max = 0;
  int pool_size = 0;
  absl::Duration rpc_deadline_max;
  common::LogLevel log_level = common::LogLevel::kInfo;
  // COURTPIECE_MODERATION_* variables set but never read (misspelt?): warned about at start.
  std::vector<std::string> unknown_settings;
};

absl::Status ReadVerifyKeys(Config& c) {
  absl::StatusOr<std::optional<std::string>> text =
      auth::ReadEnvOrFile("COURTPIECE_MODERATION_VERIFY_KEYS");
  if (!text.ok()) return text.status();
  if (!text->has_value()) {
    return absl::InvalidArgumentError(
        "COURTPIECE_MODERATION_VERIFY_KEYS (or _FILE) is required: the lobby's public keys, "
        "\"<kid>:<base64 pub>\" (courtpiece-keygen prints them)");
  }
  absl::StatusOr<auth::VerifyKeys> keys = auth::VerifyKeys::Parse(**text);
  if (!keys.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("COURTPIECE_MODERATION_VERIFY_KEYS: ", keys.status().message()));
  }
  c.verify_keys = *std::move(keys);
  return absl::OkStatus();
}

absl::StatusOr<Config> ReadConfig() {
  common::EnvConfig env;
  Config c;
  c.pg_url = env.RequiredString("COURTPIECE_PG_URL");
  c.listen_address = env.ListenAddress("COURTPIECE_MODERATION_ADDR", "127.0.0.1:7005");
  c.metrics_address = env.ListenAddress("COURTPIECE_MODERATION_METRICS_ADDR", "127.0.0.1:9105",
                                        /*allow_off=*/true);
  c.redis_address = env.String("COURTPIECE_REDIS_ADDR", "127.0.0.1:6379");
  c.redis_db = static_cast<int>(env.Int("COURTPIECE_MODERATION_REDIS_DB", 0, 0, 1023));
  c.lobby_address = env.String("COURTPIECE_MODERATION_LOBBY_ADDR", "127.0.0.1:7001");
  c.token_skew = env.Duration("COURTPIECE_MODERATION_TOKEN_SKEW", auth::TokenVerifier::kDefaultSkew,
                              absl::ZeroDuration(), absl::Minutes(5));
  c.notes.note_bytes_max = env.Int("COURTPIECE_MODERATION_NOTE_BYTES_MAX", kDefaultNoteBytesMax,
                                   1024, 4 * 1024 * 1024 - 64 * 1024);
  c.purge_interval = env.Duration("COURTPIECE_MODERATION_PURGE_INTERVAL", absl::Minutes(1),
                                  absl::Seconds(1), absl::Hours(24));
  c.retention.purge_batch_max =
      static_cast<int>(env.Int("COURTPIECE_MODERATION_PURGE_BATCH_MAX", 1000, 1, 100000));
  c.table_channels_max =
      static_cast<int>(env.Int("COURTPIECE_MODERATION_TABLE_CHANNELS_MAX", 64, 1, 4096));
  c.pool_size = static_cast<int>(env.Int("COURTPIECE_MODERATION_PG_POOL_SIZE", 16, 1, 512));
  c.rpc_deadline_max = env.Duration("COURTPIECE_MODERATION_RPC_DEADLINE_MAX", absl::Seconds(5),
                                    absl::Milliseconds(10), absl::Minutes(1));
  c.log_level = common::ReadLogLevel(env);
  if (absl::Status s = env.Finish(); !s.ok()) return s;
  env.Known("COURTPIECE_MODERATION_VERIFY_KEYS");  // auth::ReadEnvOrFile
  env.Known("COURTPIECE_MODERATION_VERIFY_KEYS_FILE");
  c.unknown_settings = env.Unread(environ, "COURTPIECE_MODERATION_");
  if (absl::Status s = ReadVerifyKeys(c); !s.ok()) return s;
  return c;
}

// Runs the purge every `interval` (a backlog: again at once, at most kPurgeRunsPerTickMax
// runs per interval) until Stop().
class PurgeLoop {
 public:
  PurgeLoop(Retention& retention, ModerationMetrics& metrics, const Clock& clock,
            absl::Duration interval, absl::Duration run_deadline, const common::Logger& log)
      : retention_(retention),
        metrics_(metrics),
        clock_(clock),
        interval_(interval),
        run_deadline_(run_deadline),
        log_(log),
        thread_([this] { Run(); }) {}
  ~PurgeLoop() { Stop(); }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run() {
    while (true) {
      for (int run = 0; run < kPurgeRunsPerTickMax; ++run) {
        absl::StatusOr<PurgeRun> r = retention_.RunOnce(clock_.Now() + run_deadline_);
        metrics_.Purge(r);
        if (!r.ok()) {
          log_.Warn("purge failed", {{"status", r.status()}});
          break;
        }
        if (r->result.notes_deleted + r->result.audio_deleted > 0) {
          log_.Info("purged", {{"notes_deleted", r->result.notes_deleted},
                               {"audio_deleted", r->result.audio_deleted},
                               {"bytes_freed", r->result.bytes_freed}});
        }
        if (r->drained) break;
      }
      std::unique_lock<std::mutex> lock(mu_);
      if (cv_.wait_for(lock, std::chrono::milliseconds(absl::ToInt64Milliseconds(interval_)),
                       [this] { return stop_; })) {
        return;
      }
    }
  }

  Retention& retention_;
  ModerationMetrics& metrics_;
  const Clock& clock_;
  const absl::Duration interval_;
  const absl::Duration run_deadline_;
  const common::Logger& log_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

int Run() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);  // docs/services.md
  common::ShutdownSignal& signal = common::ShutdownSignal::Install();
  absl::StatusOr<Config> config = ReadConfig();
  common::Logger log("moderation", config.ok() ? config->log_level : common::LogLevel::kInfo);
  if (!config.ok()) {
    log.Error("bad configuration", {{"status", config.status()}});
    return 2;
  }
  common::WarnUnknownSettings(log, config->unknown_settings);
  absl::StatusOr<std::unique_ptr<common::Metrics>> metrics =
      common::Metrics::Create({.service = "moderation", .listen_address = config->metrics_address});
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
                        .application_name = "courtpiece-moderation"});
  // Fail at start, not at the first call, when Postgres is unreachable or not migrated.
  if (absl::Status s =
          pool.RunIdempotent(3,
                             [](storage::PgTransaction& tx) {
                               return tx.Exec("SELECT 1 FROM moderation.notes LIMIT 0").status();
                             });
      !s.ok()) {
    log.Error("cannot read schema moderation (is Postgres up and the schema migrated?)",
              {{"status", s}});
    return 1;
  }
  absl::StatusOr<storage::RedisOptions> redis_options =
      storage::ParseRedisAddr(config->redis_address);
  if (!redis_options.ok()) {
    log.Error("bad COURTPIECE_REDIS_ADDR", {{"status", redis_options.status()}});
    return 2;
  }
  redis_options->db = config->redis_db;

  const Clock& clock = RealClock::Instance();
  const auth::TokenVerifier verifier(config->verify_keys, clock, config->token_skew,
                                     auth::TokenVerifier::kDefaultCacheMax);
  const auth::TokenCallerAuth caller_auth(verifier);
  ModerationMetrics moderation_metrics(**metrics);

  PgModerationStore store(pool);
  storage::RedisClient redis(*redis_options);
  placement::RedisOwnerLookup owners(redis, placement::RegistryKeys());
  GrpcTablePort tables(owners, metrics->get(), config->table_channels_max);
  GrpcLobbyPort lobby(common::CreateGrpcChannel(config->lobby_address, metrics->get()));
  const FfmpegAudioProbe probe;
  SystemRandomSource random;

  VoiceNotes notes(store, tables, probe, clock, random, config->notes);
  ModerationAdmin admin(store, lobby, clock);
  Retention retention(store, clock, config->retention);
  const ServerOptions server_options{.rpc_deadline_max = config->rpc_deadline_max};
  VoiceNotesService notes_service(notes, caller_auth, clock, server_options, moderation_metrics,
                                  log);
  ModerationAdminService admin_service(admin, caller_auth, clock, server_options,
                                       moderation_metrics, log);
  ReportIntakeService intake_service(notes, clock, server_options, moderation_metrics, log);
  std::vector<grpc::Service*> services = {&notes_service, &admin_service, &intake_service};

  // An upload is one message: the audio cap plus room for the other fields.
  const int message_bytes_max = static_cast<int>(config->notes.note_bytes_max + 64 * 1024);
  absl::StatusOr<std::unique_ptr<common::GrpcServer>> server =
      common::GrpcServer::Start({.listen_address = config->listen_address,
                                 .max_receive_message_bytes = message_bytes_max,
                                 .max_send_message_bytes = message_bytes_max},
                                services, **metrics);
  if (!server.ok()) {
    log.Error("gRPC server failed", {{"status", server.status()}});
    return 1;
  }
  PurgeLoop purge(retention, moderation_metrics, clock, config->purge_interval,
                  config->rpc_deadline_max, log);
  log.Info("serving", {{"grpc_address", config->listen_address},
                       {"grpc_port", (*server)->port()},
                       {"metrics_address", config->metrics_address},
                       {"metrics_port", (*metrics)->port()},
                       {"lobby_address", config->lobby_address},
                       {"redis_address", config->redis_address},
                       {"note_bytes_max", config->notes.note_bytes_max},
                       {"purge_interval_ms", absl::ToInt64Milliseconds(config->purge_interval)},
                       {"purge_batch_max", config->retention.purge_batch_max}});
  std::optional<int> signo;
  int tick = 0;
  while (!(signo = signal.WaitFor(kGaugeInterval))) {
    storage::SetPoolGauges(pool, pool_gauge);
    if (tick++ % kStoreGaugeEveryTicks == 0) {
      absl::StatusOr<StoreGauges> gauges = store.Gauges(clock.Now() + config->rpc_deadline_max);
      if (gauges.ok()) {
        moderation_metrics.Gauges(*gauges, clock.Now());
      } else {
        log.Warn("store gauges failed", {{"status", gauges.status()}});
      }
    }
  }
  log.Info("shutting down", {{"signal", *signo}});
  const absl::Time start = absl::Now();
  purge.Stop();
  (*server)->Shutdown(start + kDrain);
  log.Info("stopped", {{"shutdown_ms", absl::ToInt64Milliseconds(absl::Now() - start)},
                       {"cancelled_at_drain_end", (*server)->running_at_drain_end()}});
  return 0;
}

}  // namespace
}  // namespace courtpiece::moderation

int main() { return courtpiece::moderation::Run(); }
