// End-to-end tests of sign-in: the real courtpiece-lobby and courtpiece-wallet binaries
// (spawned) on one fresh Postgres database (COURTPIECE_TEST_PG_URL) with both schemas
// migrated, and the courtpiece-admin tool.
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/auth/keys.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/lobby/v1/lobby.grpc.pb.h"
#include "courtpiece/storage/testing.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace courtpiece::lobby {
namespace {

namespace v1 = ::courtpiece::lobby::v1;
using ::testing::HasSubstr;

constexpr int64_t kGrant = 777;

bool WaitHealthy(const std::string& address) {
  return common::WaitServing(address, absl::Seconds(15));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class AccountsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db = storage::TestDatabase::Create(
        {.migrations = {
             {"wallet", ::courtpiece::common::SourceDir() + "/services/wallet/migrations"},
             {"lobby", ::courtpiece::common::SourceDir() + "/services/lobby/migrations"}}});
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    wallet_address_ = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    StartWallet();
    ASSERT_TRUE(WaitHealthy(wallet_address_)) << "courtpiece-wallet at " << wallet_address_;
    lobby_address_ = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    lobby_pid_ = common::Spawn(
        {common::BinDir() + "/courtpiece-lobby"},
        {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_LOBBY_ADDR=" + lobby_address_,
         "COURTPIECE_LOBBY_METRICS_ADDR=off", "COURTPIECE_LOBBY_WALLET_ADDR=" + wallet_address_,
         "COURTPIECE_LOBBY_SIGNING_KEY=" + new_key_.SeedText(),
         absl::StrCat("COURTPIECE_LOBBY_VERIFY_KEYS=", new_key_.PublicText(), ",",
                      old_key_.PublicText()),
         "COURTPIECE_LOBBY_PG_POOL_SIZE=4", "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_GT(lobby_pid_, 0);
    ASSERT_TRUE(WaitHealthy(lobby_address_)) << "courtpiece-lobby at " << lobby_address_;
    stub_ = v1::Accounts::NewStub(
        grpc::CreateChannel(lobby_address_, grpc::InsecureChannelCredentials()));
    wallet_stub_ = wallet::v1::Wallet::NewStub(
        grpc::CreateChannel(wallet_address_, grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (lobby_pid_ > 0) {
      kill(lobby_pid_, SIGTERM);
      EXPECT_EQ(common::WaitExit(lobby_pid_), 0);
    }
    StopWallet();
  }

  void StartWallet() {
    wallet_pid_ = common::Spawn(
        {common::BinDir() + "/courtpiece-wallet"},
        {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_WALLET_ADDR=" + wallet_address_,
         "COURTPIECE_WALLET_METRICS_ADDR=off",
         absl::StrCat("COURTPIECE_WALLET_STARTING_GRANT=", kGrant),
         "COURTPIECE_WALLET_HOUSE_SHARDS=2", "COURTPIECE_WALLET_PG_POOL_SIZE=4",
         "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_GT(wallet_pid_, 0);
  }
  void StopWallet() {
    if (wallet_pid_ <= 0) return;
    kill(wallet_pid_, SIGTERM);
    EXPECT_EQ(common::WaitExit(wallet_pid_), 0);
    wallet_pid_ = -1;
  }

  grpc::Status Login(const std::string& device, v1::Session* out, const std::string& name = "Ali") {
    v1::GuestLoginRequest request;
    request.set_device_secret(device);
    request.set_display_name(name);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    return stub_->GuestLogin(&context, request, out);
  }
  grpc::Status Refresh(const std::string& token, v1::Session* out) {
    v1::RefreshRequest request;
    request.set_refresh_token(token);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    return stub_->Refresh(&context, request, out);
  }
  grpc::Status Profile(const std::string& access_token, v1::Profile* out) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    context.AddMetadata("authorization", "Bearer " + access_token);
    return stub_->GetProfile(&context, v1::GetProfileRequest(), out);
  }
  int64_t HouseBalance() {
    wallet::v1::GetBalanceRequest request;
    request.set_account_id("house");
    wallet::v1::GetBalanceResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    EXPECT_TRUE(wallet_stub_->GetBalance(&context, request, &response).ok());
    return response.balance();
  }
  // Runs courtpiece-admin with the test database; its stdout goes to *out.
  int Admin(const std::vector<std::string>& args, std::string* out = nullptr) {
    const std::string path = absl::StrCat(::testing::TempDir(), "/admin_out_", getpid());
    std::string command = common::BinDir() + "/courtpiece-admin";
    for (const std::string& a : args) absl::StrAppend(&command, " '", a, "'");
    absl::StrAppend(&command, " > '", path, "'");
    const int code = common::WaitExit(common::Spawn(
        {"/bin/sh", "-c", command}, {"COURTPIECE_PG_URL=" + db_->url(),
                                     "COURTPIECE_LOBBY_SIGNING_KEY=" + new_key_.SeedText()}));
    if (out != nullptr) *out = ReadFile(path);
    unlink(path.c_str());
    return code;
  }

  const auth::SigningKey old_key_ = auth::SigningKey::Generate("k-old");
  const auth::SigningKey new_key_ = auth::SigningKey::Generate("k-new");
  std::unique_ptr<storage::TestDatabase> db_;
  std::string wallet_address_, lobby_address_;
  pid_t wallet_pid_ = -1, lobby_pid_ = -1;
  std::unique_ptr<v1::Accounts::Stub> stub_;
  std::unique_ptr<wallet::v1::Wallet::Stub> wallet_stub_;
};

TEST_F(AccountsE2eTest, ANewDeviceGetsTheGrantOnceAndSignsInAgainAsTheSamePlayer) {
  const std::string device(48, 'a');
  v1::Session first;
  grpc::Status s = Login(device, &first, "  Ali  ");
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(first.created());
  EXPECT_EQ(first.role(), "player");
  EXPECT_TRUE(auth::IsValidPlayerId(first.player_id()));
  v1::Profile profile;
  ASSERT_TRUE(Profile(first.access_token(), &profile).ok());
  EXPECT_EQ(profile.coins(), kGrant);
  EXPECT_EQ(profile.display_name(), "Ali");
  EXPECT_EQ(HouseBalance(), -kGrant);

  v1::Session again;
  ASSERT_TRUE(Login(device, &again, "Someone Else").ok());
  EXPECT_FALSE(again.created());
  EXPECT_EQ(again.player_id(), first.player_id());
  ASSERT_TRUE(Profile(again.access_token(), &profile).ok());
  EXPECT_EQ(profile.coins(), kGrant);
  EXPECT_EQ(profile.display_name(), "Ali");
  EXPECT_EQ(HouseBalance(), -kGrant);  // no second grant

  v1::Session other;
  ASSERT_TRUE(Login(std::string(48, 'b'), &other).ok());
  EXPECT_TRUE(other.created());
  EXPECT_NE(other.player_id(), first.player_id());
  EXPECT_EQ(HouseBalance(), -2 * kGrant);
}

TEST_F(AccountsE2eTest, PublicProfilesOfThePeopleSeatedOnTheRealLobby) {
  v1::Session ali, sara;
  ASSERT_TRUE(Login(std::string(48, 'a'), &ali, "Ali").ok());
  ASSERT_TRUE(Login(std::string(48, 'b'), &sara, "Sara").ok());
  v1::GetPublicProfilesRequest request;
  for (const std::string& id : {sara.player_id(), std::string("bot-2"), ali.player_id(),
                                std::string("p-000000000000000000000000")}) {
    request.add_player_ids(id);
  }
  v1::GetPublicProfilesResponse response;
  {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    context.AddMetadata("authorization", "Bearer " + sara.access_token());
    grpc::Status s = stub_->GetPublicProfiles(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  std::map<std::string, std::string> names;
  for (const v1::PublicProfile& p : response.profiles()) {
    names[p.player_id()] = p.display_name();
    EXPECT_EQ(p.avatar_id(), 1);  // the default picture
  }
  EXPECT_EQ(names, (std::map<std::string, std::string>{{ali.player_id(), "Ali"},
                                                       {sara.player_id(), "Sara"}}));
  for (int i = 0; i < 13; ++i) request.add_player_ids(ali.player_id());  // 17 ids
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  context.AddMetadata("authorization", "Bearer " + sara.access_token());
  grpc::Status s = stub_->GetPublicProfiles(&context, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "player_ids: at most 16 ids, got 17");
}

TEST_F(AccountsE2eTest, RefreshWorksOnceThenTheUsedTokenIsUnauthenticated) {
  v1::Session login;
  ASSERT_TRUE(Login(std::string(48, 'a'), &login).ok());
  v1::Session next;
  ASSERT_TRUE(Refresh(login.refresh_token(), &next).ok());
  EXPECT_EQ(next.player_id(), login.player_id());
  EXPECT_NE(next.refresh_token(), login.refresh_token());
  v1::Profile profile;
  EXPECT_TRUE(Profile(next.access_token(), &profile).ok());
  v1::Session reused;
  grpc::Status s = Refresh(login.refresh_token(), &reused);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), HasSubstr("used"));
  EXPECT_EQ(Refresh("not-a-token", &reused).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  ASSERT_TRUE(Refresh(next.refresh_token(), &reused).ok());
}

TEST_F(AccountsE2eTest, ForgedExpiredAndUnknownKeyTokensAreUnauthenticated) {
  v1::Session login;
  ASSERT_TRUE(Login(std::string(48, 'a'), &login).ok());
  v1::Profile profile;
  std::string forged = login.access_token();
  forged[8] = forged[8] == 'A' ? 'B' : 'A';
  grpc::Status s = Profile(forged, &profile);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);

  FakeClock an_hour_ago(absl::Now() - absl::Hours(1));
  auth::TokenSigner past(new_key_, an_hour_ago);
  s = Profile(past.Sign(login.player_id(), auth::Role::kPlayer, absl::Minutes(15)), &profile);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), HasSubstr("expired"));

  RealClock clock;
  auth::TokenSigner stranger(auth::SigningKey::Generate("k-new"), clock);  // right kid, wrong key
  s = Profile(stranger.Sign(login.player_id(), auth::Role::kAdmin, absl::Minutes(15)), &profile);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), HasSubstr("bad signature"));
  auth::TokenSigner unknown(auth::SigningKey::Generate("k-other"), clock);
  s = Profile(unknown.Sign(login.player_id(), auth::Role::kPlayer, absl::Minutes(15)), &profile);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), HasSubstr("unknown key"));
}

