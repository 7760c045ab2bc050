// The unary relays against a fake lobby and a fake moderation service: real in-process gRPC
// servers with canned replies, so the test covers the translation (bytes, metadata,
// deadlines, codes, stripped fields) and that each method reaches its own upstream.
#include "services/gateway/unary_relay.h"

#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "courtpiece/auth/keys.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/client/v1/client.pb.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/lobby/v1/lobby.grpc.pb.h"
#include "courtpiece/moderation/v1/moderation.grpc.pb.h"
#include "gtest/gtest.h"
#include "services/gateway/fake_moderation.h"

namespace courtpiece::gateway {
namespace {

namespace lv1 = lobby::v1;
namespace cv1 = client::v1;
namespace mv1 = moderation::v1;

// What the fake lobby saw of the last call.
struct Seen {
  std::mutex mu;
  std::string method;
  std::string authorization;
  absl::Duration deadline_left = absl::ZeroDuration();
  int calls = 0;

  void Record(grpc::ServerContext* ctx, const std::string& m) {
    std::lock_guard<std::mutex> lock(mu);
    ++calls;
    method = m;
    auto it = ctx->client_metadata().find("authorization");
    authorization =
        it == ctx->client_metadata().end() ? "" : std::string(it->second.data(), it->second.size());
    deadline_left = absl::FromChrono(ctx->deadline() - std::chrono::system_clock::now());
  }
};

class FakeAccounts final : public lv1::Accounts::Service {
 public:
  explicit FakeAccounts(Seen& seen) : seen_(seen) {}
  grpc::Status GuestLogin(grpc::ServerContext* ctx, const lv1::GuestLoginRequest* req,
                          lv1::Session* out) override {
    seen_.Record(ctx, "GuestLogin");
    if (req->device_secret().empty()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "device_secret: required");
    }
    out->set_player_id("p-" + req->display_name());
    out->set_role("player");
    out->set_access_token("tok");
    out->set_access_expires_at_ms(1234);
    out->set_created(true);
    return grpc::Status::OK;
  }
  // Never answers: waits until the call is cancelled (or 10 s), as a lobby that hangs.
  grpc::Status Refresh(grpc::ServerContext* ctx, const lv1::RefreshRequest*,
                       lv1::Session*) override {
    seen_.Record(ctx, "Refresh");
    const absl::Time until = absl::Now() + absl::Seconds(10);
    while (!ctx->IsCancelled() && absl::Now() < until) absl::SleepFor(absl::Milliseconds(5));
    return grpc::Status(grpc::StatusCode::INTERNAL, "answered after all");
  }
  grpc::Status GetProfile(grpc::ServerContext* ctx, const lv1::GetProfileRequest*,
                          lv1::Profile* out) override {
    seen_.Record(ctx, "GetProfile");
    out->set_player_id("p1");
    out->set_coins(0);  // zeros survive as zeros
    return grpc::Status::OK;
  }
  grpc::Status GetPublicProfiles(grpc::ServerContext* ctx, const lv1::GetPublicProfilesRequest* req,
                                 lv1::GetPublicProfilesResponse* out) override {
    seen_.Record(ctx, "GetPublicProfiles");
    if (req->player_ids_size() > 16) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "player_ids: at most 16 ids");
    }
    for (const std::string& id : req->player_ids()) {
      if (id.rfind("bot-", 0) == 0) continue;  // not players
      lv1::PublicProfile* p = out->add_profiles();
      p->set_player_id(id);
      p->set_display_name("Name of " + id);
      p->set_avatar_id(static_cast<int>(id.size()));
    }
    return grpc::Status::OK;
  }

 private:
  Seen& seen_;
};

