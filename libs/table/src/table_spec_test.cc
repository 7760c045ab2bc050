// RULES.md §3 "Publication" and §4–5 as decided for players' reports (docs/table.md): presence
// before any game or deal, leaving in a count-in, the partner swap's voters, the voice note of
// a count-in, the report window's edges and the seed's publication, seen from each seat's own
// stream. Scripted engine unless a test says otherwise (no seed-derived hands are assumed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/table/rules_engine.h"
#include "courtpiece/table/table.h"
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

// One seat's stream, in order.
std::vector<Event> StreamOf(const TableHarness& h, int seat) {
  std::vector<Event> out;
  for (const Event& e : h.events) {
    if (e.to_seat == seat) out.push_back(e);
  }
  return out;
}
std::vector<Event> Of(const std::vector<Event>& stream, std::string_view type) {
  std::vector<Event> out;
  for (const Event& e : stream) {
    if (e.type == type) out.push_back(e);
  }
  return out;
}
std::vector<std::string> UnseatedReasons(const TableHarness& h) {
  std::vector<std::string> out;
  for (const Event& e : h.events) {
    if (e.type == "unseated" && e.to_seat == 0) out.push_back(e.player + ":" + e.detail);
  }
  return out;
}
int SeatOfPlayer(const Table& t, const std::string& player) {
  for (int s = 0; s < 4; ++s) {
    if (t.seat(s).player == player) return s;
  }
  return -1;
}
// SHA-256 (hex) of the seed whose hex is `seed_hex`: the commitment a seat can check.
std::string CommitmentOf(const std::string& seed_hex) {
  Seed seed{};
  EXPECT_EQ(seed_hex.size(), 64u);
  for (size_t i = 0; i < 32 && 2 * i + 1 < seed_hex.size(); ++i) {
    seed[i] = static_cast<uint8_t>(std::stoi(seed_hex.substr(2 * i, 2), nullptr, 16));
  }
  return Sha256Hex(seed);
}

class Spec : public test::FourPeopleTable {
 protected:
  // Game 1 (target 1) is won in its first round by team 0; returns the time it ended.
  int64_t PlayAOneRoundGame() {
    engines.script = {{0, "normal", 1}};
    engines.target = 1;
    FourPeopleFirstRound();
    h.PlayPeople();
    EXPECT_EQ(h.EffectsOfType(EffectType::kRecordGame).size(), 1u);
    EXPECT_FALSE(h.table().game_active());
    return h.now();
  }
};

// ---- 1. No game starts, and nothing is dealt, while a seated person is away (§4.3, §4.10).

TEST_F(Spec, AfterAGameEndsTheNextStartsSevenSecondsLaterWhenEveryoneIsPresent) {
  int64_t end = PlayAOneRoundGame();
  ASSERT_FALSE(h.EventsOfType("auto_start").empty());
  EXPECT_EQ(h.EventsOfType("auto_start").back().value, end + kAutoStartMs);
  h.AdvanceTo(end + kAutoStartMs - 1);
  EXPECT_FALSE(h.table().game_active());
  h.AdvanceTo(end + kAutoStartMs);
  EXPECT_TRUE(h.table().game_active());
  EXPECT_EQ(h.table().phase(), Phase::kCountIn);
}

TEST_F(Spec, ADropBetweenGamesStopsTheNextGameAndIsFreedAfterOneMinuteWithoutAQuit) {
  int64_t end = PlayAOneRoundGame();
  h.AdvanceTo(end + 1'000);
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  EXPECT_EQ(h.EventsOfType("auto_start_cancelled").size(), 4u);  // one per person's stream
  EXPECT_EQ(h.table().seat(1).keep_until_ms, end + 1'000 + kKeepSeatOutsideGameMs);
  h.AdvanceTo(end + 1'000 + kKeepSeatOutsideGameMs - 1);
  EXPECT_FALSE(h.table().game_active());
  EXPECT_EQ(h.table().seat(1).player, "b");
  h.AdvanceTo(end + 1'000 + kKeepSeatOutsideGameMs);
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);
  EXPECT_THAT(UnseatedReasons(h), ElementsAre("b:not_back_in_time"));
  EXPECT_THAT(h.Quits(), IsEmpty());
  h.Run(3'600'000);
  EXPECT_FALSE(h.table().game_active());
  EXPECT_EQ(h.EventsOfType("game_started").size(), 4u);  // game 1 only, to four streams
  EXPECT_EQ(Transfers(h, TransferStep::kStake).size(), 1u);
  EXPECT_EQ(h.balances["player:b"], 100'000 - 100);  // only game 1's stake: b lost it
}

TEST_F(Spec, BackBetweenGamesTheNextGameStartsAtOnceButNotBeforeSevenSecondsAfterTheEnd) {
  int64_t end = PlayAOneRoundGame();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  h.AdvanceTo(end + 3'000);
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
  EXPECT_EQ(h.EventsOfType("auto_start").back().value, end + kAutoStartMs);
  h.AdvanceTo(end + kAutoStartMs);
  EXPECT_TRUE(h.table().game_active());
  EXPECT_THAT(h.Quits(), IsEmpty());
}

TEST_F(Spec, BackLateBetweenGamesTheNextGameStartsAsSoonAsEveryoneIsPresent) {
  int64_t end = PlayAOneRoundGame();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "c").ok());
  h.AdvanceTo(end + 30'000);
  EXPECT_FALSE(h.table().game_active());
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "c").ok());
  EXPECT_EQ(h.EventsOfType("auto_start").back().value, end + 30'000);
  EXPECT_EQ(h.table().NextDeadline(), end + 30'000);
  h.AdvanceTo(end + 30'000);
  EXPECT_TRUE(h.table().game_active());
  EXPECT_EQ(h.EventsOfType("count_in").back().value, end + 30'000 + kCountInMs);
}

TEST_F(Spec, BeforeTheFirstGameADropCancelsTheAutoStart) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  int64_t full = h.now();
  h.AdvanceTo(full + 3'000);
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "c").ok());
  h.AdvanceTo(full + 30'000);
  EXPECT_FALSE(h.table().game_active());
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "c").ok());  // as if the 4th seat were taken now
  EXPECT_EQ(h.EventsOfType("auto_start").back().value, full + 30'000 + kAutoStartMs);
  h.AdvanceTo(full + 30'000 + kAutoStartMs);
  EXPECT_TRUE(h.table().game_active());
}

TEST_F(Spec, StartNowIsRefusedWhileASeatedPersonIsAwayAndChangesNothing) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "a").ok());
  std::string before = h.table().Snapshot();
  absl::Status st = h.Simple(CommandType::kStartNow, "host");
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "a is away: a game starts when everyone seated is present");
  EXPECT_EQ(h.table().Snapshot(), before);
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);  // no bot sat down
  EXPECT_FALSE(h.table().game_active());
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "a").ok());
  EXPECT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kBot);
}

