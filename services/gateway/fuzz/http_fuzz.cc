// libFuzzer target for the web front: a real HttpServer (fake router and play service behind,
// loopback, port 0), started once; each input is one client connection over a socket pair
// through the kernel. The first byte picks the mode:
//   even: the rest is written as raw HTTP request bytes;
//   odd:  a valid WebSocket upgrade (with a player token) is sent, then the rest is cut into
//         frames [flags+opcode byte][length byte][payload], masked as a client must.
// The client then shuts its side and reads until the server closes. Any crash, sanitizer
// report, or a server that does not close within 5 s (a hang) is a finding. docs/gateway.md.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "courtpiece/auth/keys.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/client/v1/client.pb.h"
#include "courtpiece/common/clock.h"
#include "services/gateway/gateway_metrics.h"
#include "services/gateway/http_server.h"
#include "services/gateway/token_gate.h"
#include "services/gateway/ws_session.h"

namespace courtpiece::gateway {
namespace {

class Router final : public UnaryRouter {
 public:
  explicit Router(const TokenGate& gate) : gate_(gate) {
    methods_.push_back({"GuestLogin", &client::v1::GuestLoginRequest::default_instance(),
                        &client::v1::Session::default_instance(), "", false, false});
    methods_.push_back({"GetProfile", &client::v1::GetProfileRequest::default_instance(),
                        &client::v1::Profile::default_instance(), "", true, false});
    // The voice routes (POST /v1/voice, GET /v1/voice/<id>) relay through these; no token
    // needed here so that the fuzzer's raw requests reach the relay and its answer.
    methods_.push_back({"UploadNote", &client::v1::UploadNoteRequest::default_instance(),
                        &client::v1::UploadNoteResponse::default_instance(), "", false, false});
    methods_.push_back({"GetNote", &client::v1::GetNoteRequest::default_instance(),
                        &client::v1::GetNoteResponse::default_instance(), "", false, false});
  }
  const UnaryMethod* Find(std::string_view name) const override {
    for (const UnaryMethod& method : methods_) {
      if (method.name == name) return &method;
    }
    return nullptr;
  }
  void Call(const UnaryMethod& method, std::unique_ptr<google::protobuf::Message>,
            const UnaryContext& ctx, UnaryDone done) override {
    if (method.needs_token) {
      absl::StatusOr<auth::Claims> claims = gate_.Authenticate(ctx.authorization);
      if (!claims.ok()) return done(claims.status(), nullptr);
    }
    done(absl::OkStatus(),
         std::unique_ptr<google::protobuf::Message>(method.response_prototype->New()));
  }

 private:
  const TokenGate& gate_;
  std::vector<UnaryMethod> methods_;
};

class Play final : public PlayService {
 public:
  class Connection final : public PlayConnection {
   public:
    explicit Connection(std::shared_ptr<ClientSink> sink) : sink_(std::move(sink)) {}
    void OnClientMessage(client::v1::PlayRequest message) override {
      client::v1::PlayResponse response;
      if (message.has_open()) {
        response.mutable_opened()->set_seat(1);
        sink_->Send(response);
        return;
      }
      if (message.command().type() == "finish") {
        sink_->Finish(absl::NotFoundError(message.command().card()));
        return;
      }
      for (int64_t i = 0; i < std::min<int64_t>(message.command().duration_ms(), 400); ++i) {
        response.mutable_event()->set_seq(static_cast<uint64_t>(i));
        sink_->Send(response);
      }
      response.mutable_result()->set_command_id(message.command().command_id());
      sink_->Send(response);
    }
    void OnClientGone() override {}

   private:
    std::shared_ptr<ClientSink> sink_;
  };
  std::shared_ptr<PlayConnection> Connect(std::string, std::string,
                                          std::shared_ptr<ClientSink> sink) override {
    return std::make_shared<Connection>(std::move(sink));
  }
};

// Counts the connections the server has open, so that every input can check that the
// server let go of its connection (its ticket, its session) once the client is gone: a
// session that never ends is a leak of memory and of a connection slot.
class OpenConnections final : public GatewayMetrics {
 public:
  void ConnectionOpened(std::string_view) override { open_.fetch_add(1); }
  void ConnectionClosed(std::string_view) override { open_.fetch_sub(1); }
  void ConnectionRefused(std::string_view) override {}
  void MessageIn(std::string_view) override {}
  void MessageOut(std::string_view) override {}
  void SendQueueDrop(std::string_view) override {}
  void RateLimited(std::string_view) override {}
  void UpstreamCall(std::string_view, int, double) override {}
  void Reconnect(std::string_view) override {}
  int64_t open() const { return open_.load(); }

 private:
  std::atomic<int64_t> open_{0};
};

std::filesystem::path& WebRootToRemove() {
  static std::filesystem::path* path = new std::filesystem::path();
  return *path;
}

struct World {
  RealClock clock;
  auth::SigningKey key = auth::SigningKey::Generate("fz");
  auth::TokenSigner signer{key, clock};
  auth::TokenVerifier verifier{*auth::VerifyKeys::Parse(key.PublicText()), clock};
  TokenGate gate{verifier};
  Router router{gate};
  Router admin{gate};
  Play play;
  OpenConnections metrics;
  std::unique_ptr<HttpServer> server;
  std::string token;
  int port = 0;