class FakeDirectory final : public lv1::Directory::Service {
 public:
  explicit FakeDirectory(Seen& seen) : seen_(seen) {}
  grpc::Status CreateTable(grpc::ServerContext* ctx, const lv1::CreateTableRequest* req,
                           lv1::TableRef* out) override {
    seen_.Record(ctx, "CreateTable");
    out->set_table_id("t-" + req->request_id());
    out->set_code("123456");
    out->set_owner_instance("table-a");
    out->set_owner_addr("10.9.9.9:7000");
    *out->mutable_options() = req->options();
    out->set_seat(-1);
    return grpc::Status::OK;
  }
  grpc::Status ResolveCode(grpc::ServerContext* ctx, const lv1::ResolveCodeRequest* req,
                           lv1::TableRef*) override {
    seen_.Record(ctx, "ResolveCode");
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown code " + req->code());
  }

 private:
  Seen& seen_;
};

class FakeAdmin final : public lv1::LobbyAdmin::Service {
 public:
  explicit FakeAdmin(Seen& seen) : seen_(seen) {}
  grpc::Status GetPlayer(grpc::ServerContext* ctx, const lv1::GetPlayerRequest* req,
                         lv1::PlayerDossier* out) override {
    seen_.Record(ctx, "GetPlayer");
    out->mutable_profile()->set_player_id(req->player_id());
    out->set_quits_total(3);
    return grpc::Status::OK;
  }

 private:
  Seen& seen_;
};

UnaryContext Ctx(std::string authorization, absl::Time deadline = absl::InfiniteFuture()) {
  UnaryContext ctx;
  ctx.authorization = std::move(authorization);
  ctx.peer = "test";
  ctx.deadline = deadline;
  return ctx;
}

struct Outcome {
  absl::Status status;
  std::unique_ptr<google::protobuf::Message> response;
};

class UnaryRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = common::GrpcServer::Start({.listen_address = "127.0.0.1:0"},
                                            {&accounts_, &directory_, &admin_}, server_metrics_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto moderation = common::GrpcServer::Start({.listen_address = "127.0.0.1:0"},
                                                {moderation_.voice_notes(), moderation_.admin()},
                                                moderation_metrics_);
    ASSERT_TRUE(moderation.ok()) << moderation.status();
    moderation_server_ = *std::move(moderation);
    const UnaryUpstreams upstreams{.lobby = server_->InProcessChannel(),
                                   .moderation = moderation_server_->InProcessChannel()};
    clients_ = UnaryRelay::ForClients(upstreams, gate_, RealClock::Instance(), metrics_);
    admins_ = UnaryRelay::ForAdmins(upstreams, gate_, RealClock::Instance(), metrics_);
  }
  void TearDown() override {
    server_->Shutdown(absl::Now() + absl::Seconds(1));
    moderation_server_->Shutdown(absl::Now() + absl::Seconds(1));
  }

  Outcome Call(UnaryRouter& router, const std::string& name,
               const google::protobuf::Message& request, UnaryContext ctx = {}) {
    const UnaryMethod* method = router.Find(name);
    EXPECT_NE(method, nullptr) << name;
    if (method == nullptr) return {absl::InternalError("no method"), nullptr};
    std::unique_ptr<google::protobuf::Message> req(method->request_prototype->New());
    req->CopyFrom(request);
    std::promise<Outcome> promise;
    router.Call(*method, std::move(req), ctx,
                [&promise](absl::Status s, std::unique_ptr<google::protobuf::Message> r) {
                  promise.set_value(Outcome{std::move(s), std::move(r)});
                });
    return promise.get_future().get();
  }

  std::string Bearer(auth::Role role) {
    return "Bearer " + signer_.Sign("p1", role, absl::Minutes(5));
  }

  class CallCounter final : public GatewayMetrics {
   public:
    void ConnectionOpened(std::string_view) override {}
    void ConnectionClosed(std::string_view) override {}
    void ConnectionRefused(std::string_view) override {}
    void MessageIn(std::string_view) override {}
    void MessageOut(std::string_view) override {}
    void SendQueueDrop(std::string_view) override {}
    void RateLimited(std::string_view) override {}
    void UpstreamCall(std::string_view method, int code, double) override {
      std::lock_guard<std::mutex> lock(mu);
      calls.push_back(absl::StrCat(common::ToAbsl(method), ":", code));
    }
    void Reconnect(std::string_view) override {}
    std::mutex mu;
    std::vector<std::string> calls;
  };

  auth::SigningKey key_ = auth::SigningKey::Generate("k1");
  auth::TokenSigner signer_{key_, RealClock::Instance()};
  auth::TokenVerifier verifier_{*auth::VerifyKeys::Parse(key_.PublicText()), RealClock::Instance()};
  TokenGate gate_{verifier_};
  Seen seen_;
  FakeAccounts accounts_{seen_};
  FakeDirectory directory_{seen_};
  FakeAdmin admin_{seen_};
  common::Metrics server_metrics_{"fakelobby"};
  FakeModeration moderation_;
  common::Metrics moderation_metrics_{"fakemoderation"};
  CallCounter metrics_;
  std::unique_ptr<common::GrpcServer> server_;
  std::unique_ptr<common::GrpcServer> moderation_server_;
  std::unique_ptr<UnaryRelay> clients_;
  std::unique_ptr<UnaryRelay> admins_;
};

