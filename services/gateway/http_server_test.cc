// The web front over real loopback sockets (port 0) with a fake UnaryRouter and a fake
// PlayService; the client side is Beast's synchronous client.
#include "services/gateway/http_server.h"

#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "courtpiece/auth/keys.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/client/v1/client.pb.h"
#include "courtpiece/common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/gateway/json_codec.h"
#include "services/gateway/token_gate.h"

namespace courtpiece::gateway {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
namespace websocket = boost::beast::websocket;
using tcp = boost::asio::ip::tcp;
using ::testing::HasSubstr;

constexpr auto kWait = std::chrono::seconds(10);

// --- fakes ---------------------------------------------------------------------------------

class CountingMetrics final : public GatewayMetrics {
 public:
  int Get(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = counts_.find(key);
    return it == counts_.end() ? 0 : it->second;
  }
  void ConnectionOpened(std::string_view kind) override { Add("opened:", kind); }
  void ConnectionClosed(std::string_view kind) override { Add("closed:", kind); }
  void ConnectionRefused(std::string_view reason) override { Add("refused:", reason); }
  void MessageIn(std::string_view kind) override { Add("in:", kind); }
  void MessageOut(std::string_view kind) override { Add("out:", kind); }
  void SendQueueDrop(std::string_view kind) override { Add("drop:", kind); }
  void RateLimited(std::string_view kind) override { Add("rate:", kind); }
  void UpstreamCall(std::string_view, int, double) override {}
  void Reconnect(std::string_view) override {}

 private:
  void Add(const char* prefix, std::string_view what) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_[std::string(prefix) + std::string(what)];
  }
  mutable std::mutex mu_;
  std::map<std::string, int> counts_;
};

// Client methods: GuestLogin (no token; echoes the device secret as the player id),
// GetProfile (token; the caller's id), UpdateProfile (token; fails with the code named by
// display_name, "aborted" -> ABORTED). Admin: GetPlayer (admin role).
class FakeRouter final : public UnaryRouter {
 public:
  FakeRouter(const TokenGate& gate, bool admin) : gate_(gate) {
    if (admin) {
      methods_.push_back({"GetPlayer", &client::v1::GetStatsRequest::default_instance(),
                          &client::v1::StatsResponse::default_instance(),
                          "/courtpiece.lobby.v1.LobbyAdmin/GetPlayer", true, true});
    } else {
      methods_.push_back({"GuestLogin", &client::v1::GuestLoginRequest::default_instance(),
                          &client::v1::Session::default_instance(),
                          "/courtpiece.lobby.v1.Accounts/GuestLogin", false, false});
      methods_.push_back({"GetProfile", &client::v1::GetProfileRequest::default_instance(),
                          &client::v1::Profile::default_instance(),
                          "/courtpiece.lobby.v1.Accounts/GetProfile", true, false});
      methods_.push_back({"UpdateProfile", &client::v1::UpdateProfileRequest::default_instance(),
                          &client::v1::Profile::default_instance(),
                          "/courtpiece.lobby.v1.Accounts/UpdateProfile", true, false});
    }
  }
  const UnaryMethod* Find(std::string_view name) const override {
    for (const UnaryMethod& method : methods_) {
      if (method.name == name) return &method;
    }
    return nullptr;
  }
  void Call(const UnaryMethod& method, std::unique_ptr<google::protobuf::Message> request,
            const UnaryContext& ctx, UnaryDone done) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++calls_;
      last_authorization_ = ctx.authorization;
    }
    absl::StatusOr<auth::Claims> claims = auth::Claims{};
    if (method.needs_token) claims = gate_.AuthenticateFor(ctx.authorization, method.admin_only);
    if (!claims.ok()) return done(claims.status(), nullptr);
    if (method.name == "GuestLogin") {
      auto session = std::make_unique<client::v1::Session>();
      session->set_player_id(static_cast<client::v1::GuestLoginRequest&>(*request).device_secret());
      session->set_access_expires_at_ms(1700000000000);
      return done(absl::OkStatus(), std::move(session));
    }
    if (method.name == "UpdateProfile") {
      const auto& update = static_cast<client::v1::UpdateProfileRequest&>(*request);
      if (update.display_name() == "aborted") return done(absl::AbortedError("raced"), nullptr);
      if (update.display_name() == "late") {
        return done(absl::DeadlineExceededError("slow lobby"), nullptr);
      }
    }
    if (method.name == "GetPlayer") {
      auto stats = std::make_unique<client::v1::StatsResponse>();
      stats->set_player_id("admin-view");
      return done(absl::OkStatus(), std::move(stats));
    }
    // Answer from another thread, as the real router does.
    std::thread([done = std::move(done), player = claims->player_id] {
      auto profile = std::make_unique<client::v1::Profile>();
      profile->set_player_id(player);
      profile->set_coins(1000);
      done(absl::OkStatus(), std::move(profile));
    }).detach();
  }
  int calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  std::string last_authorization() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_authorization_;
  }

 private:
  const TokenGate& gate_;
  std::vector<UnaryMethod> methods_;
  mutable std::mutex mu_;
  int calls_ = 0;
  std::string last_authorization_;
};

