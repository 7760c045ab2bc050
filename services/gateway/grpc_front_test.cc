// The mobile fronts on a real server (port 0) with a fake PlayService and a fake router: auth
// refusals, unary relay, Play relay, the slow-reader cut. Every test runs against both: the
// libgrpc one (GrpcFront on common::GrpcServer) and our own HTTP/2 (H2Front), with the same
// gRPC clients: one contract.
#include "services/gateway/grpc_front.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/auth/keys.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/common/freezable_proxy.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/metrics.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "services/gateway/fake_upstream.h"
#include "services/gateway/h2_front.h"
#include "services/gateway/play_session.h"

namespace courtpiece::gateway {
namespace {

namespace cv1 = client::v1;

bool WaitUntil(std::mutex& mu, std::condition_variable& cv, const std::function<bool()>& done) {
  std::unique_lock<std::mutex> lock(mu);
  return cv.wait_for(lock, std::chrono::seconds(10), done);
}

// The relay's side, scripted: records what the front hands it.
class FakePlay final : public PlayService {
 public:
  class Conn final : public PlayConnection {
   public:
    Conn(FakePlay& play, std::shared_ptr<ClientSink> sink) : play_(play), sink_(std::move(sink)) {}
    void OnClientMessage(cv1::PlayRequest message) override {
      if (play_.echo_open && message.has_open()) {  // answers through this connection's sink
        cv1::PlayResponse echo;
        echo.mutable_notice()->set_type(message.open().table_id());
        sink_->Send(echo);
      }
      std::lock_guard<std::mutex> lock(play_.mu);
      play_.messages.push_back(std::move(message));
      play_.cv.notify_all();
    }
    void OnClientGone() override {
      std::lock_guard<std::mutex> lock(play_.mu);
      ++play_.gone;
      play_.cv.notify_all();
    }

   private:
    FakePlay& play_;
    const std::shared_ptr<ClientSink> sink_;
  };

  std::shared_ptr<PlayConnection> Connect(std::string player_id, std::string peer,
                                          std::shared_ptr<ClientSink> s) override {
    std::lock_guard<std::mutex> lock(mu);
    players.push_back(player_id);
    peers.push_back(peer);
    sink = s;
    sinks.push_back(s);
    cv.notify_all();
    return std::make_shared<Conn>(*this, std::move(s));
  }

  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> players, peers;
  std::vector<cv1::PlayRequest> messages;
  std::shared_ptr<ClientSink> sink;                // the last connection's
  std::vector<std::shared_ptr<ClientSink>> sinks;  // every connection's, in Connect order
  int gone = 0;
  bool echo_open = false;  // set before the first stream
};

class FakeRouter final : public UnaryRouter {
 public:
  FakeRouter() {
    methods_["GuestLogin"] =
        UnaryMethod{.name = "GuestLogin",
                    .request_prototype = &cv1::GuestLoginRequest::default_instance(),
                    .response_prototype = &cv1::Session::default_instance(),
                    .upstream = "/x/GuestLogin",
                    .needs_token = false};
    methods_["ResolveCode"] =
        UnaryMethod{.name = "ResolveCode",
                    .request_prototype = &cv1::ResolveCodeRequest::default_instance(),
                    .response_prototype = &cv1::TableRef::default_instance(),
                    .upstream = "/x/ResolveCode"};
    methods_["GetPublicProfiles"] =
        UnaryMethod{.name = "GetPublicProfiles",
                    .request_prototype = &cv1::GetPublicProfilesRequest::default_instance(),
                    .response_prototype = &cv1::GetPublicProfilesResponse::default_instance(),
                    .upstream = "/x/GetPublicProfiles"};
  }
  const UnaryMethod* Find(std::string_view name) const override {
    auto it = methods_.find(std::string(name));
    return it == methods_.end() ? nullptr : &it->second;
  }
  void Call(const UnaryMethod& method, std::unique_ptr<google::protobuf::Message> request,
            const UnaryContext& ctx, UnaryDone done) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      last_ctx = ctx;
      last_request = request->ShortDebugString();
    }
    if (method.name == "ResolveCode") {
      done(absl::NotFoundError("unknown code 000000"), nullptr);
      return;
    }
    if (method.name == "GetPublicProfiles") {
      if (ctx.authorization.empty()) {
        done(absl::UnauthenticatedError("missing token"), nullptr);
        return;
      }
      const auto& req = static_cast<const cv1::GetPublicProfilesRequest&>(*request);
      auto reply = std::make_unique<cv1::GetPublicProfilesResponse>();
      for (const std::string& id : req.player_ids()) {
        cv1::PublicProfile* p = reply->add_profiles();
        p->set_player_id(id);
        p->set_display_name("N-" + id);
        p->set_avatar_id(7);
      }
      done(absl::OkStatus(), std::move(reply));
      return;
    }
    auto session = std::make_unique<cv1::Session>();
    session->set_player_id("p-new");
    session->set_access_token("t");
    done(absl::OkStatus(), std::move(session));
  }

