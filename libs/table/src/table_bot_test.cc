// Searching bots at the table (docs/table.md "Bots"): the table's bot level, the wait for a
// search's move, its budget and the heuristic's fallback, the auto-play of a person's seat
// at bots::kTimeoutLevel. FakeEngine with search=1: its "search" plays the highest legal
// card and its AutoMove (the heuristic) the lowest, so the tests tell them apart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "courtpiece/table/fake_engine.h"
#include "courtpiece/table/rules_engine.h"
#include "courtpiece/table/table.h"
#include "courtpiece/table/testing.h"

namespace courtpiece::table {
namespace {

TableOptions Opts(bots::Level level, std::string game_options = "target=5,search=1") {
  return {.table_id = "t1",
          .host_player = "host",
          .bet_coins = 100,
          .turn_time_ms = 10'000,
          .game_options = std::move(game_options),
          .bot_level = level};
}

const FakeEngine& Fake(TableHarness& h) {
  return dynamic_cast<const FakeEngine&>(*h.table().engine());
}

// The cards `seat` was seen to play, in order.
std::vector<std::string> PlayedBy(const TableHarness& h, int seat) {
  std::vector<std::string> out;
  for (const Event& e : h.events) {
    if (e.type == "played" && e.seat == seat && e.to_seat == 0) out.push_back(e.cards.at(0));
  }
  return out;
}

// host (0) and a (2) with bots at 1 and 3, the first round dealt.
void TwoPeopleTwoBots(TableHarness& h) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "a").ok());
  ASSERT_EQ(h.table().seat(1).kind, SeatKind::kBot);
  h.Run(kCountInMs);
  ASSERT_EQ(h.table().phase(), Phase::kPlaying);
}

// The people play their heuristic's move until a bot is to play a card (the trump called).
void UntilABotPlaysACard(TableHarness& h) {
  for (int guard = 0; guard < 60; ++guard) {
    ASSERT_EQ(h.table().phase(), Phase::kPlaying);
    const int s = h.table().engine()->ToAct();
    if (std::optional<BotTurn> b = h.table().PendingBotTurn()) {
      ASSERT_EQ(b->seat, s);
      if (h.table().engine()->AutoMove(s).kind == MoveKind::kPlay) return;
      ASSERT_TRUE(h.AnswerBot(std::nullopt).ok());  // a bot calls trump
      continue;
    }
    ASSERT_EQ(h.table().seat(s).kind, SeatKind::kPerson);
    ASSERT_TRUE(h.Play(h.table().seat(s).player, h.table().engine()->AutoMove(s)).ok());
  }
  FAIL() << "no bot card turn";
}

// The highest and lowest legal card of the seat to act differ (else the test proves
// nothing): plays people and bots on until they do.
void UntilABotHasAChoice(TableHarness& h) {
  for (int guard = 0; guard < 40; ++guard) {
    UntilABotPlaysACard(h);
    const int s = h.table().engine()->ToAct();
    if (Fake(h).LegalCards(s).size() >= 2) return;
    ASSERT_TRUE(h.AnswerBot(std::nullopt).ok());
  }
  FAIL() << "no bot with two legal cards";
}

TEST(BotLevel, ParsesTheThreeNamesAndRefusesAnyOther) {
  EXPECT_EQ(*ParseBotLevel(""), bots::Level::kEasy);
  EXPECT_EQ(*ParseBotLevel("easy"), bots::Level::kEasy);
  EXPECT_EQ(*ParseBotLevel("normal"), bots::Level::kNormal);
  EXPECT_EQ(*ParseBotLevel("strong"), bots::Level::kStrong);
  absl::Status bad = ParseBotLevel("Strong").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "bot_level must be easy, normal or strong");
  EXPECT_EQ(BotBudgetMs(bots::Level::kNormal), 300);
  EXPECT_EQ(BotBudgetMs(bots::Level::kStrong), 1'000);
}

TEST(BotLevel, AnEasyTablesBotsPlayAtOnce) {
  TableHarness h(Opts(bots::Level::kEasy));
  h.answer_bots = false;
  TwoPeopleTwoBots(h);
  for (int guard = 0; guard < 200 && h.table().phase() == Phase::kPlaying; ++guard) {
    ASSERT_FALSE(h.table().PendingBotTurn().has_value());
    const int s = h.table().engine()->ToAct();
    ASSERT_EQ(h.table().seat(s).kind, SeatKind::kPerson);
    ASSERT_TRUE(h.Play(h.table().seat(s).player, h.table().engine()->AutoMove(s)).ok());
  }
  EXPECT_NE(h.table().phase(), Phase::kPlaying);  // the round ended
  EXPECT_EQ(h.bot_moves_answered, 0);
}