TEST_F(Spec, APlayerWithABotDrivingWhenTheGameEndsIsFreedNotAQuitAndNeverStakedAgain) {
  engines.target = 6;  // team 0 wins every round by 1: the game ends after round 6
  FourPeopleFirstRound();
  for (int round = 0; round < 5; ++round) {  // the host times out five rounds running
    ASSERT_EQ(h.table().engine()->ToAct(), 0);
    h.AdvanceTo(*h.table().NextDeadline());
    h.PlayPeople();
    h.Run(kCountInMs);
  }
  ASSERT_TRUE(h.table().seat(0).bot_driving);
  h.PlayPeople();  // round 6: the bot plays for the host; the game ends
  std::vector<Effect> games = h.EffectsOfType(EffectType::kRecordGame);
  ASSERT_EQ(games.size(), 1u);
  ASSERT_EQ(games[0].game.players.size(), 4u);
  EXPECT_EQ(games[0].game.players[0].player, "host");  // on the results
  EXPECT_TRUE(games[0].game.players[0].won);
  EXPECT_EQ(h.table().seat(0).kind, SeatKind::kEmpty);
  EXPECT_THAT(UnseatedReasons(h), ElementsAre("host:bot_driving_at_game_end"));
  EXPECT_THAT(h.Quits(), IsEmpty());
  // The final round paid the host like everyone (§4.10): 6 stakes of 100, 6 shares of 200.
  EXPECT_EQ(h.balances["player:host"], 100'000 + 600);
  h.Run(3'600'000);
  EXPECT_EQ(Transfers(h, TransferStep::kStake).size(), 6u);  // no seventh stake for anyone
  EXPECT_FALSE(h.table().game_active());
}

TEST_F(Spec, EndingEarlyTakesTheSeatBackFromTheBotSoTheGameEndIsNotAnAbsence) {
  engines.target = 100;
  FourPeopleFirstRound();
  for (int round = 0; round < 5; ++round) {
    h.AdvanceTo(*h.table().NextDeadline());
    h.PlayPeople();
    h.Run(kCountInMs);
  }
  ASSERT_TRUE(h.table().seat(0).bot_driving);
  for (std::string p : {"a", "b", "c"}) ASSERT_TRUE(h.Simple(CommandType::kEndEarly, p).ok());
  ASSERT_TRUE(h.Simple(CommandType::kEndEarly, "host").ok());  // the last to agree
  EXPECT_FALSE(h.table().game_active());
  EXPECT_EQ(h.table().seat(0).player, "host");
  EXPECT_FALSE(h.table().seat(0).bot_driving);
}

// §4.7 "until you act again": take_back is the act that changes nothing else; refused
// (and nothing changes) when no bot drives the seat.
TEST_F(Spec, TakeBackReturnsTheSeatFromTheBotAfterFiveTimeouts) {
  engines.target = 100;
  FourPeopleFirstRound();
  EXPECT_EQ(h.Simple(CommandType::kTakeBack, "host").code(), absl::StatusCode::kFailedPrecondition);
  for (int round = 0; round < 5; ++round) {
    h.AdvanceTo(*h.table().NextDeadline());
    h.PlayPeople();
    h.Run(kCountInMs);
  }
  ASSERT_TRUE(h.table().seat(0).bot_driving);
  const std::string before = h.table().Snapshot();
  ASSERT_TRUE(h.Simple(CommandType::kTakeBack, "host").ok());
  EXPECT_FALSE(h.table().seat(0).bot_driving);
  EXPECT_EQ(h.table().seat(0).timeouts_in_row, 0);
  EXPECT_EQ(h.EventsOfType("bot_released").size(), 4u);  // every seat is told
  EXPECT_TRUE(h.table().game_active());
  EXPECT_NE(h.table().Snapshot(), before);
  EXPECT_EQ(CommandTypeName(CommandType::kTakeBack), "take_back");
  EXPECT_EQ(ParseCommandType("take_back"), CommandType::kTakeBack);
}

// §4.12 "unanimous": a person who dropped is still asked; the others alone cannot end the
// game (and so take the dropped one's kept seat); back, their agreement ends it.
TEST_F(Spec, EndingEarlyNeedsEveryPersonSeatedAlsoOneWhoDropped) {
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  for (std::string p : {"host", "a", "c"}) ASSERT_TRUE(h.Simple(CommandType::kEndEarly, p).ok());
  EXPECT_TRUE(h.table().game_active());
  EXPECT_EQ(h.table().phase(), Phase::kPlaying);
  EXPECT_EQ(Transfers(h, TransferStep::kRefund).size(), 0u);
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
  ASSERT_TRUE(h.Simple(CommandType::kEndEarly, "b").ok());
  EXPECT_FALSE(h.table().game_active());
  EXPECT_EQ(Transfers(h, TransferStep::kRefund).size(), 1u);  // the round's stakes back
}

// §4.12: agreeing twice is one agreement (a retry or a second tap tells nobody again), and a
// seat that comes back is told, in its view, who has already agreed.
TEST_F(Spec, AgreeingTwiceToEndEarlyIsOneAgreementAndAReturningSeatIsToldWhoAgreed) {
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  ASSERT_TRUE(h.Simple(CommandType::kEndEarly, "host").ok());
  const size_t told = h.EventsOfType("end_early").size();
  ASSERT_GE(told, 3u);  // every seat connected
  ASSERT_TRUE(h.Simple(CommandType::kEndEarly, "host").ok());
  EXPECT_EQ(h.EventsOfType("end_early").size(), told);
  EXPECT_TRUE(h.table().game_active());

  const size_t mark = h.events.size();
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
  std::vector<Event> to_b;
  for (size_t i = mark; i < h.events.size(); ++i) {
    if (h.events[i].type == "end_early" && h.events[i].to_player == "b")
      to_b.push_back(h.events[i]);
  }
  ASSERT_EQ(to_b.size(), 1u);
  EXPECT_EQ(to_b[0].seat, 0);
  EXPECT_EQ(to_b[0].player, "host");
  EXPECT_TRUE(h.table().game_active());
}

// b pressed Leave mid-round; host, a and c agree to end early: the game goes on while the
// bot plays b's cards (no refund), the round ends, b's seat is freed as a quit (§4.9), and
// then the others' agreement ends the game.
void OthersAgreeWhileBsRoundPlaysOut(TableHarness& h) {
  for (std::string p : {"host", "a", "c"}) ASSERT_TRUE(h.Simple(CommandType::kEndEarly, p).ok());
  EXPECT_TRUE(h.table().game_active());
  EXPECT_EQ(Transfers(h, TransferStep::kRefund).size(), 0u);
  h.PlayPeople();  // the bot plays b's cards; the round ends
  EXPECT_FALSE(h.table().game_active());
  EXPECT_THAT(h.Quits(), ElementsAre("b"));
  EXPECT_EQ(Transfers(h, TransferStep::kRefund).size(), 0u);
}

// §4.12 with §4.9: one who agreed and then pressed Leave has withdrawn: the others' agreement
// does not end the game over the round they walked out of, which plays out; the leave is a
// quit, and then the others' agreement ends the game.
TEST_F(Spec, LeavingTakesBackAnAgreementToEndEarly) {
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kEndEarly, "b").ok());
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "b").ok());
  EXPECT_FALSE(h.table().seat(1).end_early);
  ASSERT_NO_FATAL_FAILURE(OthersAgreeWhileBsRoundPlaysOut(h));
}