  std::mutex mu;
  UnaryContext last_ctx;
  std::string last_request;

 private:
  std::map<std::string, UnaryMethod> methods_;
};

class CountingMetrics final : public GatewayMetrics {
 public:
  void ConnectionOpened(std::string_view) override { ++opened; }
  void ConnectionClosed(std::string_view) override { ++closed; }
  void ConnectionRefused(std::string_view reason) override {
    std::lock_guard<std::mutex> lock(mu);
    refused.emplace_back(reason);
  }
  void MessageIn(std::string_view) override {}
  void MessageOut(std::string_view) override {}
  void SendQueueDrop(std::string_view) override { ++drops; }
  void RateLimited(std::string_view) override {}
  void UpstreamCall(std::string_view, int, double) override {}
  void Reconnect(std::string_view) override {}
  std::atomic<int> opened{0}, closed{0}, drops{0};
  std::mutex mu;
  std::vector<std::string> refused;  // guarded by mu
};

// A mobile front serving on loopback, whichever it is.
class Front {
 public:
  virtual ~Front() = default;
  virtual int port() const = 0;
  virtual std::string LoopbackAddress() const = 0;
  virtual void Shutdown(absl::Time deadline) = 0;
  virtual void EndPlayStreams(const absl::Status& status) = 0;
  virtual size_t open_play_streams() const = 0;
};

struct FrontDeps {
  UnaryRouter& router;
  PlayService& play;
  const TokenGate& gate;
  GatewayMetrics& metrics;
  common::Metrics& server_metrics;
};

class LibgrpcFront final : public Front {
 public:
  static std::unique_ptr<Front> Start(FrontDeps d, GrpcFrontOptions options, int ping_interval_ms,
                                      int ping_timeout_ms) {
    auto front = std::unique_ptr<LibgrpcFront>(new LibgrpcFront());
    front->front_ = std::make_unique<GrpcFront>(d.router, d.play, d.gate, d.metrics, options);
    auto server =
        common::GrpcServer::Start({.listen_address = "127.0.0.1:0",
                                   .max_receive_message_bytes = options.unary_message_bytes_max,
                                   .enable_reflection = false,
                                   .ping_interval_ms = ping_interval_ms,
                                   .ping_timeout_ms = ping_timeout_ms},
                                  {front->front_.get()}, d.server_metrics);
    EXPECT_TRUE(server.ok()) << server.status();
    if (!server.ok()) return nullptr;
    front->server_ = *std::move(server);
    return front;
  }
  int port() const override { return server_->port(); }
  std::string LoopbackAddress() const override { return server_->LoopbackAddress(); }
  void Shutdown(absl::Time deadline) override { server_->Shutdown(deadline); }
  void EndPlayStreams(const absl::Status& status) override { front_->EndPlayStreams(status); }
  size_t open_play_streams() const override { return front_->open_play_streams(); }

 private:
  std::unique_ptr<GrpcFront> front_;
  std::unique_ptr<common::GrpcServer> server_;
};

