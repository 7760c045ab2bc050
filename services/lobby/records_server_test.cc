// Unit tests of the LobbyRecords, Stats and LobbyAdmin handlers, called directly (fake store,
// fake clock, auth::FakeCallerAuth).
#include "services/lobby/records_server.h"

#include <grpcpp/server_context.h>
#include <grpcpp/test/server_context_test_spouse.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/lobby/admin_server.h"
#include "services/lobby/fake_records_store.h"
#include "services/lobby/stats_server.h"

namespace courtpiece::lobby {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class RecordsServersTest : public ::testing::Test {
 protected:
  RecordsServersTest()
      : metrics_("lobby"),
        log_("lobby", common::LogLevel::kError, [](std::string_view) {}),
        records_(store_, clock_, RecordsOptions{},
                 [this](std::string_view id) { closed_.emplace_back(id); }),
        records_service_(records_, clock_, RecordsServerOptions{}, metrics_, log_),
        stats_service_(records_, auth_, clock_, StatsServerOptions{}, log_),
        admin_service_(
            records_, auth_,
            [](std::string_view id) -> absl::StatusOr<v1::Profile> {
              if (id != "alice") return absl::NotFoundError("unknown player");
              v1::Profile p;
              p.set_player_id("alice");
              p.set_display_name("Alice");
              return p;
            },
            clock_, AdminServerOptions{}, log_) {}

  // A context whose caller is `player` (admin when `admin`); "" = no token.
  struct Ctx {
    grpc::ServerContext context;
    grpc::testing::ServerContextTestSpouse spouse{&context};
  };
  static void As(Ctx& ctx, const std::string& player, bool admin = false) {
    if (!player.empty()) ctx.spouse.AddClientMetadata("courtpiece-test-player", player);
    if (admin) ctx.spouse.AddClientMetadata("courtpiece-test-admin", "1");
  }

  static v1::RecordGameRequest Game(uint64_t game_no) {
    v1::RecordGameRequest r;
    r.set_key("t1:game:" + std::to_string(game_no));
    r.set_table_id("t1");
    r.set_game_no(game_no);
    r.set_game("hidden");
    r.set_counts_for_stats(true);
    r.set_winning_team(1);
    r.add_scores(4);
    r.add_scores(10);
    r.add_courts(0);
    r.add_courts(2);
    r.add_goon_courts(0);
    r.add_goon_courts(1);
    v1::PlayerResult* a = r.add_players();
    a->set_player("alice");
    a->set_seat(0);
    v1::PlayerResult* b = r.add_players();
    b->set_player("bob");
    b->set_seat(3);
    b->set_won(true);
    return r;
  }

  grpc::Status RecordGame(const v1::RecordGameRequest& r, v1::RecordReply* reply) {
    grpc::ServerContext context;
    return records_service_.RecordGame(&context, &r, reply);
  }

