// Faults under play, through the whole suite (tests/system/suite.h): a table instance killed
// (-9), the gateway restarted, the lobby, the wallet and moderation restarted. After each: every
// game ends as the rules say (each player sees game_over), no coin lost or made (the ledger
// audit, every pot empty, each player's coins as the host's round results imply), no event
// lost or doubled for a client that resumed (the scripted players' seq bookkeeping, the same
// tricks seen by every seat), and no table stuck (every game reaches its end in time).
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/system/players.h"
#include "tests/system/suite.h"

namespace courtpiece::system_test {
namespace {

namespace cv1 = ::courtpiece::client::v1;
namespace pb = ::courtpiece::table::v1;

constexpr absl::Duration kGame = absl::Seconds(240);

// Logs (to stderr) how a stream the client had to re-dial itself ended.
void NoteRedial(const std::string& game, const Player& p) {
  std::fprintf(stderr, "re-dialled %s %s after: %s\n", game.c_str(), p.name.c_str(),
               EndOf(p).c_str());
}

class SystemFaultsTest : public ::testing::Test {
 protected:
  virtual SuiteOptions Options() const { return SuiteOptions(); }
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Suite>> suite = Suite::Start(Options());
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

  // Three games (the third stack, or hidden), each waited for until a card is down.
  void SeatGamesAndWaitForPlay(const std::string& prefix, bool stack = true) {
    std::vector<std::pair<std::string, std::string>> types = {
        {"classic", R"({"game":"classic","target":3})"},
        {"piles", R"({"game":"piles","target":10})"}};
    if (stack) {
      types.push_back({"stack", R"({"game":"stack","target":5})"});
    } else {
      types.push_back({"hidden", R"({"game":"hidden","target":10})"});
    }
    for (const auto& [type, options] : types) {
      absl::StatusOr<std::unique_ptr<Game>> g = SeatGame(*suite_, prefix + type, options);
      ASSERT_TRUE(g.ok()) << type << ": " << g.status();
      games_.push_back(*std::move(g));
    }
    for (auto& g : games_) {
      Player& host = *g->players[0];
      ASSERT_TRUE(
          host.play->WaitUntil([&] { return !host.play->EventSeqs("played").empty(); }, kGame))
          << g->name;
    }
  }

  // Every game to its end, then the checks of the file's header. Without `per_player`: only
  // what holds whatever the absences were (see GatewayRestartClientsResume).
  void ExpectEveryGameEndsExactly(bool per_player = true) {
    for (auto& g : games_) {
      for (auto& p : g->players) {
        EXPECT_TRUE(p->play->WaitGameOver(kGame))
            << g->name << " " << p->name << ": " << EndOf(*p) << "; " << TimeoutsAndAbsences(*p);
      }
    }
    ASSERT_FALSE(HasFailure());
    if (!per_player) {
      for (auto& g : games_) {
        for (auto& p : g->players) {
          EXPECT_TRUE(p->play->CheckSeqs().ok())
              << g->name << " " << p->name << ": " << p->play->CheckSeqs();
          EXPECT_TRUE(p->play->faults().empty()) << g->name << " " << p->name;
        }
      }
      ExpectAuditClean(*suite_);
      return;
    }
    for (auto& g : games_) {
      ExpectCompleteStreams(*g);
      ExpectCoins(*suite_, *g);
      const int winners = WinningTeam(*g->players[0]);
      for (auto& p : g->players) {
        const bool won = p->play->seat() % 2 == winners;
        ExpectStats(*suite_, *p, GameType(*g), 1, won ? 1 : 0, won ? 0 : 1, 0);
      }
    }
    ExpectAuditClean(*suite_);
  }

  static std::string GameType(const Game& g) {
    const size_t at = g.options.find("\"game\":\"") + 8;
    return g.options.substr(at, g.options.find('"', at) - at);
  }