// §4.11 with §4.12: a bot voted into a dropped holdout's seat leaves only people who agreed:
// the game ends then, not at the next round's stake.
TEST_F(Spec, ABotReplacingTheLastHoldoutEndsTheGameEarly) {
  engines.target = 100;
  FourPeopleFirstRound();
  h.PlayPeople();
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);  // between rounds: votes are allowed
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  for (std::string p : {"host", "a", "c"}) ASSERT_TRUE(h.Simple(CommandType::kEndEarly, p).ok());
  ASSERT_TRUE(h.table().game_active());
  ASSERT_TRUE(h.Simple(CommandType::kAskBot, "host", 1).ok());
  ASSERT_TRUE(h.Vote("a", true).ok());
  ASSERT_TRUE(h.Vote("c", true).ok());
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kBot);
  EXPECT_FALSE(h.table().game_active());
  const std::vector<Event> over = h.EventsOfType("game_over");
  ASSERT_FALSE(over.empty());
  EXPECT_EQ(over.back().detail.rfind("ended_early", 0), 0u) << over.back().detail;
}

// §4.6/§4.9 with §4.12: one who pressed Leave cannot agree; the round plays out (their bet
// stays in the pot), their seat is freed as a quit, and then the others' agreement ends it.
TEST_F(Spec, ALeaverDoesNotEscapeTheRoundOrTheQuitByEndingEarly) {
  engines.target = 100;
  engines.script = {{0, "normal", 1}};
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "b").ok());
  ASSERT_NO_FATAL_FAILURE(OthersAgreeWhileBsRoundPlaysOut(h));
  ASSERT_EQ(Transfers(h, TransferStep::kPayout).size(), 1u);
  EXPECT_EQ(h.balances["player:b"], 100'000 - 100);  // b's bet stayed in the pot
}

// ---- 2. Leaving in a count-in costs no coins; a quit only once the game is under way (§4.5).

TEST_F(Spec, LeavingInTheFirstRoundsCountInIsNotAQuitAndCostsNothing) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  h.Run(kAutoStartMs);
  ASSERT_TRUE(h.table().game_active());
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "b").ok());
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);
  EXPECT_THAT(UnseatedReasons(h), ElementsAre("b:left"));
  EXPECT_THAT(h.Quits(), IsEmpty());
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);
  h.Run(60'000);
  EXPECT_THAT(Transfers(h, TransferStep::kStake), IsEmpty());
  EXPECT_EQ(h.balances["player:b"], 100'000);
}

TEST_F(Spec, ADropBeforeTheFirstDealIsKeptOneMinuteAndItsExpiryIsNotAQuit) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  h.Run(kAutoStartMs);
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "c").ok());
  EXPECT_EQ(h.table().seat(3).keep_until_ms, h.now() + kKeepSeatOutsideGameMs);
  h.Run(kKeepSeatOutsideGameMs);
  EXPECT_THAT(UnseatedReasons(h), ElementsAre("c:not_back_in_time"));
  EXPECT_THAT(h.Quits(), IsEmpty());
}

TEST_F(Spec, LeavingInALaterRoundsCountInIsAQuitAndCostsNoCoins) {
  engines.script = {{1, "normal", 1}};
  engines.target = 100;
  FourPeopleFirstRound();
  h.PlayPeople();  // b and c win round 1
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "b").ok());
  EXPECT_THAT(h.Quits(), ElementsAre("b"));
  h.Run(60'000);
  EXPECT_EQ(Transfers(h, TransferStep::kStake).size(), 1u);
  EXPECT_EQ(h.balances["player:b"], 100'000 + 100);  // round 1's share; nothing taken since
}

// ---- 3. The partner swap asks only the two opponents (§4.2, §4.11).

TEST_F(Spec, TheSwapAsksOnlyTheOpponentsAndThePartnerCannotBlockIt) {
  ASSERT_TRUE(h.Join("a").ok());  // the host's partner, seat 2
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  ASSERT_TRUE(h.Simple(CommandType::kSwapPartner, "host", 1).ok());
  EXPECT_EQ(h.table().vote().pending, (std::vector<std::string>{"b", "c"}));
  absl::Status st = h.Vote("a", false);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "no vote is asking you");
  EXPECT_TRUE(h.table().vote().active);
  ASSERT_TRUE(h.Vote("b", true).ok());
  ASSERT_TRUE(h.Vote("c", true).ok());
  EXPECT_EQ(h.table().seat(2).player, "b");
  EXPECT_EQ(h.table().seat(1).player, "a");
}

TEST_F(Spec, OneOpponentsSilenceIsAYesAndThePartnerIsNeverAsked) {
  ASSERT_TRUE(h.Join("a").ok());  // seat 2
  ASSERT_TRUE(h.Join("b").ok());  // seat 1; seat 3 stays empty
  ASSERT_TRUE(h.Simple(CommandType::kSwapPartner, "host", 1).ok());
  EXPECT_EQ(h.table().vote().pending, (std::vector<std::string>{"b"}));
  h.Run(kVoteSilenceMs - 1);
  EXPECT_EQ(h.table().seat(2).player, "a");
  h.Run(1);
  EXPECT_EQ(h.table().seat(2).player, "b");
  EXPECT_EQ(h.table().seat(1).player, "a");
}

// §4.11: the last person still asked leaves: the vote is decided at once (the others said
// yes), not after its 20 s.
TEST_F(Spec, ABotVoteWhoseLastVoterLeftPassesAtOnce) {
  ASSERT_TRUE(h.Join("a").ok());  // seat 2
  ASSERT_TRUE(h.Join("b").ok());  // seat 1; seat 3 stays empty
  ASSERT_TRUE(h.Simple(CommandType::kAskBot, "host", 3).ok());
  EXPECT_EQ(h.table().vote().pending, (std::vector<std::string>{"b", "a"}));  // seat order
  ASSERT_TRUE(h.Vote("a", true).ok());
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "b").ok());  // free: before a game
  EXPECT_FALSE(h.table().vote().active);
  EXPECT_EQ(h.table().seat(3).kind, SeatKind::kBot);
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);
}

