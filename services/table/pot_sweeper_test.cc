#include "services/table/pot_sweeper.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/table/fake_ports.h"
#include "services/table/fake_table_store.h"

namespace courtpiece::table_service {
namespace {

using ::testing::ElementsAre;

class PotSweeperTest : public ::testing::Test {
 protected:
  PotSweeperTest()
      : ledger_(clock_),
        store_(clock_),
        log_(
            "pot-sweeper-test", common::LogLevel::kError, [](std::string_view) {}, clock_),
        sweeper_(ledger_, store_, clock_, Options(), log_) {}

  static PotSweeperOptions Options() {
    PotSweeperOptions o;
    o.grace_ms = 60'000;
    o.pots_per_pass_max = 10;
    o.page_size = 2;
    return o;
  }

  void SetUp() override {
    for (const char* p : {"player:a", "player:b", "player:c", "player:d"}) {
      ledger_.SetBalance(p, 1000);
    }
  }

  // A round's stake into pot:<table>:<round>: a, b, c 25 each and the house 25 for a bot.
  void Stake(const std::string& table, int round) {
    const std::string pot = "pot:" + table + ":" + std::to_string(round);
    ASSERT_TRUE(ledger_
                    .Apply(table + ":" + std::to_string(round) + ":stake", {{"player:a", -25},
                                                                            {"player:b", -25},
                                                                            {"player:c", -25},
                                                                            {"house", -25},
                                                                            {pot, 100}})
                    .ok());
  }

  SweepReport Pass() {
    absl::StatusOr<SweepReport> r = sweeper_.RunPass();
    EXPECT_TRUE(r.ok()) << r.status();
    return r.value_or(SweepReport{});
  }