TEST_F(AccountsE2eTest, DuringARotationTokensOfBothKeysAreAccepted) {
  v1::Session login;
  ASSERT_TRUE(Login(std::string(48, 'a'), &login).ok());
  RealClock clock;
  auth::TokenSigner old_signer(old_key_, clock);
  v1::Profile profile;
  grpc::Status s =
      Profile(old_signer.Sign(login.player_id(), auth::Role::kPlayer, absl::Minutes(15)), &profile);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(profile.player_id(), login.player_id());
  ASSERT_TRUE(Profile(login.access_token(), &profile).ok());  // signed by k-new
  absl::StatusOr<auth::VerifyKeys> new_only = auth::VerifyKeys::Parse(new_key_.PublicText());
  auth::TokenVerifier gateway(*new_only, clock);
  EXPECT_EQ(gateway.Verify(login.access_token())->key_id, "k-new");
}

TEST_F(AccountsE2eTest, AnAdminGrantedByTheToolGetsTheRoleOnRefreshAndARevokeTakesItAway) {
  v1::Session login;
  ASSERT_TRUE(Login(std::string(48, 'a'), &login).ok());
  const std::string player = login.player_id();
  std::string out;
  EXPECT_EQ(Admin({"token", player}, &out), 1);  // not an admin yet
  EXPECT_EQ(Admin({"grant", player, "--reason", "on call this week", "--operator", "e2e-op"}), 0);
  EXPECT_EQ(Admin({"grant", player, "--reason", "again"}), 1);  // already an admin
  EXPECT_EQ(Admin({"grant", player}), 2);                       // no reason
  EXPECT_EQ(Admin({"grant", "p-nobody", "--reason", "x"}), 1);
  ASSERT_EQ(Admin({"list"}, &out), 0);
  EXPECT_THAT(out, HasSubstr(player + "\tAli\t"));
  EXPECT_THAT(out, HasSubstr("\te2e-op\n"));

  v1::Session admin;
  ASSERT_TRUE(Refresh(login.refresh_token(), &admin).ok());
  EXPECT_EQ(admin.role(), "admin");
  v1::Profile profile;
  ASSERT_TRUE(Profile(admin.access_token(), &profile).ok());
  EXPECT_EQ(profile.role(), "admin");

  ASSERT_EQ(Admin({"token", player, "--ttl", "10m"}, &out), 0);
  const std::string minted(absl::StripAsciiWhitespace(out));
  RealClock clock;
  absl::StatusOr<auth::Claims> claims =
      auth::TokenVerifier(*auth::VerifyKeys::Parse(new_key_.PublicText()), clock).Verify(minted);
  ASSERT_TRUE(claims.ok()) << claims.status();
  EXPECT_EQ(claims->role, auth::Role::kAdmin);
  EXPECT_EQ(claims->player_id, player);
  EXPECT_EQ(claims->expires_at_ms - claims->issued_at_ms, 10 * 60 * 1000);
  ASSERT_TRUE(Profile(minted, &profile).ok());

  EXPECT_EQ(Admin({"revoke", player, "--reason", "rotation ended"}), 0);
  v1::Session revoked;
  ASSERT_TRUE(Refresh(admin.refresh_token(), &revoked).ok());
  EXPECT_EQ(revoked.role(), "player");
  ASSERT_EQ(Admin({"list"}, &out), 0);
  EXPECT_EQ(out, "");
  EXPECT_EQ(Admin({"token", player}, &out), 1);
}

