// What a client cannot do, through the whole suite (tests/system/suite.h): act at a table
// where it holds no seat, see another seat's cards in any event, use an admin route with a
// player's token, or use a token past its expiry.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/common/grpc_client.h"
#include "gtest/gtest.h"
#include "tests/system/players.h"
#include "tests/system/suite.h"

namespace courtpiece::system_test {
namespace {

namespace cv1 = ::courtpiece::client::v1;
namespace pb = ::courtpiece::table::v1;
using gateway::testing::ScriptedPlayer;
using gateway::testing::ScriptedPlayerOptions;

class SystemSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SuiteOptions options;
    // No clock skew allowed on expiry, so a 1 s token is refused 2 s later.
    options.gateway_env = {"COURTPIECE_GATEWAY_TOKEN_SKEW=0s"};
    absl::StatusOr<std::unique_ptr<Suite>> suite = Suite::Start(options);
    ASSERT_TRUE(suite.ok()) << suite.status();
    suite_ = *std::move(suite);
  }
  void TearDown() override {
    games_.clear();
    if (suite_ != nullptr) {
      const absl::Status stopped = suite_->StopAll();  // no crash at shutdown
      EXPECT_TRUE(stopped.ok()) << stopped;
    }
    suite_.reset();
  }

  std::unique_ptr<Suite> suite_;
  std::vector<std::unique_ptr<Game>> games_;
};