// Commands by type: "echo" -> result{command_id}; "flood" -> 1000 events at once;
// "finish" -> an event, then Finish(NOT_FOUND "no such table"); "finish_ok" -> an event,
// then Finish(OK).
class FakePlay final : public PlayService {
 public:
  class Connection final : public PlayConnection {
   public:
    Connection(FakePlay* play, std::shared_ptr<ClientSink> sink)
        : play_(play), sink_(std::move(sink)) {}
    void OnClientMessage(client::v1::PlayRequest message) override {
      play_->Record(message);
      client::v1::PlayResponse response;
      if (message.has_open()) {
        response.mutable_opened()->set_seat(2);
        response.mutable_opened()->mutable_table()->set_table_id(message.open().table_id());
        sink_->Send(response);
        return;
      }
      const std::string& type = message.command().type();
      if (type == "echo") {
        response.mutable_result()->set_command_id(message.command().command_id());
        sink_->Send(response);
      } else if (type == "flood") {
        int accepted = 0;
        for (int i = 0; i < 1000; ++i) {
          response.mutable_event()->set_seq(static_cast<uint64_t>(i + 1));
          if (sink_->Send(response)) ++accepted;
        }
        play_->SetFloodAccepted(accepted);
      } else if (type == "finish" || type == "finish_ok") {
        response.mutable_event()->set_seq(7);
        response.mutable_event()->set_type("game_over");
        sink_->Send(response);
        sink_->Finish(type == "finish" ? absl::NotFoundError("no such table") : absl::OkStatus());
        // Ignored after Finish.
        EXPECT_FALSE(sink_->Send(response));
      }
    }
    void OnClientGone() override { play_->Gone(); }

   private:
    FakePlay* play_;
    std::shared_ptr<ClientSink> sink_;
  };

  std::shared_ptr<PlayConnection> Connect(std::string player_id, std::string peer,
                                          std::shared_ptr<ClientSink> sink) override {
    std::lock_guard<std::mutex> lock(mu_);
    players_.push_back(player_id);
    peers_.push_back(peer);
    cv_.notify_all();
    return std::make_shared<Connection>(this, std::move(sink));
  }

  void Record(const client::v1::PlayRequest& message) {
    std::lock_guard<std::mutex> lock(mu_);
    messages_.push_back(message);
    cv_.notify_all();
  }
  void Gone() {
    std::lock_guard<std::mutex> lock(mu_);
    ++gone_;
    cv_.notify_all();
  }
  void SetFloodAccepted(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    flood_accepted_ = n;
  }
  // Waits (bounded) until `gone` connections ended; answers the count then.
  int WaitGone(int gone) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, kWait, [&] { return gone_ >= gone; });
    return gone_;
  }
  std::vector<std::string> players() {
    std::lock_guard<std::mutex> lock(mu_);
    return players_;
  }
  std::vector<client::v1::PlayRequest> messages() {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_;
  }
  int flood_accepted() {
    std::lock_guard<std::mutex> lock(mu_);
    return flood_accepted_;
  }
  int gone() {
    std::lock_guard<std::mutex> lock(mu_);
    return gone_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> players_;
  std::vector<std::string> peers_;
  std::vector<client::v1::PlayRequest> messages_;
  int gone_ = 0;
  int flood_accepted_ = -1;
};

// --- clients -------------------------------------------------------------------------------

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Reply {
  int status = 0;
  std::string body;
  http::response<http::string_body> raw;
  std::string header(const std::string& name) const {
    auto it = raw.find(name);
    return it == raw.end() ? std::string() : std::string(it->value());
  }
};

class HttpClient {
 public:
  explicit HttpClient(int port) : socket_(ioc_) {
    socket_.connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
  }
  Reply Do(http::verb verb, const std::string& target, const std::string& body = "",
           const Headers& headers = {}) {
    http::request<http::string_body> request{verb, target, 11};
    request.set(http::field::host, "127.0.0.1");
    for (const auto& [name, value] : headers) request.set(name, value);
    request.body() = body;
    if (verb == http::verb::post || !body.empty()) request.prepare_payload();
    http::write(socket_, request);
    return ReadReply(verb == http::verb::head);
  }
  Reply ReadReply(bool head = false) {
    Reply reply;
    beast::error_code ec;
    if (head) {
      http::response_parser<http::string_body> parser;
      parser.skip(true);
      http::read(socket_, buffer_, parser, ec);
      reply.raw = parser.release();
    } else {
      http::read(socket_, buffer_, reply.raw, ec);
    }
    if (ec) return reply;  // status 0
    reply.status = static_cast<int>(reply.raw.result_int());
    reply.body = reply.raw.body();
    return reply;
  }
  void WriteRaw(const std::string& bytes) {
    beast::error_code ec;
    net::write(socket_, net::buffer(bytes), ec);
  }
  // True when the server closed the connection (EOF or reset) without sending anything.
  bool ClosedByServer() {
    char byte;
    beast::error_code ec;
    size_t n = socket_.read_some(net::buffer(&byte, 1), ec);
    return n == 0 && (ec == net::error::eof || ec == net::error::connection_reset);
  }