// §5.2: the recording lock is the recorder's. A swap while the host's partner records moves
// the lock with them (everyone is told the new seat), so their note is still theirs to send.
TEST_F(Spec, ASwapWhileThePartnerRecordsMovesTheLockWithThem) {
  ASSERT_TRUE(h.Join("a").ok());  // seat 2
  ASSERT_TRUE(h.Join("b").ok());  // seat 1
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  ASSERT_EQ(h.table().recording_seat(), 2);
  const int64_t until_ms = h.now() + kVoiceMaxMs;
  ASSERT_TRUE(h.Simple(CommandType::kSwapPartner, "host", 1).ok());
  const size_t before = h.events.size();
  ASSERT_TRUE(h.Vote("b", true).ok());
  ASSERT_EQ(h.table().seat(1).player, "a");
  EXPECT_EQ(h.table().recording_seat(), 1);
  std::set<std::string> told;  // every person seated hears where the recorder sits now
  for (size_t i = before; i < h.events.size(); ++i) {
    const Event& e = h.events[i];
    if (e.type != "voice_recording") continue;
    EXPECT_EQ(e.seat, 1);
    EXPECT_EQ(e.player, "a");
    EXPECT_EQ(e.value, until_ms);
    told.insert(e.to_player);
  }
  EXPECT_EQ(told, (std::set<std::string>{"host", "a", "b"}));
  EXPECT_EQ(h.Simple(CommandType::kVoiceDiscard, "b").message(), "you are not recording");
  ASSERT_TRUE(
      h.Do({.type = CommandType::kVoiceSent, .player = "a", .note_id = "n1", .duration_ms = 900})
          .ok());
  EXPECT_EQ(h.table().FindNote("n1")->author_seat, 1);
}

// §4.3 vs §4.11: at a full table the automatic start (7 s) waits for a swap vote, so the
// opponents' silence can run its 20 s and count as yes; the game then starts 7 s later.
TEST_F(Spec, AFullTableWaitsForTheSwapVoteBeforeItsAutomaticStart) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());  // the fourth seat: the automatic start is armed
  h.Run(1'000);
  ASSERT_TRUE(h.Simple(CommandType::kSwapPartner, "host", 1).ok());
  h.Run(kAutoStartMs);  // past the armed start: held
  EXPECT_FALSE(h.table().game_active());
  EXPECT_TRUE(h.table().vote().active);
  h.Run(kVoteSilenceMs - kAutoStartMs);  // silence: yes
  EXPECT_FALSE(h.table().vote().active);
  EXPECT_EQ(h.table().seat(2).player, "b");
  EXPECT_EQ(h.table().seat(1).player, "a");
  EXPECT_FALSE(h.table().game_active());
  h.Run(kAutoStartMs - 1);
  EXPECT_FALSE(h.table().game_active());
  h.Run(1);
  EXPECT_TRUE(h.table().game_active());
}

TEST_F(Spec, ARejectedSwapLetsTheHeldStartGoAhead) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  ASSERT_TRUE(h.Simple(CommandType::kSwapPartner, "host", 1).ok());
  h.Run(kAutoStartMs + 1'000);
  EXPECT_FALSE(h.table().game_active());
  ASSERT_TRUE(h.Vote("c", false).ok());
  EXPECT_FALSE(h.table().vote().active);
  EXPECT_EQ(h.table().seat(2).player, "a");
  h.Run(kAutoStartMs);
  EXPECT_TRUE(h.table().game_active());
}

TEST_F(Spec, WithBotOpponentsTheSwapPassesAtOnce) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kAskBot, "host", 1).ok());  // a asked: silence
  h.Run(kVoteSilenceMs);
  ASSERT_EQ(h.table().seat(1).kind, SeatKind::kBot);
  ASSERT_TRUE(h.Simple(CommandType::kSwapPartner, "host", 1).ok());
  EXPECT_EQ(h.table().seat(2).player, "bot-1");
  EXPECT_EQ(h.table().seat(1).player, "a");
}

// ---- 4. A note sent in a round's count-in is that round's note (§5.1).

TEST_F(Spec, ANoteInTheCountInUsesThatRoundsNote) {
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());  // round 1's note
  ASSERT_TRUE(
      h.Do({.type = CommandType::kVoiceSent, .player = "a", .note_id = "r1", .duration_ms = 1'000})
          .ok());
  h.PlayPeople();
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);  // round 2's count-in: round 2's note
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  ASSERT_TRUE(
      h.Do({.type = CommandType::kVoiceSent, .player = "a", .note_id = "r2", .duration_ms = 1'000})
          .ok());
  // The count-in is cancelled and starts again: still round 2's.
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "c").ok());
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "c").ok());
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  absl::Status st = h.Simple(CommandType::kVoiceStart, "a");
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "one voice note per round");
  h.Run(kCountInMs);
  ASSERT_EQ(h.table().phase(), Phase::kPlaying);
  ASSERT_EQ(h.table().round_no(), 2u);
  EXPECT_EQ(h.Simple(CommandType::kVoiceStart, "a").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(h.Simple(CommandType::kVoiceStart, "b").ok());  // b's round-2 note is unused
  ASSERT_TRUE(h.Simple(CommandType::kVoiceDiscard, "b").ok());
  h.PlayPeople();
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);  // round 3's count-in: a note again
  EXPECT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
}

// A note started in round 1 and sent after round 2's count-in began is round 1's: its
// report names round 1, and the player's round-2 note is still unused (§5.1).
TEST_F(Spec, ANoteStartedBeforeTheCountInBelongsToTheRoundItWasStartedIn) {
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  EXPECT_EQ(h.table().recording_round(), 1u);
  h.PlayPeople();
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ASSERT_EQ(h.table().voice_round(), 2u);
  ASSERT_EQ(h.table().recording_seat(), SeatOfPlayer(h.table(), "a"));  // still recording
  EXPECT_EQ(h.table().recording_round(), 1u);
  ASSERT_TRUE(
      h.Do({.type = CommandType::kVoiceSent, .player = "a", .note_id = "late", .duration_ms = 900})
          .ok());
  ASSERT_NE(h.table().FindNote("late"), nullptr);
  EXPECT_EQ(h.table().FindNote("late")->round, 1u);
  h.Run(kVoicePlayDelayMs);
  ASSERT_TRUE(h.Do({.type = CommandType::kReport, .player = "b", .note_id = "late"}).ok());
  ASSERT_EQ(h.EffectsOfType(EffectType::kReport).size(), 1u);
  EXPECT_EQ(h.EffectsOfType(EffectType::kReport)[0].note_round, 1u);
  // Round 2's note: once.
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  EXPECT_EQ(h.table().recording_round(), 2u);
  ASSERT_TRUE(h.Simple(CommandType::kVoiceDiscard, "a").ok());
  EXPECT_EQ(h.Simple(CommandType::kVoiceStart, "a").message(), "one voice note per round");
}

