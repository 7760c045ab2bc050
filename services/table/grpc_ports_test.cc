// GrpcWalletPort against a scripted wallet served in this process, and GrpcRecordsPort
// against the fake receivers (testing/fake_receivers.h): real gRPC over loopback, port 0.
#include "services/table/grpc_ports.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/table/testing/fake_receivers.h"

namespace courtpiece::table_service {
namespace {

namespace wv1 = ::courtpiece::wallet::v1;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr int64_t kBet = 25;

// Waits for a reply that must come (the bound only keeps a broken test from hanging).
template <typename T>
T Await(std::future<T>& future) {
  EXPECT_EQ(future.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  return future.get();
}

// A wallet that answers from a balance map and a script of Transfer answers.
class ScriptedWallet final : public wv1::Wallet::Service {
 public:
  grpc::Status GetBalance(grpc::ServerContext*, const wv1::GetBalanceRequest* request,
                          wv1::GetBalanceResponse* response) override {
    std::lock_guard<std::mutex> lock(mu);
    reads.push_back(request->account_id());
    auto it = balances.find(request->account_id());
    if (it == balances.end()) return {grpc::StatusCode::NOT_FOUND, "no such account"};
    response->set_account_id(it->first);
    response->set_balance(it->second);
    return grpc::Status::OK;
  }
  grpc::Status Transfer(grpc::ServerContext*, const wv1::TransferRequest* request,
                        wv1::TransferResponse*) override {
    std::unique_lock<std::mutex> lock(mu);
    transfers.push_back(*request);
    ++held;
    unheld.wait(lock, [this] { return !holding; });
    --held;
    for (const auto& [account, balance] : balances_after_transfer) balances[account] = balance;
    if (answers.empty()) return grpc::Status::OK;
    grpc::Status answer = answers.front();
    answers.pop_front();
    return answer;
  }
  void SetHolding(bool h) {
    {
      std::lock_guard<std::mutex> lock(mu);
      holding = h;
    }
    unheld.notify_all();
  }
  int Held() {
    std::lock_guard<std::mutex> lock(mu);
    return held;
  }

  std::mutex mu;
  std::condition_variable unheld;
  std::map<std::string, int64_t> balances;
  std::map<std::string, int64_t> balances_after_transfer;  // set when a transfer arrives
  std::deque<grpc::Status> answers;
  std::vector<std::string> reads;
  std::vector<wv1::TransferRequest> transfers;
  bool holding = false;
  int held = 0;
};

table::Transfer Stake(const std::string& key) {
  return {.key = key,
          .step = table::TransferStep::kStake,
          .legs = {{"player:ann", -kBet},
                   {"player:ben", -kBet},
                   {"player:cat", -kBet},
                   {"house", -kBet},
                   {"pot:t1:7", 4 * kBet}},
          .min_balance_coins = 2 * kBet,
          .awaited = true};
}

class GrpcWalletPortTest : public ::testing::Test {
 protected:
  void SetUp() override { StartPort({}); }
  void TearDown() override {
    wallet_.SetHolding(false);
    port_.reset();
    server_->Shutdown(absl::Now() + absl::Seconds(1));
  }
  void StartPort(GrpcPortOptions options) {
    if (server_ == nullptr) {
      wallet_.balances = {{"player:ann", 500}, {"player:ben", 500}, {"player:cat", 500}};
      absl::StatusOr<std::unique_ptr<common::GrpcServer>> server =
          common::GrpcServer::Start({.listen_address = "127.0.0.1:0"}, {&wallet_}, metrics_);
      ASSERT_TRUE(server.ok()) << server.status();
      server_ = *std::move(server);
    }
    port_ = std::make_unique<GrpcWalletPort>(
        grpc::CreateChannel(server_->LoopbackAddress(), grpc::InsecureChannelCredentials()),
        options);
  }
  std::future<WalletReply> Send(const table::Transfer& t,
                                absl::Duration timeout = absl::Seconds(10)) {
    auto promise = std::make_shared<std::promise<WalletReply>>();
    std::future<WalletReply> future = promise->get_future();
    port_->Transfer(t, "t1", 7, absl::Now() + timeout,
                    [promise](WalletReply reply) { promise->set_value(std::move(reply)); });
    return future;
  }
  WalletReply SendAndWait(const table::Transfer& t) {
    std::future<WalletReply> f = Send(t);
    return Await(f);
  }
  size_t TransfersSeen() {
    std::lock_guard<std::mutex> lock(wallet_.mu);
    return wallet_.transfers.size();
  }

  common::Metrics metrics_{"test"};
  ScriptedWallet wallet_;
  std::unique_ptr<common::GrpcServer> server_;
  std::unique_ptr<GrpcWalletPort> port_;
};

TEST_F(GrpcWalletPortTest, StakeReadsDebitedPlayersThenSendsTheTranslatedTransfer) {
  WalletReply reply = SendAndWait(Stake("t1:7:stake:0"));
  EXPECT_TRUE(reply.status.ok()) << reply.status;
  EXPECT_THAT(reply.short_players, IsEmpty());
  EXPECT_THAT(wallet_.reads, UnorderedElementsAre("player:ann", "player:ben", "player:cat"));
  ASSERT_EQ(wallet_.transfers.size(), 1u);
  const wv1::TransferRequest& sent = wallet_.transfers[0];
  EXPECT_EQ(sent.idempotency_key(), "t1:7:stake:0");
  EXPECT_EQ(sent.table_id(), "t1");
  EXPECT_EQ(sent.round(), 7);
  EXPECT_EQ(sent.reason(), "stake");
  ASSERT_EQ(sent.legs_size(), 5);
  EXPECT_EQ(sent.legs(0).account_id(), "player:ann");
  EXPECT_EQ(sent.legs(0).side(), wv1::SIDE_DEBIT);
  EXPECT_EQ(sent.legs(0).amount(), kBet);
  EXPECT_EQ(sent.legs(3).account_id(), "house");
  EXPECT_EQ(sent.legs(3).side(), wv1::SIDE_DEBIT);
  EXPECT_EQ(sent.legs(4).account_id(), "pot:t1:7");
  EXPECT_EQ(sent.legs(4).side(), wv1::SIDE_CREDIT);
  EXPECT_EQ(sent.legs(4).amount(), 4 * kBet);
  EXPECT_EQ(port_->calls_in_flight(), 0);
}

TEST_F(GrpcWalletPortTest, StakeBelowMinBalanceIsRefusedWithoutSendingIt) {
  wallet_.balances["player:ben"] = 2 * kBet - 1;
  wallet_.balances.erase("player:cat");
  WalletReply reply = SendAndWait(Stake("k"));
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reply.short_players, ElementsAre("ben", "cat"));
  EXPECT_EQ(TransfersSeen(), 0u);
}

TEST_F(GrpcWalletPortTest, RefusalAfterTheCheckRereadsAndNamesWhoCannotPay) {
  // Someone spent cat's coins between the read and the transfer.
  wallet_.balances_after_transfer = {{"player:cat", kBet - 1}};
  wallet_.answers.push_back({grpc::StatusCode::FAILED_PRECONDITION, "player:cat would go < 0"});
  WalletReply reply = SendAndWait(Stake("k"));
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reply.short_players, ElementsAre("cat"));
  EXPECT_EQ(wallet_.reads.size(), 6u);  // three before, three after
}

TEST_F(GrpcWalletPortTest, CourtStakeRefusedNotFoundNamesTheMissingPlayer) {
  wallet_.balances_after_transfer = {{"player:ben", 0}};
  wallet_.balances.erase("player:ann");
  wallet_.answers.push_back({grpc::StatusCode::NOT_FOUND, "player:ann"});
  table::Transfer court{
      .key = "t1:7:court_stake",
      .step = table::TransferStep::kCourtStake,
      .legs = {{"player:ann", -kBet}, {"player:ben", -kBet}, {"pot:t1:7", 2 * kBet}},
      .awaited = true};
  WalletReply reply = SendAndWait(court);
  EXPECT_EQ(reply.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reply.short_players, ElementsAre("ann", "ben"));
  ASSERT_EQ(wallet_.transfers.size(), 1u);
  EXPECT_EQ(wallet_.transfers[0].reason(), "court_stake");
}

TEST_F(GrpcWalletPortTest, WalletCodesMapPerTheContract) {
  table::Transfer payout{.key = "t1:7:payout",
                         .step = table::TransferStep::kPayout,
                         .legs = {{"pot:t1:7", -2 * kBet}, {"player:ann", 2 * kBet}}};
  wallet_.answers = {{grpc::StatusCode::UNAVAILABLE, "pg down"},
                     {grpc::StatusCode::DEADLINE_EXCEEDED, "slow"},
                     {grpc::StatusCode::CANCELLED, "cut"},
                     {grpc::StatusCode::ALREADY_EXISTS, "key reused"},
                     {grpc::StatusCode::INVALID_ARGUMENT, "bad"},
                     {grpc::StatusCode::FAILED_PRECONDITION, "pot short"}};
  EXPECT_EQ(SendAndWait(payout).status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(SendAndWait(payout).status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(SendAndWait(payout).status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(SendAndWait(payout).status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(SendAndWait(payout).status.code(), absl::StatusCode::kInvalidArgument);
  WalletReply pot_short = SendAndWait(payout);  // no player pays: nobody to name
  EXPECT_EQ(pot_short.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(pot_short.short_players, IsEmpty());
  EXPECT_TRUE(SendAndWait(payout).status.ok());
  EXPECT_THAT(wallet_.reads, IsEmpty());  // no minimum, no player debited: nothing read
  EXPECT_EQ(wallet_.transfers.back().reason(), "payout");
}

TEST_F(GrpcWalletPortTest, ZeroLegOrNoKeyIsInvalidArgumentAndNothingIsSent) {
  table::Transfer zero = Stake("k");
  zero.legs[0].amount_coins = 0;
  EXPECT_EQ(SendAndWait(zero).status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SendAndWait(Stake("")).status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TransfersSeen(), 0u);
  EXPECT_THAT(wallet_.reads, IsEmpty());
  EXPECT_EQ(port_->calls_in_flight(), 0);
}

TEST_F(GrpcWalletPortTest, PastTheBoundCallsAreRefusedAtOnceUntilOneFinishes) {
  StartPort({.calls_in_flight_max = 1});
  wallet_.SetHolding(true);
  table::Transfer refund{.key = "t1:7:refund",
                         .step = table::TransferStep::kRefund,
                         .legs = {{"pot:t1:7", -kBet}, {"player:ann", kBet}}};
  std::future<WalletReply> first = Send(refund);
  while (wallet_.Held() == 0) std::this_thread::yield();
  EXPECT_EQ(port_->calls_in_flight(), 1);
  std::optional<WalletReply> second;
  port_->Transfer(refund, "t1", 7, absl::Now() + absl::Seconds(10),
                  [&](WalletReply r) { second = std::move(r); });
  ASSERT_TRUE(second.has_value());  // answered before the call returned
  EXPECT_EQ(second->status.code(), absl::StatusCode::kResourceExhausted);
  std::optional<absl::StatusOr<int64_t>> balance;
  port_->GetBalance("ann", absl::Now() + absl::Seconds(10),
                    [&](absl::StatusOr<int64_t> b) { balance = std::move(b); });
  ASSERT_TRUE(balance.has_value());
  EXPECT_EQ(balance->status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(TransfersSeen(), 1u);
  wallet_.SetHolding(false);
  EXPECT_TRUE(Await(first).status.ok());
  EXPECT_EQ(port_->calls_in_flight(), 0);
  EXPECT_TRUE(SendAndWait(refund).status.ok());
}

// A call's place is free before its `done` runs (done may start the next call), but it is
// unfinished until `done` returns: main waits for that before it destroys the host.
TEST_F(GrpcWalletPortTest, ACallIsUnfinishedUntilItsDoneReturns) {
  std::promise<void> in_done, leave_done;
  std::shared_future<void> leave = leave_done.get_future().share();
  port_->Transfer(Stake("t1:7:stake:0"), "t1", 7, absl::Now() + absl::Seconds(10),
                  [&in_done, leave](WalletReply) {
                    in_done.set_value();
                    leave.wait();
                  });
  in_done.get_future().wait();
  EXPECT_EQ(port_->calls_in_flight(), 0);
  EXPECT_EQ(port_->calls_unfinished(), 1);
  leave_done.set_value();
  for (int i = 0; i < 1000 && port_->calls_unfinished() != 0; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(port_->calls_unfinished(), 0);
}

TEST_F(GrpcWalletPortTest, DeadlineBoundsAHeldCall) {
  wallet_.SetHolding(true);
  table::Transfer refund{.key = "t1:7:refund",
                         .step = table::TransferStep::kRefund,
                         .legs = {{"pot:t1:7", -kBet}, {"player:ann", kBet}}};
  std::future<WalletReply> reply = Send(refund, absl::Milliseconds(300));
  EXPECT_EQ(Await(reply).status.code(), absl::StatusCode::kDeadlineExceeded);
  wallet_.SetHolding(false);
}

TEST_F(GrpcWalletPortTest, GetBalanceReadsThePlayerAccount) {
  auto read = [&](const std::string& player) {
    auto promise = std::make_shared<std::promise<absl::StatusOr<int64_t>>>();
    std::future<absl::StatusOr<int64_t>> future = promise->get_future();
    port_->GetBalance(player, absl::Now() + absl::Seconds(10),
                      [promise](absl::StatusOr<int64_t> b) { promise->set_value(std::move(b)); });
    return Await(future);
  };
  EXPECT_EQ(*read("ann"), 500);
  EXPECT_EQ(read("nobody").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(wallet_.reads, ElementsAre("player:ann", "player:nobody"));
}

TEST(GrpcWalletPortDownTest, NothingListeningIsUnavailable) {
  // A port that was bound and closed again: nothing listens there.
  const std::string address = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
  GrpcWalletPort port(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  auto promise = std::make_shared<std::promise<WalletReply>>();
  std::future<WalletReply> future = promise->get_future();
  port.Transfer(Stake("k"), "t1", 7, absl::Now() + absl::Seconds(10),
                [promise](WalletReply r) { promise->set_value(std::move(r)); });
  EXPECT_EQ(Await(future).status.code(), absl::StatusCode::kUnavailable);
}

// --- records ---

class GrpcRecordsPortTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }
  void Start(GrpcPortOptions options) {
    if (receivers_ == nullptr) {
      auto receivers = testing::FakeReceivers::Start();
      ASSERT_TRUE(receivers.ok()) << receivers.status();
      receivers_ = *std::move(receivers);
    }
    auto channel = grpc::CreateChannel(receivers_->address(), grpc::InsecureChannelCredentials());
    port_ = std::make_unique<GrpcRecordsPort>(channel, channel, options);
  }
  void TearDown() override { receivers_->SetHolding(false); }

  // Calls `send(done)` and waits for the status.
  template <typename Send>
  absl::Status Call(Send send) {
    auto promise = std::make_shared<std::promise<absl::Status>>();
    std::future<absl::Status> future = promise->get_future();
    send([promise](absl::Status s) { promise->set_value(std::move(s)); });
    return Await(future);
  }
  absl::Time Deadline() const { return absl::Now() + absl::Seconds(10); }

  std::unique_ptr<testing::FakeReceivers> receivers_;
  std::unique_ptr<GrpcRecordsPort> port_;
};

TEST_F(GrpcRecordsPortTest, EachRecordLandsOnceEvenWhenSentTwice) {
  lobby::v1::RecordGameRequest game;
  game.set_key("t1:game:1");
  game.set_table_id("t1");
  game.set_winning_team(1);
  lobby::v1::RecordQuitRequest quit;
  quit.set_key("t1:quit:1:ann");
  quit.set_player("ann");
  lobby::v1::RecordRoundRequest round;
  round.set_key("t1:round:3");
  round.set_seed_hex("ab");
  moderation::v1::FileReportRequest report;
  report.set_key("t1:report:n1:ben");
  report.set_author("ann");
  lobby::v1::RecordTableClosedRequest closed;
  closed.set_key("t1:closed");
  closed.set_table_id("t1");
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(Call([&](auto done) { port_->RecordTableClosed(closed, Deadline(), done); }).ok());
    EXPECT_TRUE(Call([&](auto done) { port_->RecordGame(game, Deadline(), done); }).ok());
    EXPECT_TRUE(Call([&](auto done) { port_->RecordQuit(quit, Deadline(), done); }).ok());
    EXPECT_TRUE(Call([&](auto done) { port_->RecordRound(round, Deadline(), done); }).ok());
    EXPECT_TRUE(Call([&](auto done) { port_->FileReport(report, Deadline(), done); }).ok());
  }
  ASSERT_EQ(receivers_->games().size(), 1u);
  EXPECT_EQ(receivers_->games().at("t1:game:1").winning_team(), 1);
  EXPECT_EQ(receivers_->quits().at("t1:quit:1:ann").player(), "ann");
  EXPECT_EQ(receivers_->rounds().at("t1:round:3").seed_hex(), "ab");
  EXPECT_EQ(receivers_->reports().at("t1:report:n1:ben").author(), "ann");
  EXPECT_EQ(receivers_->received("t1:game:1"), 2);  // the second was a replay
  EXPECT_EQ(receivers_->received("t1:report:n1:ben"), 2);
  EXPECT_EQ(receivers_->closes().at("t1:closed").table_id(), "t1");
  EXPECT_EQ(receivers_->received("t1:closed"), 2);
  EXPECT_EQ(port_->calls_in_flight(), 0);
}

TEST_F(GrpcRecordsPortTest, CheckVoiceCarriesModerationsAnswer) {
  EXPECT_TRUE(Call([&](auto done) { port_->CheckVoice("ann", Deadline(), done); }).ok());
  receivers_->Mute("ann", "muted: an admin stopped your voice notes until they lift it");
  const absl::Status muted = Call([&](auto done) { port_->CheckVoice("ann", Deadline(), done); });
  EXPECT_EQ(muted.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(muted.message(), "muted: an admin stopped your voice notes until they lift it");
  EXPECT_TRUE(Call([&](auto done) { port_->CheckVoice("ben", Deadline(), done); }).ok());
  receivers_->SetRefusing(true);
  EXPECT_EQ(Call([&](auto done) { port_->CheckVoice("ben", Deadline(), done); }).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(port_->calls_in_flight(), 0);
}

TEST_F(GrpcRecordsPortTest, UnavailableWhileTheReceiversRefuse) {
  lobby::v1::RecordRoundRequest round;
  round.set_key("t1:round:1");
  receivers_->SetRefusing(true);
  EXPECT_EQ(Call([&](auto done) { port_->RecordRound(round, Deadline(), done); }).code(),
            absl::StatusCode::kUnavailable);
  moderation::v1::FileReportRequest report;
  report.set_key("t1:report:n1:ben");
  EXPECT_EQ(Call([&](auto done) { port_->FileReport(report, Deadline(), done); }).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_TRUE(receivers_->rounds().empty());
  EXPECT_EQ(receivers_->refused(), 2);
  receivers_->SetRefusing(false);
  EXPECT_TRUE(Call([&](auto done) { port_->RecordRound(round, Deadline(), done); }).ok());
  EXPECT_EQ(receivers_->received("t1:round:1"), 1);
  lobby::v1::RecordRoundRequest no_key;
  EXPECT_EQ(Call([&](auto done) { port_->RecordRound(no_key, Deadline(), done); }).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(GrpcRecordsPortTest, PastTheBoundRecordsAreRefusedAtOnce) {
  Start({.calls_in_flight_max = 1});
  receivers_->SetHolding(true);
  lobby::v1::RecordGameRequest game;
  game.set_key("t1:game:1");
  auto promise = std::make_shared<std::promise<absl::Status>>();
  std::future<absl::Status> first = promise->get_future();
  port_->RecordGame(game, Deadline(), [promise](absl::Status s) { promise->set_value(s); });
  while (receivers_->held() == 0) std::this_thread::yield();
  std::optional<absl::Status> second;
  port_->RecordGame(game, Deadline(), [&](absl::Status s) { second = s; });
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->code(), absl::StatusCode::kResourceExhausted);
  receivers_->SetHolding(false);
  EXPECT_TRUE(Await(first).ok());
  EXPECT_EQ(receivers_->received("t1:game:1"), 1);
}

TEST(FakeReceiversTest, EveryAnsweredCallIsOneJsonLine) {
  std::mutex mu;
  std::vector<std::string> lines;
  auto receivers = testing::FakeReceivers::Start("127.0.0.1:0", [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  });
  ASSERT_TRUE(receivers.ok()) << receivers.status();
  auto channel = grpc::CreateChannel((*receivers)->address(), grpc::InsecureChannelCredentials());
  GrpcRecordsPort port(channel, channel);
  moderation::v1::FileReportRequest report;
  report.set_key("t1:report:n1:ben");
  report.set_round(3);
  (*receivers)->RefuseNext(1);
  for (int i = 0; i < 3; ++i) {
    auto promise = std::make_shared<std::promise<absl::Status>>();
    std::future<absl::Status> future = promise->get_future();
    port.FileReport(report, absl::Now() + absl::Seconds(10),
                    [promise](absl::Status s) { promise->set_value(s); });
    const absl::Status status = Await(future);
    EXPECT_EQ(status.code(), i == 0 ? absl::StatusCode::kUnavailable : absl::StatusCode::kOk);
  }
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_THAT(
      lines,
      ElementsAre("{\"kind\":\"file_report\",\"key\":\"t1:report:n1:ben\",\"replayed\":false,"
                  "\"code\":\"UNAVAILABLE\",\"request\":{\"key\":\"t1:report:n1:ben\","
                  "\"round\":\"3\"}}",
                  "{\"kind\":\"file_report\",\"key\":\"t1:report:n1:ben\",\"replayed\":false,"
                  "\"code\":\"OK\",\"request\":{\"key\":\"t1:report:n1:ben\","
                  "\"round\":\"3\"}}",
                  "{\"kind\":\"file_report\",\"key\":\"t1:report:n1:ben\",\"replayed\":true,"
                  "\"code\":\"OK\",\"request\":{\"key\":\"t1:report:n1:ben\","
                  "\"round\":\"3\"}}"));
}

}  // namespace
}  // namespace courtpiece::table_service