class OwnH2Front final : public Front {
 public:
  static std::unique_ptr<Front> Start(FrontDeps d, GrpcFrontOptions options, int ping_interval_ms,
                                      int ping_timeout_ms) {
    H2FrontOptions o{.host = "127.0.0.1", .port = 0, .threads = 2, .grpc = options};
    if (ping_interval_ms > 0) o.ping_interval = absl::Milliseconds(ping_interval_ms);
    if (ping_timeout_ms > 0) o.ping_timeout = absl::Milliseconds(ping_timeout_ms);
    auto front = std::make_unique<OwnH2Front>(
        std::make_unique<H2Front>(o, d.router, d.play, d.gate, d.metrics, d.server_metrics));
    const absl::Status s = front->front_->Start();
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return nullptr;
    return front;
  }
  explicit OwnH2Front(std::unique_ptr<H2Front> front) : front_(std::move(front)) {}
  int port() const override { return front_->port(); }
  std::string LoopbackAddress() const override { return front_->LoopbackAddress(); }
  void Shutdown(absl::Time deadline) override { front_->Shutdown(deadline); }
  void EndPlayStreams(const absl::Status& status) override { front_->EndPlayStreams(status); }
  size_t open_play_streams() const override { return front_->open_play_streams(); }

 private:
  std::unique_ptr<H2Front> front_;
};

std::unique_ptr<Front> StartFront(const std::string& kind, FrontDeps deps,
                                  GrpcFrontOptions options = {}, int ping_interval_ms = 0,
                                  int ping_timeout_ms = 0) {
  if (kind == "h2") return OwnH2Front::Start(deps, options, ping_interval_ms, ping_timeout_ms);
  return LibgrpcFront::Start(deps, options, ping_interval_ms, ping_timeout_ms);
}

class GrpcFrontTest : public ::testing::TestWithParam<std::string> {
 protected:
  void Start(GrpcFrontOptions options = {}, int ping_interval_ms = 0, int ping_timeout_ms = 0) {
    front_ = StartFront(GetParam(), {router_, play_, gate_, metrics_, server_metrics_}, options,
                        ping_interval_ms, ping_timeout_ms);
    ASSERT_NE(front_, nullptr);
    stub_ = cv1::CourtPiece::NewStub(common::CreateGrpcChannel(front_->LoopbackAddress(), nullptr));
  }
  void TearDown() override {
    if (front_ != nullptr) front_->Shutdown(absl::Now() + absl::Seconds(1));
  }
  std::string Bearer() {
    return "Bearer " + signer_.Sign("p1", auth::Role::kPlayer, absl::Minutes(5));
  }

  using Stream = grpc::ClientReaderWriter<cv1::PlayRequest, cv1::PlayResponse>;
  struct Streams {
    std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
    std::vector<std::unique_ptr<Stream>> streams;
  };
  // Opens `n` Play streams with a token, stream i sending open{table_id "t-<i>"}; after_each(i)
  // runs once stream i has sent it.
  Streams OpenStreams(int n, const std::function<void(int)>& after_each = nullptr) {
    Streams out;
    for (int i = 0; i < n; ++i) {
      out.contexts.push_back(std::make_unique<grpc::ClientContext>());
      out.contexts.back()->AddMetadata("authorization", Bearer());
      out.streams.push_back(stub_->Play(out.contexts.back().get()));
      cv1::PlayRequest open;
      open.mutable_open()->set_table_id(absl::StrCat("t-", i));
      EXPECT_TRUE(out.streams.back()->Write(open)) << i;
      if (after_each) after_each(i);
    }
    return out;
  }

  auth::SigningKey key_ = auth::SigningKey::Generate("k1");
  auth::TokenSigner signer_{key_, RealClock::Instance()};
  auth::TokenVerifier verifier_{*auth::VerifyKeys::Parse(key_.PublicText()), RealClock::Instance()};
  TokenGate gate_{verifier_};
  FakeRouter router_;
  FakePlay play_;
  CountingMetrics metrics_;
  common::Metrics server_metrics_{"gatewaytest"};
  std::unique_ptr<Front> front_;
  std::unique_ptr<cv1::CourtPiece::Stub> stub_;
};