  std::unique_ptr<Suite> suite_;
  std::vector<std::unique_ptr<Game>> games_;
};

// kill -9 of the table instance that owns most games: the gateway moves the streams to the
// survivor (which adopts the tables from Redis) and every game ends with exact coins.
TEST_F(SystemFaultsTest, KillNineOfATableInstance) {
  ASSERT_NO_FATAL_FAILURE(SeatGamesAndWaitForPlay("k9"));
  std::map<std::string, int> owned;
  const std::vector<std::string> tables = suite_->TableNames();
  auto stub = pb::TableService::NewStub(
      grpc::CreateChannel(*suite_->Address(tables[0]), grpc::InsecureChannelCredentials()));
  for (auto& g : games_) {
    pb::GetTableRequest request;
    request.set_table_id(g->ref.table_id());
    pb::TableInfo info;
    // A table this instance does not host is read from Redis; on a loaded machine that read
    // can pass its 1 s bound (DEADLINE_EXCEEDED), which a client retries (a cold CI run
    // failed here once, on the first call, while the machine compiled and ran 32 tests).
    grpc::Status got;
    for (int attempt = 0; attempt < 10; ++attempt) {
      grpc::ClientContext context;
      common::SetTimeout(context, kRpc);
      got = stub->GetTable(&context, request, &info);
      if (got.error_code() != grpc::StatusCode::UNAVAILABLE &&
          got.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED &&
          got.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) {
        break;
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
    ASSERT_TRUE(got.ok()) << g->name << ": " << got.error_code() << " " << got.error_message();
    ++owned[info.owner_addr()];
  }
  const std::string victim =
      owned[*suite_->Address(tables[0])] >= owned[*suite_->Address(tables[1])] ? tables[0]
                                                                               : tables[1];
  ASSERT_GE(owned[*suite_->Address(victim)], 1);
  ASSERT_TRUE(suite_->Kill9(victim).ok());
  ExpectEveryGameEndsExactly();
}

// The gateway restarted (SIGTERM, then the same binary on the same ports): every client's
// stream ends, the clients dial again by themselves and resume from their last seq.
// Not with a stack game: stack games are short, and in three of three runs the stack game
// ended while its clients were away (the gateway drains for up to 10 s), so by §4.10/§4.11
// the seats were freed, the table closed and the clients' reopen was NOT_FOUND; the checks
// here (every client sees game_over, coins as the results imply) do not hold then. See
// tests/system/README.md, "Shaky / known".
TEST_F(SystemFaultsTest, GatewayRestartClientsResume) {
  ASSERT_NO_FATAL_FAILURE(SeatGamesAndWaitForPlay("gw", /*stack=*/false));
  const absl::Status restarted = suite_->Restart("gateway");
  ASSERT_TRUE(restarted.ok()) << restarted;
  // A stream the scripted player does not resume by itself (it resumes UNAVAILABLE only; a
  // gRPC Play stream still open when the gateway's 10 s drain ends is cancelled): the client
  // dials again, as an app does on any unexpected end. Each such end is logged.
  const absl::Time until = absl::Now() + kGame;
  for (bool all_over = false; !all_over && absl::Now() < until;
       absl::SleepFor(absl::Milliseconds(100))) {
    all_over = true;
    for (auto& g : games_) {
      for (auto& p : g->players) {
        if (p->play->games_over() >= 1) continue;
        all_over = false;
        if (!p->play->ended()) continue;
        NoteRedial(g->name, *p);
        p->play->Stop();
        const absl::Status again = p->play->Reconnect();
        ASSERT_TRUE(again.ok()) << g->name << " " << p->name << ": " << again;
        p->play->Start();
      }
    }
  }
  // Per-player coins and the same tricks on every stream are not checked here: a gRPC stream
  // runs on through the old gateway's 10 s drain, so a seat may be away when a round ends
  // (its share then goes to the house, §4.6/§4.9, which the round-results oracle does not
  // model), and a reopen beyond the table's kept history gets a fresh view (not the missed
  // events). What must hold: every game ends, no event doubled or out of order on any
  // stream, no coin lost or made, every pot empty.
  ExpectEveryGameEndsExactly(/*per_player=*/false);
  // Each client dialled again by itself; a reconnect within the table's kept history resumes
  // by seq (opened.resumed), a later one gets a fresh view: CheckSeqs (above) holds either way.
  for (auto& g : games_) {
    for (auto& p : g->players) {
      EXPECT_GE(p->play->reconnects(), 1) << g->name << " " << p->name << ": " << EndOf(*p);
    }
  }
}

// The lobby, the wallet and moderation restarted one after another while the games play:
// the tables' calls to them fail for a moment and are retried; nothing is lost or doubled.
TEST_F(SystemFaultsTest, LobbyWalletAndModerationRestartUnderPlay) {
  ASSERT_NO_FATAL_FAILURE(SeatGamesAndWaitForPlay("be"));
  for (const std::string name : {"lobby", "wallet", "moderation"}) {
    const absl::Status restarted = suite_->Restart(name);
    ASSERT_TRUE(restarted.ok()) << name << ": " << restarted;
  }
  ExpectEveryGameEndsExactly();
}

// The suite on a Postgres and a Redis of its own, so that the test can restart them.
class SystemServersTest : public SystemFaultsTest {
 protected:
  SuiteOptions Options() const override {
    SuiteOptions options;
    options.own_servers = true;
    return options;
  }

  // A new player signs in, creates a table and finds it by its code: the lobby's Postgres
  // and Redis connections (and the gateway's) came back by themselves.
  void ExpectSignInAndCreateWork(const std::string& name) {
    Player p;
    p.name = name;
    absl::Status login = Login(*suite_, p);
    ASSERT_TRUE(login.ok()) << name << ": " << login;
    auto client = suite_->NewClient();
    cv1::CreateTableRequest create;
    create.set_request_id("table-" + name);
    create.mutable_options()->set_game_options(R"({"game":"classic","target":1})");
    create.mutable_options()->set_bet_coins(kBet);
    create.mutable_options()->set_turn_time_ms(30'000);
    cv1::TableRef ref;
    const grpc::Status created = client->CreateTable(As(p).get(), create, &ref);
    ASSERT_TRUE(created.ok()) << name << ": " << created.error_message();
    ASSERT_EQ(ref.code().size(), 6u) << ref.code();
    cv1::ResolveCodeRequest resolve;
    resolve.set_code(ref.code());
    cv1::TableRef found;
    const grpc::Status resolved = client->ResolveCode(As(p).get(), resolve, &found);
    ASSERT_TRUE(resolved.ok()) << name << ": " << resolved.error_message();
    EXPECT_EQ(found.table_id(), ref.table_id());
  }
};

// Postgres restarted while the games play (the wallet's stakes and payouts and the lobby's
// records wait and are retried), then Redis (every table's saves and the instances'
// heartbeats wait; with a 1 s heartbeat TTL the instances may take each other's tables over
// when it is back, and the gateway moves the streams): every game ends, streams complete,
// coins and stats exact, the ledger clean; and sign-in, create and resolve work afterwards.
TEST_F(SystemServersTest, PostgresAndRedisRestartUnderPlay) {
  ASSERT_NO_FATAL_FAILURE(SeatGamesAndWaitForPlay("sv", /*stack=*/false));
  for (const std::string name : {"postgres", "redis"}) {
    ASSERT_TRUE(suite_->Stop(name).ok()) << name;
    absl::SleepFor(absl::Seconds(3));
    const absl::Status started = suite_->StartProcess(name);
    ASSERT_TRUE(started.ok()) << name << ": " << started;
    // Play goes on for a while before the next fault.
    Player& host = *games_[0]->players[0];
    const size_t played = host.play->EventSeqs("played").size();
    EXPECT_TRUE(host.play->WaitUntil(
        [&] {
          return host.play->EventSeqs("played").size() >= played + 8 ||
                 host.play->games_over() >= 1;
        },
        kGame))
        << name;
  }
  ExpectEveryGameEndsExactly();
  ExpectSignInAndCreateWork("after");
}

}  // namespace
}  // namespace courtpiece::system_test