TEST_F(UnaryRelayTest, KnowsExactlyTheClientAndAdminMethods) {
  std::vector<std::string> names;
  for (const UnaryMethod& m : clients_->methods()) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"GuestLogin", "Refresh", "GetProfile", "UpdateProfile",
                                             "GetPublicProfiles", "CreateTable", "ResolveCode",
                                             "ListOpenTables", "QuickJoin", "MyTables", "GetStats",
                                             "RecentResults", "UploadNote", "GetNote"}));
  EXPECT_EQ(clients_->Find("Play"), nullptr);
  EXPECT_EQ(clients_->Find("GetPlayer"), nullptr);
  EXPECT_EQ(clients_->Find("guestlogin"), nullptr);
  EXPECT_EQ(clients_->Find("GuestLogin")->upstream, "/courtpiece.lobby.v1.Accounts/GuestLogin");
  EXPECT_FALSE(clients_->Find("GuestLogin")->needs_token);
  EXPECT_FALSE(clients_->Find("Refresh")->needs_token);
  EXPECT_TRUE(clients_->Find("GetProfile")->needs_token);
  EXPECT_TRUE(clients_->Find("GetPublicProfiles")->needs_token);
  EXPECT_FALSE(clients_->Find("GetPublicProfiles")->admin_only);
  EXPECT_EQ(clients_->Find("GetPublicProfiles")->upstream,
            "/courtpiece.lobby.v1.Accounts/GetPublicProfiles");
  EXPECT_EQ(clients_->Find("QuickJoin")->upstream, "/courtpiece.lobby.v1.Directory/QuickJoin");
  EXPECT_EQ(clients_->Find("RecentResults")->upstream, "/courtpiece.lobby.v1.Stats/RecentResults");
  // Every client method matches the CourtPiece service's types, and the upstream method
  // exists with the mirrored types.
  const auto* svc = cv1::PlayRequest::descriptor()->file()->FindServiceByName("CourtPiece");
  ASSERT_NE(svc, nullptr);
  EXPECT_EQ(clients_->Find("UploadNote")->upstream,
            "/courtpiece.moderation.v1.VoiceNotes/UploadNote");
  EXPECT_EQ(clients_->Find("UploadNote")->backend, UnaryUpstream::kModeration);
  EXPECT_EQ(clients_->Find("UploadNote")->request_bytes_max, 528u * 1024);
  EXPECT_EQ(clients_->Find("GetNote")->upstream, "/courtpiece.moderation.v1.VoiceNotes/GetNote");
  EXPECT_EQ(clients_->Find("GetNote")->backend, UnaryUpstream::kModeration);
  EXPECT_EQ(clients_->Find("GetNote")->request_bytes_max, 64u * 1024);
  EXPECT_EQ(clients_->Find("GuestLogin")->backend, UnaryUpstream::kLobby);
  EXPECT_EQ(svc->method_count(), 15);  // the 14 above and Play
  for (const UnaryMethod& m : clients_->methods()) {
    const auto* md = svc->FindMethodByName(m.name);
    ASSERT_NE(md, nullptr) << m.name;
    EXPECT_EQ(md->input_type(), m.request_prototype->GetDescriptor()) << m.name;
    EXPECT_EQ(md->output_type(), m.response_prototype->GetDescriptor()) << m.name;
  }
  std::vector<std::string> admin;
  const auto* lobby_admin =
      lv1::GetPlayerRequest::descriptor()->file()->FindServiceByName("LobbyAdmin");
  const auto* moderation_admin =
      mv1::ListReportsRequest::descriptor()->file()->FindServiceByName("ModerationAdmin");
  ASSERT_NE(lobby_admin, nullptr);
  ASSERT_NE(moderation_admin, nullptr);
  for (const UnaryMethod& m : admins_->methods()) {
    admin.push_back(m.upstream);
    EXPECT_TRUE(m.needs_token && m.admin_only) << m.name;
    const auto* svc_of = m.backend == UnaryUpstream::kModeration ? moderation_admin : lobby_admin;
    const auto* md = svc_of->FindMethodByName(m.name);
    ASSERT_NE(md, nullptr) << m.name;
    EXPECT_EQ(md->input_type(), m.request_prototype->GetDescriptor()) << m.name;
    EXPECT_EQ(md->output_type(), m.response_prototype->GetDescriptor()) << m.name;
  }
  EXPECT_EQ(moderation_admin->method_count(), 7);  // every one is routed
  EXPECT_EQ(admin,
            (std::vector<std::string>{"/courtpiece.lobby.v1.LobbyAdmin/GetPlayer",
                                      "/courtpiece.lobby.v1.LobbyAdmin/ListQuits",
                                      "/courtpiece.lobby.v1.LobbyAdmin/ListRounds",
                                      "/courtpiece.moderation.v1.ModerationAdmin/ListReports",
                                      "/courtpiece.moderation.v1.ModerationAdmin/GetReport",
                                      "/courtpiece.moderation.v1.ModerationAdmin/ResolveReport",
                                      "/courtpiece.moderation.v1.ModerationAdmin/MutePlayer",
                                      "/courtpiece.moderation.v1.ModerationAdmin/ListMutes",
                                      "/courtpiece.moderation.v1.ModerationAdmin/LiftMute",
                                      "/courtpiece.moderation.v1.ModerationAdmin/ListAudit"}));
}