// Leaving and sitting down again in the same voice round does not give the note back (§5.1),
// and the restored table remembers it.
TEST_F(Spec, SittingDownAgainDoesNotGiveTheNoteBack) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kVoiceDiscard, "a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "a").ok());
  EXPECT_TRUE(h.table().VoiceUsedBy("a"));
  h.SnapshotRestore();
  ASSERT_TRUE(h.Join("a").ok());
  const int seat = SeatOfPlayer(h.table(), "a");
  ASSERT_GE(seat, 0);
  EXPECT_TRUE(h.table().seat(seat).voice_used);
  absl::Status st = h.Simple(CommandType::kVoiceStart, "a");
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "one voice note per round");
  EXPECT_TRUE(h.Simple(CommandType::kVoiceStart, "b").ok());  // b's is unused
}

// ---- 5. Reports from the note's start until 5 s after its end, edges exact; never your own.

TEST_F(Spec, TheReportWindowsEdgesAreExact) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  ASSERT_TRUE(
      h.Do({.type = CommandType::kVoiceSent, .player = "a", .note_id = "n", .duration_ms = 3'000})
          .ok());
  const int64_t start = h.now() + kVoicePlayDelayMs;
  const int64_t end = start + 3'000;
  ASSERT_EQ(h.EventsOfType("voice_note").back().value, start);
  auto report = [&](const std::string& who) {
    return h.Do({.type = CommandType::kReport, .player = who, .note_id = "n"});
  };
  h.AdvanceTo(start - 1);
  absl::Status st = report("b");
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "the note has not played yet");
  EXPECT_EQ(report("a").code(), absl::StatusCode::kPermissionDenied);
  h.AdvanceTo(start);
  EXPECT_TRUE(report("b").ok());
  st = report("a");
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(st.message(), "nobody reports their own note");
  h.AdvanceTo(end + 5'000);
  EXPECT_TRUE(report("c").ok());
  EXPECT_EQ(report("a").code(), absl::StatusCode::kPermissionDenied);
  h.AdvanceTo(end + 5'001);
  st = report("host");
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "the report window closed");
  std::vector<std::string> reporters;
  for (const Effect& f : h.EffectsOfType(EffectType::kReport)) {
    EXPECT_EQ(f.author, "a");
    reporters.push_back(f.player);
  }
  EXPECT_THAT(reporters, ElementsAre("b", "c"));
}

// A court-stake refusal naming none of the payers (the tablesim's scripted wallet can say
// that) pays the pot out as it is instead of asking the wallet again for ever.
TEST_F(Spec, ACourtStakeRefusalNamingNoPayerPaysOutThePotAsItIs) {
  engines.script = {{1, "court", 2}};
  engines.target = 100;
  FourPeopleFirstRound();
  h.auto_reply = false;
  h.PlayPeople();
  ASSERT_EQ(h.table().phase(), Phase::kCourtStake);
  ASSERT_TRUE(h.ReplyNow({.ok = false, .short_players = {"nobody"}}).ok());
  EXPECT_EQ(Transfers(h, TransferStep::kCourtStake).size(), 1u);
  EXPECT_FALSE(h.table().AwaitedTransferKey().has_value());
  std::vector<Transfer> pay = Transfers(h, TransferStep::kPayout);
  ASSERT_EQ(pay.size(), 1u);
  EXPECT_EQ(LegsOf(pay[0]), (Legs{{"pot:t1:1", -400}, {"player:b", 200}, {"player:c", 200}}));
}

// ---- 6. Seed publication (RULES.md §3), from each seat's own stream.

// Every seat's stream: the commitment before its first card of the round; `seed_to` says
// which seats then get the seed (after `after`), which must hash to the commitment.
void ExpectPublication(const TableHarness& h, const std::vector<bool>& seed_to,
                       std::string_view after, const std::string& seed_hex) {
  for (int seat = 0; seat < 4; ++seat) {
    SCOPED_TRACE(seat);
    std::vector<Event> s = StreamOf(h, seat);
    size_t commit = s.size(), first_card = s.size(), end = s.size(), seed = s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i].type == "round_started" && commit == s.size()) commit = i;
      if (s[i].type == "hand" && first_card == s.size()) first_card = i;
      if (s[i].type == after && end == s.size()) end = i;
      if (s[i].type == "seed" && seed == s.size()) seed = i;
    }
    ASSERT_LT(commit, s.size());
    EXPECT_LT(commit, first_card);  // sent before the deal reaches this seat
    EXPECT_EQ(s[commit].detail, CommitmentOf(seed_hex));
    ASSERT_EQ(Of(s, "seed").size(), seed_to[seat] ? 1u : 0u);
    if (!seed_to[seat]) continue;
    EXPECT_GT(seed, end);
    EXPECT_EQ(s[seed].detail, seed_hex);
    EXPECT_EQ(CommitmentOf(s[seed].detail), s[commit].detail);
  }
}

TEST_F(Spec, SeedAtANormalEndGoesToEverySeatAndTheRecord) {
  engines.script = {{0, "normal", 1}};
  FourPeopleFirstRound();
  h.PlayPeople();
  std::vector<Effect> rec = h.EffectsOfType(EffectType::kRecordRound);
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].round.seed_only_to, -1);
  EXPECT_EQ(rec[0].round.seed_hex, SeedHex(DeterministicSeedSource("seed", "t1").Draw(1)));
  ExpectPublication(h, {true, true, true, true}, "round_result", rec[0].round.seed_hex);
}

TEST_F(Spec, SeedOfAnAbandonedRoundGoesToEverySeatAndTheRecord) {
  engines.target = 100;
  FourPeopleFirstRound();
  for (std::string p : {"host", "a", "b", "c"}) {
    ASSERT_TRUE(h.Simple(CommandType::kEndEarly, p).ok());
  }
  ASSERT_EQ(h.EventsOfType("round_abandoned").size(), 4u);
  std::vector<Effect> rec = h.EffectsOfType(EffectType::kRecordRound);
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].round.result, "abandoned");
  EXPECT_EQ(rec[0].round.seed_only_to, -1);
  ExpectPublication(h, {true, true, true, true}, "round_abandoned", rec[0].round.seed_hex);
}

TEST_F(Spec, SeedOfAHiddenRoundWithAFaceDownThrowGoesToTheCallerOnly) {
  engines.script = {{0, "normal", 1}};
  engines.seed_only_for = 2;  // as RulesEngine answers when the caller (seat 2) threw face down
  FourPeopleFirstRound();
  h.PlayPeople();
  std::vector<Effect> rec = h.EffectsOfType(EffectType::kRecordRound);
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].round.seed_only_to, 2);
  EXPECT_EQ(rec[0].round.seed_hex, SeedHex(DeterministicSeedSource("seed", "t1").Draw(1)));
  ExpectPublication(h, {false, false, true, false}, "round_result", rec[0].round.seed_hex);
}

