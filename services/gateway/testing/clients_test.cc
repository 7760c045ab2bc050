// The clients against in-process stand-ins: a Beast HTTP/WebSocket server (canned routes,
// /v1/play playing the fake game of fake_game_for_test.h, closing with the gateway's close
// codes) and a gRPC CourtPiece service with canned behaviour. Loopback, port 0.
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/client/v1/client.grpc.pb.h"
#include "courtpiece/common/process_testing.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/gateway/testing/client_json.h"
#include "services/gateway/testing/fake_game_for_test.h"
#include "services/gateway/testing/grpc_play_client.h"
#include "services/gateway/testing/http_client.h"
#include "services/gateway/testing/scripted_player.h"
#include "services/gateway/testing/stand_in_gateway.h"
#include "services/gateway/testing/ws_play_client.h"

namespace courtpiece::gateway::testing {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
namespace cv1 = ::courtpiece::client::v1;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kToken[] = "tok";
constexpr char kBearer[] = "Bearer tok";

// --- HTTP -------------------------------------------------------------------------------------

TEST(HttpClientTest, PostKeepsOneConnectionAndSendsJson) {
  StandInGateway server;
  HttpClient client("127.0.0.1", server.port());
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<HttpResponse> r = client.Post("/v1/Echo", absl::StrCat(R"({"n":)", i, "}"));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, absl::StrCat(R"({"n":)", i, "}"));
    EXPECT_EQ(r->Header("x-content-type"), "application/json");
    EXPECT_EQ(r->Header("content-type"), "application/json");
  }
  EXPECT_EQ(client.requests(), 3);
  EXPECT_EQ(client.connections(), 1);
  EXPECT_EQ(server.accepted(), 1);
}

TEST(HttpClientTest, ReopensAfterTheServerClosed) {
  StandInGateway server;
  HttpClient client("127.0.0.1", server.port());
  ASSERT_TRUE(client.Post("/v1/Close", "{}").ok());
  absl::StatusOr<HttpResponse> r = client.Post("/v1/Echo", "{}");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(client.connections(), 2);
}

TEST(HttpClientTest, ErrorsMapToStatuses) {
  StandInGateway server;
  HttpClient client("127.0.0.1", server.port());
  cv1::GetProfileRequest request;
  cv1::Profile profile;
  absl::Status s = client.CallJson("Nope", request, kBearer, &profile);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "unknown method Nope");
  absl::StatusOr<HttpResponse> plain = client.Get("/plain");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->status, 503);
  EXPECT_EQ(plain->body, "down");
  EXPECT_EQ(StatusFromHttp(503, "down").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusFromHttp(413, "").code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(StatusFromHttp(429, R"({"code":8,"status":"RESOURCE_EXHAUSTED","message":"slow"})"),
            absl::ResourceExhaustedError("slow"));
  // A field client.proto does not have: the strict parser says so.
  absl::StatusOr<cv1::Session> bogus = client.Call<cv1::Session>("Bogus", cv1::GuestLoginRequest());
  EXPECT_EQ(bogus.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bogus.status().message()), HasSubstr("bogus"));
}

TEST(HttpClientTest, CallParsesCanonicalJson) {
  StandInGateway server;
  HttpClient client("127.0.0.1", server.port());
  cv1::GuestLoginRequest request;
  request.set_device_secret("s");
  absl::StatusOr<cv1::Session> s = client.Call<cv1::Session>("GuestLogin", request);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->player_id(), "p0");
  EXPECT_EQ(s->access_expires_at_ms(), 1234567890123);
  EXPECT_TRUE(s->created());
  // int64 as a string, lowerCamelCase names, zeros printed.
  EXPECT_THAT(ToJson(*s), HasSubstr(R"("accessExpiresAtMs":"1234567890123")"));
  EXPECT_THAT(ToJson(*s), HasSubstr(R"("refreshExpiresAtMs":"0")"));
}

TEST(HttpClientTest, NobodyListeningIsUnavailable) {
  HttpClient client("127.0.0.1", static_cast<uint16_t>(common::FreeLoopbackPort()),
                    absl::Seconds(2));
  EXPECT_EQ(client.Get("/").status().code(), absl::StatusCode::kUnavailable);
}

