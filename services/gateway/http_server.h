// The web front of the gateway: one HTTP/1.1 listener (Boost.Beast) serving
//   POST /v1/<Method>        the client API in JSON (UnaryRouter `client`)
//   POST /admin/v1/<Method>  the admin API in JSON (UnaryRouter `admin`; admin role only)
//   POST /v1/voice           a voice note's recording as the raw body -> UploadNote (JSON reply)
//   GET  /v1/voice/<note_id> a note's audio, raw, with its Content-Type <- GetNote
//   GET  /v1/play            the WebSocket Play front (ws_session.h)
//   GET  /healthz            200 "ok"
//   GET/HEAD anything else   static files of the web client from `web_root`; /t/<6 digits>
//                            is the web root's index.html (the SPA reads the code).
// Limits, status mapping, caching and security headers: docs/gateway.md "HTTP and WebSocket
// front".
//
// Contract: Start binds and listens (port 0: any; port() then reports it) and runs the
// io_context on `threads` threads; it answers the bind error otherwise. Drain stops
// accepting and closes every WebSocket with 1001 (after what is queued for it); HTTP
// connections are answered with `Connection: close` from then on. Stop (and the destructor)
// stop the threads; sessions still open are dropped (each Play connection gets its
// OnClientGone). The routers, the play service, the gate and the metrics must outlive the
// server.
// Thread-safety: Start, Drain, Stop from one controlling thread.
#ifndef COURTPIECE_SERVICES_GATEWAY_HTTP_SERVER_H_
#define COURTPIECE_SERVICES_GATEWAY_HTTP_SERVER_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "courtpiece/common/config.h"
#include "services/gateway/conn_limiter.h"
#include "services/gateway/gateway_metrics.h"
#include "services/gateway/play_service.h"
#include "services/gateway/token_gate.h"
#include "services/gateway/unary_router.h"
#include "services/gateway/ws_session.h"

namespace courtpiece::gateway {

struct HttpServerOptions {
  std::string host = "0.0.0.0";
  int port = 0;
  int threads = 2;
  std::string web_root;  // "" or no index.html: a built-in page says the client is not built
  size_t connections_max = 30000;      // COURTPIECE_GATEWAY_CONNECTIONS_MAX
  size_t connections_per_ip_max = 64;  // COURTPIECE_GATEWAY_CONNECTIONS_PER_IP_MAX
  size_t header_max_bytes = 8 * 1024;  // over it: 431 and close
  size_t body_max_bytes = 64 * 1024;   // over it: 413 and close
  // POST /v1/voice only: a recording of at most 512 KiB (docs/moderation.md) and a little.
  size_t voice_body_max_bytes = 528 * 1024;
  absl::Duration request_read_timeout = absl::Seconds(10);  // one whole request
  absl::Duration keep_alive_idle = absl::Seconds(60);       // between requests
  absl::Duration write_timeout = absl::Seconds(30);         // one whole response
  WsOptions ws;
};

// Reads the web front's settings (host, port and threads stay main's business):
//   COURTPIECE_GATEWAY_CONNECTIONS_MAX          30000   (1..1000000)
//   COURTPIECE_GATEWAY_CONNECTIONS_PER_IP_MAX   64      (1..1000000)
//   COURTPIECE_GATEWAY_WEB_ROOT                 ""      (the web client's files)
//   COURTPIECE_GATEWAY_HTTP_READ_TIMEOUT        10s     (100ms..5m) one request
//   COURTPIECE_GATEWAY_HTTP_IDLE_TIMEOUT        60s     (1s..1h) keep-alive idle
//   COURTPIECE_GATEWAY_WS_OPEN_TIMEOUT          10s     (100ms..5m) the first frame
//   COURTPIECE_GATEWAY_WS_IDLE_TIMEOUT          60s     (1s..1h) WebSocket idle (pings at half)
// Bad values are collected in `env` (env.Finish() reports them).
void ReadHttpServerOptions(common::EnvConfig& env, HttpServerOptions* options);

class HttpServer {
 public:
  // Shared with the sessions (they may outlive a Stop by a moment on the io threads).
  struct Shared;

  HttpServer(HttpServerOptions options, UnaryRouter* client_router, UnaryRouter* admin_router,
             PlayService* play, const TokenGate* gate, GatewayMetrics* metrics);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  absl::Status Start();
  int port() const { return port_; }
  void Drain();
  void Stop();

 private:
  void Accept();

  std::shared_ptr<Shared> shared_;
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;
  std::vector<std::thread> threads_;
  int port_ = 0;
  bool stopped_ = false;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_HTTP_SERVER_H_
