#include "services/gateway/http_server.h"

#include <sys/stat.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "courtpiece/client/v1/client.pb.h"
#include "courtpiece/common/absl_compat.h"
#include "services/gateway/json_codec.h"

namespace courtpiece::gateway {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
namespace websocket = boost::beast::websocket;
using tcp = boost::asio::ip::tcp;

struct HttpServer::Shared {
  HttpServerOptions options;
  UnaryRouter* client_router;
  UnaryRouter* admin_router;
  PlayService* play;
  const TokenGate* gate;
  GatewayMetrics* metrics;
  ConnLimiter limiter;
  std::atomic<bool> draining{false};
  std::mutex mu;
  std::list<std::weak_ptr<WsSession>> websockets;  // guarded by mu

  Shared(HttpServerOptions opts, UnaryRouter* client, UnaryRouter* admin, PlayService* p,
         const TokenGate* g, GatewayMetrics* m)
      : options(std::move(opts)),
        client_router(client),
        admin_router(admin),
        play(p),
        gate(g),
        metrics(m),
        limiter(options.connections_max, options.connections_per_ip_max) {}

  void Register(const std::shared_ptr<WsSession>& session) {
    std::lock_guard<std::mutex> lock(mu);
    websockets.remove_if([](const std::weak_ptr<WsSession>& w) { return w.expired(); });
    websockets.push_back(session);
  }
};

namespace {

constexpr std::string_view kKind = "http";
constexpr std::string_view kVoicePath = "/v1/voice";
constexpr char kTableIdHeader[] = "x-courtpiece-table-id";
constexpr char kRoundHeader[] = "x-courtpiece-round";

// A voice upload's Content-Type (parameters such as ";codecs=opus" ignored): audio/* or
// application/octet-stream; absent is taken as application/octet-stream (a Blob without a
// type). The probe behind moderation decides what the bytes really are.
bool IsVoiceContentType(std::string_view type) {
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  while (!type.empty() && type.front() == ' ') type.remove_prefix(1);
  if (type.empty()) return true;
  const absl::string_view t = common::ToAbsl(type);
  if (absl::EqualsIgnoreCase(t, "application/octet-stream")) return true;
  return t.size() > 6 && absl::StartsWithIgnoreCase(t, "audio/");
}

// A note's Content-Type as moderation stored it, when it is a plain audio type; else bytes.
std::string AudioContentType(const std::string& type) {
  const bool plain = absl::StartsWith(type, "audio/") && type.size() <= 64 &&
                     std::all_of(type.begin(), type.end(), [](char c) {
                       return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '/' ||
                              c == '-' || c == '.' || c == '+';
                     });
  return plain ? type : "application/octet-stream";
}
constexpr char kServerName[] = "courtpiece-gateway";

bool IsHtmlExtension(std::string_view ext) { return ext == ".html" || ext == ".htm"; }

std::string_view ContentTypeFor(std::string_view ext) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".htm", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".webp", "image/webp"},
      {".ico", "image/x-icon"},
      {".json", "application/json"},
      {".webmanifest", "application/manifest+json"},
      {".woff2", "font/woff2"},
      {".txt", "text/plain; charset=utf-8"},
      {".wasm", "application/wasm"},
      {".map", "application/json"},
  };
  for (const auto& [e, type] : kTypes) {
    if (e == ext) return type;
  }
  return "application/octet-stream";
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "/a%20b/c.js" -> the relative file path "a b/c.js", or INVALID_ARGUMENT for a bad %XX, a
// NUL, a backslash, or a "." / ".." segment; "" for "/".
absl::StatusOr<std::string> DecodeStaticPath(std::string_view path) {
  if (path.empty() || path.front() != '/') return absl::InvalidArgumentError("bad path");
  std::string decoded;
  decoded.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c == '%') {
      if (i + 2 >= path.size()) {
        return absl::InvalidArgumentError("bad percent escape");
      }
      int hi = HexValue(path[i + 1]);
      int lo = HexValue(path[i + 2]);
      if (hi < 0 || lo < 0) return absl::InvalidArgumentError("bad percent escape");
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    if (c == '\0' || c == '\\') return absl::InvalidArgumentError("bad character in path");
    decoded += c;
  }
  std::string relative;
  for (absl::string_view segment : absl::StrSplit(decoded.substr(1), '/')) {
    if (segment == "." || segment == "..") {
      return absl::InvalidArgumentError("path segments . and .. are not allowed");
    }
    if (segment.empty()) continue;
    if (!relative.empty()) relative += '/';
    relative.append(segment.data(), segment.size());
  }
  return relative;
}

