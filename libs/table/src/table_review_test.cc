// Scenario tests for the review fixes (docs/table.md, "Decisions"): exact outcomes via
// TableHarness on the scripted engine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "courtpiece/table/rules_engine.h"
#include "courtpiece/table/table.h"
#include "courtpiece/table/testing.h"
#include "courtpiece/table/v1/table_state.pb.h"
#include "google/protobuf/stubs/logging.h"
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
std::vector<Event> To(const TableHarness& h, std::string_view type, int to) {
  std::vector<Event> out;
  for (const Event& e : h.events) {
    if (e.type == type && e.to_seat == to) out.push_back(e);
  }
  return out;
}

class Review : public test::FourPeopleTable {
 protected:
  // Team 1 (b, c) wins round 1 with a Court; the table then waits for the Court's second
  // stake (the wallet does not answer until ReplyNow).
  void AwaitTheCourtStake() {
    engines.script = {{1, "court", 2}};
    engines.target = 100;
    FourPeopleFirstRound();
    h.auto_reply = false;
    h.PlayPeople();
    ASSERT_EQ(h.table().phase(), Phase::kCourtStake);
  }
  // The stake is paid; the doubled pot goes to b and c.
  void ExpectTheStakeAndTheShares() {
    ASSERT_TRUE(h.ReplyNow({}).ok());
    std::vector<Transfer> pay = Transfers(h, TransferStep::kPayout);
    ASSERT_EQ(pay.size(), 1u);
    EXPECT_EQ(LegsOf(pay[0]), (Legs{{"pot:t1:1", -600}, {"player:b", 300}, {"player:c", 300}}));
  }
};

// 1. Away during the Court's second stake is after the round's end: the share is paid.
TEST_F(Review, DisconnectWhileTheCourtStakeIsAwaitedStillGetsTheShare) {
  ASSERT_NO_FATAL_FAILURE(AwaitTheCourtStake());
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
  ASSERT_NO_FATAL_FAILURE(ExpectTheStakeAndTheShares());
  EXPECT_THAT(h.Quits(), IsEmpty());
  EXPECT_EQ(h.table().seat(1).player, "b");
  EXPECT_EQ(h.table().seat(1).keep_until_ms, h.now() + kKeepSeatInGameMs);
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);
}

TEST_F(Review, LeaveWhileTheCourtStakeIsAwaitedStillGetsTheShare) {
  ASSERT_NO_FATAL_FAILURE(AwaitTheCourtStake());
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "c").ok());
  ASSERT_NO_FATAL_FAILURE(ExpectTheStakeAndTheShares());
  // A Leave between rounds of a running game that counts abandons the game (docs/table.md).
  EXPECT_THAT(h.Quits(), ElementsAre("c"));
  EXPECT_EQ(h.table().seat(3).kind, SeatKind::kEmpty);
  EXPECT_EQ(h.Sum(), 0);
}

// 2. A refused stake settles the away seats as a round's end does: nothing is left stalled.
TEST_F(Review, ARefusedStakeSettlesSeatsThatWentAwayWhileStaking) {
  engines.target = 100;
  FourPeopleFirstRound();
  h.PlayPeople();
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  h.auto_reply = false;
  h.Run(kCountInMs);
  ASSERT_EQ(h.table().phase(), Phase::kStaking);
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "b").ok());
  ASSERT_TRUE(h.ReplyNow({.ok = false, .short_players = {"c"}}).ok());
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);
  EXPECT_EQ(h.table().seat(3).kind, SeatKind::kEmpty);  // c: not enough coins, no quit
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);  // b pressed Leave: freed, a quit
  EXPECT_THAT(h.Quits(), ElementsAre("b"));
  EXPECT_EQ(h.table().seat(2).player, "a");  // a lost the connection: kept 10 min
  EXPECT_EQ(h.table().seat(2).keep_until_ms, h.now() + kKeepSeatInGameMs);
  EXPECT_EQ(h.table().NextDeadline(), h.now() + kKeepSeatInGameMs);
  h.Run(kKeepSeatInGameMs);
  EXPECT_THAT(h.Quits(), ElementsAre("b", "a"));
}

// 3. The partner swap is only for before a game or between games.
TEST_F(Review, NoPartnerSwapBetweenRoundsOfARunningGame) {
  engines.target = 100;
  FourPeopleFirstRound();
  h.PlayPeople();
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  absl::Status st = h.Simple(CommandType::kSwapPartner, "host", 1);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "swap partners before a game or between games");
  EXPECT_FALSE(h.table().vote().active);
  EXPECT_EQ(h.table().seat(2).player, "a");
}