INSTANTIATE_TEST_SUITE_P(Fronts, GrpcFrontTest, ::testing::Values("libgrpc", "h2"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

TEST_P(GrpcFrontTest, UnaryCallsGoThroughTheRouterWithMetadataAndDeadline) {
  Start();
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", "Bearer abc");
  common::SetTimeout(ctx, absl::Seconds(3));
  cv1::GuestLoginRequest req;
  req.set_device_secret("s3cret");
  cv1::Session session;
  grpc::Status s = stub_->GuestLogin(&ctx, req, &session);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(session.player_id(), "p-new");
  std::lock_guard<std::mutex> lock(router_.mu);
  EXPECT_EQ(router_.last_ctx.authorization, "Bearer abc");
  EXPECT_EQ(router_.last_request, "device_secret: \"s3cret\"");
  EXPECT_LE(router_.last_ctx.deadline, absl::Now() + absl::Seconds(3) + absl::Milliseconds(50));
  EXPECT_GT(router_.last_ctx.deadline, absl::Now() + absl::Seconds(2));
  EXPECT_NE(router_.last_ctx.peer, "");
}

TEST_P(GrpcFrontTest, UnaryErrorsKeepTheirCodeAndUnknownMethodsAreUnimplemented) {
  Start();
  {
    grpc::ClientContext ctx;
    cv1::ResolveCodeRequest req;
    cv1::TableRef ref;
    grpc::Status s = stub_->ResolveCode(&ctx, req, &ref);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(s.error_message(), "unknown code 000000");
  }
  {
    grpc::ClientContext ctx;
    cv1::MyTablesResponse out;
    grpc::Status s = stub_->MyTables(&ctx, cv1::MyTablesRequest(), &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
    EXPECT_EQ(s.error_message(), "unknown method MyTables");
  }
}

TEST_P(GrpcFrontTest, GetPublicProfilesGoesThroughTheRouter) {
  Start();
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer abc");
    cv1::GetPublicProfilesRequest req;
    req.add_player_ids("p-1");
    req.add_player_ids("p-2");
    cv1::GetPublicProfilesResponse out;
    grpc::Status s = stub_->GetPublicProfiles(&ctx, req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(out.profiles_size(), 2);
    EXPECT_EQ(out.profiles(1).player_id(), "p-2");
    EXPECT_EQ(out.profiles(1).display_name(), "N-p-2");
    EXPECT_EQ(out.profiles(1).avatar_id(), 7);
    std::lock_guard<std::mutex> lock(router_.mu);
    EXPECT_EQ(router_.last_ctx.authorization, "Bearer abc");
    EXPECT_EQ(router_.last_request, "player_ids: \"p-1\" player_ids: \"p-2\"");
  }
  grpc::ClientContext ctx;
  cv1::GetPublicProfilesResponse out;
  grpc::Status s = stub_->GetPublicProfiles(&ctx, cv1::GetPublicProfilesRequest(), &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(s.error_message(), "missing token");
}

TEST_P(GrpcFrontTest, PlayWithoutAValidTokenIsRefusedBeforeConnect) {
  Start();
  for (const std::string& auth :
       {std::string(), std::string("Bearer nope"), std::string("Token abc")}) {
    grpc::ClientContext ctx;
    if (!auth.empty()) ctx.AddMetadata("authorization", auth);
    auto stream = stub_->Play(&ctx);
    cv1::PlayResponse r;
    EXPECT_FALSE(stream->Read(&r));
    grpc::Status s = stream->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << auth;
    if (auth.empty()) {
      EXPECT_EQ(s.error_message(), "missing token");
    }
  }
  std::lock_guard<std::mutex> lock(play_.mu);
  EXPECT_TRUE(play_.players.empty());
}

TEST_P(GrpcFrontTest, PlayRelaysBothWaysAndEndsWithTheRelaysStatus) {
  Start();
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", Bearer());
  auto stream = stub_->Play(&ctx);
  cv1::PlayRequest open;
  open.mutable_open()->set_table_id("t-1");
  open.mutable_open()->set_last_seq(4);
  open.mutable_open()->set_access_token("should-be-cleared");
  ASSERT_TRUE(stream->Write(open));
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.messages.size() == 1; }));
  std::shared_ptr<ClientSink> sink;
  {
    std::lock_guard<std::mutex> lock(play_.mu);
    EXPECT_EQ(play_.players, std::vector<std::string>{"p1"});
    EXPECT_EQ(play_.messages[0].open().table_id(), "t-1");
    EXPECT_EQ(play_.messages[0].open().last_seq(), 4u);
    EXPECT_EQ(play_.messages[0].open().access_token(), "");
    sink = play_.sink;
  }
  cv1::PlayResponse opened;
  opened.mutable_opened()->set_seat(2);
  cv1::PlayResponse event;
  event.mutable_event()->set_seq(5);
  event.mutable_event()->set_type("hand");
  EXPECT_TRUE(sink->Send(opened));
  EXPECT_TRUE(sink->Send(event));
  sink->Finish(absl::AbortedError("another connection of this player took over the table"));
  EXPECT_FALSE(sink->Send(event));
  cv1::PlayResponse r;
  ASSERT_TRUE(stream->Read(&r));
  EXPECT_EQ(r.opened().seat(), 2);
  ASSERT_TRUE(stream->Read(&r));
  EXPECT_EQ(r.event().seq(), 5u);
  EXPECT_FALSE(stream->Read(&r));
  grpc::Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_EQ(s.error_message(), "another connection of this player took over the table");
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.gone == 1; }));
  front_->Shutdown(absl::Now() + absl::Seconds(1));
  EXPECT_EQ(play_.gone, 1);
  EXPECT_EQ(metrics_.opened.load(), 1);
  EXPECT_EQ(metrics_.closed.load(), 1);
}