TEST_F(UnaryRelayTest, GuestLoginNeedsNoTokenAndRelaysTheReply) {
  cv1::GuestLoginRequest req;
  req.set_device_secret(std::string(40, 'x'));
  req.set_display_name("Ana");
  Outcome out = Call(*clients_, "GuestLogin", req);
  ASSERT_TRUE(out.status.ok()) << out.status;
  const auto& session = dynamic_cast<const cv1::Session&>(*out.response);
  EXPECT_EQ(session.player_id(), "p-Ana");
  EXPECT_EQ(session.access_token(), "tok");
  EXPECT_EQ(session.access_expires_at_ms(), 1234);
  EXPECT_TRUE(session.created());
  EXPECT_EQ(seen_.authorization, "");
  EXPECT_EQ(metrics_.calls, std::vector<std::string>{"GuestLogin:0"});
}

TEST_F(UnaryRelayTest, TheLobbysStatusPassesThroughExactly) {
  Outcome out = Call(*clients_, "GuestLogin", cv1::GuestLoginRequest());
  EXPECT_EQ(out.status, absl::InvalidArgumentError("device_secret: required"));
  EXPECT_EQ(out.response, nullptr);
  cv1::ResolveCodeRequest req;
  req.set_code("999999");
  out = Call(*clients_, "ResolveCode", req, Ctx(Bearer(auth::Role::kPlayer)));
  EXPECT_EQ(out.status, absl::NotFoundError("unknown code 999999"));
  out = Call(*clients_, "MyTables", cv1::MyTablesRequest(), Ctx(Bearer(auth::Role::kPlayer)));
  EXPECT_EQ(out.status.code(), absl::StatusCode::kUnimplemented);  // the fake has none
}