// /t/<6 digits>: an invite link; the SPA reads the code from the path.
bool IsInvitePath(std::string_view path) {
  constexpr std::string_view kPrefix = "/t/";
  if (path.size() != kPrefix.size() + 6 || path.substr(0, kPrefix.size()) != kPrefix) return false;
  return std::all_of(path.begin() + kPrefix.size(), path.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

std::string ContentSecurityPolicy(std::string_view host) {
  // 'self' covers ws:/wss: to the same host in CSP3 browsers; older ones need it spelled
  // out, so the Host is added when it is a plain host[:port].
  std::string connect = "'self'";
  const bool plain_host =
      !host.empty() && host.size() <= 255 && std::all_of(host.begin(), host.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
               c == ':' || c == '[' || c == ']';
      });
  if (plain_host) {
    absl::StrAppend(&connect, " ws://", common::ToAbsl(host), " wss://", common::ToAbsl(host));
  }
  return absl::StrCat(
      "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
      "img-src 'self' data: blob:; media-src 'self' blob:; font-src 'self'; connect-src ",
      connect, "; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'");
}

template <class Body>
void SetHtmlSecurityHeaders(http::response<Body>& response, std::string_view host) {
  response.set("Referrer-Policy", "no-referrer");
  response.set("Content-Security-Policy", ContentSecurityPolicy(host));
  response.set("X-Frame-Options", "DENY");
}

constexpr char kNotBuiltPage[] =
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Court Piece</title>"
    "</head><body><h1>Court Piece</h1><p>The web client is not built: this gateway has no "
    "index.html in its web root (COURTPIECE_GATEWAY_WEB_ROOT).</p></body></html>\n";

bool EtagMatches(std::string_view if_none_match, std::string_view etag) {
  for (absl::string_view item : absl::StrSplit(common::ToAbsl(if_none_match), ',')) {
    std::string_view tag(item.data(), item.size());
    while (!tag.empty() && tag.front() == ' ') tag.remove_prefix(1);
    while (!tag.empty() && tag.back() == ' ') tag.remove_suffix(1);
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == "*" || tag == etag) return true;
  }
  return false;
}

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, std::shared_ptr<HttpServer::Shared> shared, std::string peer,
              std::unique_ptr<ConnLimiter::Ticket> ticket)
      : stream_(std::move(socket)),
        shared_(std::move(shared)),
        options_(shared_->options),
        peer_(std::move(peer)),
        ticket_(std::move(ticket)) {
    shared_->metrics->ConnectionOpened(kKind);
  }
  ~HttpSession() { shared_->metrics->ConnectionClosed(kKind); }

  void Run() { ReadRequest(); }

 private:
  void ReadRequest() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(options_.header_max_bytes));
    // The route's own limit is set once the header is read (OnHeader); until then the
    // largest, so Beast does not refuse a voice upload's Content-Length.
    body_limit_ = std::max(options_.body_max_bytes, options_.voice_body_max_bytes);
    parser_->body_limit(body_limit_);
    if (!first_ && buffer_.size() == 0) {
      // Keep-alive: wait up to the idle time for the next request to start.
      stream_.expires_after(absl::ToChronoNanoseconds(options_.keep_alive_idle));
      stream_.async_read_some(buffer_.prepare(4096),
                              [self = shared_from_this()](beast::error_code ec, size_t n) {
                                if (ec) return self->Shutdown();
                                self->buffer_.commit(n);
                                self->ReadWhole();
                              });
      return;
    }
    ReadWhole();
  }

  void ReadWhole() {
    first_ = false;
    stream_.expires_after(absl::ToChronoNanoseconds(options_.request_read_timeout));
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&HttpSession::OnHeader, shared_from_this()));
  }

  // The header is in: the body limit of the route (a voice upload's, or the JSON one), then
  // the body.
  void OnHeader(beast::error_code ec, size_t bytes) {
    if (ec) return OnRead(ec, bytes);
    const auto& request = parser_->get();
    std::string_view target(request.target().data(), request.target().size());
    const bool voice =
        request.method() == http::verb::post && target.substr(0, target.find('?')) == kVoicePath;
    const size_t limit = voice ? options_.voice_body_max_bytes : options_.body_max_bytes;
    body_limit_ = limit;
    const boost::optional<uint64_t> length = parser_->content_length();
    if (length.has_value() && *length > limit) {
      return OnRead(http::error::body_limit, bytes);
    }
    parser_->body_limit(limit);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&HttpSession::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, size_t /*bytes*/) {
    if (ec == http::error::end_of_stream) return Shutdown();
    if (ec == http::error::body_limit) {
      return SendError(
          413,
          absl::InvalidArgumentError(absl::StrCat("request body over ", body_limit_, " bytes")),
          /*keep_alive=*/false);
    }
    if (ec == http::error::header_limit) {
      return SendError(431,
                       absl::InvalidArgumentError(absl::StrCat(
                           "request header over ", options_.header_max_bytes, " bytes")),
                       /*keep_alive=*/false);
    }
    if (ec && &ec.category() == &http::make_error_code(http::error::bad_target).category()) {
      return SendError(400, absl::InvalidArgumentError(absl::StrCat("bad request: ", ec.message())),
                       /*keep_alive=*/false);
    }
    if (ec) return Shutdown();  // timeout, reset
    HandleRequest();
  }

  void HandleRequest() {
    const auto& request = parser_->get();
    std::string_view target(request.target().data(), request.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    keep_alive_ = request.keep_alive() && !shared_->draining.load();
    const http::verb verb = request.method();
    const bool get_or_head = verb == http::verb::get || verb == http::verb::head;

    if (path == "/healthz") {
      if (!get_or_head) return MethodNotAllowed("GET, HEAD");
      http::response<http::string_body> response{http::status::ok, request.version()};
      response.set(http::field::content_type, "text/plain; charset=utf-8");
      response.set(http::field::cache_control, "no-store");
      response.body() = verb == http::verb::head ? "" : "ok";
      response.prepare_payload();
      if (verb == http::verb::head) response.content_length(2);
      return Send(std::move(response));
    }
    if (path == "/v1/play") {
      if (websocket::is_upgrade(request)) return Upgrade();
      if (!get_or_head) return MethodNotAllowed("GET");
      return SendError(
          426,
          absl::InvalidArgumentError("/v1/play is a WebSocket: send Connection: Upgrade and "
                                     "Upgrade: websocket"),
          keep_alive_);
    }
    constexpr std::string_view kClientPrefix = "/v1/";
    constexpr std::string_view kAdminPrefix = "/admin/v1/";
    if (path == kVoicePath) return VoiceUpload();
    if (path.substr(0, kVoicePath.size() + 1) == absl::StrCat(common::ToAbsl(kVoicePath), "/")) {
      return VoiceGet(path.substr(kVoicePath.size() + 1));
    }
    if (path.substr(0, kClientPrefix.size()) == kClientPrefix) {
      return Unary(shared_->client_router, path.substr(kClientPrefix.size()));
    }
    if (path.substr(0, kAdminPrefix.size()) == kAdminPrefix) {
      return Unary(shared_->admin_router, path.substr(kAdminPrefix.size()));
    }
    if (!get_or_head) return MethodNotAllowed("GET, HEAD");
    return Static(path);
  }

  void MethodNotAllowed(std::string_view allow) {
    const auto& request = parser_->get();
    http::response<http::string_body> response{http::status::method_not_allowed, request.version()};
    response.set(http::field::allow, allow);
    FillError(response, absl::InvalidArgumentError(
                            absl::StrCat("HTTP method ", std::string(request.method_string()),
                                         " not allowed here; use ", common::ToAbsl(allow))));
    Send(std::move(response));
  }

  void FillError(http::response<http::string_body>& response, const absl::Status& status) {
    response.set(http::field::content_type, "application/json");
    response.set(http::field::cache_control, "no-store");
    response.body() = ErrorJson(status);
    response.prepare_payload();
  }

  void SendError(int http_status, const absl::Status& status, bool keep_alive) {
    keep_alive_ = keep_alive;
    http::response<http::string_body> response{static_cast<http::status>(http_status), 11};
    if (parser_.has_value() && parser_->is_header_done()) {
      response.version(parser_->get().version());
    }
    FillError(response, status);
    Send(std::move(response));
  }

  void Unary(UnaryRouter* router, std::string_view name) {
    const auto& request = parser_->get();
    const UnaryMethod* method = router == nullptr ? nullptr : router->Find(name);
    if (method == nullptr) {
      return SendError(404, absl::NotFoundError(absl::StrCat("unknown method ", CutUtf8(name, 64))),
                       keep_alive_);
    }
    if (request.method() != http::verb::post) return MethodNotAllowed("POST");
    auto content_type = request.find(http::field::content_type);
    if (content_type != request.end()) {
      std::string_view type(content_type->value().data(), content_type->value().size());
      type = type.substr(0, type.find(';'));
      while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
      if (!absl::EqualsIgnoreCase(common::ToAbsl(type), "application/json")) {
        return SendError(
            415,
            absl::InvalidArgumentError(absl::StrCat("unsupported content type ", CutUtf8(type, 64),
                                                    "; send application/json")),
            keep_alive_);
      }
    }
    // Who asks comes before what they ask: without a valid token (or, on an admin route, with
    // a player's) the answer is 401 / 403 whatever the body, never the parser's message.
    // The router checks again (the gRPC front's path); the gate remembers verified tokens.
    if (method->needs_token && shared_->gate != nullptr) {
      auto authorization = request.find(http::field::authorization);
      std::string_view value;
      if (authorization != request.end()) {
        value = std::string_view(authorization->value().data(), authorization->value().size());
      }
      absl::StatusOr<auth::Claims> claims =
          shared_->gate->AuthenticateFor(value, method->admin_only);
      if (!claims.ok()) {
        return SendError(HttpStatusFor(claims.status().code()), claims.status(), keep_alive_);
      }
    }
    std::unique_ptr<google::protobuf::Message> message(method->request_prototype->New());
    const std::string& body = request.body();
    absl::Status parsed = ParseJson(body.empty() ? std::string_view("{}") : body, message.get());
    if (!parsed.ok()) return SendError(400, parsed, keep_alive_);
    CallRouter(*router, *method, std::move(message), ReplyAs::kJson);
  }

  enum class ReplyAs { kJson, kAudio };

  // Relays one parsed request: the router checks the token, calls the upstream and answers on
  // any thread; the answer is written on this session's strand.
  void CallRouter(UnaryRouter& router, const UnaryMethod& method,
                  std::unique_ptr<google::protobuf::Message> message, ReplyAs reply_as) {
    const auto& request = parser_->get();
    shared_->metrics->MessageIn(kKind);
    auto authorization = request.find(http::field::authorization);
    context_.authorization =
        authorization == request.end() ? std::string() : std::string(authorization->value());
    context_.peer = peer_;
    context_.deadline = absl::InfiniteFuture();
    stream_.expires_never();  // the router bounds the call by its deadline cap
    router.Call(method, std::move(message), context_,
                [self = shared_from_this(), reply_as](
                    absl::Status status, std::unique_ptr<google::protobuf::Message> reply) {
                  net::post(self->stream_.get_executor(),
                            [self, reply_as, status = std::move(status), reply = std::move(reply)] {
                              self->OnUnaryDone(status, reply.get(), reply_as);
                            });
                });
  }

  // POST /v1/voice: the body is the recording; the table in x-courtpiece-table-id, the round
  // (optional) in x-courtpiece-round -> UploadNote; the reply as for every JSON call.
  void VoiceUpload() {
    auto& request = parser_->get();
    if (request.method() != http::verb::post) return MethodNotAllowed("POST");
    const UnaryMethod* method =
        shared_->client_router == nullptr ? nullptr : shared_->client_router->Find("UploadNote");
    if (method == nullptr ||
        method->request_prototype->GetDescriptor() != client::v1::UploadNoteRequest::descriptor()) {
      return SendError(404, absl::NotFoundError("voice notes are not served here"), keep_alive_);
    }
    std::string_view type;
    if (auto it = request.find(http::field::content_type); it != request.end()) {
      type = std::string_view(it->value().data(), it->value().size());
    }
    if (!IsVoiceContentType(type)) {
      return SendError(415,
                       absl::InvalidArgumentError(absl::StrCat(
                           "unsupported content type ", CutUtf8(type, 64),
                           "; send the recording as audio/webm, audio/ogg, audio/mp4, audio/* "
                           "or application/octet-stream")),
                       keep_alive_);
    }
    auto table = request.find(kTableIdHeader);
    if (table == request.end() || table->value().empty()) {
      return SendError(400,
                       absl::InvalidArgumentError(
                           "bad_request: header x-courtpiece-table-id is required (the table "
                           "the note is for)"),
                       keep_alive_);
    }
    auto upload = std::make_unique<client::v1::UploadNoteRequest>();
    upload->set_table_id(std::string(table->value()));
    if (auto round = request.find(kRoundHeader); round != request.end()) {
      uint64_t value = 0;
      if (!absl::SimpleAtoi(
              common::ToAbsl(std::string_view(round->value().data(), round->value().size())),
              &value)) {
        return SendError(400,
                         absl::InvalidArgumentError(
                             "bad_request: header x-courtpiece-round must be an unsigned integer"),
                         keep_alive_);
      }
      upload->set_round(value);
    }
    upload->set_audio(std::move(request.body()));
    CallRouter(*shared_->client_router, *method, std::move(upload), ReplyAs::kJson);
  }

  // GET /v1/voice/<note_id>: the note's audio, raw, for a player at its table (GetNote).
  void VoiceGet(std::string_view note_id) {
    const auto& request = parser_->get();
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      return MethodNotAllowed("GET, HEAD");
    }
    const UnaryMethod* method =
        shared_->client_router == nullptr ? nullptr : shared_->client_router->Find("GetNote");
    if (method == nullptr ||
        method->request_prototype->GetDescriptor() != client::v1::GetNoteRequest::descriptor()) {
      return SendError(404, absl::NotFoundError("voice notes are not served here"), keep_alive_);
    }
    const bool plain_id =
        !note_id.empty() && note_id.size() <= 128 &&
        std::all_of(note_id.begin(), note_id.end(), [](char c) {
          return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
        });
    if (!plain_id) {
      return SendError(400, absl::InvalidArgumentError("bad_request: malformed note id"),
                       keep_alive_);
    }
    auto get = std::make_unique<client::v1::GetNoteRequest>();
    get->set_note_id(std::string(note_id));
    CallRouter(*shared_->client_router, *method, std::move(get), ReplyAs::kAudio);
  }

  void OnUnaryDone(const absl::Status& status, const google::protobuf::Message* reply,
                   ReplyAs reply_as) {
    shared_->metrics->MessageOut(kKind);
    if (!status.ok() || reply == nullptr) {
      absl::Status error =
          status.ok() ? absl::InternalError("the router answered no response") : status;
      return SendError(HttpStatusFor(error.code()), error, keep_alive_);
    }
    if (reply_as == ReplyAs::kAudio) return SendAudio(*reply);
    http::response<http::string_body> response{http::status::ok, parser_->get().version()};
    response.set(http::field::content_type, "application/json");
    response.set(http::field::cache_control, "no-store");
    response.body() = PrintJson(*reply);
    response.prepare_payload();
    Send(std::move(response));
  }

  void SendAudio(const google::protobuf::Message& reply) {
    const auto* note = dynamic_cast<const client::v1::GetNoteResponse*>(&reply);
    if (note == nullptr) {
      return SendError(500, absl::InternalError("GetNote answered the wrong type"), keep_alive_);
    }
    const bool head = parser_->get().method() == http::verb::head;
    http::response<http::string_body> response{http::status::ok, parser_->get().version()};
    response.set(http::field::content_type, AudioContentType(note->content_type()));
    response.set(http::field::cache_control, "private, max-age=3600");
    response.body() = note->audio();
    response.prepare_payload();
    if (head) response.body().clear();
    Send(std::move(response));
  }

  void Upgrade() {
    const auto& request = parser_->get();
    if (shared_->draining.load()) {
      return SendError(503, absl::UnavailableError("server going away"), false);
    }
    std::string player_id;
    auto authorization = request.find(http::field::authorization);
    if (authorization != request.end()) {
      std::string_view value(authorization->value().data(), authorization->value().size());
      absl::StatusOr<auth::Claims> claims = shared_->gate->Authenticate(value);
      if (!claims.ok()) {
        return SendError(HttpStatusFor(claims.status().code()), claims.status(), false);
      }
      player_id = claims->player_id;
    }
    stream_.expires_never();
    auto session = std::make_shared<WsSession>(stream_.release_socket(), peer_,
                                               std::move(player_id), options_.ws, shared_->play,
                                               shared_->gate, shared_->metrics, std::move(ticket_));
    shared_->Register(session);
    session->Run(parser_->release());
  }

  void Static(std::string_view path) {
    const auto& request = parser_->get();
    const bool head = request.method() == http::verb::head;
    std::string host;
    if (auto it = request.find(http::field::host); it != request.end()) {
      host = std::string(it->value());
    }
    absl::StatusOr<std::string> relative = DecodeStaticPath(path);
    if (!relative.ok()) return SendError(400, relative.status(), keep_alive_);
    const bool index = relative->empty() || IsInvitePath(path);
    if (index) *relative = "index.html";

    std::error_code fs_ec;
    std::filesystem::path file;
    bool found = false;
    if (!options_.web_root.empty()) {
      const std::filesystem::path root = std::filesystem::canonical(options_.web_root, fs_ec);
      if (!fs_ec) {
        file = std::filesystem::canonical(root / *relative, fs_ec);
        // Never outside the root, symbolic links included.
        const std::string root_text = root.string() + "/";
        found = !fs_ec && absl::StartsWith(file.string(), root_text) &&
                std::filesystem::is_regular_file(file, fs_ec) && !fs_ec;
      }
    }
    if (!found) {
      if (index) return NotBuiltPage(head, host);
      return SendError(404, absl::NotFoundError("no such file"), keep_alive_);
    }

    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
      return SendError(404, absl::NotFoundError("no such file"), keep_alive_);
    }
    const std::string ext = file.extension().string();
    const std::string etag =
        absl::StrCat("\"", absl::Hex(st.st_size), "-",
                     absl::Hex(static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ULL +
                               static_cast<uint64_t>(st.st_mtim.tv_nsec)),
                     "\"");
    const bool immutable = path.substr(0, 8) == "/assets/" && !IsHtmlExtension(ext) && !index;
    auto set_headers = [&](auto& response) {
      response.set(http::field::content_type, ContentTypeFor(ext));
      response.set(http::field::etag, etag);
      response.set(http::field::cache_control,
                   immutable ? "public, max-age=31536000, immutable" : "no-cache");
      if (IsHtmlExtension(ext)) SetHtmlSecurityHeaders(response, host);
    };
    if (auto inm = request.find(http::field::if_none_match);
        inm != request.end() &&
        EtagMatches(std::string_view(inm->value().data(), inm->value().size()), etag)) {
      http::response<http::empty_body> response{http::status::not_modified, request.version()};
      set_headers(response);
      return Send(std::move(response));
    }
    if (head) {
      http::response<http::empty_body> response{http::status::ok, request.version()};
      set_headers(response);
      response.content_length(static_cast<uint64_t>(st.st_size));
      return Send(std::move(response));
    }
    beast::error_code ec;
    http::file_body::value_type body;
    body.open(file.c_str(), beast::file_mode::scan, ec);
    if (ec) return SendError(404, absl::NotFoundError("no such file"), keep_alive_);
    http::response<http::file_body> response{std::piecewise_construct,
                                             std::make_tuple(std::move(body)),
                                             std::make_tuple(http::status::ok, request.version())};
    set_headers(response);
    response.prepare_payload();
    Send(std::move(response));
  }

  void NotBuiltPage(bool head, std::string_view host) {
    http::response<http::string_body> response{http::status::ok, parser_->get().version()};
    response.set(http::field::content_type, "text/html; charset=utf-8");
    response.set(http::field::cache_control, "no-cache");
    SetHtmlSecurityHeaders(response, host);
    response.body() = kNotBuiltPage;
    response.prepare_payload();
    if (head) response.body().clear();
    Send(std::move(response));
  }

  template <class Body>
  void Send(http::response<Body>&& response) {
    response.set(http::field::server, kServerName);
    response.set("X-Content-Type-Options", "nosniff");
    response.keep_alive(keep_alive_);
    auto owned = std::make_shared<http::response<Body>>(std::move(response));
    response_ = owned;
    stream_.expires_after(absl::ToChronoNanoseconds(options_.write_timeout));
    http::async_write(
        stream_, *owned,
        [self = shared_from_this(), close = owned->need_eof()](beast::error_code ec, size_t) {
          self->response_.reset();
          if (ec) return self->Shutdown();
          if (close) return self->Linger();
          self->ReadRequest();
        });
  }

  // After the last response: stop sending, then read and drop what the client still sends
  // (a body we refused) for a moment, so the close does not reset the connection before
  // the client read the response.
  void Linger() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    lingered_ = 0;
    stream_.expires_after(std::chrono::seconds(2));
    LingerRead();
  }
  void LingerRead() {
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(16 * 1024),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->lingered_ += n;
                              if (ec || self->lingered_ > 1024 * 1024) return self->Shutdown();
                              self->buffer_.commit(n);
                              self->LingerRead();
                            });
  }

  void Shutdown() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  std::shared_ptr<HttpServer::Shared> shared_;
  const HttpServerOptions& options_;
  const std::string peer_;
  std::unique_ptr<ConnLimiter::Ticket> ticket_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<void> response_;
  UnaryContext context_;
  size_t body_limit_ = 0;  // the current request's (413's message)
  bool first_ = true;
  bool keep_alive_ = false;
  size_t lingered_ = 0;
};

}  // namespace