TEST_P(GrpcFrontTest, ClientCancelTellsTheRelayOnce) {
  Start();
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", Bearer());
  auto stream = stub_->Play(&ctx);
  cv1::PlayRequest open;
  open.mutable_open()->set_table_id("t-1");
  ASSERT_TRUE(stream->Write(open));
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.messages.size() == 1; }));
  ctx.TryCancel();
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.gone == 1; }));
  stream->Finish();
  front_->Shutdown(absl::Now() + absl::Seconds(1));
  EXPECT_EQ(play_.gone, 1);
}

// A Play stream over a limit ends RESOURCE_EXHAUSTED before its token is checked or the relay
// hears of it, and leaves the streams already open alone.
grpc::Status RefusedPlay(cv1::CourtPiece::Stub& stub, const std::string& bearer) {
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", bearer);
  auto stream = stub.Play(&ctx);
  cv1::PlayResponse response;
  EXPECT_FALSE(stream->Read(&response));
  return stream->Finish();
}

TEST_P(GrpcFrontTest, PlayStreamsFromOneAddressAreLimited) {
  GrpcFrontOptions options;
  options.play_streams_per_ip_max = 2;
  Start(options);
  Streams open = OpenStreams(2);
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.messages.size() == 2; }));
  const grpc::Status third = RefusedPlay(*stub_, Bearer());
  EXPECT_EQ(third.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(third.error_message(), "too many connections from your address");
  {
    std::lock_guard<std::mutex> lock(metrics_.mu);
    EXPECT_EQ(metrics_.refused, std::vector<std::string>{"grpc_per_ip"});
  }
  // One of the two ends: its slot is free again.
  open.contexts[0]->TryCancel();
  EXPECT_EQ(open.streams[0]->Finish().error_code(), grpc::StatusCode::CANCELLED);
  for (int i = 0; i < 500 && metrics_.closed.load() < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(metrics_.closed.load(), 1);  // the cancelled one: the refused one never opened
  Streams again = OpenStreams(1);
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.messages.size() == 3; }));
  EXPECT_EQ(metrics_.opened.load(), 3);
  std::lock_guard<std::mutex> lock(play_.mu);
  EXPECT_EQ(play_.players.size(), 3u);  // the refused stream never reached the relay
}

TEST_P(GrpcFrontTest, PlayStreamsInAllAreLimited) {
  GrpcFrontOptions options;
  options.play_streams_max = 1;
  Start(options);
  Streams open = OpenStreams(1);
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.messages.size() == 1; }));
  const grpc::Status second = RefusedPlay(*stub_, "Bearer not-even-checked");
  EXPECT_EQ(second.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(second.error_message(), "the gateway is full: retry later");
  std::lock_guard<std::mutex> lock(metrics_.mu);
  EXPECT_EQ(metrics_.refused, std::vector<std::string>{"grpc_total"});
  EXPECT_EQ(metrics_.opened.load(), 1);
}