TEST_F(Review, PartnerSwapBetweenGamesIsAllowed) {
  engines.script = {{0, "normal", 3}};
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  h.Run(kCountInMs);
  h.PlayPeople();
  ASSERT_FALSE(h.table().game_active());
  ASSERT_TRUE(h.Simple(CommandType::kSwapPartner, "host", 3).ok());
  for (std::string p : {"b", "c"}) ASSERT_TRUE(h.Vote(p, true).ok());
  EXPECT_EQ(h.table().seat(2).player, "c");
  EXPECT_EQ(h.table().seat(3).player, "a");
}

// 4. The voice lock is released when the recorder goes away during a round.
TEST_F(Review, VoiceLockIsReleasedWhenTheRecorderDisconnectsOrLeavesMidRound) {
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  ASSERT_EQ(h.table().recording_seat(), 2);
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "a").ok());
  EXPECT_EQ(h.table().recording_seat(), -1);
  ASSERT_FALSE(To(h, "voice_idle", 0).empty());
  EXPECT_EQ(To(h, "voice_idle", 0).back().detail, "disconnected");
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "b").ok());
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "b").ok());
  EXPECT_EQ(h.table().recording_seat(), -1);
  EXPECT_EQ(To(h, "voice_idle", 0).back().detail, "left");
  EXPECT_EQ(To(h, "voice_idle", 0).back().seat, 1);
  EXPECT_TRUE(h.Simple(CommandType::kVoiceStart, "c").ok());
}

// 5. The seed goes to every seat, except after a hidden caller's face-down throw: then only to
// the caller; the kRecordRound effect always has it.
TEST_F(Review, TheSeedGoesToEverySeatAndIntoTheRoundRecord) {
  engines.script = {{0, "normal", 1}};
  FourPeopleFirstRound();
  h.PlayPeople();
  Seed s1 = DeterministicSeedSource("seed", "t1").Draw(1);
  for (int seat = 0; seat < 4; ++seat) {
    ASSERT_EQ(To(h, "seed", seat).size(), 1u) << seat;
    EXPECT_EQ(To(h, "seed", seat)[0].detail, SeedHex(s1));
  }
  std::vector<Effect> rec = h.EffectsOfType(EffectType::kRecordRound);
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].round.round_no, 1u);
  EXPECT_EQ(rec[0].round.seed_hex, SeedHex(s1));
  EXPECT_EQ(rec[0].round.result, "normal 1-0");
  EXPECT_EQ(rec[0].round.seed_only_to, -1);
}

TEST_F(Review, AfterAFaceDownThrowOnlyTheCallerGetsTheSeed) {
  engines.script = {{0, "normal", 1}};
  engines.seed_only_for = 1;  // as RulesEngine answers for a hidden caller at seat 1
  FourPeopleFirstRound();
  h.PlayPeople();
  Seed s1 = DeterministicSeedSource("seed", "t1").Draw(1);
  ASSERT_EQ(h.EventsOfType("seed").size(), 1u);
  EXPECT_EQ(h.EventsOfType("seed")[0].to_seat, 1);
  EXPECT_EQ(h.EventsOfType("seed")[0].detail, SeedHex(s1));
  std::vector<Effect> rec = h.EffectsOfType(EffectType::kRecordRound);
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].round.seed_hex, SeedHex(s1));
  EXPECT_EQ(rec[0].round.seed_only_to, 1);
  // The hash was published to everyone at the start.
  EXPECT_EQ(h.EventsOfType("round_started").size(), 4u);
  EXPECT_EQ(h.EventsOfType("round_started")[0].detail, Sha256Hex(s1));
}

TEST(ReviewRulesEngine, SeedOnlyForTheHiddenCallerAfterAFaceDownThrow) {
  RulesEngineFactory f;
  int restricted = 0, open = 0;
  for (int n = 0; n < 40; ++n) {
    Seed first{};
    first[0] = static_cast<uint8_t>(n);
    absl::StatusOr<std::unique_ptr<GameEngine>> e = f.NewGame("{\"game\":\"hidden\"}", first);
    ASSERT_TRUE(e.ok());
    Seed seed = DeterministicSeedSource("hidden", "t").Draw(n);
    ASSERT_TRUE((*e)->StartRound(seed).ok());
    const rules::Round* r = static_cast<RulesEngine*>(e->get())->round();
    while (!(*e)->RoundOver()) {
      int s = (*e)->ToAct();
      ASSERT_TRUE((*e)->Apply(s, (*e)->AutoMove(s)).ok());
    }
    bool face_down = !r->face_down_throws().empty();
    EXPECT_EQ((*e)->SeedOnlyFor(), face_down ? r->caller() : -1);
    (face_down ? restricted : open)++;
  }
  EXPECT_GT(restricted, 0);
  EXPECT_GT(open, 0);
}

