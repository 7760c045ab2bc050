// Voice notes and the moderation admin API through the gateway's fronts: the real HttpServer
// and GrpcFront over the real UnaryRelay, against an in-process fake moderation service
// (fake_moderation.h) on a loopback port. Covers the raw voice routes (POST /v1/voice, GET
// /v1/voice/<id>), their limits and refusals, the mapping of every moderation refusal, the
// gRPC UploadNote/GetNote, and the admin ModerationAdmin methods.
#include <memory>
#include <string>

#include "courtpiece/auth/keys.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/client/v1/client.grpc.pb.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/moderation/v1/moderation.pb.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "services/gateway/fake_moderation.h"
#include "services/gateway/grpc_front.h"
#include "services/gateway/h2_front.h"
#include "services/gateway/http_server.h"
#include "services/gateway/testing/http_client.h"
#include "services/gateway/unary_relay.h"

namespace courtpiece::gateway {
namespace {

namespace cv1 = client::v1;
namespace mv1 = moderation::v1;
using testing::HttpClient;
using testing::HttpHeaders;
using testing::HttpResponse;

class NoMetrics final : public GatewayMetrics {
 public:
  void ConnectionOpened(std::string_view) override {}
  void ConnectionClosed(std::string_view) override {}
  void ConnectionRefused(std::string_view) override {}
  void MessageIn(std::string_view) override {}
  void MessageOut(std::string_view) override {}
  void SendQueueDrop(std::string_view) override {}
  void RateLimited(std::string_view) override {}
  void UpstreamCall(std::string_view, int, double) override {}
  void Reconnect(std::string_view) override {}
};

// Voice tests open no Play stream.
class NoPlay final : public PlayService {
 public:
  std::shared_ptr<PlayConnection> Connect(std::string, std::string,
                                          std::shared_ptr<ClientSink>) override {
    return nullptr;
  }
};

// A recording-like body: binary, with NULs and high bytes.
std::string Audio(size_t size) {
  std::string audio(size, '\0');
  for (size_t i = 0; i < size; ++i) audio[i] = static_cast<char>((i * 131 + 7) % 256);
  return audio;
}

class VoiceRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto moderation = common::GrpcServer::Start(
        {.listen_address = "127.0.0.1:0"}, {fake_.voice_notes(), fake_.admin()}, fake_metrics_);
    ASSERT_TRUE(moderation.ok()) << moderation.status();
    moderation_ = *std::move(moderation);
    const int voice_max = static_cast<int>(kVoiceMessageBytesMax);
    const UnaryUpstreams upstreams{
        .lobby = nullptr,
        .moderation = common::CreateGrpcChannel(
            moderation_->LoopbackAddress(), nullptr,
            {.max_receive_message_bytes = voice_max, .max_send_message_bytes = voice_max}),
    };
    clients_ = UnaryRelay::ForClients(upstreams, gate_, RealClock::Instance(), metrics_);
    admins_ = UnaryRelay::ForAdmins(upstreams, gate_, RealClock::Instance(), metrics_);

    HttpServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.threads = 2;
    http_ = std::make_unique<HttpServer>(options, clients_.get(), admins_.get(), &play_, &gate_,
                                         &metrics_);
    ASSERT_TRUE(http_->Start().ok());

    front_ = std::make_unique<GrpcFront>(*clients_, play_, gate_, metrics_);
    auto server = common::GrpcServer::Start({.listen_address = "127.0.0.1:0",
                                             .max_receive_message_bytes = voice_max,
                                             .max_send_message_bytes = voice_max,
                                             .enable_reflection = false},
                                            {front_.get()}, front_metrics_);
    ASSERT_TRUE(server.ok()) << server.status();
    grpc_ = *std::move(server);
    stub_ = cv1::CourtPiece::NewStub(common::CreateGrpcChannel(
        grpc_->LoopbackAddress(), nullptr,
        {.max_receive_message_bytes = 4 << 20, .max_send_message_bytes = 4 << 20}));
    // The same mobile API on our own HTTP/2 front (the gateway's default).
    H2FrontOptions h2_options;
    h2_options.host = "127.0.0.1";
    h2_ = std::make_unique<H2Front>(h2_options, *clients_, play_, gate_, metrics_, h2_metrics_);
    ASSERT_TRUE(h2_->Start().ok());
    h2_stub_ = cv1::CourtPiece::NewStub(common::CreateGrpcChannel(
        h2_->LoopbackAddress(), nullptr,
        {.max_receive_message_bytes = 4 << 20, .max_send_message_bytes = 4 << 20}));
  }
  void TearDown() override {
    if (http_ != nullptr) http_->Stop();
    if (grpc_ != nullptr) grpc_->Shutdown(absl::Now() + absl::Seconds(1));
    if (h2_ != nullptr) h2_->Shutdown(absl::Now() + absl::Seconds(1));
    if (moderation_ != nullptr) moderation_->Shutdown(absl::Now() + absl::Seconds(1));
  }

