// Whole games for coins through the whole suite (tests/system/suite.h): every game type, mobile
// (gRPC) and web (WebSocket) players mixed, then the ledger audit, every pot empty, each
// player's coins as the round results imply and the lobby's stats exactly as RULES.md §4 says;
// then a player who presses Leave mid-game: exactly one quit and the coins §4.6/§4.9 give.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "services/table/testing/play_client.h"
#include "tests/system/players.h"
#include "tests/system/suite.h"

namespace courtpiece::system_test {
namespace {

namespace cv1 = ::courtpiece::client::v1;
namespace pb = ::courtpiece::table::v1;

constexpr absl::Duration kGame = absl::Seconds(240);

const std::vector<std::pair<std::string, std::string>>& EveryGameType() {
  static const auto* games = new std::vector<std::pair<std::string, std::string>>{
      {"classic", R"({"game":"classic","target":1})"}, {"piles", R"({"game":"piles","target":10})"},
      {"hidden", R"({"game":"hidden","target":10})"},  {"kaat", R"({"game":"kaat","target":10})"},
      {"stack", R"({"game":"stack","target":5})"},
  };
  return *games;
}

class SystemGamesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Suite>> suite = Suite::Start(SuiteOptions());
    ASSERT_TRUE(suite.ok()) << suite.status();
    suite_ = *std::move(suite);
  }
  void TearDown() override {
    games_.clear();  // scripted players stopped before the suite goes
    if (suite_ != nullptr) {
      const absl::Status stopped = suite_->StopAll();  // no crash at shutdown
      EXPECT_TRUE(stopped.ok()) << stopped;
    }
    suite_.reset();
  }

  std::unique_ptr<Suite> suite_;
  std::vector<std::unique_ptr<Game>> games_;
};

// Every game type at once, to its end: streams complete, coins exact, stats exact (§4.6: the
// winning team gains the bet per round, a Court twice; §4.12 a game of four people counts:
// played 1, won or lost, no quit), the ledger consistent and no pot holding a coin.
TEST_F(SystemGamesTest, EveryGameTypeForCoinsLeavesExactCoinsStatsAndACleanLedger) {
  for (const auto& [name, options] : EveryGameType()) {
    absl::StatusOr<std::unique_ptr<Game>> g = SeatGame(*suite_, name, options);
    ASSERT_TRUE(g.ok()) << name << ": " << g.status();
    games_.push_back(*std::move(g));
  }
  for (auto& g : games_) {
    for (auto& p : g->players) {
      EXPECT_TRUE(p->play->WaitGameOver(kGame)) << g->name << " " << p->name;
    }
  }
  ASSERT_FALSE(HasFailure());
  for (auto& g : games_) {
    ExpectCompleteStreams(*g);
    ExpectCoins(*suite_, *g);
    const int winners = WinningTeam(*g->players[0]);
    ASSERT_TRUE(winners == 0 || winners == 1) << g->name << " game_over names team " << winners;
    for (auto& p : g->players) {
      EXPECT_EQ(WinningTeam(*p), winners) << g->name << " " << p->name;
      const bool won = p->play->seat() % 2 == winners;
      ExpectStats(*suite_, *p, g->name, 1, won ? 1 : 0, won ? 0 : 1, 0);
    }
  }
  ExpectAuditClean(*suite_);
}

// RULES.md §4.5/§4.6/§4.8/§4.9: P3 presses Leave during the first round of a classic game to
// 3 (so that round cannot end the game): a bot plays the round out, P3's bet stays in the pot
// and P3 wins nothing from it; at the round's end the seat is freed and exactly one quit is
// recorded. The host asks a bot for the seat (silence counts as yes), the game goes on to its
// end and the three others' coins and stats are exact.
TEST_F(SystemGamesTest, APlayerWhoLeavesMidGameQuitsOnceAndForfeitsTheBet) {
  absl::StatusOr<std::unique_ptr<Game>> created =
      SeatGame(*suite_, "leave", R"({"game":"classic","target":3})");
  ASSERT_TRUE(created.ok()) << created.status();
  games_.push_back(*std::move(created));
  Game& g = *games_.back();
  Player& host = *g.players[0];
  Player& leaver = *g.players[3];
  const int leaver_seat = leaver.play->seat();
  ASSERT_TRUE(
      leaver.play->WaitUntil([&] { return !leaver.play->EventSeqs("played").empty(); }, kGame));
  leaver.play->Stop();
  cv1::TableCommand leave;
  leave.set_type("leave");
  absl::StatusOr<cv1::CommandResult> left = leaver.play->Send(leave);
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_EQ(left->code(), 0) << left->message();
  leaver.play->Disconnect();

  // The round ends; the seat is freed ("left"); the host asks for a bot in it.
  ASSERT_TRUE(host.play->WaitUntil(
      [&] {
        for (const pb::TableEvent& e : host.Events()) {
          if (e.type() == "round_result") return true;
        }
        return false;
      },
      kGame));
  ASSERT_TRUE(host.play->WaitUntil(
      [&] {
        for (const pb::TableEvent& e : host.Events()) {
          if (e.type() == "unseated" && e.seat() == leaver_seat) return true;
        }
        return false;
      },
      absl::Seconds(30)))
      << TimeoutsAndAbsences(host);
  host.play->Stop();
  cv1::TableCommand ask;
  ask.set_type("ask_bot");
  ask.set_seat(leaver_seat);
  absl::StatusOr<cv1::CommandResult> asked = host.play->Send(ask);
  ASSERT_TRUE(asked.ok()) << asked.status();
  EXPECT_EQ(asked->code(), 0) << asked->message();
  host.play->Start();
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(g.players[i]->play->WaitGameOver(kGame)) << g.players[i]->name;
  }
  ASSERT_FALSE(HasFailure());

  // The leaver: the first round's result decides what the walk-out cost (§4.6/§4.9).
  const std::vector<pb::TableEvent> events = host.Events();
  std::vector<pb::TableEvent> first_round;
  for (const pb::TableEvent& e : events) {
    if (e.type() == "round_result") {
      first_round.push_back(e);
      break;
    }
  }
  ASSERT_EQ(first_round.size(), 1u);
  int rounds = 0;
  const int64_t round_delta =
      table_service::testing::CoinDeltasBySeat(first_round, kBet, &rounds)[leaver_seat];
  const int team = first_round[0].seat();
  // A draw refunds; a win's share goes to the house (the bet is lost); a loss costs what it
  // costs everyone on the team.
  const int64_t want_leaver = team < 0 ? 0 : (team == leaver_seat % 2 ? -kBet : round_delta);
  absl::StatusOr<int64_t> coins = CoinsOf(*suite_, leaver);
  ASSERT_TRUE(coins.ok()) << coins.status();
  EXPECT_EQ(*coins, leaver.coins_before + want_leaver) << first_round[0].DebugString();
  ExpectStats(*suite_, leaver, "classic", 0, 0, 0, 1);

  ExpectCoins(*suite_, g, leaver_seat);
  const int winners = WinningTeam(host);
  for (int i = 0; i < 3; ++i) {
    const bool won = g.players[i]->play->seat() % 2 == winners;
    ExpectStats(*suite_, *g.players[i], "classic", 1, won ? 1 : 0, won ? 0 : 1, 0);
  }
  ExpectAuditClean(*suite_);
}

}  // namespace
}  // namespace courtpiece::system_test