 private:
  net::io_context ioc_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

class WsClient {
 public:
  // Connects and upgrades; the error (with `reply` filled on a refused upgrade) or success.
  beast::error_code Connect(int port, const std::string& authorization = "",
                            http::response<http::string_body>* reply = nullptr) {
    beast::error_code ec;
    beast::get_lowest_layer(ws_).connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)), ec);
    if (ec) return ec;
    ws_.set_option(websocket::stream_base::decorator([authorization](websocket::request_type& r) {
      if (!authorization.empty()) r.set(http::field::authorization, authorization);
    }));
    websocket::response_type response;
    ws_.handshake(response, "127.0.0.1", "/v1/play", ec);
    if (reply != nullptr) {
      reply->result(response.result());
      reply->body() = response.body();
    }
    return ec;
  }
  void SendText(const std::string& text) {
    ws_.text(true);
    beast::error_code ec;
    ws_.write(net::buffer(text), ec);
  }
  void SendBinary(const std::string& bytes) {
    ws_.binary(true);
    beast::error_code ec;
    ws_.write(net::buffer(bytes), ec);
  }
  // The next message, or nullopt when the connection closed (close_code() then tells why).
  std::optional<std::string> Read() {
    beast::flat_buffer buffer;
    beast::error_code ec;
    ws_.read(buffer, ec);
    if (ec) {
      closed_ec_ = ec;
      return std::nullopt;
    }
    return beast::buffers_to_string(buffer.data());
  }
  // Reads until the close; answers the server's close code.
  int ReadUntilClose(int* messages = nullptr) {
    int n = 0;
    while (Read().has_value()) ++n;
    if (messages != nullptr) *messages = n;
    return close_code();
  }
  int close_code() const { return closed_ec_ == websocket::error::closed ? ws_.reason().code : -1; }
  std::string close_reason() const { return std::string(ws_.reason().reason.c_str()); }
  void Close() {
    beast::error_code ec;
    ws_.close(websocket::close_code::normal, ec);
  }

 private:
  net::io_context ioc_;
  websocket::stream<tcp::socket> ws_{ioc_};
  beast::error_code closed_ec_;
};

client::v1::PlayResponse ParseResponse(const std::string& json) {
  client::v1::PlayResponse response;
  EXPECT_TRUE(ParseJson(json, &response).ok()) << json;
  return response;
}

// --- fixture -------------------------------------------------------------------------------

class HttpServerTest : public ::testing::Test {
 protected:
  HttpServerTest()
      : key_(auth::SigningKey::Generate("k1")),
        signer_(key_, clock_),
        verifier_(*auth::VerifyKeys::Parse(key_.PublicText()), clock_),
        gate_(verifier_),
        client_router_(gate_, /*admin=*/false),
        admin_router_(gate_, /*admin=*/true) {
    root_ = std::filesystem::temp_directory_path() /
            ("gw-http-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "web" / "assets");
    Write("web/index.html", "<!doctype html><title>CP</title>");
    Write("web/assets/app.3f2a.js", "console.log(1);");
    Write("web/assets/app.3f2a.css", "body{}");
    Write("web/assets/logo.svg", "<svg/>");
    Write("web/assets/engine.wasm", "\0asm");
    Write("web/manifest.webmanifest", "{}");
    Write("web/a b.txt", "spaced");
    Write("secret.txt", "outside the root");
    std::filesystem::create_symlink(root_ / "secret.txt", root_ / "web" / "leak.txt");
  }
  ~HttpServerTest() override {
    server_.reset();
    std::filesystem::remove_all(root_);
  }

  void Write(const std::string& relative, const std::string& content) {
    std::ofstream(root_ / relative, std::ios::binary) << content;
  }

  HttpServerOptions Options() {
    HttpServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.threads = 2;
    options.web_root = (root_ / "web").string();
    return options;
  }
  void Start(HttpServerOptions options) {
    server_ = std::make_unique<HttpServer>(std::move(options), &client_router_, &admin_router_,
                                           &play_, &gate_, &metrics_);
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_GT(server_->port(), 0);
  }
  void Start() { Start(Options()); }
  int port() const { return server_->port(); }

  std::string PlayerBearer(const std::string& player = "p-1") {
    return "Bearer " + signer_.Sign(player, auth::Role::kPlayer, absl::Minutes(15));
  }
  std::string AdminBearer() {
    return "Bearer " + signer_.Sign("a-1", auth::Role::kAdmin, absl::Minutes(15));
  }
  Reply Post(const std::string& target, const std::string& body, Headers headers = {}) {
    headers.emplace_back("Content-Type", "application/json");
    return HttpClient(port()).Do(http::verb::post, target, body, headers);
  }
  Reply Get(const std::string& target, const Headers& headers = {}) {
    return HttpClient(port()).Do(http::verb::get, target, "", headers);
  }

  FakeClock clock_;
  auth::SigningKey key_;
  auth::TokenSigner signer_;
  auth::TokenVerifier verifier_;
  TokenGate gate_;
  FakeRouter client_router_;
  FakeRouter admin_router_;
  FakePlay play_;
  CountingMetrics metrics_;
  std::filesystem::path root_;
  std::unique_ptr<HttpServer> server_;
};

// --- unary ---------------------------------------------------------------------------------

TEST_F(HttpServerTest, Healthz) {
  Start();
  Reply reply = Get("/healthz");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "ok");
  EXPECT_EQ(HttpClient(port()).Do(http::verb::post, "/healthz").status, 405);
}