  std::string Player() { return "Bearer " + signer_.Sign("p-1", auth::Role::kPlayer, kTtl); }
  std::string Admin() { return "Bearer " + signer_.Sign("a-1", auth::Role::kAdmin, kTtl); }

  HttpResponse Upload(const std::string& audio, HttpHeaders headers) {
    HttpClient http("127.0.0.1", static_cast<uint16_t>(http_->port()));
    absl::StatusOr<HttpResponse> r = http.Post("/v1/voice", audio, headers);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : HttpResponse{};
  }
  HttpHeaders UploadHeaders(const std::string& authorization) {
    return {{"authorization", authorization},
            {"content-type", "audio/webm;codecs=opus"},
            {"x-courtpiece-table-id", "t-7"}};
  }
  HttpResponse Get(const std::string& path, const std::string& authorization) {
    HttpClient http("127.0.0.1", static_cast<uint16_t>(http_->port()));
    HttpHeaders headers;
    if (!authorization.empty()) headers.emplace_back("authorization", authorization);
    absl::StatusOr<HttpResponse> r = http.Get(path, headers);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : HttpResponse{};
  }
  HttpResponse PostJson(const std::string& path, const std::string& json,
                        const std::string& authorization) {
    HttpClient http("127.0.0.1", static_cast<uint16_t>(http_->port()));
    absl::StatusOr<HttpResponse> r = http.Post(path, json, {{"authorization", authorization}});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : HttpResponse{};
  }

  static constexpr absl::Duration kTtl = absl::Minutes(15);
  auth::SigningKey key_ = auth::SigningKey::Generate("k1");
  auth::TokenSigner signer_{key_, RealClock::Instance()};
  auth::TokenVerifier verifier_{*auth::VerifyKeys::Parse(key_.PublicText()), RealClock::Instance()};
  TokenGate gate_{verifier_};
  NoMetrics metrics_;
  NoPlay play_;
  FakeModeration fake_;
  common::Metrics fake_metrics_{"fakemoderation"};
  common::Metrics front_metrics_{"gatewayfront"};
  std::unique_ptr<common::GrpcServer> moderation_;
  std::unique_ptr<UnaryRelay> clients_;
  std::unique_ptr<UnaryRelay> admins_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<GrpcFront> front_;
  std::unique_ptr<common::GrpcServer> grpc_;
  std::unique_ptr<cv1::CourtPiece::Stub> stub_;
  common::Metrics h2_metrics_{"gatewayh2"};
  std::unique_ptr<H2Front> h2_;
  std::unique_ptr<cv1::CourtPiece::Stub> h2_stub_;
  // Both mobile fronts: libgrpc's and ours.
  std::vector<std::pair<const char*, cv1::CourtPiece::Stub*>> MobileStubs() {
    return {{"libgrpc", stub_.get()}, {"h2", h2_stub_.get()}};
  }
};

// --- POST /v1/voice ------------------------------------------------------------------------

TEST_F(VoiceRoutesTest, HttpUploadReachesModerationWithTheBytesTableRoundAndToken) {
  const std::string bearer = Player();
  const std::string audio = Audio(100000);
  HttpHeaders headers = UploadHeaders(bearer);
  headers.emplace_back("x-courtpiece-round", "5");
  HttpResponse r = Upload(audio, headers);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("content-type"), "application/json");
  EXPECT_EQ(r.body, R"({"noteId":"n-100000","round":"5","durationMs":"3210","format":"webm/opus",)"
                    R"("replayed":false})");
  std::optional<FakeModeration::Seen> seen = fake_.last("UploadNote");
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->authorization, bearer);
  mv1::UploadNoteRequest got;
  ASSERT_TRUE(got.ParseFromString(seen->request));
  EXPECT_EQ(got.table_id(), "t-7");
  EXPECT_EQ(got.round(), 5u);
  EXPECT_EQ(got.audio(), audio);

  // Without a round: 0 (the table's current one); other audio types and bytes are accepted.
  for (const char* type : {"audio/ogg", "audio/mp4", "audio/aac", "application/octet-stream"}) {
    headers = UploadHeaders(bearer);
    headers[1].second = type;
    r = Upload(Audio(10), headers);
    EXPECT_EQ(r.status, 200) << type << " " << r.body;
    ASSERT_TRUE(got.ParseFromString(fake_.last("UploadNote")->request));
    EXPECT_EQ(got.round(), 0u);
    EXPECT_EQ(got.audio(), Audio(10));
  }
}