TEST_F(UnaryRelayTest, TokenRefusalsComeBeforeAnyUpstreamCall) {
  Outcome out = Call(*clients_, "GetProfile", cv1::GetProfileRequest());
  EXPECT_EQ(out.status, absl::UnauthenticatedError("missing token"));
  out = Call(*clients_, "GetProfile", cv1::GetProfileRequest(), Ctx("Basic abc"));
  EXPECT_EQ(out.status.code(), absl::StatusCode::kUnauthenticated);
  out = Call(*clients_, "GetProfile", cv1::GetProfileRequest(), Ctx("Bearer x.y"));
  EXPECT_EQ(out.status.code(), absl::StatusCode::kUnauthenticated);
  lv1::GetPlayerRequest get;
  get.set_player_id("p9");
  out = Call(*admins_, "GetPlayer", get, Ctx(Bearer(auth::Role::kPlayer)));
  EXPECT_EQ(out.status, absl::PermissionDeniedError("not_admin: admin role required"));
  out = Call(*admins_, "GetPlayer", get);
  EXPECT_EQ(out.status, absl::UnauthenticatedError("missing token"));
  EXPECT_EQ(seen_.calls, 0);
  EXPECT_TRUE(metrics_.calls.empty());
}

TEST_F(UnaryRelayTest, ForwardsAuthorizationCapsTheDeadlineAndStripsInternalFields) {
  const std::string bearer = Bearer(auth::Role::kPlayer);
  cv1::CreateTableRequest req;
  req.set_request_id("r1");
  req.mutable_options()->set_bet_coins(100);
  Outcome out = Call(*clients_, "CreateTable", req, Ctx(bearer));
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_EQ(seen_.authorization, bearer);
  EXPECT_GT(seen_.deadline_left, absl::Seconds(9));
  EXPECT_LE(seen_.deadline_left,
            absl::Seconds(10) + absl::Milliseconds(50));  // grpc-timeout rounds up
  const auto& ref = dynamic_cast<const cv1::TableRef&>(*out.response);
  EXPECT_EQ(ref.table_id(), "t-r1");
  EXPECT_EQ(ref.options().bet_coins(), 100);
  EXPECT_EQ(ref.seat(), -1);
  EXPECT_TRUE(ref.GetReflection()->GetUnknownFields(ref).empty());
  EXPECT_EQ(ref.SerializeAsString().find("10.9.9.9"), std::string::npos);

  // A client deadline shorter than the cap wins.
  out = Call(*clients_, "CreateTable", req, Ctx(bearer, absl::Now() + absl::Seconds(2)));
  ASSERT_TRUE(out.status.ok());
  EXPECT_LE(seen_.deadline_left, absl::Seconds(2) + absl::Milliseconds(50));
  EXPECT_GT(seen_.deadline_left, absl::Seconds(1));
  // One already passed: no call at all.
  const int calls = seen_.calls;
  out = Call(*clients_, "CreateTable", req, Ctx(bearer, absl::Now() - absl::Seconds(1)));
  EXPECT_EQ(out.status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(seen_.calls, calls);
}

// main's shutdown: the calls still waiting on an upstream end CANCELLED, and each callback
// (which holds a front's connection) is let go of, before CancelAndWait returns.
TEST_F(UnaryRelayTest, CancelAndWaitEndsTheCallsInFlightAndLetsGoOfTheirCallbacks) {
  const UnaryMethod* method = clients_->Find("Refresh");
  ASSERT_NE(method, nullptr);
  auto connection = std::make_shared<int>(0);  // stands in for the front's connection
  std::mutex mu;
  std::optional<absl::Status> answered;
  cv1::RefreshRequest request;
  request.set_refresh_token("r");
  std::unique_ptr<google::protobuf::Message> copy(method->request_prototype->New());
  copy->CopyFrom(request);
  clients_->Call(
      *method, std::move(copy), Ctx(""),
      [connection, &mu, &answered](absl::Status s, std::unique_ptr<google::protobuf::Message>) {
        std::lock_guard<std::mutex> lock(mu);
        answered = std::move(s);
      });
  const auto lobby_has_it = [&] {
    std::lock_guard<std::mutex> lock(seen_.mu);
    return seen_.method == "Refresh";
  };
  for (int i = 0; i < 1000 && !lobby_has_it(); ++i) absl::SleepFor(absl::Milliseconds(10));
  ASSERT_TRUE(lobby_has_it());  // and hangs
  EXPECT_EQ(clients_->CancelAndWait(absl::Seconds(10)), 0);
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_TRUE(answered.has_value());
    EXPECT_EQ(answered->code(), absl::StatusCode::kCancelled) << *answered;
  }
  EXPECT_EQ(connection.use_count(), 1);                      // the callback is gone too
  EXPECT_EQ(clients_->CancelAndWait(absl::Seconds(10)), 0);  // none left: at once
}