TEST(PeerAddressTest, TakesTheAddressOutOfGrpcPeerStrings) {
  EXPECT_EQ(PeerAddress("ipv4:127.0.0.1:50123"), "127.0.0.1");
  EXPECT_EQ(PeerAddress("ipv6:%5B::1%5D:41316"), "::1");  // what gRPC 1.51 gives
  EXPECT_EQ(PeerAddress("ipv6:%5B2001:db8::7%5D:443"), "2001:db8::7");
  EXPECT_EQ(PeerAddress("ipv6:[::1]:50123"), "::1");
  EXPECT_EQ(PeerAddress("ipv6:[::1"), "[::1");  // unterminated: whole, never out of range
  EXPECT_EQ(PeerAddress("ipv4:10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(PeerAddress("ipv4:"), "");
  EXPECT_EQ(PeerAddress("unix:/tmp/socket"), "unix:/tmp/socket");
  EXPECT_EQ(PeerAddress(""), "");
}

// A phone that vanishes without closing (its network gone: frozen behind the proxy) is found
// by the server's pings: its stream ends and the relay hears the client gone, within the
// interval plus the timeout (main: 30 s + 20 s).
TEST_P(GrpcFrontTest, APhoneThatStopsAnsweringIsGoneForTheRelay) {
  Start({}, /*ping_interval_ms=*/200, /*ping_timeout_ms=*/300);
  common::FreezableProxy proxy(front_->port());
  ASSERT_TRUE(proxy.ok());
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto stub = cv1::CourtPiece::NewStub(
      grpc::CreateCustomChannel(proxy.address(), grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", Bearer());
  auto stream = stub->Play(&ctx);
  cv1::PlayRequest open;
  open.mutable_open()->set_table_id("t-1");
  ASSERT_TRUE(stream->Write(open));
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.messages.size() == 1; }));
  const auto frozen_at = std::chrono::steady_clock::now();
  proxy.Freeze();
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.gone == 1; }));
  EXPECT_LT(std::chrono::steady_clock::now() - frozen_at, std::chrono::seconds(5));
  for (int i = 0; i < 500 && metrics_.closed.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(metrics_.closed.load(), 1);  // the call ended on the server, not just the relay
  ctx.TryCancel();
  stream->Finish();
  EXPECT_EQ(play_.gone, 1);
  EXPECT_EQ(metrics_.opened.load(), 1);
}

// The drain's first step: every open Play stream ends UNAVAILABLE at once (after what was
// queued), the relay hears the client gone, and a stream refused before Connect never
// counted.
TEST_P(GrpcFrontTest, EndPlayStreamsEndsEveryOpenStreamUnavailable) {
  Start();
  grpc::ClientContext refused_ctx;
  auto refused = stub_->Play(&refused_ctx);  // no token
  cv1::PlayResponse none;
  EXPECT_FALSE(refused->Read(&none));
  EXPECT_EQ(refused->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);

  // One at a time, so the fake's last sink is the last stream's (the server may take streams
  // opened together in any order).
  Streams opened = OpenStreams(3, [&](int i) {
    EXPECT_TRUE(WaitUntil(play_.mu, play_.cv,
                          [&] { return play_.messages.size() == static_cast<size_t>(i) + 1; }));
  });
  auto& streams = opened.streams;
  EXPECT_EQ(front_->open_play_streams(), 3u);
  {
    cv1::PlayResponse queued;
    queued.mutable_notice()->set_type("queued-before-the-end");
    std::lock_guard<std::mutex> lock(play_.mu);
    ASSERT_TRUE(play_.sink->Send(queued));  // the last stream's
  }

  front_->EndPlayStreams(absl::UnavailableError("gateway shutting down: dial again"));
  for (size_t i = 0; i < streams.size(); ++i) {
    cv1::PlayResponse response;
    if (i == 2) {
      ASSERT_TRUE(streams[i]->Read(&response));
      EXPECT_EQ(response.notice().type(), "queued-before-the-end");
    }
    EXPECT_FALSE(streams[i]->Read(&response));
    const grpc::Status end = streams[i]->Finish();
    EXPECT_EQ(end.error_code(), grpc::StatusCode::UNAVAILABLE) << i;
    EXPECT_EQ(end.error_message(), "gateway shutting down: dial again") << i;
  }
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.gone == 3; }));
  front_->Shutdown(absl::Now() + absl::Seconds(1));
  EXPECT_EQ(front_->open_play_streams(), 0u);
  EXPECT_EQ(metrics_.opened.load(), 4);
  EXPECT_EQ(metrics_.closed.load(), 4);
  // The server's {method, code} metrics, recorded by the front (no interceptor on Play).
  const std::string text = server_metrics_.Serialize();
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "courtpiece_gatewaytest_grpc_server_handled_total{code=\"UNAVAILABLE\","
                        "method=\"/courtpiece.client.v1.CourtPiece/Play\"} 3\n"));
  EXPECT_THAT(text, ::testing::HasSubstr("courtpiece_gatewaytest_grpc_server_handled_total{code="
                                         "\"UNAUTHENTICATED\",method=\"/"
                                         "courtpiece.client.v1.CourtPiece/Play\"} 1\n"));
}