void ReadHttpServerOptions(common::EnvConfig& env, HttpServerOptions* options) {
  options->connections_max =
      static_cast<size_t>(env.Int("COURTPIECE_GATEWAY_CONNECTIONS_MAX", 30000, 1, 1000000));
  options->connections_per_ip_max =
      static_cast<size_t>(env.Int("COURTPIECE_GATEWAY_CONNECTIONS_PER_IP_MAX", 64, 1, 1000000));
  options->web_root = env.String("COURTPIECE_GATEWAY_WEB_ROOT", "");
  options->request_read_timeout =
      env.Duration("COURTPIECE_GATEWAY_HTTP_READ_TIMEOUT", absl::Seconds(10),
                   absl::Milliseconds(100), absl::Minutes(5));
  options->keep_alive_idle = env.Duration("COURTPIECE_GATEWAY_HTTP_IDLE_TIMEOUT", absl::Seconds(60),
                                          absl::Seconds(1), absl::Hours(1));
  options->ws.open_timeout = env.Duration("COURTPIECE_GATEWAY_WS_OPEN_TIMEOUT", absl::Seconds(10),
                                          absl::Milliseconds(100), absl::Minutes(5));
  options->ws.idle_timeout = env.Duration("COURTPIECE_GATEWAY_WS_IDLE_TIMEOUT", absl::Seconds(60),
                                          absl::Seconds(1), absl::Hours(1));
}

