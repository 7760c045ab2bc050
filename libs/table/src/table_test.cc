// Scenario tests: one per rule and decision of RULES.md §4 and §5.
#include "courtpiece/table/table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "courtpiece/table/testing.h"
#include "scripted_engine_for_test.h"
#include "table_test_helpers.h"

namespace courtpiece::table {
namespace {

using test::Legs;
using test::LegsOf;
using test::Opts;
using test::Transfers;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Details(const TableHarness& h, std::string_view type, int to = 0) {
  std::vector<std::string> out;
  for (const Event& e : h.events) {
    if (e.type == type && e.to_seat == to) out.push_back(e.detail);
  }
  return out;
}

class Scenario : public test::FourPeopleTable {};

TEST_F(Scenario, SeatingHostZeroThenTwoOneThree) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  EXPECT_EQ(h.table().seat(0).player, "host");
  EXPECT_EQ(h.table().seat(2).player, "a");
  EXPECT_EQ(h.table().seat(1).player, "b");
  EXPECT_EQ(h.table().seat(3).player, "c");
  EXPECT_EQ(h.Join("d").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(h.Join("a").code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(Scenario, APlayerWhoSitsAgainLearnsWhoHostsNow) {
  ASSERT_TRUE(h.Join("a").ok());                            // seat 2
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "host").ok());  // before a game: free
  ASSERT_EQ(h.EventsOfType("host").back().player, "a");
  ASSERT_TRUE(h.Join("host").ok());  // back, seat 0 again, no longer the host
  const Event told = h.EventsOfType("host").back();
  EXPECT_EQ(told.to_player, "host");
  EXPECT_EQ(told.player, "a");
  EXPECT_EQ(told.seat, 2);
}

TEST_F(Scenario, SittingDownNeedsTwiceTheBet) {
  EXPECT_EQ(h.Join("poor", 199).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(h.Join("ok", 200).ok());
  EXPECT_EQ(h.table().seat(2).player, "ok");
}

TEST_F(Scenario, AutoStartSevenSecondsAfterTheFourthSeatThenCountInThenStakes) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  h.Run(60'000);
  EXPECT_FALSE(h.table().game_active());
  ASSERT_TRUE(h.Join("c").ok());
  int64_t fourth = h.now();
  ASSERT_EQ(h.EventsOfType("auto_start").back().value, fourth + 7'000);
  h.AdvanceTo(fourth + 6'999);
  EXPECT_FALSE(h.table().game_active());
  h.AdvanceTo(fourth + 7'000);
  EXPECT_TRUE(h.table().game_active());
  EXPECT_EQ(h.table().phase(), Phase::kCountIn);
  EXPECT_EQ(h.EventsOfType("count_in").back().value, fourth + 14'000);
  EXPECT_THAT(Transfers(h, TransferStep::kStake), IsEmpty());
  h.AdvanceTo(fourth + 14'000);
  std::vector<Transfer> stakes = Transfers(h, TransferStep::kStake);
  ASSERT_EQ(stakes.size(), 1u);
  EXPECT_EQ(stakes[0].key, "t1:1:stake:0");
  EXPECT_EQ(stakes[0].min_balance_coins, 200);
  EXPECT_TRUE(stakes[0].awaited);
  EXPECT_EQ(LegsOf(stakes[0]), (Legs{{"player:host", -100},
                                     {"player:a", -100},
                                     {"player:b", -100},
                                     {"player:c", -100},
                                     {"pot:t1:1", 400}}));
  EXPECT_EQ(h.table().phase(), Phase::kPlaying);
  EXPECT_EQ(h.table().round_no(), 1u);
}

TEST_F(Scenario, StartNowSeatsBotsAndTheHousePaysTheirStakes) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "a").ok());
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kBot);
  EXPECT_EQ(h.table().seat(3).kind, SeatKind::kBot);
  EXPECT_EQ(h.table().phase(), Phase::kCountIn);
  h.Run(kCountInMs);
  std::vector<Transfer> stakes = Transfers(h, TransferStep::kStake);
  ASSERT_EQ(stakes.size(), 1u);
  EXPECT_EQ(LegsOf(stakes[0]),
            (Legs{{"player:host", -100}, {"player:a", -100}, {"house", -200}, {"pot:t1:1", 400}}));
  EXPECT_EQ(h.Simple(CommandType::kStartNow, "a").code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(Scenario, LeavingDuringTheCountInCostsNoCoinsButIsAQuit) {
  FourPeopleFirstRound();
  h.PlayPeople();  // round 1 ends; the count-in of round 2 runs
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "b").ok());
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);
  EXPECT_THAT(h.Quits(), ElementsAre("b"));
  EXPECT_EQ(h.EffectsOfType(EffectType::kRecordQuit)[0].game_type, "classic");
  h.Run(60'000);
  EXPECT_EQ(Transfers(h, TransferStep::kStake).size(), 1u);  // round 2 never staked
}

TEST_F(Scenario, WinnersShareThePotAndTheHouseTakesABotsShare) {
  engines.script = {{1, "normal", 1}};
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  h.Run(kCountInMs);
  h.PlayPeople();
  std::vector<Transfer> pay = Transfers(h, TransferStep::kPayout);
  ASSERT_EQ(pay.size(), 1u);
  EXPECT_EQ(pay[0].key, "t1:1:payout");
  EXPECT_EQ(LegsOf(pay[0]), (Legs{{"pot:t1:1", -400}, {"house", 400}}));
  EXPECT_EQ(h.balances["player:host"], 100'000 - 100);
  EXPECT_EQ(h.balances["pot:t1:1"], 0);
  EXPECT_EQ(h.Sum(), 0);
}

TEST_F(Scenario, WinningPeopleGetHalfThePotEach) {
  engines.script = {{0, "normal", 1}};
  FourPeopleFirstRound();
  h.PlayPeople();
  std::vector<Transfer> pay = Transfers(h, TransferStep::kPayout);
  ASSERT_EQ(pay.size(), 1u);
  EXPECT_EQ(LegsOf(pay[0]), (Legs{{"pot:t1:1", -400}, {"player:host", 200}, {"player:a", 200}}));
  EXPECT_EQ(h.balances["player:host"], 100'100);
  EXPECT_EQ(h.balances["player:b"], 99'900);
}

TEST_F(Scenario, EveryCourtKindPaysDouble) {
  for (std::string kind : {"court", "goon_court", "kot", "four_point", "six_point"}) {
    SCOPED_TRACE(kind);
    ScriptedFactory f;
    f.script = {{1, kind, 2}};
    TableHarness t(Opts(), "seed", &f);
    ASSERT_TRUE(t.Join("a").ok());
    ASSERT_TRUE(t.Join("b").ok());
    ASSERT_TRUE(t.Join("c").ok());
    t.Run(kAutoStartMs + kCountInMs);
    t.PlayPeople();
    std::vector<Transfer> court = Transfers(t, TransferStep::kCourtStake);
    ASSERT_EQ(court.size(), 1u);
    EXPECT_EQ(court[0].key, "t1:1:court_stake");
    EXPECT_EQ(LegsOf(court[0]),
              (Legs{{"player:host", -100}, {"player:a", -100}, {"pot:t1:1", 200}}));
    std::vector<Transfer> pay = Transfers(t, TransferStep::kPayout);
    ASSERT_EQ(pay.size(), 1u);
    EXPECT_EQ(LegsOf(pay[0]), (Legs{{"pot:t1:1", -600}, {"player:b", 300}, {"player:c", 300}}));
    EXPECT_EQ(t.balances["player:host"], 99'800);
    EXPECT_EQ(t.balances["player:b"], 100'200);
    EXPECT_EQ(t.Sum(), 0);
  }
}

// Two bots on the losing side of a Court: the house stakes again for both in one leg (the
// wallet refuses an account twice in a transfer; the harness does as it does).
TEST_F(Scenario, ACourtAgainstTwoBotsIsOneHouseLegOfTwiceTheBet) {
  engines.script = {{0, "court", 2}};
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  h.Run(kCountInMs);
  h.PlayPeople();
  std::vector<Transfer> court = Transfers(h, TransferStep::kCourtStake);
  ASSERT_EQ(court.size(), 1u);
  EXPECT_EQ(LegsOf(court[0]), (Legs{{"house", -200}, {"pot:t1:1", 200}}));
  std::vector<Transfer> pay = Transfers(h, TransferStep::kPayout);
  ASSERT_EQ(pay.size(), 1u);
  EXPECT_EQ(LegsOf(pay[0]), (Legs{{"pot:t1:1", -600}, {"player:host", 300}, {"player:a", 300}}));
  EXPECT_EQ(h.balances["player:host"], 100'200);
  EXPECT_EQ(h.balances["player:a"], 100'200);
  EXPECT_EQ(h.balances["house"], -400);
  EXPECT_EQ(h.balances["pot:t1:1"], 0);
  EXPECT_EQ(h.Sum(), 0);
}

TEST_F(Scenario, ADrawReturnsEveryStakeToWhoeverPaidIt) {
  engines.script = {{-1, "draw", 0}};
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  h.Run(kCountInMs);
  h.PlayPeople();
  std::vector<Transfer> refund = Transfers(h, TransferStep::kRefund);
  ASSERT_EQ(refund.size(), 1u);
  EXPECT_EQ(refund[0].key, "t1:1:refund");
  EXPECT_EQ(LegsOf(refund[0]),
            (Legs{{"pot:t1:1", -400}, {"player:host", 100}, {"player:a", 100}, {"house", 200}}));
  EXPECT_EQ(h.balances["player:a"], 100'000);
  EXPECT_EQ(h.balances["house"], 0);
}

TEST_F(Scenario, ARefusedStakeUnseatsTheShortPlayerWithoutAQuit) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b", 250).ok());
  ASSERT_TRUE(h.Join("c").ok());
  h.balances["player:b"] = 150;  // spent elsewhere meanwhile
  h.Run(kAutoStartMs + kCountInMs);
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);
  EXPECT_THAT(Details(h, "unseated"), ElementsAre("not_enough_coins"));
  EXPECT_THAT(h.Quits(), IsEmpty());
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);
  EXPECT_EQ(h.balances["player:a"], 100'000);  // nothing moved
  EXPECT_EQ(h.balances["player:b"], 150);
  // The next attempt (after a new player sits down) uses a new idempotency key.
  ASSERT_TRUE(h.Join("d").ok());
  h.Run(kCountInMs);
  std::vector<Transfer> stakes = Transfers(h, TransferStep::kStake);
  ASSERT_EQ(stakes.size(), 2u);
  EXPECT_EQ(stakes[1].key, "t1:1:stake:1");
  EXPECT_EQ(h.table().phase(), Phase::kPlaying);
}

TEST_F(Scenario, TurnTimerPlaysForYouAndFiveTimeoutsHandYouToABot) {
  engines.script = {};
  engines.target = 100;
  FourPeopleFirstRound();
  // Seat 0 (host) acts first each round; let host time out five rounds running.
  for (int round = 0; round < 5; ++round) {
    ASSERT_EQ(h.table().engine()->ToAct(), 0);
    int64_t deadline = *h.table().NextDeadline();
    EXPECT_EQ(deadline, h.now() + 10'000);
    h.AdvanceTo(deadline);
    EXPECT_EQ(h.table().seat(0).timeouts_in_row, round + 1);
    h.PlayPeople();
    h.Run(kCountInMs);
  }
  EXPECT_TRUE(h.table().seat(0).bot_driving);
  EXPECT_EQ(h.EventsOfType("bot_driving").size(), 4u);  // one per seated person's stream
  // Now the bot plays at once for the host: the table waits on seat 1 (b).
  EXPECT_EQ(h.table().engine()->ToAct(), 1);
  // Any action of the player takes the seat back.
  ASSERT_TRUE(h.Do({.type = CommandType::kEndEarly, .player = "host"}).ok());
  EXPECT_FALSE(h.table().seat(0).bot_driving);
  EXPECT_EQ(h.table().seat(0).timeouts_in_row, 0);
}

TEST_F(Scenario, LeaveMidRoundABotPlaysAndAtTheEndItIsAQuit) {
  engines.script = {{0, "normal", 1}};
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "a").ok());  // seat 2, team 0
  EXPECT_TRUE(h.table().seat(2).left);
  h.PlayPeople();
  std::vector<Transfer> pay = Transfers(h, TransferStep::kPayout);
  ASSERT_EQ(pay.size(), 1u);
  // Away at the round's end: a wins nothing; the share goes to the house.
  EXPECT_EQ(LegsOf(pay[0]), (Legs{{"pot:t1:1", -400}, {"player:host", 200}, {"house", 200}}));
  EXPECT_THAT(h.Quits(), ElementsAre("a"));
  EXPECT_EQ(h.table().seat(2).kind, SeatKind::kEmpty);
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);  // the game waits for a person or a bot
}

TEST_F(Scenario, ComeBackBeforeTheRoundEndsAndCarryOn) {
  engines.script = {{0, "normal", 1}};
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "a").ok());
  // Still connected after Leave: a command other than join says how to come back.
  EXPECT_EQ(h.Simple(CommandType::kTakeBack, "a"),
            absl::FailedPreconditionError("you left this round: send join to come back"));
  ASSERT_TRUE(h.Join("a").ok());  // back
  EXPECT_FALSE(h.table().seat(2).Away());
  h.PlayPeople();
  EXPECT_EQ(LegsOf(Transfers(h, TransferStep::kPayout)[0]),
            (Legs{{"pot:t1:1", -400}, {"player:host", 200}, {"player:a", 200}}));
  EXPECT_THAT(h.Quits(), IsEmpty());
  EXPECT_EQ(h.table().phase(), Phase::kCountIn);
}

TEST_F(Scenario, DisconnectedAtRoundEndSeatKeptTenMinutesBackInTime) {
  engines.script = {{1, "normal", 1}};
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  EXPECT_EQ(h.Simple(CommandType::kTakeBack, "b"),
            absl::FailedPreconditionError("reconnect first"));
  h.PlayPeople();
  EXPECT_EQ(LegsOf(Transfers(h, TransferStep::kPayout)[0]),
            (Legs{{"pot:t1:1", -400}, {"house", 200}, {"player:c", 200}}));
  EXPECT_EQ(h.table().seat(1).keep_until_ms, h.now() + 600'000);
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);  // the game waits
  h.Run(599'999);
  EXPECT_EQ(h.table().seat(1).player, "b");
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
  EXPECT_EQ(h.table().phase(), Phase::kCountIn);
  EXPECT_THAT(h.Quits(), IsEmpty());
}

TEST_F(Scenario, NotBackInTenMinutesIsAQuit) {
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  h.PlayPeople();
  h.Run(600'000);
  EXPECT_THAT(h.Quits(), ElementsAre("b"));
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);
}

TEST_F(Scenario, SeatTakenMeanwhileIsAQuit) {
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  h.PlayPeople();
  ASSERT_TRUE(h.Join("d").ok());
  EXPECT_EQ(h.table().seat(1).player, "d");
  EXPECT_THAT(h.Quits(), ElementsAre("b"));
  EXPECT_EQ(h.table().phase(), Phase::kCountIn);
}

TEST_F(Scenario, LeavingInTheRoundThatEndsTheGameIsNotAQuitAndPays) {
  engines.script = {{0, "normal", 3}};
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "c").ok());
  h.PlayPeople();
  EXPECT_EQ(LegsOf(Transfers(h, TransferStep::kPayout)[0]),
            (Legs{{"pot:t1:1", -400}, {"player:host", 200}, {"player:a", 200}}));
  EXPECT_THAT(h.Quits(), IsEmpty());
  std::vector<Effect> games = h.EffectsOfType(EffectType::kRecordGame);
  ASSERT_EQ(games.size(), 1u);
  const GameRecord& g = games[0].game;
  EXPECT_TRUE(g.counts_for_stats);
  EXPECT_EQ(g.winning_team, 0);
  EXPECT_EQ(g.scores, (std::array<int, 2>{3, 0}));
  ASSERT_EQ(g.players.size(), 4u);
  EXPECT_EQ(g.players[2].player, "a");
  EXPECT_TRUE(g.players[2].won);
  // Not connected when the game ends: the seat is freed, not a quit.
  EXPECT_EQ(h.table().seat(2).kind, SeatKind::kEmpty);
  EXPECT_EQ(h.table().seat(3).kind, SeatKind::kEmpty);
  EXPECT_FALSE(h.table().game_active());
}

TEST_F(Scenario, BeforeAGameADisconnectedSeatIsKeptOneMinuteNoQuit) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "a").ok());
  EXPECT_EQ(h.table().seat(2).keep_until_ms, h.now() + 60'000);
  h.Run(60'000);
  EXPECT_EQ(h.table().seat(2).kind, SeatKind::kEmpty);
  EXPECT_THAT(h.Quits(), IsEmpty());
}

TEST_F(Scenario, AGameWithOnePersonIsNotCountedAndLeavingItIsNotAQuit) {
  engines.script = {{0, "normal", 1}};
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  h.Run(kCountInMs);
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "host").ok());
  h.PlayPeople();
  EXPECT_THAT(h.Quits(), IsEmpty());
  // Nobody is left: the table closes.
  EXPECT_EQ(h.EffectsOfType(EffectType::kClose).size(), 1u);
  EXPECT_EQ(h.table().phase(), Phase::kClosed);
}

TEST_F(Scenario, StatsCountGamesWithTwoPeople) {
  engines.script = {{0, "normal", 3}};
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  h.Run(kCountInMs);
  h.PlayPeople();
  std::vector<Effect> games = h.EffectsOfType(EffectType::kRecordGame);
  ASSERT_EQ(games.size(), 1u);
  EXPECT_TRUE(games[0].game.counts_for_stats);
  EXPECT_FALSE(games[0].game.ended_early);
}

TEST_F(Scenario, BotsLeaveOnlyOutsideARound) {
  engines.target = 100;
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  EXPECT_TRUE(h.Simple(CommandType::kRemoveBot, "host", 1).ok());  // during the count-in
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);
  ASSERT_TRUE(h.Simple(CommandType::kAskBot, "host", 1).ok());  // nobody to ask: passes
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kBot);
  h.Run(kCountInMs);
  ASSERT_EQ(h.table().phase(), Phase::kPlaying);
  EXPECT_EQ(h.Simple(CommandType::kRemoveBot, "host", 3).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(h.Simple(CommandType::kRemoveBot, "host", 0).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(Scenario, ABotByVoteSilenceIsYesAndOneNoKeepsWaiting) {
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "b").ok());
  h.PlayPeople();
  ASSERT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);
  // a asks; host and c are asked; c says no.
  ASSERT_TRUE(h.Simple(CommandType::kAskBot, "a", 1).ok());
  EXPECT_EQ(h.table().vote().pending, (std::vector<std::string>{"host", "c"}));
  ASSERT_TRUE(h.Vote("host", true).ok());
  ASSERT_TRUE(h.Vote("c", false).ok());
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);
  EXPECT_THAT(Details(h, "vote_result"), ElementsAre("rejected"));
  // Again; this time nobody answers for 20 s.
  ASSERT_TRUE(h.Simple(CommandType::kAskBot, "a", 1).ok());
  h.Run(19'999);
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);
  h.Run(1);
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kBot);
  EXPECT_EQ(h.table().phase(), Phase::kCountIn);
  EXPECT_EQ(h.Vote("c", true).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(Scenario, ABotByVoteTakesAWaitingSeatAndThatIsAQuit) {
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  h.PlayPeople();
  ASSERT_TRUE(h.Simple(CommandType::kAskBot, "host", 1).ok());
  ASSERT_TRUE(h.Vote("a", true).ok());
  ASSERT_TRUE(h.Vote("c", true).ok());
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kBot);
  EXPECT_THAT(h.Quits(), ElementsAre("b"));
}

