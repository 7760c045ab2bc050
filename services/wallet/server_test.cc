// Unit tests of the gRPC translation layer: handlers called directly on the fake store.
#include "services/wallet/server.h"

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "courtpiece/common/clock.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/metrics.h"
#include "gmock/gmock.h"
#include "grpcpp/server_context.h"
#include "gtest/gtest.h"
#include "services/wallet/fake_ledger_store.h"

namespace courtpiece::wallet {
namespace {

using ::testing::HasSubstr;

class WalletServiceTest : public ::testing::Test {
 protected:
  WalletServiceTest()
      : ledger_(store_, clock_, LedgerOptions()),
        metrics_("wallet"),
        log_("wallet", common::LogLevel::kInfo,
             [this](std::string_view line) {
               std::lock_guard<std::mutex> lock(log_mu_);
               log_lines_.emplace_back(line);
             }),
        service_(ledger_, clock_, absl::Seconds(5), metrics_, log_) {}

  std::vector<std::string> LogLines() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_lines_;
  }

  void SetUp() override {
    ASSERT_TRUE(ledger_.Init(clock_.Now() + absl::Seconds(1)).ok());
    for (const char* p : {"ann", "ben"}) {
      v1::OpenAccountRequest request;
      request.set_player_id(p);
      v1::OpenAccountResponse response;
      grpc::ServerContext context;
      ASSERT_TRUE(service_.OpenAccount(&context, &request, &response).ok());
      EXPECT_EQ(response.account_id(), std::string("player:") + p);
      EXPECT_TRUE(response.created());
      EXPECT_EQ(response.balance(), 1000);
    }
  }

  grpc::Status Transfer(const v1::TransferRequest& request, v1::TransferResponse* response) {
    grpc::ServerContext context;
    return service_.Transfer(&context, &request, response);
  }

  static v1::TransferRequest AnnPaysBen(const std::string& key, int64_t amount) {
    v1::TransferRequest r;
    r.set_idempotency_key(key);
    r.set_table_id("t1");
    r.set_round(3);
    r.set_reason("payout");
    v1::Leg* debit = r.add_legs();
    debit->set_account_id("player:ann");
    debit->set_side(v1::SIDE_DEBIT);
    debit->set_amount(amount);
    v1::Leg* credit = r.add_legs();
    credit->set_account_id("player:ben");
    credit->set_side(v1::SIDE_CREDIT);
    credit->set_amount(amount);
    return r;
  }