HttpServer::HttpServer(HttpServerOptions options, UnaryRouter* client_router,
                       UnaryRouter* admin_router, PlayService* play, const TokenGate* gate,
                       GatewayMetrics* metrics)
    : shared_(std::make_shared<Shared>(std::move(options), client_router, admin_router, play, gate,
                                       metrics)),
      ioc_(std::max(1, shared_->options.threads)),
      acceptor_(net::make_strand(ioc_)),
      accept_retry_(acceptor_.get_executor()) {}

HttpServer::~HttpServer() { Stop(); }

absl::Status HttpServer::Start() {
  const HttpServerOptions& options = shared_->options;
  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(options.host, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("bad host ", options.host));
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(options.port));
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("http listen on ", options.host, ":", options.port, ": ", ec.message()));
  }
  port_ = acceptor_.local_endpoint().port();
  Accept();
  for (int i = 0; i < std::max(1, options.threads); ++i) {
    threads_.emplace_back([this] { ioc_.run(); });
  }
  return absl::OkStatus();
}

void HttpServer::Accept() {
  acceptor_.async_accept(net::make_strand(ioc_), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // EMFILE and friends: try again shortly rather than spin.
      accept_retry_.expires_after(std::chrono::milliseconds(50));
      accept_retry_.async_wait([this](beast::error_code timer_ec) {
        if (!timer_ec) Accept();
      });
      return;
    }
    beast::error_code endpoint_ec;
    const tcp::endpoint remote = socket.remote_endpoint(endpoint_ec);
    const std::string ip = endpoint_ec ? std::string("?") : remote.address().to_string();
    std::string reason;
    std::unique_ptr<ConnLimiter::Ticket> ticket = shared_->limiter.TryAcquire(ip, &reason);
    if (ticket == nullptr) {
      shared_->metrics->ConnectionRefused(reason);
      socket.close(endpoint_ec);
    } else {
      socket.set_option(tcp::no_delay(true), endpoint_ec);
      std::make_shared<HttpSession>(std::move(socket), shared_,
                                    endpoint_ec ? ip : absl::StrCat(ip, ":", remote.port()),
                                    std::move(ticket))
          ->Run();
    }
    Accept();
  });
}

void HttpServer::Drain() {
  shared_->draining.store(true);
  net::post(acceptor_.get_executor(), [this] {
    beast::error_code ec;
    acceptor_.close(ec);
    accept_retry_.cancel();
  });
  std::list<std::weak_ptr<WsSession>> sessions;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    sessions = shared_->websockets;
  }
  for (const auto& weak : sessions) {
    if (auto session = weak.lock()) session->Drain();
  }
}

void HttpServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  ioc_.stop();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

}  // namespace courtpiece::gateway