// 6. A Leave between rounds of a running game that counts is a quit; before a game it is free.
TEST_F(Review, LeavingDuringTheCountInOfARunningGameIsAQuit) {
  engines.target = 100;
  FourPeopleFirstRound();
  h.PlayPeople();
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "b").ok());
  EXPECT_EQ(h.table().seat(1).kind, SeatKind::kEmpty);
  EXPECT_EQ(h.table().phase(), Phase::kWaiting);
  EXPECT_THAT(h.Quits(), ElementsAre("b"));
  EXPECT_EQ(Transfers(h, TransferStep::kStake).size(), 1u);  // no coins: round 2 never staked
}

TEST_F(Review, LeavingBeforeAGameIsFree) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "a").ok());
  EXPECT_EQ(h.table().seat(2).kind, SeatKind::kEmpty);
  EXPECT_THAT(h.Quits(), IsEmpty());
}

// 7. A reconnect gets a full snapshot of its view: the round's and the table's.
TEST_F(Review, AReconnectGetsTheTablesState) {
  engines.target = 100;
  FourPeopleFirstRound();
  ASSERT_TRUE(h.Play("host", {MoveKind::kPlay, "2C"}).ok());
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());  // the bot plays b's card
  ASSERT_EQ(h.table().engine()->ToAct(), 2);
  int64_t turn_deadline = h.EventsOfType("turn").back().value;
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "c").ok());
  ASSERT_TRUE(h.Simple(CommandType::kVoiceStart, "a").ok());
  size_t from = h.events.size();
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
  std::vector<std::string> got;
  for (size_t i = from; i < h.events.size(); ++i) {
    const Event& e = h.events[i];
    if (e.to_seat != 1 || e.type == "back" || e.type == "seated") continue;
    got.push_back(absl::StrCat(e.type, " ", e.seat, " ", e.player, " ", e.detail, " ", e.value, " ",
                               e.cards.empty() ? "" : e.cards[0]));
  }
  const std::string commitment = Sha256Hex(DeterministicSeedSource("seed", "t1").Draw(1));
  EXPECT_THAT(got, ElementsAre(absl::StrCat("seed_commitment -1  ", commitment, " 1 "),
                               "hand 1  view 0 3C", "table_phase -1  playing 1 ", "host 0 host  0 ",
                               "presence 0 host present 0 ", "presence 1 b present 0 ",
                               "presence 2 a present 0 ", "presence 3 c disconnected 0 ",
                               absl::StrCat("turn 2   ", turn_deadline, " "),
                               absl::StrCat("voice_recording 2 a  ", h.now() + kVoiceMaxMs, " ")));
}

TEST(ReviewRulesEngine, AReconnectSeesFinishedTricksAndNoCardItMayNotSee) {
  RulesEngineFactory engines;
  TableOptions o = Opts();
  o.game_options = "{\"game\":\"hidden\"}";
  for (int n = 0; n < 20; ++n) {
    SCOPED_TRACE(n);
    TableHarness h(o, "fd" + std::to_string(n), &engines);
    ASSERT_TRUE(h.Join("a").ok());
    ASSERT_TRUE(h.Join("b").ok());
    ASSERT_TRUE(h.Join("c").ok());
    h.Run(kAutoStartMs + kCountInMs);
    ASSERT_EQ(h.table().phase(), Phase::kPlaying);
    for (int i = 0; i < 30 && h.table().phase() == Phase::kPlaying; ++i) {
      int s = h.table().engine()->ToAct();
      ASSERT_TRUE(h.Play(h.table().seat(s).player, h.table().engine()->AutoMove(s)).ok());
    }
    ASSERT_EQ(h.table().phase(), Phase::kPlaying);
    const rules::Round* r = static_cast<const RulesEngine*>(h.table().engine())->round();
    ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "b").ok());
    rules::SeatView v = r->View(1);
    std::set<std::string> visible;
    for (rules::Card c : v.hand) visible.insert(rules::CardName(c));
    if (v.face_down_card >= 0) visible.insert(rules::CardName(rules::Card(v.face_down_card)));
    for (int i = 0; i < v.num_tricks; ++i) {
      for (rules::Card c : v.tricks[i].cards) visible.insert(rules::CardName(c));
    }
    for (int i = 0; i < v.current_size; ++i) visible.insert(rules::CardName(v.current.cards[i]));
    size_t from = h.events.size();
    ASSERT_TRUE(h.Simple(CommandType::kReconnect, "b").ok());
    int tricks = 0, hands = 0, presence = 0;
    for (size_t i = from; i < h.events.size(); ++i) {
      const Event& e = h.events[i];
      if (e.to_seat != 1) continue;
      tricks += e.type == "trick_cards";
      hands += e.type == "hand";
      presence += e.type == "presence";
      for (const std::string& c : e.cards) {
        EXPECT_TRUE(c == "??" || visible.contains(c)) << e.type << " " << c;
      }
    }
    EXPECT_EQ(tricks, v.num_tricks);
    EXPECT_GT(tricks, 0);
    EXPECT_EQ(hands, 1);
    EXPECT_EQ(presence, 4);
  }
}

