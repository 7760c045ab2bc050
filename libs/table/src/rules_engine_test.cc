// The table on the real rules engine: auto-play names trump, hidden cards stay hidden, a
// whole game settles.
#include "courtpiece/table/rules_engine.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/rules/cards.h"
#include "courtpiece/rules/round.h"
#include "courtpiece/table/testing.h"

namespace courtpiece::table {
namespace {

TableOptions Opts(std::string game) {
  return {.table_id = "r1",
          .host_player = "host",
          .bet_coins = 50,
          .turn_time_ms = 5'000,
          .game_options = std::move(game)};
}

class RealEngine : public ::testing::Test {
 protected:
  void Seat(TableHarness& h) {
    ASSERT_TRUE(h.Join("a").ok());
    ASSERT_TRUE(h.Join("b").ok());
    ASSERT_TRUE(h.Join("c").ok());
    h.Run(kAutoStartMs + kCountInMs);
    ASSERT_EQ(h.table().phase(), Phase::kPlaying);
  }
  RulesEngineFactory engines;
};

TEST_F(RealEngine, RejectsBadGameOptionsNamingTheOption) {
  SeedSource* none = nullptr;
  absl::StatusOr<std::unique_ptr<Table>> t =
      Table::Create(Opts(R"({"game":"classic","target":0})"), &engines, none, 0);
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("target"), std::string::npos) << t.status();
}

TEST_F(RealEngine, ATimeoutNamesTrumpForTheCaller) {
  TableHarness h(Opts(R"({"game":"classic"})"), "s1", &engines);
  Seat(h);
  int caller = h.table().engine()->ToAct();
  h.Run(5'000);
  EXPECT_EQ(h.table().seat(caller).timeouts_in_row, 1);
  std::vector<Event> trump = h.EventsOfType("trump");
  ASSERT_EQ(trump.size(), 4u);  // one per person's stream
  EXPECT_EQ(trump[0].seat, caller);
  EXPECT_EQ(trump[0].detail.size(), 1u);
  EXPECT_EQ(h.EventsOfType("hand").size(), 8u);  // first five, then the full hand, per seat
}

TEST_F(RealEngine, TheHiddenTrumpCardGoesOnlyToTheCaller) {
  TableHarness h(Opts(R"({"game":"hidden","target":10})"), "s2", &engines);
  Seat(h);
  int caller = h.table().engine()->ToAct();
  h.PlayPeople();  // everyone plays the bot's choice to the end of the round
  int to_caller = 0;
  for (const Event& e : h.EventsOfType("hidden")) {
    if (e.to_seat == caller) {
      EXPECT_EQ(e.cards.size(), 1u);
      ++to_caller;
    } else {
      EXPECT_TRUE(e.cards.empty());
    }
  }
  EXPECT_EQ(to_caller, 1);
  // Before it is shown, nobody but the caller is told the suit.
  for (const Event& e : h.events) {
    if (e.type == "trump_shown") break;
    if (e.type == "trump" && e.to_seat != caller) {
      EXPECT_EQ(e.detail, "");
    }
  }
}

TEST_F(RealEngine, AWholeGameSettlesAndConservesCoins) {
  for (std::string game : {R"({"game":"classic","target":3})", R"({"game":"piles","target":10})",
                           R"({"game":"hidden","target":10})", R"({"game":"kaat","target":10})",
                           R"({"game":"stack","target":7})"}) {
    SCOPED_TRACE(game);
    TableHarness h(Opts(game), "s3", &engines);
    Seat(h);
    for (int i = 0; i < 200 && h.EffectsOfType(EffectType::kRecordGame).empty(); ++i) {
      h.PlayPeople();
      h.Run(kCountInMs);
    }
    ASSERT_EQ(h.EffectsOfType(EffectType::kRecordGame).size(), 1u);
    // Each `trick` event says "tricks a-b count c-d": classic counts tricks (c-d = a-b); the
    // pile games count tricks picked up, never more than were won.
    std::vector<Event> tricks = h.EventsOfType("trick");
    ASSERT_FALSE(tricks.empty());
    for (const Event& e : tricks) {
      int a = -1, b = -1, c = -1, d = -1;
      ASSERT_EQ(std::sscanf(e.detail.c_str(), "tricks %d-%d count %d-%d", &a, &b, &c, &d), 4)
          << e.detail;
      if (game.find("classic") != std::string::npos) {
        EXPECT_EQ(std::make_pair(c, d), std::make_pair(a, b)) << e.detail;
      } else if (game.find("stack") == std::string::npos) {
        EXPECT_LE(c + d, a + b) << e.detail;
      }
    }
    const GameRecord g = h.EffectsOfType(EffectType::kRecordGame)[0].game;
    EXPECT_TRUE(g.counts_for_stats);
    EXPECT_EQ(g.players.size(), 4u);
    EXPECT_EQ(h.Sum(), 0);
    for (auto& [acct, coins] : h.balances) {
      if (acct.starts_with("pot:")) {
        EXPECT_EQ(coins, 0) << acct;
      }
    }
    int64_t people = 0;
    for (std::string p : {"host", "a", "b", "c"}) people += h.balances["player:" + p];
    EXPECT_EQ(people + h.balances["house"], 4 * 100'000);
  }
}

TEST_F(RealEngine, ReconnectGetsTheSeatsViewOnly) {
  TableHarness h(Opts(R"({"game":"classic"})"), "s4", &engines);
  Seat(h);
  ASSERT_TRUE(h.Simple(CommandType::kDisconnect, "a").ok());
  ASSERT_TRUE(h.Simple(CommandType::kReconnect, "a").ok());
  const auto* round = static_cast<const RulesEngine*>(h.table().engine())->round();
  ASSERT_NE(round, nullptr);
  std::vector<Event> hands = h.EventsOfType("hand");
  const Event& last = hands.back();
  EXPECT_EQ(last.to_seat, 2);
  rules::CardSet mine = round->View(2).hand;
  for (const std::string& c : last.cards) EXPECT_TRUE(mine.Has(*rules::ParseCard(c))) << c;
}

// The engine's bytes: the game's line, whether a round is in play, the round. Restore takes
// them back whole or refuses them and keeps what it had.
TEST(RulesEngineBytes, RoundTripAndRefuseARoundThatIsNotTheGamesNext) {
  const rules::Rules rules = rules::DefaultRules(rules::GameType::kPiles);
  RulesEngine e(rules, 0);  // first caller: seat 1
  EXPECT_EQ(e.Serialize(), "game1 0 0 0 -1 1 0\n0\n");
  Seed seed{};
  seed[0] = 9;
  ASSERT_TRUE(e.StartRound(seed).ok());
  const std::string bytes = e.Serialize();
  ASSERT_EQ(bytes.substr(0, 21), "game1 0 0 0 -1 1 0\n1\n");
  RulesEngine back(rules, 3);
  ASSERT_TRUE(back.Restore(bytes).ok());
  EXPECT_EQ(back.Serialize(), bytes);
  EXPECT_EQ(back.ToAct(), 1);
  // The same round under a game whose next caller is seat 2: not its round.
  std::string other = bytes;
  other[15] = '2';
  ASSERT_EQ(other.substr(0, 18), "game1 0 0 0 -1 2 0");
  RulesEngine fresh(rules, 0);
  absl::Status st = fresh.Restore(other);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "the round in play is not this game's next round");
  EXPECT_EQ(fresh.Serialize(), "game1 0 0 0 -1 1 0\n0\n");  // unchanged
  EXPECT_EQ(fresh.Restore("game1 0 0 0 -1 1 0\n2\n").code(), absl::StatusCode::kInvalidArgument);
  // The previous build's form ("g1 ..." and the round flag on one line) still restores.
  const std::string legacy = "g1 0 0 0 1 0 1\n" + bytes.substr(21);
  RulesEngine old(rules, 0);
  ASSERT_TRUE(old.Restore(legacy).ok());
  EXPECT_EQ(old.Serialize(), bytes);
  ASSERT_TRUE(old.Restore("g1 12 3 1 2 9 0\n").ok());
  EXPECT_EQ(old.Serialize(), "game1 12 3 1 0 2 9\n0\n");
  EXPECT_TRUE(old.GameOver());
  EXPECT_EQ(old.Restore("g1 12 3 1 2 9\n").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fresh.Restore("game1 0 0 0 -1 1 0\n0\nx").code(), absl::StatusCode::kInvalidArgument);
}

// A four_point (the last card won the 13th trick of an all-13) made by the team that did not
// call replaces a Goon Court: the outcome says so (goon), and a caller's own four_point does
// not; the game record counts Goon Courts by it (docs/lobby.md).
TEST(RulesEngineOutcome, AFourPointAgainstTheCallerIsAGoonCourt) {
  rules::Rules rules = rules::DefaultRules(rules::GameType::kPiles);
  rules.last_card = *rules::ParseCard("2C");
  rules.deal_fairness = false;
  // Dealer 0, so seat 1 calls and leads. Seat 0 holds every club, seat 1 the hearts,
  // seat 2 the spades, seat 3 the diamonds.
  auto hand = [](const char* suit) {
    std::array<rules::Card, 13> h{};
    for (int r = 0; r < 13; ++r) h[r] = rules::MakeCard(*rules::ParseSuit(suit), r);
    return h;
  };
  const rules::Round::Hands hands = {hand("C"), hand("H"), hand("S"), hand("D")};
  for (const auto& [call, goon_team] : {std::pair{"C", 0}, std::pair{"H", 1}}) {
    SCOPED_TRACE(call);
    absl::StatusOr<rules::Round> round = rules::Round::FromHands(rules, 0, hands);
    ASSERT_TRUE(round.ok()) << round.status();
    RulesEngine engine(rules, 0);  // first caller: seat 1, as the round's dealer 0 says
    ASSERT_TRUE(engine.Restore(absl::StrCat("game1 0 0 0 -1 1 0\n1\n", round->Serialize())).ok());
    ASSERT_TRUE(engine.Apply(1, {MoveKind::kCall, call}).ok());
    // Every seat plays its highest card, so seat 0 keeps 2C for the 13th trick. With clubs
    // trump seat 0 cuts the first trick and then leads clubs, winning all 13 (2C last); with
    // hearts trump seat 1 leads hearts and wins all 13, its last card 2H, not the last card.
    int guard = 0;
    while (!engine.RoundOver() && ++guard < 60) {
      const int seat = engine.ToAct();
      std::string best;
      for (const EngineEvent& e : engine.ViewOf(seat)) {
        if (e.type != "hand") continue;
        for (const std::string& c : e.cards) {
          if (best.empty() ||
              rules::RankOf(*rules::ParseCard(c)) > rules::RankOf(*rules::ParseCard(best))) {
            best = c;
          }
        }
      }
      ASSERT_FALSE(best.empty());
      ASSERT_TRUE(engine.Apply(seat, {MoveKind::kPlay, best}).ok()) << best;
    }
    ASSERT_TRUE(engine.RoundOver());
    const RoundOutcome o = engine.Outcome();
    if (goon_team == 0) {
      EXPECT_EQ(o.winning_team, 0);
      EXPECT_EQ(o.kind, "four_point");
      EXPECT_EQ(o.points, 4);
      EXPECT_TRUE(o.goon);
    } else {
      EXPECT_EQ(o.winning_team, 1);
      EXPECT_EQ(o.kind, "court");
      EXPECT_EQ(o.points, 2);
      EXPECT_FALSE(o.goon);
    }
  }
}

}  // namespace
}  // namespace courtpiece::table