// Many streams at once on the server's queues (which queue serves a connection is gRPC's
// choice, not asserted): each gets its own answers only, and each client's half-close ends
// its stream OK and tells the relay once.
TEST_P(GrpcFrontTest, ManyStreamsAtOnceEachGetTheirOwnAnswers) {
  play_.echo_open = true;
  Start();
  constexpr int kStreams = 40;
  Streams opened = OpenStreams(kStreams);
  auto& streams = opened.streams;
  for (int i = 0; i < kStreams; ++i) {
    cv1::PlayResponse answer;
    ASSERT_TRUE(streams[i]->Read(&answer)) << i;
    EXPECT_EQ(answer.notice().type(), absl::StrCat("t-", i));
    ASSERT_TRUE(streams[i]->WritesDone());
    EXPECT_FALSE(streams[i]->Read(&answer));
    const grpc::Status end = streams[i]->Finish();
    EXPECT_TRUE(end.ok()) << i << " " << end.error_message();
  }
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.gone == kStreams; }));
  front_->Shutdown(absl::Now() + absl::Seconds(1));
  EXPECT_EQ(play_.gone, kStreams);
  EXPECT_EQ(front_->open_play_streams(), 0u);
  EXPECT_EQ(metrics_.opened.load(), kStreams);
  EXPECT_EQ(metrics_.closed.load(), kStreams);
}