  FakeClock clock_;
  FakePotLedgerPort ledger_;
  FakeTableStore store_;
  common::Logger log_;
  PotSweeper sweeper_;
};

TEST_F(PotSweeperTest, OrphanIsRefundedExactlyOnce) {
  Stake("gone", 1);
  clock_.Advance(absl::Seconds(61));
  SweepReport r = Pass();
  EXPECT_EQ(r, (SweepReport{.pots_seen = 1, .refunded = 1}));
  EXPECT_EQ(ledger_.Balance("pot:gone:1"), 0);
  EXPECT_EQ(ledger_.Balance("player:a"), 1000);
  EXPECT_EQ(ledger_.Balance("player:b"), 1000);
  EXPECT_EQ(ledger_.Balance("player:c"), 1000);
  EXPECT_EQ(ledger_.Balance("player:d"), 1000);
  EXPECT_EQ(ledger_.Balance("house"), 0);
  EXPECT_THAT(ledger_.applied_keys(), ElementsAre("gone:1:stake", "gone:1:sweep_refund"));
  // A second pass: the pot is empty, not listed, nothing moves.
  EXPECT_EQ(Pass(), SweepReport{});
  EXPECT_EQ(ledger_.transfer_calls(), 1);
  EXPECT_EQ(ledger_.applied_keys().size(), 2u);
}

TEST_F(PotSweeperTest, RefundAfterPartialPayoutGivesBackOnlyWhatIsLeft) {
  Stake("gone", 2);
  // The court stake's winner was paid 40 of it before the table was lost.
  ASSERT_TRUE(ledger_.Apply("gone:2:payout", {{"pot:gone:2", -40}, {"player:a", 40}}).ok());
  clock_.Advance(absl::Seconds(61));
  // a put in 25 and got 40 back: -15, which cannot be refunded; a human looks.
  EXPECT_EQ(Pass(), (SweepReport{.pots_seen = 1, .skipped_payers_differ = 1}));
  EXPECT_EQ(ledger_.Balance("pot:gone:2"), 60);
  EXPECT_EQ(ledger_.transfer_calls(), 0);
}

TEST_F(PotSweeperTest, PotOfALiveTableIsLeftAlone) {
  ASSERT_TRUE(store_.Create("live", "i1", "state").ok());
  Stake("live", 3);
  clock_.Advance(absl::Minutes(10));
  EXPECT_EQ(Pass(), (SweepReport{.pots_seen = 1, .skipped_table_live = 1}));
  EXPECT_EQ(ledger_.Balance("pot:live:3"), 100);
  EXPECT_EQ(ledger_.Balance("player:a"), 975);
  EXPECT_EQ(ledger_.transfer_calls(), 0);
}

TEST_F(PotSweeperTest, PotYoungerThanTheGraceIsLeftAlone) {
  Stake("gone", 1);
  clock_.Advance(absl::Milliseconds(59'999));
  EXPECT_EQ(Pass(), (SweepReport{.pots_seen = 1, .skipped_young = 1}));
  EXPECT_EQ(ledger_.Balance("pot:gone:1"), 100);
  EXPECT_EQ(ledger_.transfer_calls(), 0);
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(Pass(), (SweepReport{.pots_seen = 1, .refunded = 1}));
  EXPECT_EQ(ledger_.Balance("pot:gone:1"), 0);
}

TEST_F(PotSweeperTest, PayersNotSummingToTheBalanceAreSkipped) {
  Stake("gone", 1);
  ledger_.SetPayers("pot:gone:1", {{"player:a", 25}, {"player:b", 25}, {"player:c", 25}});
  clock_.Advance(absl::Seconds(61));
  EXPECT_EQ(Pass(), (SweepReport{.pots_seen = 1, .skipped_payers_differ = 1}));
  EXPECT_EQ(ledger_.Balance("pot:gone:1"), 100);
  EXPECT_EQ(ledger_.Balance("player:a"), 975);
  EXPECT_EQ(ledger_.transfer_calls(), 0);
}

TEST_F(PotSweeperTest, UnavailableRefundIsRetriedNextPassWithTheSameKey) {
  Stake("gone", 1);
  clock_.Advance(absl::Seconds(61));
  ledger_.FailNextTransfers(1, absl::UnavailableError("wallet down"));
  EXPECT_EQ(Pass(), (SweepReport{.pots_seen = 1, .skipped_error = 1}));
  EXPECT_EQ(ledger_.Balance("pot:gone:1"), 100);
  EXPECT_EQ(Pass(), (SweepReport{.pots_seen = 1, .refunded = 1}));
  EXPECT_EQ(ledger_.transfer_calls(), 2);
  EXPECT_EQ(ledger_.Balance("pot:gone:1"), 0);
  EXPECT_EQ(ledger_.Balance("player:b"), 1000);
  EXPECT_THAT(ledger_.applied_keys(), ElementsAre("gone:1:stake", "gone:1:sweep_refund"));
}

TEST_F(PotSweeperTest, AnotherSweeperThatRefundedFirstMakesTheSecondAReplay) {
  Stake("gone", 1);
  clock_.Advance(absl::Seconds(61));
  // Another instance read the same payers and sent the same refund first.
  ASSERT_TRUE(ledger_
                  .Apply("gone:1:sweep_refund", {{"pot:gone:1", -100},
                                                 {"house", 25},
                                                 {"player:a", 25},
                                                 {"player:b", 25},
                                                 {"player:c", 25}})
                  .ok());
  EXPECT_EQ(Pass(), SweepReport{});  // the pot is empty: not even listed
  EXPECT_EQ(ledger_.Balance("player:a"), 1000);
}

TEST_F(PotSweeperTest, StoreErrorSkipsThePotUntilTheNextPass) {
  ASSERT_TRUE(store_.Create("live", "i1", "state").ok());
  Stake("gone", 1);
  Stake("live", 1);
  clock_.Advance(absl::Seconds(61));
  store_.FailNext(1);
  // pot:gone:1 first (by id): the store fails, skipped; pot:live:1 is live.
  EXPECT_EQ(Pass(), (SweepReport{.pots_seen = 2, .skipped_table_live = 1, .skipped_error = 1}));
  EXPECT_EQ(ledger_.Balance("pot:gone:1"), 100);
  EXPECT_EQ(Pass(), (SweepReport{.pots_seen = 2, .refunded = 1, .skipped_table_live = 1}));
  EXPECT_EQ(ledger_.Balance("pot:gone:1"), 0);
  EXPECT_EQ(ledger_.Balance("pot:live:1"), 100);
}

TEST_F(PotSweeperTest, APassIsBoundedAndTheNextGoesOn) {
  PotSweeperOptions o = Options();
  o.pots_per_pass_max = 3;
  PotSweeper bounded(ledger_, store_, clock_, o, log_);
  for (int round = 1; round <= 5; ++round) {
    ASSERT_TRUE(ledger_
                    .Apply("s" + std::to_string(round),
                           {{"player:d", -10}, {"pot:gone:" + std::to_string(round), 10}})
                    .ok());
  }
  clock_.Advance(absl::Seconds(61));
  absl::StatusOr<SweepReport> first = bounded.RunPass();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, (SweepReport{.pots_seen = 3, .refunded = 3}));
  EXPECT_EQ(ledger_.Balance("player:d"), 980);
  absl::StatusOr<SweepReport> second = bounded.RunPass();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, (SweepReport{.pots_seen = 2, .refunded = 2}));
  EXPECT_EQ(ledger_.Balance("player:d"), 1000);
}

TEST_F(PotSweeperTest, OptionsOutOfRangeAreRefused) {
  PotSweeperOptions o = Options();
  o.call_timeout_ms = 1;
  EXPECT_TRUE(PotSweeper::ValidateOptions(o).ok());
  o.pots_per_pass_max = 0;
  EXPECT_EQ(PotSweeper::ValidateOptions(o).code(), absl::StatusCode::kInvalidArgument);
  o = Options();
  o.grace_ms = -1;
  EXPECT_EQ(PotSweeper::ValidateOptions(o).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParsePotIdTest, SplitsTableAndRound) {
  std::string table;
  int64_t round = 0;
  ASSERT_TRUE(ParsePotId("pot:t-1:12", &table, &round).ok());
  EXPECT_EQ(table, "t-1");
  EXPECT_EQ(round, 12);
  EXPECT_EQ(ParsePotId("player:a", &table, &round).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePotId("pot::1", &table, &round).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePotId("pot:t:x", &table, &round).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace courtpiece::table_service
