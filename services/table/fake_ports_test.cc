#include "services/table/fake_ports.h"

#include <optional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::table_service {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kBet = 25;

table::Transfer Stake(const std::string& key) {
  return {.key = key,
          .step = table::TransferStep::kStake,
          .legs = {{"player:ann", -kBet},
                   {"player:ben", -kBet},
                   {"player:cat", -kBet},
                   {"house", -kBet},
                   {"pot:t1:1", 4 * kBet}},
          .min_balance_coins = 2 * kBet,
          .awaited = true};
}

class FakeWalletPortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    wallet_.SetBalance("player:ann", 500);
    wallet_.SetBalance("player:ben", 500);
    wallet_.SetBalance("player:cat", 500);
    wallet_.SetBalance("house", 0);
  }
  absl::Time Deadline() const { return clock_.Now() + absl::Seconds(2); }
  // Calls Transfer; the reply when `done` ran before the call returned.
  std::optional<WalletReply> Send(const table::Transfer& t) {
    std::optional<WalletReply> reply;
    wallet_.Transfer(t, "t1", 1, Deadline(), [&](WalletReply r) { reply = std::move(r); });
    return reply;
  }

  FakeClock clock_;
  FakeWalletPort wallet_{clock_};
};

TEST_F(FakeWalletPortTest, StakeMovesFourBetsIntoThePot) {
  std::optional<WalletReply> reply = Send(Stake("t1:1:stake:0"));
  ASSERT_TRUE(reply.has_value());
  EXPECT_TRUE(reply->status.ok()) << reply->status;
  EXPECT_EQ(wallet_.Balance("player:ann"), 500 - kBet);
  EXPECT_EQ(wallet_.Balance("player:cat"), 500 - kBet);
  EXPECT_EQ(wallet_.Balance("house"), -kBet);
  EXPECT_EQ(wallet_.Balance("pot:t1:1"), 4 * kBet);
  EXPECT_EQ(wallet_.TotalCoins(), 1500);
  ASSERT_EQ(wallet_.calls().size(), 1u);
  EXPECT_EQ(wallet_.calls()[0].table_id, "t1");
  EXPECT_EQ(wallet_.calls()[0].round, 1u);
}

TEST_F(FakeWalletPortTest, StakeBelowMinBalanceNamesExactlyTheShortPlayersAndMovesNothing) {
  wallet_.SetBalance("player:ben", 2 * kBet - 1);  // can pay the bet, not the minimum
  table::Transfer t = Stake("t1:1:stake:0");
  t.legs[2].account = "player:dan";  // never opened
  std::optional<WalletReply> reply = Send(t);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reply->short_players, ElementsAre("ben", "dan"));
  EXPECT_EQ(wallet_.Balance("player:ann"), 500);
  EXPECT_EQ(wallet_.Balance("pot:t1:1"), std::nullopt);
  EXPECT_FALSE(wallet_.Applied("t1:1:stake:0"));
  // A refusal leaves no trace: the same key goes through once everyone can pay.
  wallet_.SetBalance("player:ben", 2 * kBet);
  reply = Send(Stake("t1:1:stake:0"));
  EXPECT_TRUE(reply->status.ok()) << reply->status;
  EXPECT_EQ(wallet_.Balance("player:ben"), kBet);
}

TEST_F(FakeWalletPortTest, CourtStakeWithoutMinimumNamesWhoCannotPay) {
  wallet_.SetBalance("player:cat", kBet - 1);
  table::Transfer t{.key = "t1:1:court_stake",
                    .step = table::TransferStep::kCourtStake,
                    .legs = {{"player:ann", -kBet}, {"player:cat", -kBet}, {"pot:t1:1", 2 * kBet}},
                    .awaited = true};
  std::optional<WalletReply> reply = Send(t);
  EXPECT_EQ(reply->status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reply->short_players, ElementsAre("cat"));
  EXPECT_EQ(wallet_.Balance("player:ann"), 500);
}