  FakeClock clock_;
  FakeLedgerStore store_;
  Ledger ledger_;
  common::Metrics metrics_;
  std::mutex log_mu_;
  std::vector<std::string> log_lines_;  // guarded by log_mu_
  common::Logger log_;
  WalletService service_;
};

TEST_F(WalletServiceTest, TransferTranslatesBothWays) {
  v1::TransferResponse response;
  ASSERT_TRUE(Transfer(AnnPaysBen("k1", 40), &response).ok());
  EXPECT_FALSE(response.replayed());
  ASSERT_EQ(response.balances_after_size(), 2);
  EXPECT_EQ(response.balances_after(0).account_id(), "player:ann");
  EXPECT_EQ(response.balances_after(0).balance(), 960);
  EXPECT_EQ(response.balances_after(1).balance(), 1040);
  ASSERT_TRUE(Transfer(AnnPaysBen("k1", 40), &response).ok());
  EXPECT_TRUE(response.replayed());

  v1::HistoryRequest history;
  history.set_account_id("player:ben");
  v1::HistoryResponse page;
  grpc::ServerContext context;
  ASSERT_TRUE(service_.History(&context, &history, &page).ok());
  ASSERT_EQ(page.entries_size(), 2);
  EXPECT_EQ(page.entries(0).amount(), 40);
  EXPECT_EQ(page.entries(0).round(), 3);
  EXPECT_EQ(page.entries(0).reason(), "payout");
  EXPECT_EQ(page.entries(0).table_id(), "t1");
  EXPECT_EQ(page.entries(0).idempotency_key(), "k1");
  EXPECT_TRUE(page.next_cursor().empty());

  const std::string text = metrics_.Serialize();
  EXPECT_THAT(text, HasSubstr("courtpiece_wallet_transfers_total{result=\"ok\"} 1"));
  EXPECT_THAT(text, HasSubstr("courtpiece_wallet_transfers_total{result=\"replayed\"} 1"));
  EXPECT_THAT(text, HasSubstr("courtpiece_wallet_idempotent_replays_total 1"));
  EXPECT_THAT(text, HasSubstr("courtpiece_wallet_transfer_latency_seconds_count 2"));
}

TEST_F(WalletServiceTest, DomainCodesBecomeGrpcCodes) {
  v1::TransferResponse response;
  EXPECT_EQ(Transfer(AnnPaysBen("", 1), &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Transfer(AnnPaysBen("k", 1001), &response).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  v1::TransferRequest no_side = AnnPaysBen("k", 1);
  no_side.mutable_legs(0)->set_side(v1::SIDE_UNSPECIFIED);
  EXPECT_EQ(Transfer(no_side, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(Transfer(AnnPaysBen("k", 1), &response).ok());
  EXPECT_EQ(Transfer(AnnPaysBen("k", 2), &response).error_code(), grpc::StatusCode::ALREADY_EXISTS);
  v1::GetBalanceRequest balance;
  balance.set_account_id("player:nobody");
  v1::GetBalanceResponse balance_response;
  grpc::ServerContext context;
  EXPECT_EQ(service_.GetBalance(&context, &balance, &balance_response).error_code(),
            grpc::StatusCode::NOT_FOUND);
  store_.FailNext(3, absl::UnavailableError("down"));
  EXPECT_EQ(Transfer(AnnPaysBen("k9", 1), &response).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(metrics_.Serialize(),
              HasSubstr("courtpiece_wallet_transfers_total{result=\"failed_precondition\"} 1"));
}

// Infrastructure errors reach the client with a fixed message and the details go to the
// log; the domain's own messages (written for clients) pass as they are, unlogged.
TEST_F(WalletServiceTest, InfrastructureErrorTextGoesToTheLogNotTheClient) {
  const std::string leak =
      "postgres [57014] ERROR:  canceling statement due to statement timeout\nCONTEXT:  SQL "
      "statement \"UPDATE wallet.accounts a SET balance = a.balance + v_amount\"";
  v1::TransferResponse response;
  store_.FailNext(1, absl::DeadlineExceededError(leak));
  grpc::Status s = Transfer(AnnPaysBen("k1", 1), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(s.error_message(),
            "deadline exceeded before the server finished; the call may or may not have taken "
            "effect");
  store_.FailNext(3, absl::UnavailableError("postgres connection broken: server closed"));
  s = Transfer(AnnPaysBen("k2", 1), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(s.error_message(),
            "temporarily unavailable; the call may or may not have taken effect; retry");
  store_.FailNext(1, absl::InternalError("postgres [XX000] ERROR:  SELECT 1"));
  s = Transfer(AnnPaysBen("k3", 1), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(s.error_message(), "internal error; the details are in the server's log");
  s = Transfer(AnnPaysBen("k4", 5000), &response);  // a domain outcome: message kept
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "account player:ann would go below zero");

  const std::vector<std::string> lines = LogLines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[0], HasSubstr("\"msg\":\"rpc failed\",\"rpc\":\"Transfer\""));
  EXPECT_THAT(lines[0], HasSubstr("DEADLINE_EXCEEDED: postgres [57014] ERROR:  canceling "
                                  "statement due to statement timeout"));
  EXPECT_THAT(lines[0], HasSubstr("UPDATE wallet.accounts"));
  EXPECT_THAT(lines[1], HasSubstr("UNAVAILABLE: postgres connection broken"));
  EXPECT_THAT(lines[2], HasSubstr("INTERNAL: postgres [XX000]"));
}

TEST_F(WalletServiceTest, DeadlineIsCappedByTheServer) {
  // The fake clock never moves, so a cap of zero makes every RPC's deadline already past.
  WalletService capped(ledger_, clock_, absl::ZeroDuration(), metrics_, log_);
  v1::TransferRequest r = AnnPaysBen("k", 1);
  v1::TransferResponse response;
  grpc::ServerContext context;
  EXPECT_EQ(capped.Transfer(&context, &r, &response).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
}

}  // namespace
}  // namespace courtpiece::wallet
