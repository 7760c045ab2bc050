// Unit tests of the Accounts gRPC layer over an in-process channel: the domain on fakes, the
// real auth::TokenCallerAuth, a fake clock.
#include "services/lobby/accounts_server.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/auth/token_caller_auth.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/lobby/fake_player_store.h"
#include "services/lobby/fake_wallet_port.h"

namespace courtpiece::lobby {
namespace {

using ::testing::HasSubstr;

class AccountsServiceTest : public ::testing::Test {
 protected:
  AccountsServiceTest()
      : key_(*auth::SigningKey::FromSeed("k1", std::string(32, 's'))),
        signer_(key_, clock_),
        verifier_(auth::VerifyKeys{{{"k1", key_.public_key}}}, clock_),
        caller_auth_(verifier_),
        wallet_(500),
        accounts_(store_, wallet_, signer_, clock_, {}),
        metrics_("lobby"),
        log_("lobby", common::LogLevel::kInfo,
             [this](std::string_view line) {
               std::lock_guard<std::mutex> lock(log_mu_);
               log_lines_.emplace_back(line);
             }),
        service_(accounts_, caller_auth_, clock_, absl::Seconds(5), metrics_, log_) {}

  void SetUp() override {
    absl::StatusOr<std::unique_ptr<common::GrpcServer>> server =
        common::GrpcServer::Start({.listen_address = "127.0.0.1:0"}, {&service_}, metrics_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    stub_ = v1::Accounts::NewStub(server_->InProcessChannel());
  }
  void TearDown() override { server_->Shutdown(absl::Now() + absl::Seconds(2)); }

  grpc::Status Login(const std::string& device, const std::string& name, v1::Session* out) {
    v1::GuestLoginRequest request;
    request.set_device_secret(device);
    request.set_display_name(name);
    grpc::ClientContext context;
    common::SetTimeout(context, absl::Seconds(5));
    return stub_->GuestLogin(&context, request, out);
  }
  grpc::Status GetProfile(const std::string& authorization, v1::Profile* out) {
    grpc::ClientContext context;
    common::SetTimeout(context, absl::Seconds(5));
    if (!authorization.empty()) context.AddMetadata("authorization", authorization);
    return stub_->GetProfile(&context, v1::GetProfileRequest(), out);
  }
  grpc::Status GetPublic(const std::string& authorization, const std::vector<std::string>& ids,
                         v1::GetPublicProfilesResponse* out) {
    v1::GetPublicProfilesRequest request;
    for (const std::string& id : ids) request.add_player_ids(id);
    grpc::ClientContext context;
    common::SetTimeout(context, absl::Seconds(5));
    if (!authorization.empty()) context.AddMetadata("authorization", authorization);
    return stub_->GetPublicProfiles(&context, request, out);
  }

  FakeClock clock_{absl::Now()};  // real-ish time: gRPC deadlines are wall-clock
  auth::SigningKey key_;
  auth::TokenSigner signer_;
  auth::TokenVerifier verifier_;
  auth::TokenCallerAuth caller_auth_;
  FakePlayerStore store_;
  FakeWalletPort wallet_;
  Accounts accounts_;
  common::Metrics metrics_;
  std::mutex log_mu_;
  std::vector<std::string> log_lines_;
  common::Logger log_;
  AccountsService service_;
  std::unique_ptr<common::GrpcServer> server_;
  std::unique_ptr<v1::Accounts::Stub> stub_;
};

TEST_F(AccountsServiceTest, GuestLoginThenProfileWithTheBearerToken) {
  v1::Session session;
  ASSERT_TRUE(Login(std::string(32, 'a'), "Ali", &session).ok());
  EXPECT_TRUE(session.created());
  EXPECT_EQ(session.role(), "player");
  EXPECT_EQ(session.access_expires_at_ms(), absl::ToUnixMillis(clock_.Now() + absl::Minutes(15)));
  EXPECT_EQ(session.refresh_token().size(), 43u);
  v1::Profile profile;
  grpc::Status s = GetProfile("Bearer " + session.access_token(), &profile);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(profile.player_id(), session.player_id());
  EXPECT_EQ(profile.display_name(), "Ali");
  EXPECT_EQ(profile.coins(), 500);
  EXPECT_EQ(profile.role(), "player");
  EXPECT_EQ(profile.avatar_id(), 1);
}

TEST_F(AccountsServiceTest, ProfileNeedsAValidToken) {
  v1::Session session;
  ASSERT_TRUE(Login(std::string(32, 'a'), "Ali", &session).ok());
  v1::Profile profile;
  grpc::Status none = GetProfile("", &profile);
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(none.error_message(), HasSubstr("no session token"));
  EXPECT_EQ(GetProfile(session.access_token(), &profile).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);  // no "Bearer "
  std::string forged = session.access_token();
  forged[10] = forged[10] == 'A' ? 'B' : 'A';
  EXPECT_EQ(GetProfile("Bearer " + forged, &profile).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  clock_.Advance(absl::Minutes(16));
  grpc::Status expired = GetProfile("Bearer " + session.access_token(), &profile);
  EXPECT_EQ(expired.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(expired.error_message(), HasSubstr("expired"));
}

TEST_F(AccountsServiceTest, RefreshOnceThenUnauthenticated) {
  v1::Session session;
  ASSERT_TRUE(Login(std::string(32, 'a'), "Ali", &session).ok());
  v1::RefreshRequest request;
  request.set_refresh_token(session.refresh_token());
  v1::Session next;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->Refresh(&context, request, &next).ok());
  }
  EXPECT_EQ(next.player_id(), session.player_id());
  EXPECT_FALSE(next.created());
  grpc::ClientContext context;
  grpc::Status again = stub_->Refresh(&context, request, &next);
  EXPECT_EQ(again.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(again.error_message(), HasSubstr("used refresh token"));
}

TEST_F(AccountsServiceTest, ValidationMessagesReachTheClientInfrastructureOnesAreLogged) {
  v1::Session session;
  grpc::Status bad = Login("short", "Ali", &session);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(bad.error_message(), HasSubstr("device_secret"));
  ASSERT_TRUE(Login(std::string(32, 'a'), "Ali", &session).ok());
  v1::UpdateProfileRequest update;
  update.set_avatar_id(1000);
  v1::Profile profile;
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + session.access_token());
  grpc::Status avatar = stub_->UpdateProfile(&context, update, &profile);
  EXPECT_EQ(avatar.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(avatar.error_message(), HasSubstr("avatar_id"));

  wallet_.FailNext(1, absl::UnavailableError("connect to 10.0.0.7:7004 refused"));
  grpc::Status down = Login(std::string(32, 'b'), "Sara", &session);
  EXPECT_EQ(down.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(down.error_message(), ::testing::Not(HasSubstr("10.0.0.7")));
  std::lock_guard<std::mutex> lock(log_mu_);
  ASSERT_FALSE(log_lines_.empty());
  EXPECT_THAT(log_lines_.back(), HasSubstr("10.0.0.7"));
}

TEST_F(AccountsServiceTest, UpdateProfileChangesNameAndAvatar) {
  v1::Session session;
  ASSERT_TRUE(Login(std::string(32, 'a'), "Ali", &session).ok());
  v1::UpdateProfileRequest update;
  update.set_display_name("عمران");
  update.set_avatar_id(12);
  v1::Profile profile;
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + session.access_token());
  ASSERT_TRUE(stub_->UpdateProfile(&context, update, &profile).ok());
  EXPECT_EQ(profile.display_name(), "عمران");
  EXPECT_EQ(profile.avatar_id(), 12);
  EXPECT_EQ(profile.coins(), 500);
}

TEST_F(AccountsServiceTest, PublicProfilesForAnySignedInCallerWithoutCoinsOrRole) {
  v1::Session ali, sara;
  ASSERT_TRUE(Login(std::string(32, 'a'), "Ali", &ali).ok());
  ASSERT_TRUE(Login(std::string(32, 'b'), "Sara", &sara).ok());
  {
    v1::UpdateProfileRequest update;
    update.set_avatar_id(33);
    v1::Profile profile;
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + sara.access_token());
    ASSERT_TRUE(stub_->UpdateProfile(&context, update, &profile).ok());
  }
  const std::vector<std::string> seated = {sara.player_id(), "bot-1", ali.player_id(),
                                           "p-000000000000000000000000"};
  v1::GetPublicProfilesResponse out;
  grpc::Status s = GetPublic("Bearer " + ali.access_token(), seated, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::map<std::string, v1::PublicProfile> by_id;
  for (const v1::PublicProfile& p : out.profiles()) by_id[p.player_id()] = p;
  ASSERT_EQ(out.profiles_size(), 2);
  ASSERT_EQ(by_id.size(), 2u);
  EXPECT_EQ(by_id[ali.player_id()].display_name(), "Ali");
  EXPECT_EQ(by_id[ali.player_id()].avatar_id(), 1);
  EXPECT_EQ(by_id[sara.player_id()].display_name(), "Sara");
  EXPECT_EQ(by_id[sara.player_id()].avatar_id(), 33);
  EXPECT_LT(out.profiles(0).player_id(), out.profiles(1).player_id());  // sorted by id

  // An admin's token works as well (any role).
  const std::string admin = signer_.Sign("p-admin", auth::Role::kAdmin, absl::Minutes(5));
  v1::GetPublicProfilesResponse as_admin;
  ASSERT_TRUE(GetPublic("Bearer " + admin, seated, &as_admin).ok());
  EXPECT_EQ(as_admin.profiles_size(), 2);
}

TEST_F(AccountsServiceTest, PublicProfilesNeedATokenAndAtMost16WellFormedIds) {
  v1::Session ali;
  ASSERT_TRUE(Login(std::string(32, 'a'), "Ali", &ali).ok());
  v1::GetPublicProfilesResponse out;
  grpc::Status none = GetPublic("", {ali.player_id()}, &out);
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(none.error_message(), HasSubstr("no session token"));
  clock_.Advance(absl::Minutes(16));
  EXPECT_EQ(GetPublic("Bearer " + ali.access_token(), {ali.player_id()}, &out).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  const std::string bearer =
      "Bearer " + signer_.Sign(ali.player_id(), auth::Role::kPlayer, absl::Minutes(5));
  grpc::Status many = GetPublic(bearer, std::vector<std::string>(17, ali.player_id()), &out);
  EXPECT_EQ(many.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(many.error_message(), "player_ids: at most 16 ids, got 17");
  grpc::Status bad = GetPublic(bearer, {"has space"}, &out);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(bad.error_message(), "player_ids[0]: must be 1..64 chars of [A-Za-z0-9_-]");
  v1::GetPublicProfilesResponse empty;
  ASSERT_TRUE(GetPublic(bearer, {}, &empty).ok());
  EXPECT_EQ(empty.profiles_size(), 0);
}

}  // namespace
}  // namespace courtpiece::lobby