TEST_F(UnaryRelayTest, GetPublicProfilesIsRelayedWithTheTokenAndRefusedWithoutOne) {
  cv1::GetPublicProfilesRequest req;
  for (const char* id : {"p-1", "bot-2", "p-abc"}) req.add_player_ids(id);
  Outcome out = Call(*clients_, "GetPublicProfiles", req);
  EXPECT_EQ(out.status, absl::UnauthenticatedError("missing token"));
  EXPECT_EQ(seen_.calls, 0);

  const std::string bearer = Bearer(auth::Role::kPlayer);
  out = Call(*clients_, "GetPublicProfiles", req, Ctx(bearer));
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_EQ(seen_.method, "GetPublicProfiles");
  EXPECT_EQ(seen_.authorization, bearer);
  const auto& got = dynamic_cast<const cv1::GetPublicProfilesResponse&>(*out.response);
  ASSERT_EQ(got.profiles_size(), 2);
  EXPECT_EQ(got.profiles(0).player_id(), "p-1");
  EXPECT_EQ(got.profiles(0).display_name(), "Name of p-1");
  EXPECT_EQ(got.profiles(0).avatar_id(), 3);
  EXPECT_EQ(got.profiles(1).player_id(), "p-abc");
  EXPECT_EQ(got.profiles(1).avatar_id(), 5);
  EXPECT_TRUE(got.GetReflection()->GetUnknownFields(got).empty());

  // The lobby's refusal passes through exactly.
  for (int i = 0; i < 14; ++i) req.add_player_ids("p-more");
  out = Call(*clients_, "GetPublicProfiles", req, Ctx(bearer));
  EXPECT_EQ(out.status, absl::InvalidArgumentError("player_ids: at most 16 ids"));
  EXPECT_EQ(metrics_.calls,
            (std::vector<std::string>{"GetPublicProfiles:0", "GetPublicProfiles:3"}));
}

TEST_F(UnaryRelayTest, AdminCallsUseTheLobbysOwnTypes) {
  lv1::GetPlayerRequest get;
  get.set_player_id("p9");
  Outcome out = Call(*admins_, "GetPlayer", get, Ctx(Bearer(auth::Role::kAdmin)));
  ASSERT_TRUE(out.status.ok()) << out.status;
  const auto& dossier = dynamic_cast<const lv1::PlayerDossier&>(*out.response);
  EXPECT_EQ(dossier.profile().player_id(), "p9");
  EXPECT_EQ(dossier.quits_total(), 3);
  EXPECT_EQ(seen_.method, "GetPlayer");
}