TEST(BotLevel, AStrongBotWaitsForItsSearchAndItsMoveIsPlayed) {
  TableHarness h(Opts(bots::Level::kStrong));
  h.answer_bots = false;
  TwoPeopleTwoBots(h);
  UntilABotHasAChoice(h);
  const int s = h.table().engine()->ToAct();
  const BotTurn b = *h.table().PendingBotTurn();
  EXPECT_EQ(b.level, bots::Level::kStrong);
  EXPECT_FALSE(b.timed_out);
  EXPECT_EQ(b.deadline_ms, h.now() + kBotBudgetStrongMs);
  EXPECT_EQ(h.table().NextDeadline(), b.deadline_ms);
  const Move searched = h.table().NewBotJob()->Run();
  const Move heuristic = h.table().engine()->AutoMove(s);
  ASSERT_NE(searched, heuristic);
  const size_t before = PlayedBy(h, s).size();
  ASSERT_TRUE(h.AnswerBot(searched).ok());
  ASSERT_EQ(PlayedBy(h, s).size(), before + 1);
  EXPECT_EQ(PlayedBy(h, s).back(), searched.card);
  // The same id again is stale: nothing changes.
  const std::string snapshot = h.table().Snapshot();
  EXPECT_EQ(h.table().OnBotMove(b.id, searched, h.now()).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(h.table().Snapshot(), snapshot);
}

TEST(BotLevel, AMissedBudgetPlaysTheHeuristicAndTheLateAnswerChangesNothing) {
  TableHarness h(Opts(bots::Level::kNormal));
  h.answer_bots = false;
  TwoPeopleTwoBots(h);
  UntilABotHasAChoice(h);
  const int s = h.table().engine()->ToAct();
  const BotTurn b = *h.table().PendingBotTurn();
  EXPECT_EQ(b.deadline_ms, h.now() + kBotBudgetNormalMs);
  const Move searched = h.table().NewBotJob()->Run();
  const Move heuristic = h.table().engine()->AutoMove(s);
  ASSERT_NE(searched, heuristic);
  const size_t before = PlayedBy(h, s).size();
  h.AdvanceTo(b.deadline_ms - 1);
  EXPECT_EQ(PlayedBy(h, s).size(), before);
  h.AdvanceTo(b.deadline_ms);
  ASSERT_EQ(PlayedBy(h, s).size(), before + 1);
  EXPECT_EQ(PlayedBy(h, s).back(), heuristic.card);
  const std::string snapshot = h.table().Snapshot();
  absl::Status late = h.table().OnBotMove(b.id, searched, h.now());
  EXPECT_EQ(late.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(late.message(), absl::StrCat("no bot move awaited with id ", b.id));
  EXPECT_EQ(h.table().Snapshot(), snapshot);
}

TEST(BotLevel, NoAnswerOrAnIllegalOnePlaysTheHeuristic) {
  TableHarness h(Opts(bots::Level::kStrong));
  h.answer_bots = false;
  TwoPeopleTwoBots(h);
  UntilABotHasAChoice(h);
  int s = h.table().engine()->ToAct();
  Move heuristic = h.table().engine()->AutoMove(s);
  ASSERT_TRUE(h.AnswerBot(std::nullopt).ok());
  EXPECT_EQ(PlayedBy(h, s).back(), heuristic.card);
  UntilABotHasAChoice(h);
  s = h.table().engine()->ToAct();
  heuristic = h.table().engine()->AutoMove(s);
  ASSERT_TRUE(h.AnswerBot(Move{.kind = MoveKind::kPlay, .card = "ZZ"}).ok());
  EXPECT_EQ(PlayedBy(h, s).back(), heuristic.card);
}

TEST(BotLevel, ATimedOutTurnIsPlayedAtTheTimeoutLevelEvenAtAnEasyTable) {
  TableHarness h(Opts(bots::Level::kEasy));
  h.answer_bots = false;
  TwoPeopleTwoBots(h);
  // Play on (the easy bots at once) until a person is to play a card with a choice.
  int s = -1;
  for (int guard = 0; guard < 60; ++guard) {
    s = h.table().engine()->ToAct();
    ASSERT_EQ(h.table().seat(s).kind, SeatKind::kPerson);
    const Move m = h.table().engine()->AutoMove(s);
    if (m.kind == MoveKind::kPlay && Fake(h).LegalCards(s).size() >= 2) break;
    ASSERT_TRUE(h.Play(h.table().seat(s).player, m).ok());
  }
  const std::string player = h.table().seat(s).player;
  const int64_t turn_deadline = *h.table().NextDeadline();
  h.AdvanceTo(turn_deadline);
  ASSERT_EQ(h.EventsOfType("timeout").size(), 2u);  // to each of the two people
  const BotTurn b = *h.table().PendingBotTurn();
  EXPECT_EQ(b.seat, s);
  EXPECT_EQ(b.level, bots::kTimeoutLevel);
  EXPECT_TRUE(b.timed_out);
  EXPECT_EQ(b.deadline_ms, turn_deadline + kBotBudgetNormalMs);
  // The player's own card is too late now.
  absl::Status own = h.Play(player, h.table().engine()->AutoMove(s));
  EXPECT_EQ(own.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(own.message(), "your time ran out: a card is being played for you");
  const Move searched = h.table().NewBotJob()->Run();
  ASSERT_TRUE(h.AnswerBot(searched).ok());
  EXPECT_EQ(PlayedBy(h, s).back(), searched.card);
  EXPECT_EQ(h.table().seat(s).timeouts_in_row, 1);
}

TEST(BotLevel, APersonBackAtTheirSeatTakesTheTurnFromTheWaitingBot) {
  TableHarness h(Opts(bots::Level::kEasy));
  h.answer_bots = false;
  TwoPeopleTwoBots(h);
  const int s = h.table().engine()->ToAct();  // easy bots played at once: a person's turn
  ASSERT_EQ(h.table().seat(s).kind, SeatKind::kPerson);
  const std::string player = h.table().seat(s).player;
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, player).ok());
  const BotTurn b = *h.table().PendingBotTurn();  // away: played for, at the timeout level
  EXPECT_EQ(b.seat, s);
  EXPECT_EQ(b.level, bots::kTimeoutLevel);
  EXPECT_FALSE(b.timed_out);
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, player).ok());
  EXPECT_FALSE(h.table().PendingBotTurn().has_value());
  EXPECT_EQ(h.table().engine()->ToAct(), s);
  EXPECT_EQ(h.table().NextDeadline(), h.now() + 10'000);  // their own turn timer
  const std::string snapshot = h.table().Snapshot();
  EXPECT_EQ(h.table().OnBotMove(b.id, std::nullopt, h.now()).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(h.table().Snapshot(), snapshot);
  ASSERT_TRUE(h.Play(player, h.table().engine()->AutoMove(s)).ok());
}

TEST(BotLevel, AnAwaitedBotTurnSurvivesSnapshotAndRestore) {
  TableHarness h(Opts(bots::Level::kStrong));
  h.answer_bots = false;
  TwoPeopleTwoBots(h);
  UntilABotHasAChoice(h);
  const BotTurn b = *h.table().PendingBotTurn();
  const Move searched = h.table().NewBotJob()->Run();
  h.SnapshotRestore();
  const std::optional<BotTurn> r = h.table().PendingBotTurn();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->id, b.id);
  EXPECT_EQ(r->seat, b.seat);
  EXPECT_EQ(r->level, b.level);
  EXPECT_EQ(r->timed_out, b.timed_out);
  EXPECT_EQ(r->deadline_ms, b.deadline_ms);
  EXPECT_EQ(h.table().options().bot_level, bots::Level::kStrong);
  EXPECT_EQ(h.table().NewBotJob()->Run(), searched);
  ASSERT_TRUE(h.AnswerBot(searched).ok());
  EXPECT_EQ(PlayedBy(h, b.seat).back(), searched.card);
}