TEST_F(HttpServerTest, UnaryWithoutTokenAnswersCanonicalJson) {
  Start();
  Reply reply = Post("/v1/GuestLogin", R"({"deviceSecret":"dev-1","displayName":"Ali"})");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.header("Content-Type"), "application/json");
  EXPECT_EQ(reply.body,
            R"({"playerId":"dev-1","role":"","accessToken":"","accessExpiresAtMs":"1700000000000",)"
            R"("refreshToken":"","refreshExpiresAtMs":"0","created":false})");
}

TEST_F(HttpServerTest, UnaryPassesTheAuthorizationHeaderAndAnswersFromAnotherThread) {
  Start();
  const std::string bearer = PlayerBearer("p-7");
  Reply reply = Post("/v1/GetProfile", "", {{"Authorization", bearer}});  // empty body = {}
  EXPECT_EQ(reply.status, 200);
  client::v1::Profile profile;
  ASSERT_TRUE(ParseJson(reply.body, &profile).ok());
  EXPECT_EQ(profile.player_id(), "p-7");
  EXPECT_EQ(profile.coins(), 1000);
  EXPECT_EQ(client_router_.last_authorization(), bearer);
}

TEST_F(HttpServerTest, UnaryAuthRefusalsAre401) {
  Start();
  Reply missing = Post("/v1/GetProfile", "{}");
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(missing.body, R"({"code":16,"status":"UNAUTHENTICATED","message":"missing token"})");

  std::string forged = PlayerBearer();
  forged[forged.size() - 3] = forged[forged.size() - 3] == 'A' ? 'B' : 'A';
  Reply bad = Post("/v1/GetProfile", "{}", {{"Authorization", forged}});
  EXPECT_EQ(bad.status, 401);
  EXPECT_THAT(bad.body, HasSubstr(R"("code":16,"status":"UNAUTHENTICATED")"));

  const std::string expiring = PlayerBearer();
  clock_.Advance(absl::Hours(1));
  Reply expired = Post("/v1/GetProfile", "{}", {{"Authorization", expiring}});
  EXPECT_EQ(expired.status, 401);
  EXPECT_THAT(expired.body, HasSubstr("expired token"));
}

TEST_F(HttpServerTest, AdminNeedsTheAdminRole) {
  Start();
  Reply admin =
      Post("/admin/v1/GetPlayer", R"({"playerId":"p-1"})", {{"Authorization", AdminBearer()}});
  EXPECT_EQ(admin.status, 200);
  EXPECT_THAT(admin.body, HasSubstr(R"("playerId":"admin-view")"));
  Reply player = Post("/admin/v1/GetPlayer", "{}", {{"Authorization", PlayerBearer()}});
  EXPECT_EQ(player.status, 403);
  EXPECT_EQ(
      player.body,
      R"({"code":7,"status":"PERMISSION_DENIED","message":"not_admin: admin role required"})");
  EXPECT_EQ(Post("/admin/v1/GetPlayer", "{}").status, 401);
  EXPECT_EQ(Post("/admin/v1/GetPlayer", "{}", {{"Authorization", "Bearer nope"}}).status, 401);
  // Who asks is checked before what they ask: a bad body without a valid token is 401 (403
  // for a player's token on an admin route), never the parser's message; nothing relayed.
  const int relayed_before = client_router_.calls() + admin_router_.calls();
  for (const char* body : {"{", R"({"x":1})", R"({"playerId":5})"}) {
    SCOPED_TRACE(body);
    Reply none = Post("/admin/v1/GetPlayer", body);
    EXPECT_EQ(none.status, 401);
    EXPECT_EQ(none.body, R"({"code":16,"status":"UNAUTHENTICATED","message":"missing token"})");
    Reply as_player = Post("/admin/v1/GetPlayer", body, {{"Authorization", PlayerBearer()}});
    EXPECT_EQ(as_player.status, 403);
    EXPECT_EQ(as_player.body, player.body);
    EXPECT_EQ(Post("/v1/GetProfile", body).status, 401);
    // With the right token the body is judged.
    EXPECT_EQ(Post("/admin/v1/GetPlayer", body, {{"Authorization", AdminBearer()}}).status, 400);
  }
  EXPECT_EQ(client_router_.calls() + admin_router_.calls(), relayed_before);
  // Client methods are not admin methods and the other way round.
  EXPECT_EQ(Post("/admin/v1/GuestLogin", "{}").status, 404);
  EXPECT_EQ(Post("/v1/GetPlayer", "{}").status, 404);
}