// A token signed for 1 s works at once and not 2 s later (gRPC UNAUTHENTICATED, HTTP 401);
// a player's token on the admin API is 403, an admin's 200.
TEST_F(SystemSecurityTest, ExpiredTokensAndPlayerTokensOnAdminRoutesAreRefused) {
  Player ann;
  ann.name = "Ann";
  ASSERT_TRUE(Login(*suite_, ann).ok());
  const std::string short_lived =
      suite_->SignToken(ann.session.player_id(), false, absl::Seconds(1));
  auto profile = [&](const std::string& token) {
    grpc::ClientContext context;
    common::SetTimeout(context, kRpc);
    context.AddMetadata("authorization", "Bearer " + token);
    cv1::Profile out;
    return suite_->NewClient()->GetProfile(&context, cv1::GetProfileRequest(), &out).error_code();
  };
  EXPECT_EQ(profile(short_lived), grpc::StatusCode::OK);
  absl::SleepFor(absl::Seconds(2));  // the expiry itself is what is tested: real time
  EXPECT_EQ(profile(short_lived), grpc::StatusCode::UNAUTHENTICATED);
  std::unique_ptr<gateway::testing::HttpClient> http = suite_->NewHttp();
  absl::StatusOr<gateway::testing::HttpResponse> r =
      http->Post("/v1/GetProfile", "{}", {{"authorization", "Bearer " + short_lived}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 401) << r->body;

  const std::string dossier = absl::StrCat(R"({"playerId":")", ann.session.player_id(), R"("})");
  r = http->Post("/admin/v1/GetPlayer", dossier,
                 {{"authorization", "Bearer " + ann.session.access_token()}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 403) << r->body;
  r = http->Post(
      "/admin/v1/GetPlayer", dossier,
      {{"authorization", "Bearer " + suite_->SignToken("ops-admin-1", true, absl::Minutes(5))}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200) << r->body;
}

// Cards a seat may see in a round: its own (`hand` events for its seat) and those played.
// Every card in every event a seat receives must be one of them; a `hand` event always
// names the receiving seat.
void ExpectNoForeignCards(const Game& g) {
  for (const auto& p : g.players) {
    const int seat = p->play->seat();
    std::set<std::string> own, played;
    int checked = 0;
    const std::vector<pb::TableEvent> events = p->Events();
    for (const pb::TableEvent& e : events) {
      if (e.type() == "round" || e.type() == "round_started") {
        own.clear();
        played.clear();
      }
      if (e.type() == "hand") {
        EXPECT_EQ(e.seat(), seat) << g.name << " " << p->name << " got seat " << e.seat()
                                  << "'s hand at seq " << e.seq();
        own.insert(e.cards().begin(), e.cards().end());
      }
      if (e.type() == "played") played.insert(e.cards().begin(), e.cards().end());
      for (const std::string& card : e.cards()) {
        ++checked;
        EXPECT_TRUE(own.contains(card) || played.contains(card))
            << g.name << " " << p->name << " (seat " << seat << ") saw " << card << " in "
            << e.type() << " at seq " << e.seq();
      }
    }
    EXPECT_GT(checked, 13) << g.name << " " << p->name;
  }
}

// A fifth player opens a table where the game runs: unseated, every command it sends to act
// at the table (a card, a bot removal, start, end early) is refused; the seated players' game
// goes on, and no seat ever receives another seat's cards (over gRPC and WebSocket alike).
TEST_F(SystemSecurityTest, NoClientActsForASeatItDoesNotHoldOrSeesAnothersCards) {
  for (const auto& [name, options] : std::vector<std::pair<std::string, std::string>>{
           {"classic", R"({"game":"classic","target":1})"},
           {"hidden", R"({"game":"hidden","target":10})"}}) {
    absl::StatusOr<std::unique_ptr<Game>> g = SeatGame(*suite_, name, options);
    ASSERT_TRUE(g.ok()) << g.status();
    games_.push_back(*std::move(g));
  }
  // Eve tries at the hidden game (to 10: many rounds): the classic one (to 1) may end, and
  // its table close with its stream, while a loaded machine answers her commands.
  Game& g = *games_[1];
  Player eve;
  eve.name = "Eve";
  ASSERT_TRUE(Login(*suite_, eve).ok());
  ScriptedPlayerOptions po;
  po.player_id = eve.session.player_id();
  po.auto_reconnect = false;
  ScriptedPlayer outsider("Eve", suite_->GrpcDialer(eve.session.access_token()), po);
  absl::StatusOr<cv1::Opened> opened = outsider.Open(g.ref.table_id());
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->seat(), -1);
  ASSERT_TRUE(g.players[0]->play->WaitUntil([&] { return !g.players[0]->play->hand().empty(); },
                                            absl::Seconds(60)));
  const std::vector<std::string> host_hand = g.players[0]->play->hand();
  std::vector<cv1::TableCommand> attempts;
  for (const std::string& card : host_hand) {
    cv1::TableCommand c;
    c.set_type("move");
    c.set_move("play");
    c.set_card(card);
    attempts.push_back(c);
  }
  for (const char* type : {"remove_bot", "start_now", "end_early", "ask_bot"}) {
    cv1::TableCommand c;
    c.set_type(type);
    c.set_seat(2);
    attempts.push_back(c);
  }
  for (const cv1::TableCommand& c : attempts) {
    absl::StatusOr<cv1::CommandResult> result = outsider.Send(c);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_NE(result->code(), 0) << c.type() << " " << c.card() << " was accepted from Eve";
  }
  outsider.Disconnect();
  for (auto& game : games_) {
    for (auto& p : game->players) {
      EXPECT_TRUE(p->play->WaitGameOver(absl::Seconds(240))) << game->name << " " << p->name;
    }
  }
  ASSERT_FALSE(HasFailure());
  for (auto& game : games_) {
    ExpectCompleteStreams(*game);
    ExpectNoForeignCards(*game);
    ExpectCoins(*suite_, *game);
  }
  ExpectAuditClean(*suite_);
}

// RULES §5.6 through the whole suite: an admin mutes a player on the gateway's admin API;
// that player's voice_start is refused with moderation's own message and takes nothing,
// another player records; once the admin lifts the mute the player records again.
TEST_F(SystemSecurityTest, AMutedPlayerCannotTakeTheRecordingLockUntilLifted) {
  // Seated, not started: the players' own loops would read the results Send waits for.
  SeatOptions seat_options;
  seat_options.start = false;
  absl::StatusOr<std::unique_ptr<Game>> seated =
      SeatGame(*suite_, "mute", R"({"game":"classic","target":1})", seat_options);
  ASSERT_TRUE(seated.ok()) << seated.status();
  games_.push_back(*std::move(seated));
  Game& g = *games_[0];
  Player& ann = *g.players[1];
  Player& ben = *g.players[2];
  std::unique_ptr<gateway::testing::HttpClient> http = suite_->NewHttp();
  const gateway::testing::HttpHeaders admin = {
      {"authorization", "Bearer " + suite_->SignToken("ops-admin-1", true, absl::Minutes(5))}};
  absl::StatusOr<gateway::testing::HttpResponse> r =
      http->Post("/admin/v1/MutePlayer",
                 absl::StrCat(R"({"playerId":")", ann.session.player_id(),
                              R"(","muteForMs":"3600000","reason":"abusive notes"})"),
                 admin);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, 200) << r->body;

  auto voice = [](Player& p, const char* type) {
    cv1::TableCommand c;
    c.set_type(type);
    return p.play->Send(c);
  };
  absl::StatusOr<cv1::CommandResult> refused = voice(ann, "voice_start");
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->code(), static_cast<int>(grpc::StatusCode::PERMISSION_DENIED));
  EXPECT_THAT(refused->message(),
              ::testing::StartsWith("muted: an admin stopped your voice notes until "));
  absl::StatusOr<cv1::CommandResult> other = voice(ben, "voice_start");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->code(), 0) << other->message();  // the lock was not taken by the muted
  absl::StatusOr<cv1::CommandResult> discard = voice(ben, "voice_discard");
  ASSERT_TRUE(discard.ok()) << discard.status();
  EXPECT_EQ(discard->code(), 0) << discard->message();

  r = http->Post(
      "/admin/v1/LiftMute",
      absl::StrCat(R"({"playerId":")", ann.session.player_id(), R"(","reason":"appeal accepted"})"),
      admin);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, 200) << r->body;
  absl::StatusOr<cv1::CommandResult> lifted = voice(ann, "voice_start");
  ASSERT_TRUE(lifted.ok()) << lifted.status();
  EXPECT_EQ(lifted->code(), 0) << lifted->message();  // the refusal used no allowance
  for (const pb::TableEvent& e : ann.Events()) {
    // No round began meanwhile (its count-in would have given a fresh allowance anyway).
    EXPECT_NE(e.type(), "count_in") << "the table started a round during the test";
  }
  absl::StatusOr<cv1::CommandResult> dropped = voice(ann, "voice_discard");
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(dropped->code(), 0) << dropped->message();
}

}  // namespace
}  // namespace courtpiece::system_test