TEST_F(UnaryRelayTest, ADeadLobbyIsUnavailable) {
  auto dead = common::CreateGrpcChannel("127.0.0.1:1", nullptr);
  auto router = UnaryRelay::ForClients({.lobby = dead, .moderation = nullptr}, gate_,
                                       RealClock::Instance(), metrics_);
  Outcome out = Call(*router, "GuestLogin", cv1::GuestLoginRequest());
  EXPECT_EQ(out.status.code(), absl::StatusCode::kUnavailable);
  // No moderation configured at all: its methods are UNAVAILABLE, nothing is called.
  cv1::GetNoteRequest get;
  get.set_note_id("n-1");
  out = Call(*router, "GetNote", get, Ctx(Bearer(auth::Role::kPlayer)));
  EXPECT_EQ(out.status, absl::UnavailableError("no moderation service configured for GetNote"));
  EXPECT_TRUE(moderation_.seen().empty());
}

TEST_F(UnaryRelayTest, UploadNoteGoesToModerationWithTheBytesAndTheToken) {
  const std::string bearer = Bearer(auth::Role::kPlayer);
  cv1::UploadNoteRequest req;
  req.set_table_id("t-7");
  req.set_round(5);
  req.set_audio(std::string("\x1a\x45\xdf\xa3\0\x01 opus", 11));
  Outcome out = Call(*clients_, "UploadNote", req, Ctx(bearer));
  ASSERT_TRUE(out.status.ok()) << out.status;
  const auto& reply = dynamic_cast<const cv1::UploadNoteResponse&>(*out.response);
  EXPECT_EQ(reply.note_id(), "n-11");
  EXPECT_EQ(reply.round(), 5u);
  EXPECT_EQ(reply.duration_ms(), 3210);
  EXPECT_EQ(reply.format(), "webm/opus");
  EXPECT_FALSE(reply.replayed());
  std::optional<FakeModeration::Seen> seen = moderation_.last("UploadNote");
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->authorization, bearer);
  mv1::UploadNoteRequest got;
  ASSERT_TRUE(got.ParseFromString(seen->request));
  EXPECT_EQ(got.table_id(), "t-7");
  EXPECT_EQ(got.round(), 5u);
  EXPECT_EQ(got.audio(), req.audio());
  EXPECT_EQ(seen_.calls, 0);  // nothing went to the lobby

  // Moderation's refusal passes through exactly, reason word and all.
  moderation_.Refuse("UploadNote", grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                                                "muted: you cannot send voice notes until 1"));
  out = Call(*clients_, "UploadNote", req, Ctx(bearer));
  EXPECT_EQ(out.status, absl::PermissionDeniedError("muted: you cannot send voice notes until 1"));
  // Without a token nothing reaches moderation.
  const size_t calls = moderation_.seen().size();
  out = Call(*clients_, "UploadNote", req);
  EXPECT_EQ(out.status, absl::UnauthenticatedError("missing token"));
  EXPECT_EQ(moderation_.seen().size(), calls);
}

TEST_F(UnaryRelayTest, ModerationAdminCallsUseModerationsOwnTypes) {
  const std::string admin = Bearer(auth::Role::kAdmin);
  mv1::ListReportsRequest list;
  list.set_status(mv1::REPORT_STATUS_OPEN);
  Outcome out = Call(*admins_, "ListReports", list, Ctx(admin));
  ASSERT_TRUE(out.status.ok()) << out.status;
  const auto& reports = dynamic_cast<const mv1::ListReportsResponse&>(*out.response);
  ASSERT_EQ(reports.reports_size(), 1);
  EXPECT_EQ(reports.reports(0).report_id(), "r-1");
  EXPECT_EQ(reports.open_total(), 1);
  EXPECT_EQ(moderation_.last("ListReports")->authorization, admin);

  out = Call(*admins_, "ListReports", list, Ctx(Bearer(auth::Role::kPlayer)));
  EXPECT_EQ(out.status, absl::PermissionDeniedError("not_admin: admin role required"));
  EXPECT_EQ(moderation_.seen().size(), 1u);
}

}  // namespace
}  // namespace courtpiece::gateway