TEST_F(Spec, SeedOfAnAbandonedHiddenRoundWithAFaceDownThrowGoesToTheCallerOnly) {
  engines.target = 100;
  engines.seed_only_for = 1;
  FourPeopleFirstRound();
  for (std::string p : {"host", "a", "b", "c"}) {
    ASSERT_TRUE(h.Simple(CommandType::kEndEarly, p).ok());
  }
  std::vector<Effect> rec = h.EffectsOfType(EffectType::kRecordRound);
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].round.seed_only_to, 1);
  ExpectPublication(h, {false, true, false, false}, "round_abandoned", rec[0].round.seed_hex);
}

// On the real engine: hidden rounds with and without a face-down throw, told apart from the
// streams alone (another seat sees a "??" card played), over as many tables as it takes.
TEST(SpecRulesEngine, HiddenRoundsPublishTheSeedByWhetherACardWentFaceDown) {
  RulesEngineFactory engines;
  TableOptions o = Opts();
  o.game_options = "{\"game\":\"hidden\"}";
  int with = 0, without = 0;
  for (int n = 0; n < 80 && (with < 2 || without < 2); ++n) {
    SCOPED_TRACE(n);
    TableHarness h(o, absl::StrCat("pub", n), &engines);
    ASSERT_TRUE(h.Join("a").ok());
    ASSERT_TRUE(h.Join("b").ok());
    ASSERT_TRUE(h.Join("c").ok());
    h.Run(kAutoStartMs + kCountInMs);
    h.PlayPeople();
    ASSERT_EQ(h.EffectsOfType(EffectType::kRecordRound).size(), 1u);
    const RoundRecord rec = h.EffectsOfType(EffectType::kRecordRound)[0].round;
    int caller = -1;
    bool face_down = false;
    for (int seat = 0; seat < 4; ++seat) {
      for (const Event& e : StreamOf(h, seat)) {
        if (e.type == "hidden" && !e.cards.empty()) caller = seat;  // only the caller sees it
        if (e.type == "played" && e.cards == std::vector<std::string>{"??"}) face_down = true;
      }
    }
    ASSERT_GE(caller, 0);
    std::vector<bool> to(4, !face_down);
    if (face_down) to[caller] = true;
    ExpectPublication(h, to, "round_result", rec.seed_hex);
    EXPECT_EQ(rec.seed_only_to, face_down ? caller : -1);
    EXPECT_EQ(rec.seed_hex, SeedHex(DeterministicSeedSource(absl::StrCat("pub", n), "t1").Draw(1)));
    (face_down ? with : without)++;
  }
  EXPECT_GE(with, 2);
  EXPECT_GE(without, 2);
}

// ---- 6. A drop or leave while a round's stake is awaited: nothing is dealt (§4.3); the stake
// goes back to whoever paid it and the table waits for everyone (docs/table.md).

std::vector<std::string> TypesFrom(const TableHarness& h, int seat, size_t from) {
  std::vector<std::string> out;
  for (size_t i = from; i < h.events.size(); ++i) {
    if (h.events[i].to_seat == seat) out.push_back(h.events[i].type);
  }
  return out;
}

// A seat taken for a player whose stream is not open yet (the lobby's JoinTable) is away from
// the start: the others see "seated" then "away", not an automatic start begun and
// cancelled; no game starts until the player is back (§4.3), and the seat is kept 1 minute
// before a game, then freed without a quit (§4.10).
TEST_F(Spec, ASeatTakenWithoutAStreamIsAwayFromTheStart) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  const size_t from = h.events.size();
  ASSERT_TRUE(
      h.Do({.type = CommandType::kJoin, .player = "c", .balance_coins = 100'000, .away = true})
          .ok());
  EXPECT_THAT(TypesFrom(h, 0, from), ElementsAre("seated", "away"));
  const int c = SeatOfPlayer(h.table(), "c");
  ASSERT_GE(c, 0);
  EXPECT_FALSE(h.table().seat(c).connected);
  h.Run(kKeepSeatOutsideGameMs - 1);
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);  // never started: c is away
  EXPECT_EQ(SeatOfPlayer(h.table(), "c"), c);
  h.Run(1);
  EXPECT_EQ(SeatOfPlayer(h.table(), "c"), -1);
  EXPECT_TRUE(h.Quits().empty());
}

class StakeWindow : public Spec {
 protected:
  // The round's count-in ends and its stake waits for a wallet reply.
  void ToStake() {
    h.auto_reply = false;
    h.Run(kCountInMs);
    ASSERT_EQ(h.table().phase(), Phase::kStaking);
  }
  // Host, a (2), b (1) and a bot (3) via start_now: the house stakes the bot.
  void ThreePeopleAndABot() {
    ASSERT_TRUE(h.Join("a").ok());
    ASSERT_TRUE(h.Join("b").ok());
    ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
    ASSERT_EQ(h.table().seat(3).kind, SeatKind::kBot);
  }
};

TEST_F(StakeWindow, ADropWhileTheFirstStakeIsAwaitedReturnsItAndNothingIsDealt) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  h.Run(kAutoStartMs);
  ToStake();
  ASSERT_EQ(h.table().AwaitedTransferKey(), "t1:1:stake:0");
  size_t from = h.events.size();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());  // the wallet takes the four stakes
  EXPECT_EQ(h.table().phase(), Phase::kStaking);
  EXPECT_EQ(h.table().round_no(), 0u);
  EXPECT_EQ(h.table().AwaitedTransferKey(), "t1:1:stake_refund:0");
  std::vector<Transfer> refunds = Transfers(h, TransferStep::kRefund);
  ASSERT_EQ(refunds.size(), 1u);
  EXPECT_TRUE(refunds[0].awaited);
  EXPECT_EQ(LegsOf(refunds[0]), (Legs{{"pot:t1:1", -400},
                                      {"player:host", 100},
                                      {"player:a", 100},
                                      {"player:b", 100},
                                      {"player:c", 100}}));
  EXPECT_EQ(h.balances["pot:t1:1"], 400);
  EXPECT_EQ(h.balances["player:b"], 99'900);
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());  // the refund
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);
  EXPECT_FALSE(h.table().AwaitedTransferKey().has_value());
  for (std::string p : {"host", "a", "b", "c"}) EXPECT_EQ(h.balances["player:" + p], 100'000);
  EXPECT_EQ(h.balances["pot:t1:1"], 0);
  EXPECT_EQ(h.balances["house"], 0);
  EXPECT_EQ(h.Sum(), 0);
  EXPECT_THAT(TypesFrom(h, 0, from), ElementsAre("away", "deal_held", "stake_returned"));
  EXPECT_EQ(h.EventsOfType("deal_held")[0].value, 400);
  EXPECT_THAT(h.EventsOfType("round_started"), IsEmpty());
  EXPECT_THAT(Of(StreamOf(h, 0), "hand"), IsEmpty());
  // Before the game's first deal a drop is kept one minute (§4.10), no quit.
  EXPECT_EQ(h.table().seat(1).keep_until_ms, h.now() + kKeepSeatOutsideGameMs);
  EXPECT_THAT(h.Quits(), IsEmpty());
  // Nothing happens while b is away; back, a fresh count-in and a new stake key.
  h.Run(30'000);
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);
  EXPECT_EQ(Transfers(h, TransferStep::kStake).size(), 1u);
  from = h.events.size();
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
  EXPECT_THAT(TypesFrom(h, 0, from), ElementsAre("back", "count_in"));
  h.auto_reply = true;
  h.Run(kCountInMs);
  std::vector<Transfer> stakes = Transfers(h, TransferStep::kStake);
  ASSERT_EQ(stakes.size(), 2u);
  EXPECT_EQ(stakes[1].key, "t1:1:stake:1");
  EXPECT_EQ(h.table().phase(), Phase::kPlaying);
  EXPECT_EQ(h.table().round_no(), 1u);
  EXPECT_EQ(h.balances["pot:t1:1"], 400);
  EXPECT_EQ(h.Sum(), 0);
}