// --- WebSocket --------------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<WsPlayClient>> DialWs(uint16_t port,
                                                     std::string authorization = kBearer) {
  WsOptions o;
  o.port = port;
  o.authorization = std::move(authorization);
  o.timeout = absl::Seconds(5);
  return WsPlayClient::Connect(o);
}

cv1::PlayRequest Open(const std::string& table) {
  cv1::PlayRequest r;
  r.mutable_open()->set_table_id(table);
  return r;
}

TEST(WsPlayClientTest, UpgradeWithoutTokenIsUnauthenticated) {
  StandInGateway server;
  absl::StatusOr<std::unique_ptr<WsPlayClient>> c = DialWs(server.port(), "");
  EXPECT_EQ(c.status(), absl::UnauthenticatedError("missing token"));
}

TEST(WsPlayClientTest, OpenedAndEventsAsJsonAndReadTimesOut) {
  StandInGateway server;
  auto c = DialWs(server.port());
  ASSERT_TRUE(c.ok()) << c.status();
  WsPlayClient& ws = **c;
  EXPECT_EQ(ws.Read(absl::Milliseconds(50)).status().code(), absl::StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(ws.Send(Open("t1")).ok());
  absl::StatusOr<cv1::PlayResponse> m = ws.Read(absl::Seconds(5));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->has_opened());
  EXPECT_EQ(m->opened().seat(), 1);
  m = ws.Read(absl::Seconds(5));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->event().type(), "hand");
  EXPECT_EQ(m->event().seq(), 1u);
  EXPECT_EQ(m->event().cards_size(), 5);
  EXPECT_FALSE(ws.end().has_value());
}

TEST(WsPlayClientTest, CloseCodesBecomeStatuses) {
  StandInGateway server;
  struct Case {
    std::string send;
    bool binary;
    int code;
    absl::StatusCode status;
    std::string reason_part;
  };
  const std::vector<Case> cases = {
      {"{not json", false, 4003, absl::StatusCode::kInvalidArgument, "bad JSON"},
      {R"({"open":{"tableId":"t"}})", true, 4003, absl::StatusCode::kInvalidArgument, "binary"},
      {R"({"open":{"tableId":"gone"}})", false, 4005, absl::StatusCode::kNotFound, "unknown table"},
      {R"({"open":{"tableId":"bye"}})", false, 1000, absl::StatusCode::kOk, ""},
  };
  for (const Case& k : cases) {
    auto c = DialWs(server.port());
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((k.binary ? (*c)->SendBinary(k.send) : (*c)->SendText(k.send)).ok()) << k.send;
    EXPECT_EQ((*c)->Read(absl::Seconds(5)).status().code(), absl::StatusCode::kOutOfRange);
    std::optional<StreamEnd> end = (*c)->end();
    ASSERT_TRUE(end.has_value()) << k.send;
    EXPECT_EQ(end->ws_close_code, k.code) << k.send;
    EXPECT_EQ(end->status.code(), k.status) << k.send;
    EXPECT_THAT(end->ws_reason, HasSubstr(k.reason_part)) << k.send;
    EXPECT_LE(end->ws_reason.size(), 120u);
    EXPECT_EQ((*c)->Send(Open("t1")).code(), absl::StatusCode::kUnavailable);
  }
}

