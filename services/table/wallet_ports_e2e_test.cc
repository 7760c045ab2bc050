// GrpcWalletPort against the real courtpiece-wallet binary on a fresh Postgres database
// (COURTPIECE_TEST_PG_URL), finishing with courtpiece-wallet-audit.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/table/grpc_ports.h"
#include "services/wallet/wallet_test_util.h"

extern char** environ;

namespace courtpiece::table_service {
namespace {

namespace wv1 = ::courtpiece::wallet::v1;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kGrant = 500;
constexpr int64_t kBet = 25;

class WalletPortE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db =
        wallet::testing::CreateWalletDatabase();
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    address_ = absl::StrCat("127.0.0.1:", ::courtpiece::common::FreeLoopbackPort());
    StartWallet();
    auto channel = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
    stub_ = wv1::Wallet::NewStub(channel);
    port_ = std::make_unique<GrpcWalletPort>(channel);
    for (const char* p : {"ann", "ben", "cat", "dan"}) Open(p);
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      EXPECT_EQ(::courtpiece::common::WaitExit(pid_), 0);
    }
  }

  void StartWallet() {
    pid_ = ::courtpiece::common::Spawn(
        {::courtpiece::common::BinDir() + "/courtpiece-wallet"},
        {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_WALLET_ADDR=" + address_,
         "COURTPIECE_WALLET_METRICS_ADDR=off",
         absl::StrCat("COURTPIECE_WALLET_STARTING_GRANT=", kGrant),
         "COURTPIECE_WALLET_HOUSE_SHARDS=4", "COURTPIECE_WALLET_PG_POOL_SIZE=4",
         "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_GT(pid_, 0);
    auto health = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
    for (int i = 0; i < 100; ++i) {
      absl::StatusOr<bool> serving = common::CheckHealth(*health, "", absl::Milliseconds(200));
      if (serving.ok() && *serving) return;
      absl::SleepFor(absl::Milliseconds(100));
    }
    FAIL() << "courtpiece-wallet did not become healthy at " << address_;
  }

  void Open(const std::string& player) {
    wv1::OpenAccountRequest request;
    request.set_player_id(player);
    wv1::OpenAccountResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    ASSERT_TRUE(stub_->OpenAccount(&context, request, &response).ok());
  }

  // The balance, or -1 when the account does not exist.
  int64_t Balance(const std::string& account) {
    wv1::GetBalanceRequest request;
    request.set_account_id(account);
    wv1::GetBalanceResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    grpc::Status s = stub_->GetBalance(&context, request, &response);
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) return -1;
    EXPECT_TRUE(s.ok()) << account << ": " << s.error_message();
    return response.balance();
  }

  WalletReply Send(const table::Transfer& t, absl::Duration timeout = absl::Seconds(5)) {
    auto promise = std::make_shared<std::promise<WalletReply>>();
    std::future<WalletReply> future = promise->get_future();
    port_->Transfer(t, "t1", 1, absl::Now() + timeout,
                    [promise](WalletReply r) { promise->set_value(std::move(r)); });
    EXPECT_EQ(future.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    return future.get();
  }

  int RunAudit() {
    return ::courtpiece::common::WaitExit(::courtpiece::common::Spawn(
        {::courtpiece::common::BinDir() + "/courtpiece-wallet-audit", "--pg-url", db_->url()}, {}));
  }

  std::unique_ptr<storage::TestDatabase> db_;
  std::string address_;
  pid_t pid_ = -1;
  std::unique_ptr<wv1::Wallet::Stub> stub_;
  std::unique_ptr<GrpcWalletPort> port_;
};

table::Transfer Stake(const std::string& key) {
  return {.key = key,
          .step = table::TransferStep::kStake,
          .legs = {{"player:ann", -kBet},
                   {"player:ben", -kBet},
                   {"player:cat", -kBet},
                   {"player:dan", -kBet},
                   {"pot:t1:1", 4 * kBet}},
          .min_balance_coins = 2 * kBet,
          .awaited = true};
}

TEST_F(WalletPortE2eTest, StakeOfFourMovesFourBetsOnceAndThePayoutEmptiesThePot) {
  WalletReply reply = Send(Stake("t1:1:stake:0"));
  ASSERT_TRUE(reply.status.ok()) << reply.status;
  for (const char* p : {"ann", "ben", "cat", "dan"}) {
    EXPECT_EQ(Balance(absl::StrCat("player:", p)), kGrant - kBet) << p;
  }
  EXPECT_EQ(Balance("pot:t1:1"), 4 * kBet);
  // The same key again: OK, nothing moves.
  reply = Send(Stake("t1:1:stake:0"));
  ASSERT_TRUE(reply.status.ok()) << reply.status;
  EXPECT_EQ(Balance("player:ann"), kGrant - kBet);
  EXPECT_EQ(Balance("pot:t1:1"), 4 * kBet);

  table::Transfer payout{
      .key = "t1:1:payout",
      .step = table::TransferStep::kPayout,
      .legs = {{"pot:t1:1", -4 * kBet}, {"player:ann", 2 * kBet}, {"player:cat", 2 * kBet}}};
  reply = Send(payout);
  ASSERT_TRUE(reply.status.ok()) << reply.status;
  EXPECT_EQ(Balance("pot:t1:1"), 0);
  EXPECT_EQ(Balance("player:ann"), kGrant + kBet);
  EXPECT_EQ(Balance("player:cat"), kGrant + kBet);
  EXPECT_EQ(Balance("player:ben"), kGrant - kBet);
  EXPECT_EQ(Balance("player:dan"), kGrant - kBet);
  EXPECT_EQ(RunAudit(), 0);
}

TEST_F(WalletPortE2eTest, StakeWithOnePlayerBelowMinBalanceNamesExactlyThemAndMovesNothing) {
  // dan spends down to 2 * bet - 1: enough for the bet, not for the minimum.
  table::Transfer spend{
      .key = "elsewhere",
      .step = table::TransferStep::kPayout,
      .legs = {{"player:dan", -(kGrant - 2 * kBet + 1)}, {"player:ann", kGrant - 2 * kBet + 1}}};
  ASSERT_TRUE(Send(spend).status.ok());
  WalletReply reply = Send(Stake("t1:1:stake:0"));
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reply.short_players, ElementsAre("dan"));
  EXPECT_EQ(Balance("player:dan"), 2 * kBet - 1);
  EXPECT_EQ(Balance("player:ben"), kGrant);
  EXPECT_EQ(Balance("pot:t1:1"), -1);  // never created: nothing moved
  EXPECT_EQ(RunAudit(), 0);
}

