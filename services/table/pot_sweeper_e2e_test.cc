// PotSweeper through GrpcPotLedgerPort against the real courtpiece-wallet binary on a fresh
// Postgres database (COURTPIECE_TEST_PG_URL) and RedisTableStore on a real Redis
// (COURTPIECE_TEST_REDIS_ADDR): an orphaned pot is refunded to every payer, once.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/redis_client.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/table/grpc_ports.h"
#include "services/table/pot_sweeper.h"
#include "services/table/redis_table_store.h"
#include "services/wallet/wallet_test_util.h"

extern char** environ;

namespace courtpiece::table_service {
namespace {

namespace wv1 = ::courtpiece::wallet::v1;

constexpr int64_t kGrant = 500;
constexpr int64_t kBet = 25;

class PotSweeperE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* redis_addr = std::getenv("COURTPIECE_TEST_REDIS_ADDR");
    if (redis_addr == nullptr) GTEST_SKIP() << "COURTPIECE_TEST_REDIS_ADDR not set";
    absl::StatusOr<storage::RedisOptions> redis = storage::ParseRedisAddr(redis_addr);
    ASSERT_TRUE(redis.ok()) << redis.status();
    store_ = std::make_unique<RedisTableStore>(
        RedisTableStoreOptions{.redis = *redis, .connections = 1});
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db =
        wallet::testing::CreateWalletDatabase();
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    address_ = absl::StrCat("127.0.0.1:", ::courtpiece::common::FreeLoopbackPort());
    pid_ = ::courtpiece::common::Spawn(
        {::courtpiece::common::BinDir() + "/courtpiece-wallet"},
        {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_WALLET_ADDR=" + address_,
         "COURTPIECE_WALLET_METRICS_ADDR=off",
         absl::StrCat("COURTPIECE_WALLET_STARTING_GRANT=", kGrant),
         "COURTPIECE_WALLET_HOUSE_SHARDS=4", "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_GT(pid_, 0);
    auto channel = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
    bool healthy = false;
    for (int i = 0; i < 100 && !healthy; ++i) {
      absl::StatusOr<bool> serving = common::CheckHealth(*channel, "", absl::Milliseconds(200));
      healthy = serving.ok() && *serving;
      if (!healthy) absl::SleepFor(absl::Milliseconds(100));
    }
    ASSERT_TRUE(healthy) << "courtpiece-wallet did not become healthy at " << address_;
    stub_ = wv1::Wallet::NewStub(channel);
    ledger_ = std::make_unique<GrpcPotLedgerPort>(channel);
    for (const char* p : {"ann", "ben", "cat", "dan"}) {
      wv1::OpenAccountRequest request;
      request.set_player_id(p);
      wv1::OpenAccountResponse response;
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
      ASSERT_TRUE(stub_->OpenAccount(&context, request, &response).ok());
    }
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      EXPECT_EQ(::courtpiece::common::WaitExit(pid_), 0);
    }
  }

  int64_t Balance(const std::string& account) {
    wv1::GetBalanceRequest request;
    request.set_account_id(account);
    wv1::GetBalanceResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    grpc::Status s = stub_->GetBalance(&context, request, &response);
    EXPECT_TRUE(s.ok()) << account << ": " << s.error_message();
    return response.balance();
  }

  int RunAudit() {
    return ::courtpiece::common::WaitExit(::courtpiece::common::Spawn(
        {::courtpiece::common::BinDir() + "/courtpiece-wallet-audit", "--pg-url", db_->url()}, {}));
  }

  std::unique_ptr<RedisTableStore> store_;
  std::unique_ptr<storage::TestDatabase> db_;
  std::string address_;
  pid_t pid_ = -1;
  std::unique_ptr<wv1::Wallet::Stub> stub_;
  std::unique_ptr<GrpcPotLedgerPort> ledger_;
};

TEST_F(PotSweeperE2eTest, OrphanedPotIsRefundedOnceThroughTheRealWallet) {
  ASSERT_EQ(store_->Load("gone").status().code(), absl::StatusCode::kNotFound);
  // The stake a table would have sent: four players into pot:gone:1.
  wv1::TransferRequest stake;
  stake.set_idempotency_key("gone:1:stake");
  stake.set_table_id("gone");
  stake.set_round(1);
  stake.set_reason("stake");
  for (const char* p : {"player:ann", "player:ben", "player:cat", "player:dan"}) {
    wv1::Leg* leg = stake.add_legs();
    leg->set_account_id(p);
    leg->set_side(wv1::SIDE_DEBIT);
    leg->set_amount(kBet);
  }
  wv1::Leg* pot = stake.add_legs();
  pot->set_account_id("pot:gone:1");
  pot->set_side(wv1::SIDE_CREDIT);
  pot->set_amount(4 * kBet);
  wv1::TransferResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  ASSERT_TRUE(stub_->Transfer(&context, stake, &response).ok());
  ASSERT_EQ(Balance("pot:gone:1"), 4 * kBet);

  common::Logger log("pot-sweeper-e2e", common::LogLevel::kWarn);
  PotSweeperOptions options;
  options.grace_ms = 0;
  PotSweeper sweeper(*ledger_, *store_, RealClock::Instance(), options, log);
  absl::StatusOr<SweepReport> first = sweeper.RunPass();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->pots_seen, 1);
  EXPECT_EQ(first->refunded, 1);
  EXPECT_EQ(Balance("pot:gone:1"), 0);
  for (const char* p : {"player:ann", "player:ben", "player:cat", "player:dan"}) {
    EXPECT_EQ(Balance(p), kGrant) << p;
  }
  EXPECT_EQ(RunAudit(), 0);

  absl::StatusOr<SweepReport> second = sweeper.RunPass();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, SweepReport{});
  for (const char* p : {"player:ann", "player:ben", "player:cat", "player:dan"}) {
    EXPECT_EQ(Balance(p), kGrant) << p;
  }
  EXPECT_EQ(RunAudit(), 0);
}

}  // namespace
}  // namespace courtpiece::table_service