TEST_F(VoiceRoutesTest, UploadRefusalsAtTheGateway) {
  const std::string bearer = Player();
  // No token: 401 before moderation.
  HttpHeaders headers = UploadHeaders("");
  headers.erase(headers.begin());
  HttpResponse r = Upload(Audio(10), headers);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body, R"({"code":16,"status":"UNAUTHENTICATED","message":"missing token"})");
  // No table header: 400.
  headers = UploadHeaders(bearer);
  headers.pop_back();
  r = Upload(Audio(10), headers);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body,
            "{\"code\":3,\"status\":\"INVALID_ARGUMENT\",\"message\":\"bad_request: header "
            "x-courtpiece-table-id is required (the table the note is for)\"}");
  // A round that is not a number: 400.
  headers = UploadHeaders(bearer);
  headers.emplace_back("x-courtpiece-round", "-1");
  r = Upload(Audio(10), headers);
  EXPECT_EQ(r.status, 400);
  // Not audio: 415.
  for (const char* type : {"text/plain", "application/json", "video/webm", "audio/"}) {
    headers = UploadHeaders(bearer);
    headers[1].second = type;
    r = Upload(Audio(10), headers);
    EXPECT_EQ(r.status, 415) << type;
  }
  // Over 528 KiB: 413 (the JSON routes keep their 64 KiB).
  r = Upload(Audio(528 * 1024 + 1), UploadHeaders(bearer));
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.body,
            R"({"code":3,"status":"INVALID_ARGUMENT","message":"request body over 540672 bytes"})");
  r = PostJson("/v1/GetNote", R"({"noteId":")" + std::string(70 * 1024, 'a') + R"("})", bearer);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.body,
            R"({"code":3,"status":"INVALID_ARGUMENT","message":"request body over 65536 bytes"})");
  // GET on the upload route: 405.
  r = Get("/v1/voice", bearer);
  EXPECT_EQ(r.status, 405);
  EXPECT_TRUE(fake_.seen().empty());
  // 512 KiB exactly (moderation's cap) passes the gateway.
  r = Upload(Audio(512 * 1024), UploadHeaders(bearer));
  EXPECT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(fake_.seen().size(), 1u);
}

TEST_F(VoiceRoutesTest, EveryModerationRefusalMapsToItsHttpStatusWithTheMessageKept) {
  struct Case {
    grpc::StatusCode code;
    std::string message;
    int http;
    std::string name;
  };
  const Case cases[] = {
      {grpc::StatusCode::INVALID_ARGUMENT, "bad_request: audio is empty", 400, "INVALID_ARGUMENT"},
      {grpc::StatusCode::OUT_OF_RANGE, "too_big: the audio is over 524288 bytes", 400,
       "OUT_OF_RANGE"},
      {grpc::StatusCode::PERMISSION_DENIED,
       "muted: you cannot send voice notes until 2026-12-02T10:00:00Z", 403, "PERMISSION_DENIED"},
      {grpc::StatusCode::INVALID_ARGUMENT, "unsupported_format: not WebM/Opus, Ogg/Opus or MP4/AAC",
       400, "INVALID_ARGUMENT"},
      {grpc::StatusCode::OUT_OF_RANGE, "too_long: the recording lasts 9120 ms (at most 7000)", 400,
       "OUT_OF_RANGE"},
      {grpc::StatusCode::NOT_FOUND, "no_table: no table t-7", 404, "NOT_FOUND"},
      {grpc::StatusCode::NOT_FOUND, "no_round: round 4 is not the current round", 404, "NOT_FOUND"},
      {grpc::StatusCode::PERMISSION_DENIED, "not_seated: you are not seated at t-7", 403,
       "PERMISSION_DENIED"},
      {grpc::StatusCode::FAILED_PRECONDITION, "alone: nobody else is seated", 400,
       "FAILED_PRECONDITION"},
      {grpc::StatusCode::ALREADY_EXISTS, "allowance_used: this round's note was sent", 409,
       "ALREADY_EXISTS"},
      {grpc::StatusCode::FAILED_PRECONDITION,
       "no_lock: you do not hold the recording lock at table t-7", 400, "FAILED_PRECONDITION"},
      {grpc::StatusCode::UNAVAILABLE, "the table is unreachable", 503, "UNAVAILABLE"},
  };
  for (const Case& c : cases) {
    fake_.Refuse("UploadNote", grpc::Status(c.code, c.message));
    HttpResponse r = Upload(Audio(100), UploadHeaders(Player()));
    EXPECT_EQ(r.status, c.http) << c.message;
    EXPECT_EQ(r.body, absl::StrCat(R"({"code":)", static_cast<int>(c.code), R"(,"status":")",
                                   c.name, R"(","message":")", c.message, R"("})"));
    // The same refusal, code and message as is, over gRPC.
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", Player());
    cv1::UploadNoteRequest req;
    req.set_table_id("t-7");
    req.set_audio(Audio(100));
    cv1::UploadNoteResponse reply;
    grpc::Status s = stub_->UploadNote(&ctx, req, &reply);
    EXPECT_EQ(s.error_code(), c.code) << c.message;
    EXPECT_EQ(s.error_message(), c.message);
  }
}