TEST_F(Scenario, HostSwapsPartnerWhenBothOpponentsAgree) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  EXPECT_EQ(h.Simple(CommandType::kSwapPartner, "a", 1).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(h.Simple(CommandType::kSwapPartner, "host", 2).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(h.Simple(CommandType::kSwapPartner, "host", 1).ok());
  ASSERT_TRUE(h.Vote("b", true).ok());
  ASSERT_TRUE(h.Vote("c", false).ok());
  EXPECT_EQ(h.table().seat(2).player, "a");
  ASSERT_TRUE(h.Simple(CommandType::kSwapPartner, "host", 1).ok());
  EXPECT_EQ(h.table().vote().pending, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(h.Vote("a", false).code(), absl::StatusCode::kFailedPrecondition);  // the partner
  ASSERT_TRUE(h.Vote("b", true).ok());
  ASSERT_TRUE(h.Vote("c", true).ok());
  EXPECT_EQ(h.table().seat(2).player, "b");
  EXPECT_EQ(h.table().seat(1).player, "a");
}

TEST_F(Scenario, EndingEarlyNeedsEveryoneAndRefundsTheRound) {
  engines.target = 100;
  FourPeopleFirstRound();
  for (std::string p : {"host", "a", "b"}) {
    ASSERT_TRUE(h.Simple(CommandType::kEndEarly, p).ok());
  }
  EXPECT_TRUE(h.table().game_active());
  ASSERT_TRUE(h.Simple(CommandType::kEndEarly, "c").ok());
  EXPECT_FALSE(h.table().game_active());
  std::vector<Transfer> refund = Transfers(h, TransferStep::kRefund);
  ASSERT_EQ(refund.size(), 1u);
  EXPECT_EQ(LegsOf(refund[0]), (Legs{{"pot:t1:1", -400},
                                     {"player:host", 100},
                                     {"player:a", 100},
                                     {"player:b", 100},
                                     {"player:c", 100}}));
  std::vector<Effect> games = h.EffectsOfType(EffectType::kRecordGame);
  ASSERT_EQ(games.size(), 1u);
  EXPECT_TRUE(games[0].game.ended_early);
  EXPECT_FALSE(games[0].game.counts_for_stats);
  EXPECT_EQ(h.Sum(), 0);
  EXPECT_EQ(h.balances["player:c"], 100'000);
}

TEST_F(Scenario, NobodyLeftClosesTheTable) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "host").ok());
  EXPECT_EQ(h.table().host(), "a");
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "a").ok());
  EXPECT_EQ(h.table().phase(), Phase::kClosed);
  EXPECT_EQ(h.EffectsOfType(EffectType::kClose).size(), 1u);
  EXPECT_EQ(h.Join("z").code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(Scenario, TheSeedHashIsPublishedAtTheStartAndTheSeedAtTheEnd) {
  engines.script = {{0, "normal", 1}};
  FourPeopleFirstRound();
  DeterministicSeedSource src("seed", "t1");
  Seed s1 = src.Draw(1);  // draw 0 picked the first dealer
  EXPECT_EQ(h.EventsOfType("round_started")[0].detail, Sha256Hex(s1));
  h.PlayPeople();
  EXPECT_EQ(h.EventsOfType("seed")[0].detail, SeedHex(s1));
}

TEST_F(Scenario, VoiceNotesLockAllowanceAndPlayDelay) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  EXPECT_EQ(h.table().recording_seat(), 2);
  ASSERT_EQ(h.EventsOfType("voice_recording").size(), 3u);  // everyone at the table sees it
  Event rec = h.EventsOfType("voice_recording")[0];
  EXPECT_EQ(rec.seat, 2);
  EXPECT_EQ(rec.value, h.now() + 7'000);
  EXPECT_EQ(h.Simple(CommandType::kVoiceStart, "b").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      h.Do({.type = CommandType::kVoiceSent, .player = "a", .note_id = "n1", .duration_ms = 7'501})
          .code(),
      absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(
      h.Do({.type = CommandType::kVoiceSent, .player = "a", .note_id = "n1", .duration_ms = 4'000})
          .ok());
  Event note = h.EventsOfType("voice_note")[0];
  EXPECT_EQ(note.value, h.now() + 1'000);  // plays 1 s after it is sent
  EXPECT_EQ(note.detail, "n1");
  // One per player per round: a second one is refused; a discard still uses it.
  EXPECT_EQ(h.Simple(CommandType::kVoiceStart, "a").code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "b").ok());
  ASSERT_TRUE(h.Simple(CommandType::kVoiceDiscard, "b").ok());
  EXPECT_EQ(h.table().recording_seat(), -1);
  EXPECT_EQ(h.Simple(CommandType::kVoiceStart, "b").code(), absl::StatusCode::kFailedPrecondition);
  // A recording never sent frees the lock after 7 s and the upload grace.
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "host").ok());
  h.Run(kVoiceMaxMs + kVoiceUploadGraceMs);
  EXPECT_EQ(h.table().recording_seat(), -1);
}

TEST_F(Scenario, NoVoiceNotesWithOnePersonAmongBots) {
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  EXPECT_EQ(h.Simple(CommandType::kVoiceStart, "host").code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(Scenario, TheAllowanceComesBackEachRound) {
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kVoiceDiscard, "a").ok());
  h.PlayPeople();
  h.Run(kCountInMs);
  EXPECT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
}

TEST_F(Scenario, ReportWindowIsFiveSecondsAfterPlayingAndNotYourOwn) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  ASSERT_TRUE(
      h.Do({.type = CommandType::kVoiceSent, .player = "a", .note_id = "n1", .duration_ms = 3'000})
          .ok());
  int64_t sent = h.now();
  Command report{.type = CommandType::kReport, .player = "b", .note_id = "n1"};
  Command own{.type = CommandType::kReport, .player = "a", .note_id = "n1"};
  EXPECT_EQ(h.Do(report).code(), absl::StatusCode::kFailedPrecondition);  // not played yet
  h.AdvanceTo(sent + 1'000 + 3'000 + 5'000);
  EXPECT_EQ(h.Do(own).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(h.Do(report).ok());
  EXPECT_EQ(h.Do(report).code(), absl::StatusCode::kAlreadyExists);
  std::vector<Effect> reports = h.EffectsOfType(EffectType::kReport);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].player, "b");
  EXPECT_EQ(reports[0].author, "a");
  EXPECT_EQ(reports[0].note_id, "n1");
  EXPECT_EQ(reports[0].note_round, 0u);  // before the first round: the voice round is 0
  // The window ends 5 s after the note ends.
  Command late{.type = CommandType::kReport, .player = "host", .note_id = "n1"};
  h.AdvanceTo(sent + 1'000 + 3'000 + 5'000 + 1);
  EXPECT_EQ(h.Do(late).code(), absl::StatusCode::kFailedPrecondition);
}

// §5.1/§5.4: a note sent in round 2's count-in is round 2's; reported after round 2 is dealt
// (and after a snapshot and restore), the report names round 2, the round moderation stored
// the note under (the table's round_no() was still 1 when the note was sent).
TEST_F(Scenario, AReportNamesTheNotesOwnRoundEvenFromACountIn) {
  engines.target = 100;
  FourPeopleFirstRound();
  h.PlayPeople();  // round 1 ends; the count-in of round 2 runs
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ASSERT_EQ(h.table().round_no(), 1u);
  ASSERT_EQ(h.table().voice_round(), 2u);
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  ASSERT_TRUE(
      h.Do({.type = CommandType::kVoiceSent, .player = "a", .note_id = "n2", .duration_ms = 3'000})
          .ok());
  const int64_t sent = h.now();
  h.SnapshotRestore();
  h.AdvanceTo(sent + 8'000);  // in the window (until sent + 9 s); round 2 dealt at 7 s
  ASSERT_EQ(h.table().round_no(), 2u);
  ASSERT_TRUE(h.Do({.type = CommandType::kReport, .player = "b", .note_id = "n2"}).ok());
  std::vector<Effect> reports = h.EffectsOfType(EffectType::kReport);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].note_id, "n2");
  EXPECT_EQ(reports[0].note_round, 2u);
}

// What the service's host reads: the people seated, the voice round, an announced note.
TEST_F(Scenario, FindNoteVoiceRoundAndPeopleSeatedForTheHost) {
  EXPECT_EQ(h.table().PeopleSeated(), 1);
  EXPECT_EQ(h.table().voice_round(), 0u);
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  EXPECT_EQ(h.table().PeopleSeated(), 3);
  EXPECT_EQ(h.table().FindNote("n1"), nullptr);
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  EXPECT_EQ(h.table().FindNote("n1"), nullptr);  // recording is not announced
  ASSERT_TRUE(
      h.Do({.type = CommandType::kVoiceSent, .player = "a", .note_id = "n1", .duration_ms = 3'000})
          .ok());
  const int64_t sent = h.now();
  const VoiceNote* n1 = h.table().FindNote("n1");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->author, "a");
  EXPECT_EQ(n1->author_seat, 2);
  EXPECT_EQ(n1->play_at_ms, sent + 1'000);
  EXPECT_EQ(n1->report_until_ms, sent + 1'000 + 3'000 + 5'000);
  EXPECT_EQ(h.table().FindNote("n2"), nullptr);
  // Kept past its window until a later note prunes it.
  h.AdvanceTo(sent + 1'000 + 3'000 + 5'000 + 1);
  ASSERT_NE(h.table().FindNote("n1"), nullptr);
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "b").ok());
  ASSERT_TRUE(
      h.Do({.type = CommandType::kVoiceSent, .player = "b", .note_id = "n2", .duration_ms = 1'000})
          .ok());
  EXPECT_EQ(h.table().FindNote("n1"), nullptr);
  ASSERT_NE(h.table().FindNote("n2"), nullptr);
  EXPECT_EQ(h.table().FindNote("n2")->author, "b");
}

TEST_F(Scenario, TheVoiceRoundIsTheRoundCountedIn) {
  engines.target = 100;
  FourPeopleFirstRound();
  EXPECT_EQ(h.table().round_no(), 1u);
  EXPECT_EQ(h.table().voice_round(), 1u);
  h.PlayPeople();  // round 1 ends; the count-in of round 2 runs
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  EXPECT_EQ(h.table().round_no(), 1u);
  EXPECT_EQ(h.table().voice_round(), 2u);
  h.SnapshotRestore();
  EXPECT_EQ(h.table().voice_round(), 2u);
}

TEST_F(Scenario, SnapshotRestoreMidRoundContinuesIdentically) {
  engines.script = {{0, "court", 2}, {1, "normal", 1}};
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Play("host", {MoveKind::kPlay, "2C"}).ok());
  h.SnapshotRestore();
  EXPECT_EQ(h.table().engine()->ToAct(), 1);
  h.PlayPeople();
  EXPECT_EQ(Transfers(h, TransferStep::kPayout).size(), 1u);
  EXPECT_EQ(h.Sum(), 0);
}

// The host's catch-up for a new connection of a player still counted as connected (after a
// failover): that seat alone gets what a reconnect gets; only the event seq moves.
TEST_F(Scenario, SendViewGivesTheSeatItsViewAndChangesNothing) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  h.Run(kCountInMs);
  ASSERT_EQ(h.table().phase(), Phase::kPlaying);
  h.Pump();
  h.events.clear();
  h.effects.clear();
  const std::string engine_before = h.table().engine()->Serialize();
  const int to_act = h.table().engine()->ToAct();
  ASSERT_TRUE(h.table().SendView("b").ok());
  h.Pump();
  EXPECT_EQ(h.table().engine()->Serialize(), engine_before);
  EXPECT_EQ(h.table().engine()->ToAct(), to_act);
  EXPECT_EQ(h.table().phase(), Phase::kPlaying);
  EXPECT_TRUE(h.table().seat(1).connected);
  EXPECT_TRUE(h.effects.empty());
  ASSERT_FALSE(h.events.empty());
  for (const Event& e : h.events) {
    EXPECT_EQ(e.to_seat, 1) << e.type;
    EXPECT_EQ(e.to_player, "b") << e.type;
  }
  EXPECT_FALSE(h.EventsOfType("hand").empty());
  EXPECT_FALSE(h.EventsOfType("table_phase").empty());
  EXPECT_EQ(h.table().SendView("stranger").code(), absl::StatusCode::kPermissionDenied);
}

// Courts per team for the game record (docs/lobby.md): every Court kind won counts for the
// winning team, a Goon Court (the engine's goon flag: goon_court, or four_point / six_point
// taken against the caller) also as a Goon Court; kept across a snapshot; a new game starts
// at zero.
TEST_F(Scenario, TheGameRecordCountsEachTeamsCourts) {
  engines.script = {{0, "court", 2},
                    {1, "goon_court", 3, true},
                    {1, "four_point", 4, true},
                    {0, "six_point", 6},
                    {1, "kot", 3}};
  engines.target = 8;
  FourPeopleFirstRound();
  h.PlayPeople();
  for (int round = 2; round <= 4; ++round) {
    if (round == 3) h.SnapshotRestore();
    h.Run(kCountInMs);
    ASSERT_EQ(h.table().phase(), Phase::kPlaying) << round;
    h.PlayPeople();
  }
  std::vector<Effect> games = h.EffectsOfType(EffectType::kRecordGame);
  ASSERT_EQ(games.size(), 1u);
  EXPECT_EQ(games[0].game.scores, (std::array<int, 2>{8, 7}));
  EXPECT_EQ(games[0].game.courts, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(games[0].game.goon_courts, (std::array<int, 2>{0, 2}));
  EXPECT_EQ(games[0].game_type, "classic");

  h.Run(kAutoStartMs);
  h.Run(kCountInMs);
  ASSERT_EQ(h.table().phase(), Phase::kPlaying);
  h.PlayPeople();  // kot for team 1
  for (std::string p : {"host", "a", "b", "c"}) {
    ASSERT_TRUE(h.Simple(CommandType::kEndEarly, p).ok());
  }
  games = h.EffectsOfType(EffectType::kRecordGame);
  ASSERT_EQ(games.size(), 2u);
  EXPECT_TRUE(games[1].game.ended_early);
  EXPECT_EQ(games[1].game.courts, (std::array<int, 2>{0, 1}));
  EXPECT_EQ(games[1].game.goon_courts, (std::array<int, 2>{0, 0}));
}

TEST(GameTypeOf, ReadsTheGameOption) {
  EXPECT_EQ(GameTypeOf(R"({"game":"hidden","target":10})"), "hidden");
  EXPECT_EQ(GameTypeOf(R"({"target":10})"), "classic");
  EXPECT_EQ(GameTypeOf(""), "classic");
}

}  // namespace
}  // namespace courtpiece::table