TEST_F(HttpServerTest, UnaryErrorsMapToHttpStatuses) {
  Start();
  Reply unknown = Post("/v1/Nope", "{}");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.body, R"({"code":5,"status":"NOT_FOUND","message":"unknown method Nope"})");

  Reply get = Get("/v1/GuestLogin");
  EXPECT_EQ(get.status, 405);
  EXPECT_EQ(get.header("Allow"), "POST");

  Reply bad_json = Post("/v1/GuestLogin", "{\"deviceSecret\":");
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_THAT(bad_json.body, HasSubstr(R"("code":3,"status":"INVALID_ARGUMENT")"));
  Reply unknown_field = Post("/v1/GuestLogin", R"({"ownerAddr":"10.0.0.1"})");
  EXPECT_EQ(unknown_field.status, 400);
  EXPECT_THAT(unknown_field.body, HasSubstr("ownerAddr"));
  Reply wrong_type =
      Post("/v1/UpdateProfile", R"({"avatarId":"x"})", {{"Authorization", PlayerBearer()}});
  EXPECT_EQ(wrong_type.status, 400);

  Reply text = HttpClient(port()).Do(http::verb::post, "/v1/GuestLogin", "{}",
                                     {{"Content-Type", "text/plain"}});
  EXPECT_EQ(text.status, 415);
  EXPECT_THAT(text.body, HasSubstr("unsupported content type text/plain"));
  Reply charset = HttpClient(port()).Do(http::verb::post, "/v1/GuestLogin", "{}",
                                        {{"Content-Type", "application/json; charset=utf-8"}});
  EXPECT_EQ(charset.status, 200);

  Reply aborted = Post("/v1/UpdateProfile", R"({"displayName":"aborted"})",
                       {{"Authorization", PlayerBearer()}});
  EXPECT_EQ(aborted.status, 409);
  EXPECT_EQ(aborted.body, R"({"code":10,"status":"ABORTED","message":"raced"})");
  Reply late =
      Post("/v1/UpdateProfile", R"({"displayName":"late"})", {{"Authorization", PlayerBearer()}});
  EXPECT_EQ(late.status, 504);
}

TEST_F(HttpServerTest, BodyOverTheLimitIs413AndHeaderOverTheLimitIs431) {
  Start();
  const std::string big = "{\"deviceSecret\":\"" + std::string(64 * 1024, 'a') + "\"}";
  Reply too_big = Post("/v1/GuestLogin", big);
  EXPECT_EQ(too_big.status, 413);
  EXPECT_THAT(too_big.body, HasSubstr(R"("code":3,"status":"INVALID_ARGUMENT")"));
  // Just under the limit passes the size check.
  const std::string fits = "{\"deviceSecret\":\"" + std::string(64 * 1024 - 20, 'a') + "\"}";
  EXPECT_EQ(Post("/v1/GuestLogin", fits).status, 200);

  Reply big_header = Get("/healthz", {{"X-Junk", std::string(9000, 'j')}});
  EXPECT_EQ(big_header.status, 431);
  EXPECT_EQ(client_router_.calls(), 1);
}

TEST_F(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  Start();
  HttpClient client(port());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(client
                  .Do(http::verb::post, "/v1/GuestLogin", R"({"deviceSecret":"d"})",
                      {{"Content-Type", "application/json"}})
                  .status,
              200);
    EXPECT_EQ(client.Do(http::verb::get, "/healthz").status, 200);
  }
  EXPECT_EQ(metrics_.Get("opened:http"), 1);
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionIsClosed) {
  HttpServerOptions options = Options();
  options.keep_alive_idle = absl::Milliseconds(100);
  Start(options);
  HttpClient client(port());
  EXPECT_EQ(client.Do(http::verb::get, "/healthz").status, 200);
  EXPECT_TRUE(client.ClosedByServer());
}

TEST_F(HttpServerTest, SlowRequestIsCutAtTheReadTimeout) {
  HttpServerOptions options = Options();
  options.request_read_timeout = absl::Milliseconds(100);
  Start(options);
  HttpClient client(port());
  client.WriteRaw("GET /healthz HTTP/1.1\r\nHost: x\r\n");  // never finished
  EXPECT_TRUE(client.ClosedByServer());
}

TEST_F(HttpServerTest, MalformedRequestIs400) {
  Start();
  HttpClient client(port());
  client.WriteRaw("GARBAGE\r\n\r\n");
  EXPECT_EQ(client.ReadReply().status, 400);
}

// --- connection limits -----------------------------------------------------------------------

TEST_F(HttpServerTest, PerIpConnectionLimitClosesTheAcceptAtOnce) {
  HttpServerOptions options = Options();
  options.connections_per_ip_max = 2;
  Start(options);
  HttpClient a(port());
  HttpClient b(port());
  EXPECT_EQ(a.Do(http::verb::get, "/healthz").status, 200);
  EXPECT_EQ(b.Do(http::verb::get, "/healthz").status, 200);
  HttpClient c(port());
  EXPECT_TRUE(c.ClosedByServer());
  EXPECT_EQ(metrics_.Get("refused:per_ip"), 1);
  EXPECT_EQ(metrics_.Get("refused:total"), 0);
}

TEST_F(HttpServerTest, TotalConnectionLimitClosesTheAcceptAtOnce) {
  HttpServerOptions options = Options();
  options.connections_max = 1;
  Start(options);
  {
    HttpClient a(port());
    EXPECT_EQ(a.Do(http::verb::get, "/healthz").status, 200);
    HttpClient b(port());
    EXPECT_TRUE(b.ClosedByServer());
    EXPECT_EQ(metrics_.Get("refused:total"), 1);
  }
  // The slot comes back when the connection ends (the server notices the close first).
  Reply later;
  for (int attempt = 0; attempt < 200 && later.status != 200; ++attempt) {
    later = Get("/healthz");
  }
  EXPECT_EQ(later.status, 200);
}

// --- static files ----------------------------------------------------------------------------