// --- GET /v1/voice/<id> --------------------------------------------------------------------

TEST_F(VoiceRoutesTest, GetAnswersTheRawAudioWithItsHeaders) {
  const std::string bearer = Player();
  HttpResponse r = Get("/v1/voice/n-1", bearer);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, std::string("\x1a\x45\xdf\xa3 webm bytes \0\xff", 19));
  EXPECT_EQ(r.Header("content-type"), "audio/webm");
  EXPECT_EQ(r.Header("cache-control"), "private, max-age=3600");
  EXPECT_EQ(r.Header("x-content-type-options"), "nosniff");
  EXPECT_EQ(r.Header("content-length"), "19");
  std::optional<FakeModeration::Seen> seen = fake_.last("GetNote");
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->authorization, bearer);
  mv1::GetNoteRequest got;
  ASSERT_TRUE(got.ParseFromString(seen->request));
  EXPECT_EQ(got.note_id(), "n-1");

  // A type that is not plain audio is served as bytes.
  mv1::GetNoteResponse odd;
  odd.set_note_id("n-odd");
  odd.set_content_type("text/html");
  odd.set_audio("<script>");
  fake_.PutNote(odd);
  r = Get("/v1/voice/n-odd", bearer);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("content-type"), "application/octet-stream");
}

TEST_F(VoiceRoutesTest, GetErrorsAreJson) {
  HttpResponse r = Get("/v1/voice/n-404", Player());
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Header("content-type"), "application/json");
  EXPECT_EQ(r.body, R"({"code":5,"status":"NOT_FOUND","message":"no_note: no note n-404"})");
  fake_.Refuse("GetNote", grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                                       "not_at_table: you are not at the note's table"));
  r = Get("/v1/voice/n-1", Player());
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.body,
            R"({"code":7,"status":"PERMISSION_DENIED","message":"not_at_table: you are not at )"
            R"(the note's table"})");
  const size_t calls = fake_.seen().size();
  r = Get("/v1/voice/n-1", "");
  EXPECT_EQ(r.status, 401);
  r = Get("/v1/voice/a.b", Player());
  EXPECT_EQ(r.status, 400);
  r = Get("/v1/voice/", Player());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(fake_.seen().size(), calls);
}

// --- gRPC ----------------------------------------------------------------------------------

TEST_F(VoiceRoutesTest, GrpcUploadAndGetRelayToModeration) {
  for (auto [kind, stub] : MobileStubs()) {
    SCOPED_TRACE(kind);
    const std::string bearer = Player();
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", bearer);
    cv1::UploadNoteRequest req;
    req.set_table_id("t-9");
    req.set_round(2);
    req.set_audio(Audio(512 * 1024));
    cv1::UploadNoteResponse reply;
    grpc::Status s = stub->UploadNote(&ctx, req, &reply);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(reply.note_id(), "n-524288");
    EXPECT_EQ(reply.round(), 2u);
    EXPECT_EQ(reply.duration_ms(), 3210);
    std::optional<FakeModeration::Seen> seen = fake_.last("UploadNote");
    ASSERT_TRUE(seen.has_value());
    EXPECT_EQ(seen->authorization, bearer);
    mv1::UploadNoteRequest got;
    ASSERT_TRUE(got.ParseFromString(seen->request));
    EXPECT_EQ(got.table_id(), "t-9");
    EXPECT_EQ(got.round(), 2u);
    EXPECT_EQ(got.audio(), req.audio());

    grpc::ClientContext get_ctx;
    get_ctx.AddMetadata("authorization", bearer);
    cv1::GetNoteRequest get;
    get.set_note_id("n-1");
    cv1::GetNoteResponse note;
    s = stub->GetNote(&get_ctx, get, &note);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(note.audio(), std::string("\x1a\x45\xdf\xa3 webm bytes \0\xff", 19));
    EXPECT_EQ(note.content_type(), "audio/webm");
    EXPECT_EQ(note.author(), "p-author");
    EXPECT_EQ(note.round(), 3u);
  }
}

