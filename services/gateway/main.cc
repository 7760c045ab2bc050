// courtpiece-gateway: wiring only. Reads the environment, loads the token verify keys,
// connects the lobby, moderation and Redis (the table tier's registry, to find a table's owner),
// builds the relay (play sessions, unary routing) and the two fronts: gRPC (CourtPiece, for mobile)
// and HTTP/1.1 + WebSocket (the web client, the JSON API, /v1/play, the admin API); serves
// until SIGTERM/SIGINT, then drains. State: none durable (docs/gateway.md).
//
//   COURTPIECE_GATEWAY_ADDR               gRPC listen HOST:PORT          (default 0.0.0.0:7000)
//   COURTPIECE_GATEWAY_HTTP_ADDR          HTTP/WebSocket HOST:PORT       (default 0.0.0.0:8080)
//   COURTPIECE_GATEWAY_METRICS_ADDR       GET /metrics HOST:PORT, or off (default 127.0.0.1:9103)
//   COURTPIECE_GATEWAY_LOBBY_ADDR         the lobby's gRPC HOST:PORT     (default 127.0.0.1:7001)
//   COURTPIECE_GATEWAY_MODERATION_ADDR    moderation's gRPC HOST:PORT: voice notes, the admin
//                                         moderation API          (default 127.0.0.1:7005)
//   COURTPIECE_REDIS_ADDR                 the table tier's Redis HOST:PORT (owner records)
//                                                                    (default 127.0.0.1:6379)
//   COURTPIECE_GATEWAY_REDIS_DB           its database index: the table tier's (default 0)
//   COURTPIECE_GATEWAY_REDIS_CONNECTIONS  Redis connections            (default 4)
//   COURTPIECE_GATEWAY_VERIFY_KEYS        "<kid>:<base64 pub>[,...]": the lobby's public keys
//   COURTPIECE_GATEWAY_VERIFY_KEYS_FILE   (or a file holding them). Required.
//   COURTPIECE_GATEWAY_TOKEN_SKEW         clock skew allowed on expiry (default 30s; 0..5m)
//   COURTPIECE_GATEWAY_WEB_ROOT           the web client's files       (default web/dist)
//   COURTPIECE_GATEWAY_HTTP_THREADS       HTTP/WebSocket I/O threads   (default: cores)
//   COURTPIECE_GATEWAY_GRPC_FRONT         h2: the mobile front on our own HTTP/2 (h2_front.h,
//                                         default); libgrpc: on libgrpc (grpc_front.h)
//   COURTPIECE_GATEWAY_GRPC_THREADS       h2: the mobile front's I/O threads (default: cores)
//   COURTPIECE_GATEWAY_GRPC_CONNECTIONS_MAX  h2: TCP connections at once (default 30000)
//   COURTPIECE_GATEWAY_GRPC_CONNECTIONS_PER_IP_MAX  h2: of them from one address (default 256)
//   COURTPIECE_GATEWAY_GRPC_PLAY_QUEUES   libgrpc: completion queues (a thread each) of the
//                                         mobile Play streams (default 2, 1..64)
//   COURTPIECE_GATEWAY_GRPC_PING_INTERVAL the gRPC front pings every connection this often
//                                         (default 30s; 1s..10m) and closes one that does
//   COURTPIECE_GATEWAY_GRPC_PING_TIMEOUT  not answer within this (default 20s; 1s..5m)
//   COURTPIECE_GATEWAY_GRPC_CLIENT_PING_MIN  clients may ping this often (default 5s)
//   COURTPIECE_GATEWAY_GRPC_IDLE_TIMEOUT  a gRPC connection without a call for this long is
//                                         sent GOAWAY (default 5m; 10s..24h)
//   COURTPIECE_GATEWAY_GRPC_STREAMS_PER_CONNECTION  concurrent calls on one gRPC connection
//                                         (default 100, 1..10000)
//   COURTPIECE_GATEWAY_CONNECTIONS_MAX    HTTP + WebSocket connections (default 30000)
//   COURTPIECE_GATEWAY_CONNECTIONS_PER_IP_MAX  of them from one address (default 64)
//   COURTPIECE_GATEWAY_GRPC_STREAMS_MAX   mobile Play streams open at once (default 30000)
//   COURTPIECE_GATEWAY_GRPC_STREAMS_PER_IP_MAX  of them from one address (default 256:
//                                         phones share addresses behind carrier NAT)
//   COURTPIECE_GATEWAY_COMMANDS_PER_SECOND per play connection          (default 20)
//   COURTPIECE_GATEWAY_COMMANDS_BURST     its token bucket's size      (default 40)
//   COURTPIECE_GATEWAY_RESUME_TIMEOUT     a moved table's resume gives up after (default 30s)
//   COURTPIECE_GATEWAY_RPC_DEADLINE_MAX   cap on every unary call's deadline (default 10s)
//   COURTPIECE_GATEWAY_LOOKUP_THREADS     threads for owner lookups and resumes (Redis, a
//                                         table's GetTable; default 4, 1..64)
//   COURTPIECE_GATEWAY_TABLE_STREAMS      mux: every player's Play stream is a session of
//                                         one PlayMux stream per table instance (default);
//                                         per_player: one gRPC call each (for table
//                                         instances older than PlayMux)
//   COURTPIECE_LOG_LEVEL                  debug|info|warn|error        (default info)
//   (the web front's own settings: http_server.h ReadHttpServerOptions)
#include <unistd.h>  // environ

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "courtpiece/auth/keys.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/config.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/common/shutdown_signal.h"
#include "courtpiece/placement/placement.h"
#include "courtpiece/storage/redis_client.h"
#include "services/gateway/grpc_front.h"
#include "services/gateway/grpc_table_dialer.h"
#include "services/gateway/h2_front.h"
#include "services/gateway/http_server.h"
#include "services/gateway/mux_table_dialer.h"
#include "services/gateway/play_session.h"
#include "services/gateway/prometheus_gateway_metrics.h"
#include "services/gateway/redis_owner_lookup.h"
#include "services/gateway/token_gate.h"
#include "services/gateway/unary_relay.h"
#include "services/gateway/upstream.h"