TEST_F(StakeWindow, ADropWhileALaterStakeIsAwaitedRefundsTheHouseForTheBotAndRetriesTheRefund) {
  engines.script = {{0, "normal", 1}};
  engines.target = 100;
  ThreePeopleAndABot();
  h.Run(kCountInMs);
  ASSERT_EQ(h.table().phase(), Phase::kPlaying);
  h.PlayPeople();  // round 1: host and a win 200 each; the house paid the bot's 100
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ToStake();
  ASSERT_EQ(h.table().AwaitedTransferKey(), "t1:2:stake:0");
  size_t from = h.events.size();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "a").ok());
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());
  ASSERT_EQ(h.table().AwaitedTransferKey(), "t1:2:stake_refund:0");
  ASSERT_TRUE(h.ReplyNow({.ok = false}).ok());  // refused: asked again, same key, same legs
  EXPECT_EQ(h.table().phase(), Phase::kStaking);
  ASSERT_EQ(h.table().AwaitedTransferKey(), "t1:2:stake_refund:0");
  std::vector<Transfer> refunds = Transfers(h, TransferStep::kRefund);
  ASSERT_EQ(refunds.size(), 2u);
  const Legs want{{"pot:t1:2", -400},
                  {"player:host", 100},
                  {"player:a", 100},
                  {"player:b", 100},
                  {"house", 100}};
  EXPECT_EQ(LegsOf(refunds[0]), want);
  EXPECT_EQ(refunds[1].key, refunds[0].key);
  EXPECT_EQ(LegsOf(refunds[1]), want);
  EXPECT_EQ(h.balances["pot:t1:2"], 400);  // the refused refund moved nothing
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);
  EXPECT_EQ(h.balances["player:host"], 100'100);
  EXPECT_EQ(h.balances["player:a"], 100'100);
  EXPECT_EQ(h.balances["player:b"], 99'900);
  EXPECT_EQ(h.balances["house"], -100);
  EXPECT_EQ(h.balances["pot:t1:1"], 0);
  EXPECT_EQ(h.balances["pot:t1:2"], 0);
  EXPECT_EQ(h.Sum(), 0);
  EXPECT_THAT(TypesFrom(h, 0, from), ElementsAre("away", "deal_held", "stake_returned"));
  EXPECT_EQ(h.table().round_no(), 1u);
  // The game is under way: the seat is kept ten minutes, the game waits.
  EXPECT_EQ(h.table().seat(2).keep_until_ms, h.now() + kKeepSeatInGameMs);
  h.Run(kKeepSeatInGameMs - 1);
  EXPECT_EQ(Transfers(h, TransferStep::kStake).size(), 2u);
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "a").ok());
  h.auto_reply = true;
  h.Run(kCountInMs);
  std::vector<Transfer> stakes = Transfers(h, TransferStep::kStake);
  ASSERT_EQ(stakes.size(), 3u);
  EXPECT_EQ(stakes[2].key, "t1:2:stake:1");
  EXPECT_EQ(h.table().round_no(), 2u);
  EXPECT_EQ(h.table().phase(), Phase::kPlaying);
  EXPECT_THAT(h.Quits(), IsEmpty());
  EXPECT_EQ(h.Sum(), 0);
}

TEST_F(StakeWindow, NotBackInTimeAfterARefundedLaterStakeIsAQuit) {
  engines.script = {{0, "normal", 1}};
  engines.target = 100;
  ThreePeopleAndABot();
  h.Run(kCountInMs);
  h.PlayPeople();
  ToStake();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());
  h.Run(kKeepSeatInGameMs);
  EXPECT_THAT(UnseatedReasons(h), ElementsAre("b:not_back_in_time"));
  EXPECT_THAT(h.Quits(), ElementsAre("b"));
  EXPECT_EQ(h.balances["player:b"], 99'900);  // round 1's lost stake only
  EXPECT_EQ(Transfers(h, TransferStep::kStake).size(), 2u);
}

TEST_F(StakeWindow, ALeaveWhileTheFirstStakeIsAwaitedCostsNothingAndIsNoQuit) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  h.Run(kAutoStartMs);
  ToStake();
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "c").ok());
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());
  EXPECT_EQ(h.table().seat(3).kind, SeatKind::kEmpty);
  EXPECT_THAT(UnseatedReasons(h), ElementsAre("c:left"));
  EXPECT_THAT(h.Quits(), IsEmpty());
  for (std::string p : {"host", "a", "b", "c"}) EXPECT_EQ(h.balances["player:" + p], 100'000);
  EXPECT_EQ(h.Sum(), 0);
  EXPECT_THAT(h.EventsOfType("round_started"), IsEmpty());
}

TEST_F(StakeWindow, ALeaveWhileALaterStakeIsAwaitedGetsTheStakeBackAndIsAQuit) {
  engines.script = {{0, "normal", 1}};
  engines.target = 100;
  ThreePeopleAndABot();
  h.Run(kCountInMs);
  h.PlayPeople();
  ToStake();
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "b").ok());
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());
  EXPECT_THAT(UnseatedReasons(h), ElementsAre("b:left"));
  EXPECT_THAT(h.Quits(), ElementsAre("b"));
  EXPECT_EQ(h.balances["player:b"], 99'900);  // round 1's stake only: round 2's came back
  EXPECT_EQ(h.balances["player:host"], 100'100);
  EXPECT_EQ(h.balances["player:a"], 100'100);
  EXPECT_EQ(h.balances["house"], -100);
  EXPECT_EQ(h.balances["pot:t1:2"], 0);
  EXPECT_EQ(h.Sum(), 0);
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);  // seat 1 empty: the game waits
}

TEST_F(StakeWindow, BackBeforeTheWalletRepliesTheRoundIsDealt) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  h.Run(kAutoStartMs);
  ToStake();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());
  EXPECT_EQ(h.table().phase(), Phase::kPlaying);
  EXPECT_THAT(Transfers(h, TransferStep::kRefund), IsEmpty());
  EXPECT_THAT(h.EventsOfType("deal_held"), IsEmpty());
  EXPECT_EQ(h.balances["pot:t1:1"], 400);
}