TEST_F(VoiceRoutesTest, GrpcSizeLimitsPerMethod) {
  for (auto [kind, stub] : MobileStubs()) {
    SCOPED_TRACE(kind);
    // Over the voice cap: refused before moderation.
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", Player());
    cv1::UploadNoteRequest req;
    req.set_table_id("t-9");
    req.set_audio(Audio(kVoiceMessageBytesMax + 1));
    cv1::UploadNoteResponse reply;
    grpc::Status s = stub->UploadNote(&ctx, req, &reply);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    // Every other method keeps 64 KiB although the server takes a voice note's size.
    grpc::ClientContext login_ctx;
    cv1::GuestLoginRequest login;
    login.set_device_secret(std::string(65 * 1024, 'x'));
    cv1::Session session;
    s = stub->GuestLogin(&login_ctx, login, &session);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_EQ(s.error_message(), "GuestLogin request over 65536 bytes");
    EXPECT_TRUE(fake_.seen().empty());
  }
}

// --- the admin API -------------------------------------------------------------------------

TEST_F(VoiceRoutesTest, AdminListReportsAndResolveReportAreRelayed) {
  const std::string admin = Admin();
  HttpResponse r = PostJson("/admin/v1/ListReports", R"({"status":"REPORT_STATUS_OPEN"})", admin);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"reports":[{"reportId":"r-1","noteId":"n-1","tableId":"t-1","round":"3",)"
                    R"("author":"p-author","reporter":"p-reporter","status":"REPORT_STATUS_OPEN",)"
                    R"("reportedAtMs":"1700000001000","resolvedAtMs":"0","resolvedBy":"",)"
                    R"("resolutionReason":""}],"nextPageToken":"","openTotal":"1"})");
  mv1::ListReportsRequest list;
  ASSERT_TRUE(list.ParseFromString(fake_.last("ListReports")->request));
  EXPECT_EQ(list.status(), mv1::REPORT_STATUS_OPEN);
  EXPECT_EQ(fake_.last("ListReports")->authorization, admin);

  r = PostJson("/admin/v1/ResolveReport",
               R"({"reportId":"r-1","action":"ACTION_MUTE_FOR","muteForMs":"3600000",)"
               R"("reason":"slurs"})",
               admin);
  EXPECT_EQ(r.status, 200) << r.body;
  mv1::ResolveReportRequest resolve;
  ASSERT_TRUE(resolve.ParseFromString(fake_.last("ResolveReport")->request));
  EXPECT_EQ(resolve.report_id(), "r-1");
  EXPECT_EQ(resolve.action(), mv1::ACTION_MUTE_FOR);
  EXPECT_EQ(resolve.mute_for_ms(), 3600000);
  EXPECT_EQ(resolve.reason(), "slurs");
  EXPECT_NE(r.body.find(R"("mute":{"playerId":"p-author","createdAtMs":"0",)"
                        R"("untilMs":"1700003600000")"),
            std::string::npos)
      << r.body;

  // A player's token: 403 at the gateway; no token: 401. Nothing reaches moderation.
  const size_t calls = fake_.seen().size();
  r = PostJson("/admin/v1/ListReports", "{}", Player());
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(
      r.body,
      R"({"code":7,"status":"PERMISSION_DENIED","message":"not_admin: admin role required"})");
  r = PostJson("/admin/v1/ResolveReport", "{}", "");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(fake_.seen().size(), calls);
  // Moderation's own refusal passes through.
  fake_.Refuse("ResolveReport", grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                             "already_resolved: r-1 was dismissed"));
  r = PostJson("/admin/v1/ResolveReport", R"({"reportId":"r-1"})", admin);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body,
            R"({"code":9,"status":"FAILED_PRECONDITION","message":"already_resolved: r-1 was )"
            R"(dismissed"})");
}

}  // namespace
}  // namespace courtpiece::gateway