namespace courtpiece::gateway {
namespace {

constexpr absl::Duration kDrain = absl::Seconds(10);
// How long the shutdown waits for cancelled upstream calls to end (they end at once; a bound).
constexpr absl::Duration kUpstreamFinishWait = absl::Seconds(5);
constexpr int kUnaryBytesMax = 64 * 1024;  // a unary request or reply, either way
// gRPC front and moderation channel: a voice note's upload or audio (the front holds every
// other method to its own request_bytes_max, 64 KiB).
constexpr int kVoiceBytesMax = static_cast<int>(kVoiceMessageBytesMax);

struct Config {
  std::string listen_address;
  std::string http_address;
  std::string metrics_address;  // "" = no metrics endpoint
  std::string lobby_address;
  std::string moderation_address;
  std::string redis_address;
  int redis_db = 0;
  int redis_connections = 0;
  absl::Duration token_skew;
  auth::VerifyKeys verify_keys;
  HttpServerOptions http;
  PlaySessionOptions play;
  UnaryRelayOptions router;
  int lookup_threads = 0;
  bool grpc_own_h2 = true;  // COURTPIECE_GATEWAY_GRPC_FRONT=h2
  int grpc_threads = 2;
  size_t grpc_connections_max = 30'000;
  size_t grpc_connections_per_ip_max = 256;
  int grpc_play_queues = 2;  // COURTPIECE_GATEWAY_GRPC_PLAY_QUEUES
  absl::Duration grpc_ping_interval;
  absl::Duration grpc_ping_timeout;
  absl::Duration grpc_client_ping_min;
  absl::Duration grpc_idle_timeout;
  int grpc_streams_per_connection = 100;
  size_t grpc_streams_max = 30'000;
  size_t grpc_streams_per_ip_max = 256;
  bool table_mux = true;  // COURTPIECE_GATEWAY_TABLE_STREAMS=mux
  common::LogLevel log_level = common::LogLevel::kInfo;
  // COURTPIECE_GATEWAY_* variables set but never read (misspelt?): warned about at start.
  std::vector<std::string> unknown_settings;
};

absl::Status ReadVerifyKeys(Config& c) {
  absl::StatusOr<std::optional<std::string>> text =
      auth::ReadEnvOrFile("COURTPIECE_GATEWAY_VERIFY_KEYS");
  if (!text.ok()) return text.status();
  if (!text->has_value()) {
    return absl::InvalidArgumentError(
        "COURTPIECE_GATEWAY_VERIFY_KEYS (or _FILE) is required: the lobby's public keys, "
        "\"<kid>:<base64 pub>\" (courtpiece-keygen prints them)");
  }
  absl::StatusOr<auth::VerifyKeys> keys = auth::VerifyKeys::Parse(**text);
  if (!keys.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("COURTPIECE_GATEWAY_VERIFY_KEYS: ", keys.status().message()));
  }
  c.verify_keys = *std::move(keys);
  return absl::OkStatus();
}

// The mobile front, whichever COURTPIECE_GATEWAY_GRPC_FRONT chose.
struct MobileFront {
  std::unique_ptr<H2Front> h2;
  std::unique_ptr<GrpcFront> libgrpc;
  std::unique_ptr<common::GrpcServer> server;  // libgrpc's