TEST(WsPlayClientTest, ClientCloseAndCancel) {
  StandInGateway server;
  auto c = DialWs(server.port());
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->Close(1000).ok());
  ASSERT_TRUE((*c)->end().has_value());
  EXPECT_EQ((*c)->end()->ws_close_code, 1000);
  auto d = DialWs(server.port());
  ASSERT_TRUE(d.ok()) << d.status();
  (*d)->Cancel();
  ASSERT_TRUE((*d)->end().has_value());
  EXPECT_EQ((*d)->end()->status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(StatusFromCloseCode(1009, "too big").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(StatusFromCloseCode(1001, "").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusFromCloseCode(4010, "taken"), absl::AbortedError("taken"));
}

TEST(WsPlayClientTest, ScriptedPlayerPlaysOverWebSocket) {
  StandInGateway server;
  ScriptedPlayerOptions o;
  o.commands_per_second = 0;
  WsOptions ws;
  ws.port = server.port();
  ws.authorization = kBearer;
  ScriptedPlayer p("ann", WebSocketDialer(ws), o);
  ASSERT_TRUE(p.Open("t1").ok());
  p.Start();
  EXPECT_TRUE(p.WaitGameOver(absl::Seconds(10)));
  p.Stop();
  EXPECT_EQ(p.moves_ok(), 2);
  EXPECT_EQ(p.moves_refused(), 1);
  EXPECT_EQ(p.last_seq(), 11u);
  EXPECT_TRUE(p.CheckSeqs().ok()) << p.CheckSeqs();
  EXPECT_THAT(p.faults(), IsEmpty());
}

// --- gRPC -------------------------------------------------------------------------------------

class GrpcClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_GT(port, 0);
    channel_ =
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
  }
  void TearDown() override {
    server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
  }

  ScriptedPlayer::Dialer Dialer(std::string authorization = kBearer) {
    return GrpcDialer(channel_, authorization);
  }

  StandInCourtPiece service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(GrpcClientTest, UnaryHelpers) {
  GrpcApiClient api(channel_, absl::Seconds(5));
  absl::StatusOr<cv1::Session> s = api.GuestLogin("secret", "Ann");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->access_token(), kToken);
  EXPECT_EQ(api.GuestLogin("", "Ann").status(),
            absl::InvalidArgumentError("device_secret: required"));
  EXPECT_EQ(api.GetProfile("").status(), absl::UnauthenticatedError("missing token"));
  absl::StatusOr<cv1::Profile> profile = api.GetProfile(kBearer);
  ASSERT_TRUE(profile.ok()) << profile.status();
  EXPECT_EQ(profile->coins(), 5000);
}

TEST_F(GrpcClientTest, PlayEndsWithTheServersStatus) {
  auto no_token = GrpcPlayClient::Start(channel_, "");
  EXPECT_EQ(no_token->Read(absl::Seconds(5)).status().code(), absl::StatusCode::kOutOfRange);
  ASSERT_TRUE(no_token->end().has_value());
  EXPECT_EQ(no_token->end()->status, absl::UnauthenticatedError("missing token"));

  ScriptedPlayer p("ann", Dialer());
  EXPECT_EQ(p.Open("gone").status(), absl::NotFoundError("unknown table"));
}

TEST_F(GrpcClientTest, ScriptedPlayerPlaysOverGrpcAndResumesAfterUnavailable) {
  ScriptedPlayerOptions o;
  o.commands_per_second = 0;
  ScriptedPlayer p("ann", Dialer(), o);
  // The first stream is cut UNAVAILABLE before `opened`: Open answers that...
  EXPECT_EQ(p.Open("moving").status().code(), absl::StatusCode::kUnavailable);
  // ... and the next open plays the game; a client-side drop mid-game resumes by seq.
  ASSERT_TRUE(p.Open("moving").ok());
  ASSERT_TRUE(p.PlayUntil([&] { return p.hand().size() == 6; }, absl::Seconds(10)).ok());
  const uint64_t seen = p.last_seq();
  p.DropConnection();
  p.Start();
  EXPECT_TRUE(p.WaitGameOver(absl::Seconds(10)));
  p.Stop();
  std::vector<cv1::OpenTable> opens = service_.opens();
  ASSERT_EQ(opens.size(), 3u);
  EXPECT_EQ(opens[2].last_seq(), seen);
  EXPECT_EQ(p.reconnects(), 1);
  EXPECT_EQ(p.moves_ok(), 2);
  EXPECT_TRUE(p.CheckSeqs().ok()) << p.CheckSeqs();
  EXPECT_THAT(p.faults(), IsEmpty());
}

}  // namespace
}  // namespace courtpiece::gateway::testing