TEST_F(AccountsE2eTest, WithTheWalletDownLoginIsUnavailableAndTheNextOneOpensTheAccount) {
  StopWallet();
  const std::string device(48, 'w');
  v1::Session session;
  grpc::Status down = Login(device, &session);
  EXPECT_EQ(down.error_code(), grpc::StatusCode::UNAVAILABLE) << down.error_message();
  StartWallet();
  ASSERT_TRUE(WaitHealthy(wallet_address_));
  grpc::Status s;
  for (int i = 0; i < 50; ++i) {  // the lobby's channel reconnects with backoff
    s = Login(device, &session);
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(session.created());
  v1::Profile profile;
  ASSERT_TRUE(Profile(session.access_token(), &profile).ok());
  EXPECT_EQ(profile.coins(), kGrant);
  v1::Session again;
  ASSERT_TRUE(Login(device, &again).ok());
  EXPECT_FALSE(again.created());
  EXPECT_EQ(again.player_id(), session.player_id());
  EXPECT_EQ(HouseBalance(), -kGrant);
}

TEST_F(AccountsE2eTest, BadKeyConfigurationExitsTwoAndAnUnmigratedDatabaseOne) {
  // getenv takes the first of duplicate names: each variable appears once.
  auto run = [&](std::map<std::string, std::string> overrides) {
    std::map<std::string, std::string> vars = {{"COURTPIECE_PG_URL", db_->url()},
                                               {"COURTPIECE_LOBBY_ADDR", "127.0.0.1:0"},
                                               {"COURTPIECE_LOBBY_METRICS_ADDR", "off"},
                                               {"COURTPIECE_LOG_LEVEL", "error"}};
    for (auto& [k, v] : overrides) vars[k] = v;
    std::vector<std::string> env;
    for (const auto& [k, v] : vars) env.push_back(k + "=" + v);
    return common::WaitExit(common::Spawn({common::BinDir() + "/courtpiece-lobby"}, env));
  };
  // The test's own environment has no key: a lobby without one must refuse to start.
  EXPECT_EQ(run({}), 2);
  EXPECT_EQ(run({{"COURTPIECE_LOBBY_SIGNING_KEY", "k1:not-base64!"}}), 2);
  // Verify keys without the signing key's own public key.
  EXPECT_EQ(run({{"COURTPIECE_LOBBY_SIGNING_KEY", new_key_.SeedText()},
                 {"COURTPIECE_LOBBY_VERIFY_KEYS", old_key_.PublicText()}}),
            2);
  absl::StatusOr<std::unique_ptr<storage::TestDatabase>> empty = storage::TestDatabase::Create();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(run({{"COURTPIECE_LOBBY_SIGNING_KEY", new_key_.SeedText()},
                 {"COURTPIECE_PG_URL", (*empty)->url()}}),
            1);
}

}  // namespace
}  // namespace courtpiece::lobby