// 8a. A swap vote is cancelled when the host's actual partner seat is freed.
TEST_F(Review, SwapVoteCancelledWhenTheHostsActualPartnerLeaves) {
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "host").ok());
  ASSERT_EQ(h.table().host(), "a");  // seat 2: the partner seat is 0
  ASSERT_TRUE(h.Join("d").ok());
  ASSERT_EQ(h.table().seat(0).player, "d");
  ASSERT_TRUE(h.Simple(CommandType::kSwapPartner, "a", 1).ok());
  ASSERT_TRUE(h.table().vote().active);
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "d").ok());
  EXPECT_FALSE(h.table().vote().active);
  ASSERT_EQ(To(h, "vote_result", 2).size(), 1u);
  EXPECT_EQ(To(h, "vote_result", 2)[0].detail, "cancelled");
}

// 8b. A rejected command changes nothing, not even a bot-driven seat.
TEST_F(Review, ARejectedCommandLeavesTheSnapshotIdentical) {
  engines.target = 100;
  FourPeopleFirstRound();
  for (int round = 0; round < 5; ++round) {
    h.AdvanceTo(*h.table().NextDeadline());
    h.PlayPeople();
    h.Run(kCountInMs);
  }
  ASSERT_TRUE(h.table().seat(0).bot_driving);
  std::string before = h.table().Snapshot();
  EXPECT_EQ(h.Simple(CommandType::kRemoveBot, "host", 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(h.table().Snapshot(), before);
  EXPECT_TRUE(h.table().seat(0).bot_driving);
  EXPECT_EQ(h.Play("host", {MoveKind::kPlay, "2C"}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(h.table().Snapshot(), before);
  // A valid command takes the seat back.
  ASSERT_TRUE(h.Simple(CommandType::kEndEarly, "host").ok());
  EXPECT_FALSE(h.table().seat(0).bot_driving);
}

// 8c. Stats and quits use the most people seated at any round start of the game.
TEST_F(Review, AGameCountsWhenTwoPeopleSatAtAnyRoundStart) {
  engines.script = {{0, "normal", 1}, {0, "normal", 1}, {0, "normal", 1}};
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  h.Run(kCountInMs);
  h.PlayPeople();
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kAskBot, "host", 2).ok());  // nobody to ask: passes
  for (int round = 0; round < 2; ++round) {
    h.Run(kCountInMs);
    h.PlayPeople();
  }
  std::vector<Effect> games = h.EffectsOfType(EffectType::kRecordGame);
  ASSERT_EQ(games.size(), 1u);
  EXPECT_TRUE(games[0].game.counts_for_stats);
  ASSERT_EQ(games[0].game.players.size(), 1u);
  EXPECT_EQ(games[0].game.players[0].player, "host");
  EXPECT_THAT(h.Quits(), ElementsAre("a"));
}

// 8d. §4.12: two people start a game, one leaves in the first count-in (free): every round is
// dealt to one person among bots, so the game does not count (and nobody quit).
TEST_F(Review, AGameStartedByTwoButDealtToOnePersonDoesNotCount) {
  engines.script = {{0, "normal", 1}, {0, "normal", 1}, {0, "normal", 1}};
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  ASSERT_EQ(h.table().phase(), Phase::kCountIn);
  ASSERT_TRUE(h.Simple(CommandType::kLeave, "a").ok());         // free: before the first deal
  ASSERT_TRUE(h.Simple(CommandType::kAskBot, "host", 2).ok());  // nobody to ask: passes
  for (int round = 0; round < 3; ++round) {
    h.Run(kCountInMs);
    h.PlayPeople();  // every round dealt to the host alone among bots
  }
  EXPECT_THAT(h.Quits(), ElementsAre());
  std::vector<Effect> games = h.EffectsOfType(EffectType::kRecordGame);
  ASSERT_EQ(games.size(), 1u);
  EXPECT_FALSE(games[0].game.counts_for_stats);
}

// 9. Restore validates every field; corrupted snapshots never crash.
std::string Mutated(const std::string& snap, const std::function<void(v1::TableState&)>& f) {
  v1::TableState s;
  EXPECT_TRUE(s.ParseFromString(snap));
  f(s);
  return s.SerializeAsString();
}

TEST_F(Review, RestoreRejectsOutOfRangeFields) {
  engines.target = 100;
  FourPeopleFirstRound();
  std::string snap = h.table().Snapshot();
  DeterministicSeedSource seeds("seed", "t1");
  ASSERT_TRUE(Table::Restore(snap, &engines, &seeds).ok());
  std::vector<std::pair<std::string, std::function<void(v1::TableState&)>>> bad = {
      {"phase", [](v1::TableState& s) { s.set_phase(9); }},
      {"kind", [](v1::TableState& s) { s.mutable_seats(1)->set_kind(7); }},
      {"step", [](v1::TableState& s) { s.mutable_awaited()->set_step(12); }},
      {"turn_seat", [](v1::TableState& s) { s.set_turn_seat(4); }},
      {"recording_seat", [](v1::TableState& s) { s.set_recording_seat(-2); }},
      {"vote_seat",
       [](v1::TableState& s) {
         s.mutable_vote()->set_active(true);
         s.mutable_vote()->set_seat(5);
       }},
      {"engine", [](v1::TableState& s) { s.set_has_engine(false); }},
      {"bet", [](v1::TableState& s) { s.mutable_options()->set_bet_coins(0); }},
      {"game_people", [](v1::TableState& s) { s.set_game_people(5); }},
      {"author_seat", [](v1::TableState& s) { s.add_notes()->set_author_seat(9); }},
  };
  for (auto& [what, f] : bad) {
    SCOPED_TRACE(what);
    EXPECT_EQ(Table::Restore(Mutated(snap, f), &engines, &seeds).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

// Found by RandomByteFlipsNeverCrash once the engine's seat checks were always on: an
// auto-start time in a snapshot of a game in play started a second game over the round.
TEST(ReviewSnapshot, AnAutoStartTimeDuringAGameIsRefused) {
  RulesEngineFactory engines;
  TableHarness h(Opts(), "seed", &engines);
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  h.Run(kCountInMs);
  ASSERT_EQ(h.table().phase(), Phase::kPlaying);
  DeterministicSeedSource seeds("seed", "t1");
  v1::TableState st;
  ASSERT_TRUE(st.ParseFromString(h.table().Snapshot()));
  ASSERT_TRUE(Table::Restore(st.SerializeAsString(), &engines, &seeds).ok());
  st.set_auto_start_at_ms(111);
  absl::StatusOr<std::unique_ptr<Table>> t =
      Table::Restore(st.SerializeAsString(), &engines, &seeds);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(), "snapshot: bad auto-start time");
}

TEST(ReviewFuzz, RandomByteFlipsNeverCrash) {
  RulesEngineFactory engines;
  TableHarness h(Opts(), "seed", &engines);
  std::vector<std::string> snaps = {h.table().Snapshot()};
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kStartNow, "host").ok());
  snaps.push_back(h.table().Snapshot());
  h.Run(kCountInMs);
  snaps.push_back(h.table().Snapshot());
  h.PlayPeople();
  snaps.push_back(h.table().Snapshot());
  DeterministicSeedSource seeds("seed", "t1");
  std::mt19937_64 rng(7);
  google::protobuf::LogSilencer quiet;  // flipped strings are not UTF-8: parse errors logged
  int restored = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string bytes = snaps[i % snaps.size()];
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f)
      bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
    absl::StatusOr<std::unique_ptr<Table>> t = Table::Restore(bytes, &engines, &seeds);
    if (!t.ok()) {
      EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
      continue;
    }
    ++restored;
    (*t)->Snapshot();
    (*t)->NextDeadline();
    (*t)->AwaitedTransferKey();
    (*t)->Advance(h.now() + 3'600'000);  // fires whatever is due: must not crash either
    (*t)->TakeEvents();
    (*t)->TakeEffects();
  }
  EXPECT_GT(restored, 0);
}

}  // namespace
}  // namespace courtpiece::table