TEST(BotLevel, AnsweredAsAnIdleHostWouldARoundWithoutPeoplePlaysToItsEnd) {
  TableHarness h(Opts(bots::Level::kStrong));
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  h.Run(kCountInMs);
  ASSERT_EQ(h.table().phase(), Phase::kPlaying);
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "host").ok());  // played for from now on
  h.RunUntilIdle();
  EXPECT_EQ(h.EffectsOfType(EffectType::kRecordRound).size(), 1u);
  EXPECT_GE(h.bot_moves_answered, 13 * 3);  // every card of the three bots at least
  EXPECT_FALSE(h.table().PendingBotTurn().has_value());
}

TEST(BotLevel, TheRulesEnginesJobDecidesFromTheSeatsViewOnly) {
  RulesEngineFactory engines;
  TableHarness h(Opts(bots::Level::kNormal, R"({"game":"classic"})"), "seed", &engines);
  h.answer_bots = false;
  TwoPeopleTwoBots(h);
  for (int guard = 0; guard < 60 && !h.table().PendingBotTurn(); ++guard) {
    const int s = h.table().engine()->ToAct();
    ASSERT_TRUE(h.Play(h.table().seat(s).player, h.table().engine()->AutoMove(s)).ok());
  }
  ASSERT_TRUE(h.table().PendingBotTurn().has_value());
  const int s = h.table().PendingBotTurn()->seat;
  // The same job twice decides the same (node budgets, not time), and its move is legal.
  const Move first = h.table().NewBotJob()->Run();
  EXPECT_EQ(h.table().NewBotJob()->Run(), first);
  const uint64_t id = h.table().PendingBotTurn()->id;
  const size_t events_before = h.events.size();
  ASSERT_TRUE(h.AnswerBot(first).ok());
  EXPECT_GT(h.events.size(), events_before);  // played (or the trump called)
  EXPECT_NE(h.table().PendingBotTurn().value_or(BotTurn{}).id, id);
  (void)s;
}

TEST(BotLevel, OptionsOutOfRangeAreRefused) {
  TableOptions o = Opts(bots::Level::kEasy);
  o.bot_level = static_cast<bots::Level>(3);
  FakeEngineFactory engines;
  DeterministicSeedSource seeds("seed", "t1");
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Create(o, &engines, &seeds, 0);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(), "bot_level must be easy, normal or strong");
  EXPECT_EQ(engines.Validate("target=5,search=2").message(), "fake engine: search must be 0 or 1");
}

}  // namespace
}  // namespace courtpiece::table