TEST_F(WalletPortE2eTest, KilledWalletIsUnavailableAndTheRetryAfterARestartAppliesOnce) {
  kill(pid_, SIGKILL);
  EXPECT_EQ(::courtpiece::common::WaitExit(pid_), 128 + SIGKILL);
  pid_ = -1;
  WalletReply reply = Send(Stake("t1:1:stake:0"), absl::Seconds(2));
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kUnavailable) << reply.status;
  EXPECT_THAT(reply.short_players, IsEmpty());

  StartWallet();
  // The host's loop: re-send with the same key while the answer is "retry".
  for (int attempt = 0; attempt < 50; ++attempt) {
    reply = Send(Stake("t1:1:stake:0"));
    if (!absl::IsUnavailable(reply.status)) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_TRUE(reply.status.ok()) << reply.status;
  ASSERT_TRUE(Send(Stake("t1:1:stake:0")).status.ok());  // and once more: a replay
  EXPECT_EQ(Balance("player:ann"), kGrant - kBet);
  EXPECT_EQ(Balance("player:dan"), kGrant - kBet);
  EXPECT_EQ(Balance("pot:t1:1"), 4 * kBet);
  EXPECT_EQ(RunAudit(), 0);
}

}  // namespace
}  // namespace courtpiece::table_service