  World() {
    const std::filesystem::path root =
        std::filesystem::temp_directory_path() / ("gw-http-fuzz-" + std::to_string(::getpid()));
    WebRootToRemove() = root;
    std::atexit([] {  // the web root goes with the process (the server is never destroyed)
      std::error_code ignored;
      std::filesystem::remove_all(WebRootToRemove(), ignored);
    });
    std::filesystem::create_directories(root / "assets");
    std::ofstream(root / "index.html") << "<!doctype html>";
    std::ofstream(root / "assets" / "a.js") << "1";
    HttpServerOptions options;
    options.host = "127.0.0.1";
    options.threads = 2;
    options.web_root = root.string();
    options.connections_per_ip_max = 1 << 20;
    options.request_read_timeout = absl::Seconds(2);
    options.ws.open_timeout = absl::Seconds(2);
    // A close the timer must end (ws_session.cc) ends in 250 ms, not 2 s: inputs that hit
    // it are common once the fuzzer has found one, and would slow the run tenfold.
    options.ws.close_timeout = absl::Milliseconds(250);
    server = std::make_unique<HttpServer>(options, &router, &admin, &play, &gate, &metrics);
    if (!server->Start().ok()) std::abort();
    port = server->port();
    token = signer.Sign("p-fuzz", auth::Role::kPlayer, absl::Hours(1000));
  }
};

World& TheWorld() {
  static World* world = new World();  // never destroyed: the server outlives every input
  return *world;
}

int Connect(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = -1;
  // A signal (libFuzzer's own timers) may interrupt connect: that connection is left to
  // finish in the background, so it is dropped and a new one made (at most 10 times).
  for (int attempt = 0; fd < 0; ++attempt) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) std::abort();
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) break;
    if (errno != EINTR || attempt >= 10) {
      std::perror("connect");  // the harness's trouble, not the server's: say so
      std::abort();
    }
    ::close(fd);
    fd = -1;
  }
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  return fd;
}

void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return;  // the server closed early: fine
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// Reads until the server closes; a 5 s silence is a hang.
void ReadToEnd(int fd, std::string* out = nullptr, std::string_view stop_after = {}) {
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) return;
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        std::fprintf(stderr, "the server did not close the connection within 5 s\n");
        std::abort();
      }
      return;  // reset
    }
    if (out != nullptr) {
      out->append(buffer, static_cast<size_t>(n));
      if (!stop_after.empty() && out->find(stop_after) != std::string::npos) return;
    }
  }
}

std::string Frames(std::string_view rest) {
  std::string wire;
  while (rest.size() >= 2) {
    const uint8_t head = static_cast<uint8_t>(rest[0]);
    const size_t len = std::min<size_t>(static_cast<uint8_t>(rest[1]), rest.size() - 2);
    const std::string_view payload = rest.substr(2, len);
    rest.remove_prefix(2 + len);
    wire += static_cast<char>(head);
    if (payload.size() < 126) {
      wire += static_cast<char>(0x80 | payload.size());
    } else {
      wire += static_cast<char>(0x80 | 126);
      wire += static_cast<char>(payload.size() >> 8);
      wire += static_cast<char>(payload.size() & 0xff);
    }
    wire.append(4, '\0');  // mask key 0: the payload goes as is
    wire.append(payload);
  }
  return wire;
}

}  // namespace
}  // namespace courtpiece::gateway

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace courtpiece::gateway;
  World& world = TheWorld();
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  int fd = Connect(world.port);
  if ((data[0] & 1) == 0) {
    WriteAll(fd, rest);
    ::shutdown(fd, SHUT_WR);
    ReadToEnd(fd);
  } else {
    // After ~28,000 connections the client's ephemeral ports come round again, and a port
    // whose earlier connection the server closed first (TIME_WAIT on its side) may be reset
    // at once: an empty answer is retried on a new connection, a wrong answer is a fault.
    std::string handshake;
    for (int attempt = 0; attempt < 3 && handshake.empty(); ++attempt) {
      if (attempt > 0) {
        ::close(fd);
        fd = Connect(world.port);
      }
      WriteAll(fd,
               "GET /v1/play HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer " +
                   world.token + "\r\n\r\n");
      ReadToEnd(fd, &handshake, "\r\n\r\n");
    }
    if (handshake.rfind("HTTP/1.1 101", 0) != 0) {
      std::fprintf(stderr, "the upgrade was not accepted: \"%s\"\n", handshake.c_str());
      std::abort();
    }
    WriteAll(fd, Frames(rest));
    ::shutdown(fd, SHUT_WR);
    ReadToEnd(fd);
  }
  // Close with a reset: no TIME_WAIT, so 10^5+ connections do not exhaust the ephemeral
  // ports (connect failed with EADDRNOTAVAIL after about 110,000 inputs).
  const linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  ::close(fd);
  // The server must let go of the connection within a few seconds (its timeouts are 2 s).
  // And the session itself must be gone (a session can release its slot and still be held
  // by an operation that never completes).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(6);
  while ((world.metrics.open() > 0 || WsSession::Live() > 0) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (world.metrics.open() > 0) {
    std::fprintf(stderr, "the server still holds %lld connection(s) after the client left\n",
                 static_cast<long long>(world.metrics.open()));
    std::abort();
  }
  if (WsSession::Live() > 0) {
    std::fprintf(stderr, "%lld WebSocket session(s) still alive after the client left\n",
                 static_cast<long long>(WsSession::Live()));
    std::abort();
  }
  return 0;
}