// The server stops with streams open while the relay keeps sending: every call ends, the
// relay hears each client gone once, and the sinks refuse what comes after.
TEST_P(GrpcFrontTest, ServerShutdownWithStreamsOpenEndsEveryCall) {
  Start();
  constexpr int kStreams = 5;
  Streams opened = OpenStreams(kStreams);
  auto& streams = opened.streams;
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.messages.size() == kStreams; }));
  std::vector<std::shared_ptr<ClientSink>> sinks;
  {
    std::lock_guard<std::mutex> lock(play_.mu);
    sinks = play_.sinks;
  }
  std::atomic<bool> stop{false};
  std::thread sender([&] {
    cv1::PlayResponse event;
    event.mutable_notice()->set_type("tick");
    while (!stop.load()) {
      for (const auto& sink : sinks) sink->Send(event);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  front_->Shutdown(absl::Now() + absl::Seconds(1));
  EXPECT_EQ(play_.gone, kStreams);
  EXPECT_EQ(front_->open_play_streams(), 0u);
  EXPECT_EQ(metrics_.opened.load(), kStreams);
  EXPECT_EQ(metrics_.closed.load(), kStreams);
  cv1::PlayResponse late;
  for (const auto& sink : sinks) EXPECT_FALSE(sink->Send(late));
  stop = true;
  sender.join();
  for (int i = 0; i < kStreams; ++i) {
    cv1::PlayResponse response;
    while (streams[i]->Read(&response)) EXPECT_EQ(response.notice().type(), "tick");
    EXPECT_FALSE(streams[i]->Finish().ok()) << i;
  }
}

TEST_P(GrpcFrontTest, OversizedPlayMessageEndsResourceExhausted) {
  Start();
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", Bearer());
  auto stream = stub_->Play(&ctx);
  cv1::PlayRequest big;
  big.mutable_command()->set_note_id(std::string(20 * 1024, 'x'));
  stream->Write(big);
  cv1::PlayResponse r;
  EXPECT_FALSE(stream->Read(&r));
  grpc::Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  std::lock_guard<std::mutex> lock(play_.mu);
  EXPECT_TRUE(play_.messages.empty());
}

TEST_P(GrpcFrontTest, AFullSendQueueEndsTheStreamSlowReader) {
  Start({.send_queue_max = 4});
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", Bearer());
  auto stream = stub_->Play(&ctx);
  cv1::PlayRequest open;
  open.mutable_open()->set_table_id("t-1");
  ASSERT_TRUE(stream->Write(open));
  ASSERT_TRUE(WaitUntil(play_.mu, play_.cv, [&] { return play_.sink != nullptr; }));
  std::shared_ptr<ClientSink> sink;
  {
    std::lock_guard<std::mutex> lock(play_.mu);
    sink = play_.sink;
  }
  cv1::PlayResponse event;
  event.mutable_event()->set_detail(std::string(1000, 'e'));
  int accepted = 0;
  for (int i = 0; i < 1000; ++i) {
    if (!sink->Send(event)) break;
    ++accepted;
  }
  EXPECT_LT(accepted, 1000);
  EXPECT_FALSE(sink->Send(event));
  cv1::PlayResponse r;
  while (stream->Read(&r)) {
  }
  grpc::Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(), "slow reader");
  EXPECT_EQ(metrics_.drops.load(), 1);
}

// The front over the real PlaySession (fake upstream): the relay ends the stream from inside
// the front's read callback, and the client sees the exact status.
TEST(GrpcFrontWithSessionTest, FirstMessageNotOpenEndsInvalidArgument) {
  FakeClock clock;
  FakeScheduler scheduler(clock);
  FakeTableDialer dialer;
  FakeOwnerLookup owners;
  NullGatewayMetrics metrics;
  PlaySessionService play(PlayDeps{.dialer = dialer,
                                   .owners = owners,
                                   .scheduler = scheduler,
                                   .clock = clock,
                                   .metrics = metrics},
                          PlaySessionOptions{});
  FakeRouter router;
  auth::SigningKey key = auth::SigningKey::Generate("k1");
  auth::TokenSigner signer(key, RealClock::Instance());
  auth::TokenVerifier verifier(*auth::VerifyKeys::Parse(key.PublicText()), RealClock::Instance());
  TokenGate gate(verifier);
  common::Metrics server_metrics("gatewaytest");
  for (const std::string kind : {"libgrpc", "h2"}) {
    SCOPED_TRACE(kind);
    std::unique_ptr<Front> front = StartFront(kind, {router, play, gate, metrics, server_metrics});
    ASSERT_NE(front, nullptr);
    auto stub =
        cv1::CourtPiece::NewStub(common::CreateGrpcChannel(front->LoopbackAddress(), nullptr));
    for (int i = 0; i < 20; ++i) {
      grpc::ClientContext ctx;
      ctx.AddMetadata("authorization",
                      "Bearer " + signer.Sign("p1", auth::Role::kPlayer, absl::Minutes(5)));
      auto stream = stub->Play(&ctx);
      cv1::PlayRequest command;
      command.mutable_command()->set_command_id(1);
      stream->Write(command);
      cv1::PlayResponse r;
      EXPECT_FALSE(stream->Read(&r));
      grpc::Status s = stream->Finish();
      EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
      EXPECT_EQ(s.error_message(), "the first message must be open");
    }
    front->Shutdown(absl::Now() + absl::Seconds(1));
  }
}

}  // namespace
}  // namespace courtpiece::gateway