TEST_F(FakeWalletPortTest, SameKeyTwiceMovesOnceAndAnotherRequestUnderItIsAlreadyExists) {
  ASSERT_TRUE(Send(Stake("k"))->status.ok());
  std::optional<WalletReply> again = Send(Stake("k"));
  EXPECT_TRUE(again->status.ok());
  EXPECT_EQ(wallet_.Balance("player:ann"), 500 - kBet);
  EXPECT_EQ(wallet_.Balance("pot:t1:1"), 4 * kBet);
  EXPECT_EQ(wallet_.applied_count(), 1);
  table::Transfer other = Stake("k");
  other.legs[0].amount_coins = -kBet - 1;
  other.legs[4].amount_coins = 4 * kBet + 1;
  EXPECT_EQ(Send(other)->status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(wallet_.Balance("player:ann"), 500 - kBet);
}

TEST_F(FakeWalletPortTest, PayoutEmptiesThePotIntoTheWinners) {
  ASSERT_TRUE(Send(Stake("s"))->status.ok());
  table::Transfer payout{
      .key = "t1:1:payout",
      .step = table::TransferStep::kPayout,
      .legs = {{"pot:t1:1", -4 * kBet}, {"player:ann", 2 * kBet}, {"player:cat", 2 * kBet}}};
  ASSERT_TRUE(Send(payout)->status.ok());
  EXPECT_EQ(wallet_.Balance("pot:t1:1"), 0);
  EXPECT_EQ(wallet_.Balance("player:ann"), 500 + kBet);
  EXPECT_EQ(wallet_.Balance("player:ben"), 500 - kBet);
  // A pot cannot pay more than it holds: refused, naming no player.
  payout.key = "t1:1:payout-again";
  std::optional<WalletReply> reply = Send(payout);
  EXPECT_EQ(reply->status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reply->short_players, IsEmpty());
  EXPECT_EQ(wallet_.TotalCoins(), 1500);
}

TEST_F(FakeWalletPortTest, BadTransfersAreInvalidArgumentAndMoveNothing) {
  table::Transfer zero = Stake("z");
  zero.legs[0].amount_coins = 0;
  zero.legs[4].amount_coins = 3 * kBet;
  EXPECT_EQ(Send(zero)->status.code(), absl::StatusCode::kInvalidArgument);
  table::Transfer unbalanced = Stake("u");
  unbalanced.legs[4].amount_coins = 1;
  EXPECT_EQ(Send(unbalanced)->status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Send(Stake(""))->status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(wallet_.applied_count(), 0);
  EXPECT_EQ(wallet_.Balance("player:ann"), 500);
}

TEST_F(FakeWalletPortTest, DownAnswersUnavailableUntilToldAndMovesNothing) {
  wallet_.SetDown(true);
  EXPECT_EQ(Send(Stake("k"))->status.code(), absl::StatusCode::kUnavailable);
  std::optional<absl::StatusOr<int64_t>> balance;
  wallet_.GetBalance("ann", Deadline(), [&](absl::StatusOr<int64_t> b) { balance = b; });
  EXPECT_EQ(balance->status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(wallet_.Applied("k"));
  wallet_.SetDown(false);
  EXPECT_TRUE(Send(Stake("k"))->status.ok());
  EXPECT_EQ(wallet_.Balance("player:ann"), 500 - kBet);
}

TEST_F(FakeWalletPortTest, LostReplyIsUnavailableButAppliedAndTheRetryMovesNothing) {
  wallet_.LoseNextReplies(1);
  EXPECT_EQ(Send(Stake("k"))->status.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(wallet_.Applied("k"));
  EXPECT_EQ(wallet_.Balance("player:ann"), 500 - kBet);
  EXPECT_TRUE(Send(Stake("k"))->status.ok());
  EXPECT_EQ(wallet_.Balance("player:ann"), 500 - kBet);
  EXPECT_EQ(wallet_.Balance("pot:t1:1"), 4 * kBet);
}

TEST_F(FakeWalletPortTest, ManualModeQueuesRepliesUntilReleased) {
  wallet_.SetManual(true);
  std::optional<WalletReply> first, second;
  wallet_.Transfer(Stake("k"), "t1", 1, Deadline(), [&](WalletReply r) { first = std::move(r); });
  wallet_.Transfer(Stake("k"), "t1", 1, Deadline(), [&](WalletReply r) { second = std::move(r); });
  EXPECT_FALSE(first.has_value());  // decided, not answered
  EXPECT_EQ(wallet_.queued_replies(), 2);
  EXPECT_EQ(wallet_.Balance("player:ann"), 500 - kBet);  // applied at the first call, once
  EXPECT_EQ(wallet_.ReleaseReplies(1), 1);
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->status.ok());
  EXPECT_FALSE(second.has_value());
  EXPECT_EQ(wallet_.ReleaseReplies(), 1);
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->status.ok());  // the replay
  EXPECT_EQ(wallet_.queued_replies(), 0);
  EXPECT_EQ(wallet_.Balance("player:ann"), 500 - kBet);
}

TEST_F(FakeWalletPortTest, PastDeadlineIsDeadlineExceededAndMovesNothing) {
  std::optional<WalletReply> reply;
  wallet_.Transfer(Stake("k"), "t1", 1, clock_.Now(), [&](WalletReply r) { reply = r; });
  EXPECT_EQ(reply->status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(wallet_.Applied("k"));
}

TEST_F(FakeWalletPortTest, GetBalanceReadsThePlayersAccount) {
  std::optional<absl::StatusOr<int64_t>> ann, nobody;
  wallet_.GetBalance("ann", Deadline(), [&](absl::StatusOr<int64_t> b) { ann = b; });
  wallet_.GetBalance("nobody", Deadline(), [&](absl::StatusOr<int64_t> b) { nobody = b; });
  EXPECT_EQ(ann->value(), 500);
  EXPECT_EQ(nobody->status().code(), absl::StatusCode::kNotFound);
}

class FakeRecordsPortTest : public ::testing::Test {
 protected:
  absl::Time Deadline() const { return clock_.Now() + absl::Seconds(2); }
  absl::Status Game(const std::string& key, int winning_team) {
    lobby::v1::RecordGameRequest r;
    r.set_key(key);
    r.set_table_id("t1");
    r.set_winning_team(winning_team);
    absl::Status out = absl::UnknownError("not called");
    records_.RecordGame(r, Deadline(), [&](absl::Status s) { out = s; });
    return out;
  }
  FakeClock clock_;
  FakeRecordsPort records_{clock_};
};

TEST_F(FakeRecordsPortTest, EachKeyIsRecordedOnceAndAReplayIsOk) {
  ASSERT_TRUE(Game("t1:game:1", 0).ok());
  ASSERT_TRUE(Game("t1:game:1", 1).ok());  // a replay keeps the first
  EXPECT_EQ(records_.games().size(), 1u);
  EXPECT_EQ(records_.games().at("t1:game:1").winning_team(), 0);
  EXPECT_EQ(records_.received("t1:game:1"), 2);
  moderation::v1::FileReportRequest report;
  report.set_key("t1:report:n1:ann");
  absl::Status s = absl::UnknownError("not called");
  records_.FileReport(report, Deadline(), [&](absl::Status st) { s = st; });
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(records_.reports().size(), 1u);
  EXPECT_EQ(Game("", 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(records_.games().size(), 1u);
}

TEST_F(FakeRecordsPortTest, DownAndLostRepliesAreUnavailable) {
  records_.SetDown(true);
  EXPECT_EQ(Game("t1:game:1", 0).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(records_.received("t1:game:1"), 0);
  records_.SetDown(false);
  records_.LoseNextReplies(1);
  EXPECT_EQ(Game("t1:game:1", 0).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(records_.received("t1:game:1"), 1);  // recorded, the reply lost
  EXPECT_TRUE(Game("t1:game:1", 0).ok());
  EXPECT_EQ(records_.games().size(), 1u);
  lobby::v1::RecordQuitRequest quit;
  quit.set_key("t1:quit:1:ann");
  absl::Status s = absl::UnknownError("not called");
  records_.RecordQuit(quit, clock_.Now(), [&](absl::Status st) { s = st; });
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(records_.quits().empty());
}

}  // namespace
}  // namespace courtpiece::table_service