TEST_F(HttpServerTest, IndexWithSecurityHeadersAndNoCache) {
  Start();
  Reply index = Get("/");
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.body, "<!doctype html><title>CP</title>");
  EXPECT_EQ(index.header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(index.header("Cache-Control"), "no-cache");
  EXPECT_EQ(index.header("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(index.header("Referrer-Policy"), "no-referrer");
  EXPECT_THAT(index.header("Content-Security-Policy"),
              HasSubstr("connect-src 'self' ws://127.0.0.1 wss://127.0.0.1;"));
  EXPECT_THAT(index.header("Content-Security-Policy"), HasSubstr("default-src 'self'"));
  EXPECT_FALSE(index.header("ETag").empty());
  EXPECT_EQ(Get("/index.html").body, index.body);
}

TEST_F(HttpServerTest, InviteLinksServeTheIndex) {
  Start();
  Reply invite = Get("/t/123456");
  EXPECT_EQ(invite.status, 200);
  EXPECT_EQ(invite.body, "<!doctype html><title>CP</title>");
  EXPECT_EQ(invite.header("Cache-Control"), "no-cache");
  EXPECT_EQ(Get("/t/12345").status, 404);
  EXPECT_EQ(Get("/t/1234567").status, 404);
  EXPECT_EQ(Get("/t/12345a").status, 404);
}

TEST_F(HttpServerTest, ContentTypesAndCaching) {
  Start();
  Reply js = Get("/assets/app.3f2a.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.body, "console.log(1);");
  EXPECT_EQ(js.header("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js.header("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(js.header("Content-Security-Policy"), "");  // only on HTML
  EXPECT_EQ(Get("/assets/app.3f2a.css").header("Content-Type"), "text/css; charset=utf-8");
  EXPECT_EQ(Get("/assets/logo.svg").header("Content-Type"), "image/svg+xml");
  EXPECT_EQ(Get("/assets/engine.wasm").header("Content-Type"), "application/wasm");
  Reply manifest = Get("/manifest.webmanifest");
  EXPECT_EQ(manifest.header("Content-Type"), "application/manifest+json");
  EXPECT_EQ(manifest.header("Cache-Control"), "no-cache");
  Reply spaced = Get("/a%20b.txt");
  EXPECT_EQ(spaced.status, 200);
  EXPECT_EQ(spaced.body, "spaced");
  EXPECT_EQ(spaced.header("Content-Type"), "text/plain; charset=utf-8");
}

TEST_F(HttpServerTest, EtagAnswers304) {
  Start();
  Reply first = Get("/assets/app.3f2a.js");
  const std::string etag = first.header("ETag");
  ASSERT_FALSE(etag.empty());
  Reply again = Get("/assets/app.3f2a.js", {{"If-None-Match", etag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_EQ(again.body, "");
  EXPECT_EQ(again.header("ETag"), etag);
  EXPECT_EQ(Get("/assets/app.3f2a.js", {{"If-None-Match", "\"other\", " + etag}}).status, 304);
  EXPECT_EQ(Get("/assets/app.3f2a.js", {{"If-None-Match", "\"other\""}}).status, 200);
}

TEST_F(HttpServerTest, HeadHasHeadersButNoBody) {
  Start();
  Reply head = HttpClient(port()).Do(http::verb::head, "/assets/app.3f2a.js");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.header("Content-Length"), "15");
  EXPECT_EQ(head.body, "");
}

TEST_F(HttpServerTest, TraversalAndMissingFiles) {
  Start();
  EXPECT_EQ(Get("/missing.png").status, 404);
  EXPECT_EQ(Get("/assets/").status, 404);  // a directory
  EXPECT_EQ(Get("/../secret.txt").status, 400);
  EXPECT_EQ(Get("/assets/../../secret.txt").status, 400);
  EXPECT_EQ(Get("/%2e%2e/secret.txt").status, 400);
  EXPECT_EQ(Get("/assets/%2E%2E/%2E%2E/secret.txt").status, 400);
  EXPECT_EQ(Get("/..%2fsecret.txt").status, 400);
  EXPECT_EQ(Get("/%5c..%5csecret.txt").status, 400);
  EXPECT_EQ(Get("/index.html%00.png").status, 400);
  EXPECT_EQ(Get("/%zz").status, 400);
  EXPECT_EQ(Get("/%2").status, 400);
  EXPECT_EQ(Get("/leak.txt").status, 404);  // a symbolic link out of the root
  EXPECT_EQ(HttpClient(port()).Do(http::verb::delete_, "/index.html").status, 405);
}

TEST_F(HttpServerTest, WithoutIndexABuiltInPageSaysTheClientIsNotBuilt) {
  HttpServerOptions options = Options();
  options.web_root = (root_ / "nothing-here").string();
  Start(options);
  Reply page = Get("/");
  EXPECT_EQ(page.status, 200);
  EXPECT_THAT(page.body, HasSubstr("The web client is not built"));
  EXPECT_EQ(page.header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(page.header("Referrer-Policy"), "no-referrer");
  EXPECT_EQ(Get("/t/654321").status, 200);
  EXPECT_EQ(Get("/app.js").status, 404);
}

// --- WebSocket -------------------------------------------------------------------------------

TEST_F(HttpServerTest, WebSocketWithTheHeaderTokenRelaysBothWays) {
  Start();
  WsClient ws;
  ASSERT_FALSE(ws.Connect(port(), PlayerBearer("p-9")));
  ws.SendText(R"({"open":{"tableId":"t-1","lastSeq":"5"}})");
  std::optional<std::string> opened = ws.Read();
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(ParseResponse(*opened).opened().seat(), 2);
  EXPECT_EQ(ParseResponse(*opened).opened().table().table_id(), "t-1");
  ws.SendText(R"({"command":{"commandId":"17","type":"echo"}})");
  std::optional<std::string> result = ws.Read();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(ParseResponse(*result).result().command_id(), 17u);
  EXPECT_EQ(play_.players(), std::vector<std::string>{"p-9"});
  ASSERT_EQ(play_.messages().size(), 2u);
  EXPECT_EQ(play_.messages()[0].open().last_seq(), 5u);
  ws.Close();
  EXPECT_EQ(play_.WaitGone(1), 1);
}

TEST_F(HttpServerTest, WebSocketTokenInTheOpenMessageIsUsedAndCleared) {
  Start();
  WsClient ws;
  ASSERT_FALSE(ws.Connect(port()));
  const std::string token = signer_.Sign("p-3", auth::Role::kPlayer, absl::Minutes(15));
  ws.SendText(R"({"open":{"tableId":"t-1","accessToken":")" + token + "\"}}");
  ASSERT_TRUE(ws.Read().has_value());
  EXPECT_EQ(play_.players(), std::vector<std::string>{"p-3"});
  ASSERT_EQ(play_.messages().size(), 1u);
  EXPECT_EQ(play_.messages()[0].open().access_token(), "");
}

TEST_F(HttpServerTest, WebSocketAuthRefusals) {
  Start();
  {
    WsClient ws;  // no token at all
    ASSERT_FALSE(ws.Connect(port()));
    ws.SendText(R"({"open":{"tableId":"t-1"}})");
    EXPECT_EQ(ws.ReadUntilClose(), 4016);
    EXPECT_EQ(ws.close_reason(), "missing token");
  }
  {
    WsClient ws;  // expired
    const std::string token = signer_.Sign("p-3", auth::Role::kPlayer, absl::Minutes(1));
    clock_.Advance(absl::Minutes(5));
    ASSERT_FALSE(ws.Connect(port()));
    ws.SendText(R"({"open":{"tableId":"t-1","accessToken":")" + token + "\"}}");
    EXPECT_EQ(ws.ReadUntilClose(), 4016);
    EXPECT_THAT(ws.close_reason(), HasSubstr("expired token"));
  }
  {
    WsClient ws;  // forged, in the header: the upgrade is refused with 401
    http::response<http::string_body> reply;
    EXPECT_TRUE(ws.Connect(port(), "Bearer cp1.forged.token", &reply));
    EXPECT_EQ(reply.result_int(), 401u);
  }
  EXPECT_TRUE(play_.players().empty());
}

TEST_F(HttpServerTest, WebSocketProtocolErrorsClose4003) {
  Start();
  {
    WsClient ws;
    ASSERT_FALSE(ws.Connect(port(), PlayerBearer()));
    ws.SendText(R"({"command":{"type":"echo"}})");
    EXPECT_EQ(ws.ReadUntilClose(), 4003);
    EXPECT_EQ(ws.close_reason(), "the first message must be open");
  }
  {
    WsClient ws;
    ASSERT_FALSE(ws.Connect(port(), PlayerBearer()));
    ws.SendText("{not json");
    EXPECT_EQ(ws.ReadUntilClose(), 4003);
    EXPECT_FALSE(ws.close_reason().empty());
  }
  {
    WsClient ws;
    ASSERT_FALSE(ws.Connect(port(), PlayerBearer()));
    ws.SendBinary(R"({"open":{"tableId":"t-1"}})");
    EXPECT_EQ(ws.ReadUntilClose(), 4003);
    EXPECT_THAT(ws.close_reason(), HasSubstr("binary"));
  }
  {
    WsClient ws;  // bad JSON after a good open
    ASSERT_FALSE(ws.Connect(port(), PlayerBearer()));
    ws.SendText(R"({"open":{"tableId":"t-1"}})");
    ASSERT_TRUE(ws.Read().has_value());
    ws.SendText(R"({"command":{"type":7}})");
    EXPECT_EQ(ws.ReadUntilClose(), 4003);
  }
  EXPECT_EQ(play_.WaitGone(1), 1);  // only the one that got connected
}

TEST_F(HttpServerTest, WebSocketMessageTooBigCloses1009) {
  Start();
  WsClient ws;
  ASSERT_FALSE(ws.Connect(port(), PlayerBearer()));
  ws.SendText(R"({"open":{"tableId":")" + std::string(17 * 1024, 't') + "\"}}");
  EXPECT_EQ(ws.ReadUntilClose(), 1009);
}

TEST_F(HttpServerTest, WebSocketFirstFrameTimeoutCloses4003) {
  HttpServerOptions options = Options();
  options.ws.open_timeout = absl::Milliseconds(150);
  Start(options);
  WsClient ws;
  ASSERT_FALSE(ws.Connect(port(), PlayerBearer()));
  EXPECT_EQ(ws.ReadUntilClose(), 4003);
  EXPECT_EQ(ws.close_reason(), "no open message within 150ms");
}

TEST_F(HttpServerTest, WebSocketSlowReaderCloses4008) {
  Start();
  WsClient ws;
  ASSERT_FALSE(ws.Connect(port(), PlayerBearer()));
  ws.SendText(R"({"open":{"tableId":"t-1"}})");
  ASSERT_TRUE(ws.Read().has_value());
  ws.SendText(R"({"command":{"type":"flood"}})");
  int messages = 0;
  EXPECT_EQ(ws.ReadUntilClose(&messages), 4008);
  EXPECT_EQ(ws.close_reason(), "slow reader: the send queue is full");
  EXPECT_LE(messages, 256);
  EXPECT_EQ(play_.WaitGone(1), 1);
  EXPECT_EQ(play_.flood_accepted(), 256);
  EXPECT_EQ(metrics_.Get("drop:websocket"), 1);
}

TEST_F(HttpServerTest, WebSocketFinishSendsWhatIsQueuedThenTheStatus) {
  Start();
  {
    WsClient ws;
    ASSERT_FALSE(ws.Connect(port(), PlayerBearer()));
    ws.SendText(R"({"open":{"tableId":"t-1"}})");
    ASSERT_TRUE(ws.Read().has_value());
    ws.SendText(R"({"command":{"type":"finish"}})");
    std::optional<std::string> last = ws.Read();
    ASSERT_TRUE(last.has_value());
    EXPECT_EQ(ParseResponse(*last).event().type(), "game_over");
    EXPECT_EQ(ws.ReadUntilClose(), 4005);
    EXPECT_EQ(ws.close_reason(), "no such table");
  }
  {
    WsClient ws;
    ASSERT_FALSE(ws.Connect(port(), PlayerBearer()));
    ws.SendText(R"({"open":{"tableId":"t-1"}})");
    ASSERT_TRUE(ws.Read().has_value());
    ws.SendText(R"({"command":{"type":"finish_ok"}})");
    int messages = 0;
    EXPECT_EQ(ws.ReadUntilClose(&messages), 1000);
    EXPECT_EQ(messages, 1);
  }
  EXPECT_EQ(play_.WaitGone(2), 2);
}

TEST_F(HttpServerTest, DrainClosesWebSocketsWith1001AndRefusesNewUpgrades) {
  Start();
  WsClient ws;
  ASSERT_FALSE(ws.Connect(port(), PlayerBearer()));
  ws.SendText(R"({"open":{"tableId":"t-1"}})");
  ASSERT_TRUE(ws.Read().has_value());
  server_->Drain();
  EXPECT_EQ(ws.ReadUntilClose(), 1001);
  EXPECT_EQ(ws.close_reason(), "server going away");
  EXPECT_EQ(play_.WaitGone(1), 1);
}

TEST_F(HttpServerTest, PlainGetOnThePlayPathIs426) {
  Start();
  EXPECT_EQ(Get("/v1/play").status, 426);
}

TEST_F(HttpServerTest, StoppingTheServerEndsOpenPlayConnections) {
  Start();
  auto ws = std::make_unique<WsClient>();
  ASSERT_FALSE(ws->Connect(port(), PlayerBearer()));
  ws->SendText(R"({"open":{"tableId":"t-1"}})");
  ASSERT_TRUE(ws->Read().has_value());
  server_.reset();
  EXPECT_EQ(play_.gone(), 1);
}

TEST(HttpServerOptionsTest, ReadsTheEnvironment) {
  common::EnvConfig defaults(common::MapEnv({}));
  HttpServerOptions options;
  ReadHttpServerOptions(defaults, &options);
  EXPECT_TRUE(defaults.Finish().ok());
  EXPECT_EQ(options.connections_max, 30000u);
  EXPECT_EQ(options.connections_per_ip_max, 64u);
  EXPECT_EQ(options.web_root, "");
  EXPECT_EQ(options.request_read_timeout, absl::Seconds(10));
  EXPECT_EQ(options.keep_alive_idle, absl::Seconds(60));
  EXPECT_EQ(options.ws.open_timeout, absl::Seconds(10));
  EXPECT_EQ(options.ws.idle_timeout, absl::Seconds(60));
  EXPECT_EQ(options.ws.message_max_bytes, 16u * 1024);
  EXPECT_EQ(options.ws.send_queue_max, 256u);
  EXPECT_EQ(options.header_max_bytes, 8u * 1024);
  EXPECT_EQ(options.body_max_bytes, 64u * 1024);

  common::EnvConfig set(common::MapEnv({{"COURTPIECE_GATEWAY_CONNECTIONS_MAX", "500"},
                                        {"COURTPIECE_GATEWAY_CONNECTIONS_PER_IP_MAX", "8"},
                                        {"COURTPIECE_GATEWAY_WEB_ROOT", "/srv/web"},
                                        {"COURTPIECE_GATEWAY_WS_OPEN_TIMEOUT", "2s"}}));
  ReadHttpServerOptions(set, &options);
  EXPECT_TRUE(set.Finish().ok());
  EXPECT_EQ(options.connections_max, 500u);
  EXPECT_EQ(options.connections_per_ip_max, 8u);
  EXPECT_EQ(options.web_root, "/srv/web");
  EXPECT_EQ(options.ws.open_timeout, absl::Seconds(2));

  common::EnvConfig bad(common::MapEnv({{"COURTPIECE_GATEWAY_CONNECTIONS_PER_IP_MAX", "0"}}));
  ReadHttpServerOptions(bad, &options);
  EXPECT_EQ(bad.Finish().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.Finish().message()),
              HasSubstr("COURTPIECE_GATEWAY_CONNECTIONS_PER_IP_MAX"));
}

}  // namespace
}  // namespace courtpiece::gateway