  FakeClock clock_;
  FakeRecordsStore store_;
  auth::FakeCallerAuth auth_;
  common::Metrics metrics_;
  common::Logger log_;
  std::vector<std::string> closed_;
  Records records_;
  LobbyRecordsService records_service_;
  StatsService stats_service_;
  LobbyAdminService admin_service_;
};

TEST_F(RecordsServersTest, RecordGameTranslatesAndReplays) {
  v1::RecordReply reply;
  ASSERT_TRUE(RecordGame(Game(1), &reply).ok());
  EXPECT_FALSE(reply.replayed());
  ASSERT_TRUE(RecordGame(Game(1), &reply).ok());
  EXPECT_TRUE(reply.replayed());
  v1::RecordGameRequest other = Game(1);
  other.set_scores(0, 5);
  grpc::Status s = RecordGame(other, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  v1::RecordGameRequest bad = Game(2);
  bad.clear_courts();
  s = RecordGame(bad, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("courts"));

  Ctx ctx;
  As(ctx, "bob");
  v1::GetStatsRequest req;  // empty: the caller
  v1::StatsResponse stats;
  ASSERT_TRUE(stats_service_.GetStats(&ctx.context, &req, &stats).ok());
  EXPECT_EQ(stats.player_id(), "bob");
  ASSERT_EQ(stats.by_game_size(), 1);
  EXPECT_EQ(stats.by_game(0).game(), "hidden");
  EXPECT_EQ(stats.by_game(0).played(), 1);
  EXPECT_EQ(stats.by_game(0).won(), 1);
  EXPECT_EQ(stats.by_game(0).courts(), 2);
  EXPECT_EQ(stats.by_game(0).goon_courts(), 1);
  EXPECT_EQ(stats.total().game(), "");
  EXPECT_EQ(stats.total().played(), 1);
}

TEST_F(RecordsServersTest, QuitRoundAndCloseTranslate) {
  grpc::ServerContext c1, c2, c3;
  v1::RecordQuitRequest quit;
  quit.set_key("t1:quit:1:bob");
  quit.set_table_id("t1");
  quit.set_game_no(1);
  quit.set_player("bob");
  quit.set_game("kaat");
  v1::RecordReply reply;
  ASSERT_TRUE(records_service_.RecordQuit(&c1, &quit, &reply).ok());
  v1::RecordRoundRequest round;
  round.set_key("t1:round:1");
  round.set_table_id("t1");
  round.set_round(1);
  round.set_seed_hex(std::string(64, '0'));
  round.set_result("goon_court 3-0");
  round.set_seed_only_to(2);
  ASSERT_TRUE(records_service_.RecordRound(&c2, &round, &reply).ok());
  v1::RecordTableClosedRequest close;
  close.set_key("t1:closed");
  close.set_table_id("t1");
  ASSERT_TRUE(records_service_.RecordTableClosed(&c3, &close, &reply).ok());
  EXPECT_THAT(closed_, ElementsAre("t1"));

  Ctx admin;
  As(admin, "root", true);
  v1::ListQuitsRequest lq;
  lq.set_player_id("bob");
  v1::ListQuitsResponse quits;
  ASSERT_TRUE(admin_service_.ListQuits(&admin.context, &lq, &quits).ok());
  ASSERT_EQ(quits.quits_size(), 1);
  EXPECT_EQ(quits.quits(0).table_id(), "t1");
  EXPECT_EQ(quits.quits(0).game_no(), 1u);
  EXPECT_EQ(quits.quits(0).game(), "kaat");
  EXPECT_EQ(quits.quits(0).recorded_at_ms(), absl::ToUnixMillis(clock_.Now()));

  Ctx admin2;
  As(admin2, "root", true);
  v1::ListRoundsRequest lr;
  lr.set_table_id("t1");
  v1::ListRoundsResponse rounds;
  ASSERT_TRUE(admin_service_.ListRounds(&admin2.context, &lr, &rounds).ok());
  ASSERT_EQ(rounds.rounds_size(), 1);
  EXPECT_EQ(rounds.rounds(0).round(), 1u);
  EXPECT_EQ(rounds.rounds(0).seed_hex(), std::string(64, '0'));
  EXPECT_EQ(rounds.rounds(0).result(), "goon_court 3-0");
  EXPECT_EQ(rounds.rounds(0).seed_only_to(), 2);
}

TEST_F(RecordsServersTest, StatsNeedAToken) {
  Ctx ctx;
  v1::GetStatsRequest req;
  v1::StatsResponse stats;
  EXPECT_EQ(stats_service_.GetStats(&ctx.context, &req, &stats).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  Ctx ctx2;
  v1::RecentResultsRequest rr;
  v1::RecentResultsResponse results;
  EXPECT_EQ(stats_service_.RecentResults(&ctx2.context, &rr, &results).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(RecordsServersTest, RecentResultsOfAnotherPlayer) {
  v1::RecordReply reply;
  ASSERT_TRUE(RecordGame(Game(1), &reply).ok());
  Ctx ctx;
  As(ctx, "carol");
  v1::RecentResultsRequest rr;
  rr.set_player_id("alice");
  v1::RecentResultsResponse results;
  ASSERT_TRUE(stats_service_.RecentResults(&ctx.context, &rr, &results).ok());
  ASSERT_EQ(results.results_size(), 1);
  const v1::GameResult& g = results.results(0);
  EXPECT_EQ(g.table_id(), "t1");
  EXPECT_EQ(g.game_no(), 1u);
  EXPECT_EQ(g.game(), "hidden");
  EXPECT_THAT(g.scores(), ElementsAre(4, 10));
  EXPECT_EQ(g.winning_team(), 1);
  EXPECT_FALSE(g.won());
  EXPECT_TRUE(g.counts_for_stats());
  Ctx ctx2;
  As(ctx2, "carol");
  rr.set_limit(101);
  EXPECT_EQ(stats_service_.RecentResults(&ctx2.context, &rr, &results).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(RecordsServersTest, AdminReadsNeedTheAdminRole) {
  v1::GetPlayerRequest req;
  req.set_player_id("alice");
  v1::PlayerDossier dossier;
  Ctx none;
  EXPECT_EQ(admin_service_.GetPlayer(&none.context, &req, &dossier).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  Ctx player;
  As(player, "bob");
  EXPECT_EQ(admin_service_.GetPlayer(&player.context, &req, &dossier).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  Ctx player2;
  As(player2, "bob");
  v1::ListRoundsRequest lr;
  lr.set_table_id("t1");
  v1::ListRoundsResponse rounds;
  EXPECT_EQ(admin_service_.ListRounds(&player2.context, &lr, &rounds).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(RecordsServersTest, GetPlayerBuildsTheDossier) {
  v1::RecordReply reply;
  ASSERT_TRUE(RecordGame(Game(1), &reply).ok());
  v1::RecordQuitRequest quit;
  quit.set_key("t1:quit:2:alice");
  quit.set_table_id("t1");
  quit.set_game_no(2);
  quit.set_player("alice");
  quit.set_game("hidden");
  grpc::ServerContext c;
  ASSERT_TRUE(records_service_.RecordQuit(&c, &quit, &reply).ok());

  Ctx admin;
  As(admin, "root", true);
  v1::GetPlayerRequest req;
  req.set_player_id("alice");
  v1::PlayerDossier dossier;
  ASSERT_TRUE(admin_service_.GetPlayer(&admin.context, &req, &dossier).ok());
  EXPECT_EQ(dossier.profile().display_name(), "Alice");
  EXPECT_EQ(dossier.stats().total().played(), 1);
  EXPECT_EQ(dossier.stats().total().lost(), 1);
  EXPECT_EQ(dossier.stats().total().quits(), 1);
  EXPECT_EQ(dossier.recent_results_size(), 1);
  EXPECT_EQ(dossier.quits_total(), 1);

  Ctx admin2;
  As(admin2, "root", true);
  req.set_player_id("nobody");
  EXPECT_EQ(admin_service_.GetPlayer(&admin2.context, &req, &dossier).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(RecordsServersTest, StoreFailuresReachTheClientWithoutTheirText) {
  store_.FailNext(3, absl::UnavailableError("pg: connection to 10.0.0.7 refused"));
  v1::RecordReply reply;
  grpc::Status s = RecordGame(Game(1), &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(s.error_message(), ::testing::Not(HasSubstr("10.0.0.7")));
}

}  // namespace
}  // namespace courtpiece::lobby