  int port() const { return h2 != nullptr ? h2->port() : server->port(); }
  void EndPlayStreams(const absl::Status& status) {
    if (h2 != nullptr) h2->EndPlayStreams(status);
    if (libgrpc != nullptr) libgrpc->EndPlayStreams(status);
  }
  void Shutdown(absl::Time deadline) {
    if (h2 != nullptr) h2->Shutdown(deadline);
    if (server != nullptr) server->Shutdown(deadline);
  }
  int running_at_drain_end() const {
    return h2 != nullptr ? h2->running_at_drain_end() : server->running_at_drain_end();
  }
};

// A bounded setting (at most a day) in gRPC's int milliseconds.
int Ms(absl::Duration d) { return static_cast<int>(absl::ToInt64Milliseconds(d)); }

// "host:port" -> the two parts (EnvConfig::ListenAddress validated the shape).
void SplitHostPort(const std::string& address, std::string* host, int* port) {
  const size_t colon = address.rfind(':');
  *host = address.substr(0, colon);
  if (!host->empty() && host->front() == '[') *host = host->substr(1, host->size() - 2);
  *port = 0;
  (void)absl::SimpleAtoi(address.substr(colon + 1), port);
}

absl::StatusOr<Config> ReadConfig() {
  common::EnvConfig env;
  Config c;
  c.listen_address = env.ListenAddress("COURTPIECE_GATEWAY_ADDR", "0.0.0.0:7000");
  c.http_address = env.ListenAddress("COURTPIECE_GATEWAY_HTTP_ADDR", "0.0.0.0:8080");
  c.metrics_address =
      env.ListenAddress("COURTPIECE_GATEWAY_METRICS_ADDR", "127.0.0.1:9103", /*allow_off=*/true);
  c.lobby_address = env.String("COURTPIECE_GATEWAY_LOBBY_ADDR", "127.0.0.1:7001");
  c.moderation_address = env.String("COURTPIECE_GATEWAY_MODERATION_ADDR", "127.0.0.1:7005");
  c.redis_address = env.String("COURTPIECE_REDIS_ADDR", "127.0.0.1:6379");
  c.redis_db = static_cast<int>(env.Int("COURTPIECE_GATEWAY_REDIS_DB", 0, 0, 1023));
  c.redis_connections =
      static_cast<int>(env.Int("COURTPIECE_GATEWAY_REDIS_CONNECTIONS", 4, 1, 256));
  c.token_skew = env.Duration("COURTPIECE_GATEWAY_TOKEN_SKEW", auth::TokenVerifier::kDefaultSkew,
                              absl::ZeroDuration(), absl::Minutes(5));
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c.http.threads = static_cast<int>(env.Int("COURTPIECE_GATEWAY_HTTP_THREADS", cores, 1, 256));
  c.grpc_own_h2 = env.OneOf("COURTPIECE_GATEWAY_GRPC_FRONT", "h2", {"h2", "libgrpc"}) == "h2";
  c.grpc_threads = static_cast<int>(env.Int("COURTPIECE_GATEWAY_GRPC_THREADS", cores, 1, 256));
  c.grpc_connections_max =
      static_cast<size_t>(env.Int("COURTPIECE_GATEWAY_GRPC_CONNECTIONS_MAX", 30000, 1, 1000000));
  c.grpc_connections_per_ip_max = static_cast<size_t>(
      env.Int("COURTPIECE_GATEWAY_GRPC_CONNECTIONS_PER_IP_MAX", 256, 1, 1000000));
  c.grpc_play_queues = static_cast<int>(env.Int("COURTPIECE_GATEWAY_GRPC_PLAY_QUEUES", 2, 1, 64));
  c.grpc_ping_interval = env.Duration("COURTPIECE_GATEWAY_GRPC_PING_INTERVAL", absl::Seconds(30),
                                      absl::Seconds(1), absl::Minutes(10));
  c.grpc_ping_timeout = env.Duration("COURTPIECE_GATEWAY_GRPC_PING_TIMEOUT", absl::Seconds(20),
                                     absl::Seconds(1), absl::Minutes(5));
  c.grpc_client_ping_min = env.Duration("COURTPIECE_GATEWAY_GRPC_CLIENT_PING_MIN", absl::Seconds(5),
                                        absl::Seconds(1), absl::Minutes(10));
  c.grpc_idle_timeout = env.Duration("COURTPIECE_GATEWAY_GRPC_IDLE_TIMEOUT", absl::Minutes(5),
                                     absl::Seconds(10), absl::Hours(24));
  c.grpc_streams_per_connection =
      static_cast<int>(env.Int("COURTPIECE_GATEWAY_GRPC_STREAMS_PER_CONNECTION", 100, 1, 10000));
  c.grpc_streams_max =
      static_cast<size_t>(env.Int("COURTPIECE_GATEWAY_GRPC_STREAMS_MAX", 30000, 1, 1000000));
  c.grpc_streams_per_ip_max =
      static_cast<size_t>(env.Int("COURTPIECE_GATEWAY_GRPC_STREAMS_PER_IP_MAX", 256, 1, 1000000));
  ReadHttpServerOptions(env, &c.http);
  if (c.http.web_root.empty()) c.http.web_root = "web/dist";
  c.play.commands_per_second =
      static_cast<double>(env.Int("COURTPIECE_GATEWAY_COMMANDS_PER_SECOND", 20, 1, 10000));
  c.play.commands_burst =
      static_cast<int>(env.Int("COURTPIECE_GATEWAY_COMMANDS_BURST", 40, 1, 10000));
  c.play.resume_timeout = env.Duration("COURTPIECE_GATEWAY_RESUME_TIMEOUT", absl::Seconds(30),
                                       absl::Seconds(1), absl::Minutes(10));
  c.router.deadline_max = env.Duration("COURTPIECE_GATEWAY_RPC_DEADLINE_MAX", absl::Seconds(10),
                                       absl::Milliseconds(10), absl::Minutes(1));
  c.lookup_threads = static_cast<int>(env.Int("COURTPIECE_GATEWAY_LOOKUP_THREADS", 4, 1, 64));
  c.table_mux =
      env.OneOf("COURTPIECE_GATEWAY_TABLE_STREAMS", "mux", {"mux", "per_player"}) == "mux";
  c.log_level = common::ReadLogLevel(env);
  if (absl::Status s = env.Finish(); !s.ok()) return s;
  env.Known("COURTPIECE_GATEWAY_VERIFY_KEYS");  // auth::ReadEnvOrFile
  env.Known("COURTPIECE_GATEWAY_VERIFY_KEYS_FILE");
  c.unknown_settings = env.Unread(environ, "COURTPIECE_GATEWAY_");
  if (absl::Status s = ReadVerifyKeys(c); !s.ok()) return s;
  SplitHostPort(c.http_address, &c.http.host, &c.http.port);
  return c;
}

int Run() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);  // docs/services.md
  common::ShutdownSignal& signal = common::ShutdownSignal::Install();
  absl::StatusOr<Config> config = ReadConfig();
  common::Logger log("gateway", config.ok() ? config->log_level : common::LogLevel::kInfo);
  if (!config.ok()) {
    log.Error("bad configuration", {{"status", config.status()}});
    return 2;
  }
  common::WarnUnknownSettings(log, config->unknown_settings);
  absl::StatusOr<std::unique_ptr<common::Metrics>> metrics =
      common::Metrics::Create({.service = "gateway", .listen_address = config->metrics_address});
  if (!metrics.ok()) {
    log.Error("metrics exposer failed", {{"status", metrics.status()}});
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
  const TokenGate gate(verifier);
  PrometheusGatewayMetrics gateway_metrics(**metrics);

  // --- unary calls: the lobby and moderation -----------------------------------------------
  const UnaryUpstreams upstreams{
      .lobby = common::CreateGrpcChannel(
          config->lobby_address, metrics->get(),
          {.max_receive_message_bytes = kUnaryBytesMax, .max_send_message_bytes = kUnaryBytesMax}),
      .moderation = common::CreateGrpcChannel(
          config->moderation_address, metrics->get(),
          {.max_receive_message_bytes = kVoiceBytesMax, .max_send_message_bytes = kVoiceBytesMax}),
  };
  std::unique_ptr<UnaryRelay> client_router =
      UnaryRelay::ForClients(upstreams, gate, clock, gateway_metrics, config->router);
  std::unique_ptr<UnaryRelay> admin_router =
      UnaryRelay::ForAdmins(upstreams, gate, clock, gateway_metrics, config->router);

  // --- play streams: the table tier ---------------------------------------------------------
  storage::RedisClient redis(*redis_options);
  RedisOwnerLookup owners(redis, placement::RegistryKeys());
  // Destroyed after the dialer (whose destructor ends the streams still open and tells their
  // observers) and before the owner lookups it runs (play_session.h).
  ThreadScheduler scheduler(config->lookup_threads);
  std::unique_ptr<TableDialer> table_dialer;
  if (config->table_mux) {
    table_dialer = std::make_unique<MuxTableDialer>(metrics->get());
  } else {
    table_dialer = std::make_unique<GrpcTableDialer>(metrics->get());
  }
  TableDialer& dialer = *table_dialer;
  const PlayDeps deps{.dialer = dialer,
                      .owners = owners,
                      .scheduler = scheduler,
                      .clock = clock,
                      .metrics = gateway_metrics,
                      .log = &log};
  PlaySessionOptions grpc_play = config->play;
  grpc_play.kind = "grpc";
  PlaySessionOptions ws_play = config->play;
  ws_play.kind = "websocket";
  PlaySessionService grpc_sessions(deps, grpc_play);
  PlaySessionService ws_sessions(deps, ws_play);

  // --- the fronts -------------------------------------------------------------------------
  const GrpcFrontOptions grpc_options{.play_streams_max = config->grpc_streams_max,
                                      .play_streams_per_ip_max = config->grpc_streams_per_ip_max};
  MobileFront mobile;
  if (config->grpc_own_h2) {
    H2FrontOptions h2{
        .threads = config->grpc_threads,
        .grpc = grpc_options,
        .connections_max = config->grpc_connections_max,
        .connections_per_ip_max = config->grpc_connections_per_ip_max,
        .streams_per_connection_max = static_cast<uint32_t>(config->grpc_streams_per_connection),
        .ping_interval = config->grpc_ping_interval,
        .ping_timeout = config->grpc_ping_timeout,
        .client_ping_min = config->grpc_client_ping_min,
        .idle_timeout = config->grpc_idle_timeout};
    SplitHostPort(config->listen_address, &h2.host, &h2.port);
    mobile.h2 = std::make_unique<H2Front>(h2, *client_router, grpc_sessions, gate, gateway_metrics,
                                          **metrics);
    if (absl::Status s = mobile.h2->Start(); !s.ok()) {
      log.Error("gRPC front failed", {{"status", s}});
      return 1;
    }
  } else {
    mobile.libgrpc = std::make_unique<GrpcFront>(*client_router, grpc_sessions, gate,
                                                 gateway_metrics, grpc_options);
    absl::StatusOr<std::unique_ptr<common::GrpcServer>> server = common::GrpcServer::Start(
        {.listen_address = config->listen_address,
         .max_receive_message_bytes = kVoiceBytesMax,
         .max_send_message_bytes = kVoiceBytesMax,
         .async_queues = config->grpc_play_queues,
         .ping_interval_ms = Ms(config->grpc_ping_interval),
         .ping_timeout_ms = Ms(config->grpc_ping_timeout),
         .client_ping_interval_min_ms = Ms(config->grpc_client_ping_min),
         .connection_idle_ms = Ms(config->grpc_idle_timeout),
         .streams_per_connection_max = config->grpc_streams_per_connection},
        {mobile.libgrpc.get()}, **metrics);
    if (!server.ok()) {
      log.Error("gRPC server failed", {{"status", server.status()}});
      return 1;
    }
    mobile.server = *std::move(server);
  }
  HttpServer http(config->http, client_router.get(), admin_router.get(), &ws_sessions, &gate,
                  &gateway_metrics);
  if (absl::Status s = http.Start(); !s.ok()) {
    log.Error("HTTP server failed", {{"status", s}});
    return 1;
  }
  std::string key_ids;
  for (const auto& [kid, pub] : config->verify_keys.by_key_id) {
    absl::StrAppend(&key_ids, key_ids.empty() ? "" : ",", kid);
  }
  log.Info("serving", {{"grpc_address", config->listen_address},
                       {"grpc_port", mobile.port()},
                       {"grpc_front", config->grpc_own_h2 ? "h2" : "libgrpc"},
                       {"http_address", config->http_address},
                       {"http_port", http.port()},
                       {"metrics_address", config->metrics_address},
                       {"metrics_port", (*metrics)->port()},
                       {"lobby_address", config->lobby_address},
                       {"moderation_address", config->moderation_address},
                       {"web_root", config->http.web_root},
                       {"verify_key_ids", key_ids}});
  const int signo = signal.Wait();
  log.Info("shutting down", {{"signal", signo}});
  const absl::Time start = absl::Now();
  http.Drain();  // WebSockets: 1001 at once
  // Play streams would otherwise run on through the drain; UNAVAILABLE tells a mobile client
  // to dial again (another gateway, or this one restarted) and resume by seq at once.
  mobile.EndPlayStreams(absl::UnavailableError("gateway shutting down: dial again"));
  mobile.Shutdown(start + kDrain);
  http.Stop();
  // Unary calls still waiting on the lobby or moderation end now, before the fronts whose
  // connections their callbacks hold go (live_calls.h); the table dialer's streams end in its
  // destructor, before the metrics their channels record to.
  const int unary_cut = client_router->CancelAndWait(kUpstreamFinishWait) +
                        admin_router->CancelAndWait(kUpstreamFinishWait);
  log.Info("stopped", {{"shutdown_ms", absl::ToInt64Milliseconds(absl::Now() - start)},
                       {"cancelled_at_drain_end", mobile.running_at_drain_end()},
                       {"unary_calls_not_ended", unary_cut}});
  return 0;
}

}  // namespace
}  // namespace courtpiece::gateway

int main() { return courtpiece::gateway::Run(); }