TEST_F(StakeWindow, AnAwaitedStakeRefundSurvivesSnapshotAndRestore) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  h.Run(kAutoStartMs);
  ToStake();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());
  std::string before = h.table().Snapshot();
  h.SnapshotRestore();
  EXPECT_EQ(h.table().Snapshot(), before);
  EXPECT_EQ(h.table().AwaitedTransferKey(), "t1:1:stake_refund:0");
  ASSERT_TRUE(h.ReplyNow({.ok = true}).ok());
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);
  EXPECT_EQ(h.Sum(), 0);
  EXPECT_EQ(h.balances["pot:t1:1"], 0);
}

// ---- 7. A reconnect's catch-up view carries the round's seed commitment, and the seed once
// the round ended if that seat was entitled to it (RULES.md §3 Publication).

class SeedCatchUp : public Spec {
 protected:
  // Seat `seat`'s stream from event index `from` on.
  std::vector<Event> StreamFrom(int seat, size_t from) const {
    std::vector<Event> out;
    for (size_t i = from; i < h.events.size(); ++i) {
      if (h.events[i].to_seat == seat) out.push_back(h.events[i]);
    }
    return out;
  }
  static int IndexOf(const std::vector<Event>& s, std::string_view type) {
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i].type == type) return static_cast<int>(i);
    }
    return -1;
  }
  const std::string round1_seed = SeedHex(DeterministicSeedSource("seed", "t1").Draw(1));
  const std::string round1_commitment = Sha256Hex(DeterministicSeedSource("seed", "t1").Draw(1));
};

TEST_F(SeedCatchUp, MidRoundTheCommitmentComesBeforeTheCardsAndTheSeedDoesNot) {
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  size_t from = h.events.size();
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
  std::vector<Event> s = StreamFrom(1, from);
  std::vector<Event> c = Of(s, "seed_commitment");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].detail, round1_commitment);
  EXPECT_EQ(c[0].value, 1);
  EXPECT_EQ(c[0].detail, Of(StreamOf(h, 1), "round_started")[0].detail);
  ASSERT_GE(IndexOf(s, "hand"), 0);
  EXPECT_LT(IndexOf(s, "seed_commitment"), IndexOf(s, "hand"));
  EXPECT_THAT(Of(s, "seed"), IsEmpty());
  // Only the reconnecting seat gets its view.
  for (int other : {0, 2, 3})
    EXPECT_THAT(Of(StreamFrom(other, from), "seed_commitment"), IsEmpty());
}

TEST_F(SeedCatchUp, AfterTheRoundEndedTheSeedFollowsAndMatchesTheCommitment) {
  engines.script = {{0, "normal", 1}};
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  h.PlayPeople();  // the bot plays for b; the round ends, b's seat is kept, the game waits
  ASSERT_EQ(h.table().phase(), Phase::kWaiting);
  ASSERT_EQ(h.EffectsOfType(EffectType::kRecordRound).size(), 1u);
  size_t from = h.events.size();
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
  std::vector<Event> s = StreamFrom(1, from);
  std::vector<Event> c = Of(s, "seed_commitment");
  std::vector<Event> seed = Of(s, "seed");
  ASSERT_EQ(c.size(), 1u);
  ASSERT_EQ(seed.size(), 1u);
  EXPECT_EQ(c[0].detail, round1_commitment);
  EXPECT_EQ(seed[0].detail, round1_seed);
  EXPECT_EQ(seed[0].detail, h.EffectsOfType(EffectType::kRecordRound)[0].round.seed_hex);
  EXPECT_EQ(seed[0].value, 1);
  EXPECT_EQ(CommitmentOf(seed[0].detail), c[0].detail);
  EXPECT_LT(IndexOf(s, "seed_commitment"), IndexOf(s, "seed"));
}

TEST_F(SeedCatchUp, HiddenRoundWithAFaceDownThrowOnlyTheCallerGetsTheSeedBack) {
  engines.script = {{0, "normal", 1}};
  engines.target = 100;
  engines.seed_only_for = 2;  // the caller, a, threw face down
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "a").ok());
  h.PlayPeople();
  ASSERT_EQ(h.table().phase(), Phase::kWaiting);
  ASSERT_EQ(h.EffectsOfType(EffectType::kRecordRound)[0].round.seed_only_to, 2);
  h.SnapshotRestore();  // who was entitled survives a restore
  size_t from = h.events.size();
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "a").ok());
  std::vector<Event> b = StreamFrom(1, from);
  ASSERT_EQ(Of(b, "seed_commitment").size(), 1u);
  EXPECT_EQ(Of(b, "seed_commitment")[0].detail, round1_commitment);
  EXPECT_THAT(Of(b, "seed"), IsEmpty());
  EXPECT_THAT(Of(StreamOf(h, 1), "seed"), IsEmpty());  // b never had it, live or caught up
  std::vector<Event> a = StreamFrom(2, from);
  ASSERT_EQ(Of(a, "seed").size(), 1u);
  EXPECT_EQ(Of(a, "seed")[0].detail, round1_seed);
  EXPECT_EQ(CommitmentOf(Of(a, "seed")[0].detail), Of(a, "seed_commitment")[0].detail);
  // The next round's count-in runs; the view still carries round 1's commitment only.
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "c").ok());
  from = h.events.size();
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "c").ok());
  std::vector<Event> cs = StreamFrom(3, from);
  ASSERT_EQ(Of(cs, "seed_commitment").size(), 1u);
  EXPECT_EQ(Of(cs, "seed_commitment")[0].value, 1);
  EXPECT_THAT(Of(cs, "seed"), IsEmpty());
}

TEST_F(SeedCatchUp, BeforeAnyDealThereIsNoSeedToCatchUp) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  h.Run(kAutoStartMs);
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  size_t from = h.events.size();
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
  EXPECT_THAT(Of(StreamFrom(1, from), "seed_commitment"), IsEmpty());
  EXPECT_THAT(Of(StreamFrom(1, from), "seed"), IsEmpty());
  EXPECT_FALSE(StreamFrom(1, from).empty());  // the rest of the view did come
}

}  // namespace
}  // namespace courtpiece::table
