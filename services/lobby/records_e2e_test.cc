// Records end to end: the real courtpiece-table and courtpiece-wallet binaries, the lobby's
// LobbyRecords served in-process on a real port over a fresh Postgres database
// (COURTPIECE_TEST_PG_URL), a real Redis (COURTPIECE_TEST_REDIS_ADDR, database 11 or
// COURTPIECE_TEST_RECORDS_REDIS_DB, flushed per test). Players are PlayClients driven by
// AutoPlayers. The stats are checked exactly as RULES.md 4.9-4.12 say.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/redis_client.h"
#include "courtpiece/storage/testing.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/lobby/pg_records_store.h"
#include "services/lobby/records.h"
#include "services/lobby/records_server.h"
#include "services/table/testing/fake_receivers.h"
#include "services/table/testing/play_client.h"

namespace courtpiece::lobby {
namespace {

namespace pb = ::courtpiece::table::v1;
namespace wv1 = ::courtpiece::wallet::v1;
using table_service::testing::AutoPlayer;
using table_service::testing::AutoPlayerOptions;
using table_service::testing::FakeReceivers;
using table_service::testing::MakeCommand;
using table_service::testing::PlayClient;

constexpr int64_t kGrant = 5'000;
constexpr absl::Duration kRpc = absl::Seconds(5);
constexpr absl::Duration kGame = absl::Seconds(90);

int RedisDb() {
  const char* env = std::getenv("COURTPIECE_TEST_RECORDS_REDIS_DB");
  return env == nullptr ? 11 : std::atoi(env);
}

bool WaitHealthy(const std::string& address) {
  return common::WaitServing(address, absl::Seconds(15));
}

// Polls `done` until it holds (bounded).
bool Eventually(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(60)) {
  const absl::Time until = absl::Now() + timeout;
  while (absl::Now() < until) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return done();
}

// LobbyRecords in front of the real service: while `lose` is set, a record is applied and
// then answered UNAVAILABLE (a reply lost on the way), so the table re-sends it. Counts the
// answers of each key that were replays.
class LossyRecords final : public v1::LobbyRecords::Service {
 public:
  explicit LossyRecords(LobbyRecordsService& inner) : inner_(inner) {}
  grpc::Status RecordGame(grpc::ServerContext* c, const v1::RecordGameRequest* r,
                          v1::RecordReply* reply) override {
    return After(r->key(), inner_.RecordGame(c, r, reply), *reply);
  }
  grpc::Status RecordQuit(grpc::ServerContext* c, const v1::RecordQuitRequest* r,
                          v1::RecordReply* reply) override {
    return After(r->key(), inner_.RecordQuit(c, r, reply), *reply);
  }
  grpc::Status RecordRound(grpc::ServerContext* c, const v1::RecordRoundRequest* r,
                           v1::RecordReply* reply) override {
    return After(r->key(), inner_.RecordRound(c, r, reply), *reply);
  }
  grpc::Status RecordTableClosed(grpc::ServerContext* c, const v1::RecordTableClosedRequest* r,
                                 v1::RecordReply* reply) override {
    return After(r->key(), inner_.RecordTableClosed(c, r, reply), *reply);
  }
  void SetLosing(bool lose) { lose_ = lose; }
  int Replays(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    return replays_[key];
  }
  int Acked(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    return acked_[key];
  }

 private:
  grpc::Status After(const std::string& key, grpc::Status s, const v1::RecordReply& reply) {
    std::lock_guard<std::mutex> lock(mu_);
    if (s.ok() && reply.replayed()) ++replays_[key];
    if (s.ok() && lose_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "reply lost");
    if (s.ok()) ++acked_[key];
    return s;
  }
  LobbyRecordsService& inner_;
  std::mutex mu_;
  bool lose_ = false;                   // guarded by mu_
  std::map<std::string, int> replays_;  // guarded by mu_
  std::map<std::string, int> acked_;    // guarded by mu_
};

struct Person {
  std::string name;
  std::unique_ptr<PlayClient> stream;
  std::unique_ptr<AutoPlayer> auto_player;
  int seat = -1;
};

class RecordsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* redis = std::getenv("COURTPIECE_TEST_REDIS_ADDR");
    ASSERT_NE(redis, nullptr) << "COURTPIECE_TEST_REDIS_ADDR is not set";
    redis_addr_ = redis;
    absl::StatusOr<storage::RedisOptions> ro = storage::ParseRedisAddr(redis_addr_);
    ASSERT_TRUE(ro.ok()) << ro.status();
    ro->db = RedisDb();
    storage::RedisClient client(*ro);
    ASSERT_TRUE(client.Command({"FLUSHDB"}).ok());

    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> wallet_db =
        storage::TestDatabase::Create(
            {.migrations = {
                 {"wallet", ::courtpiece::common::SourceDir() + "/services/wallet/migrations"}}});
    ASSERT_TRUE(wallet_db.ok()) << wallet_db.status();
    wallet_db_ = *std::move(wallet_db);
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> lobby_db = storage::TestDatabase::Create(
        {.migrations = {
             {"lobby", ::courtpiece::common::SourceDir() + "/services/lobby/migrations"}}});
    ASSERT_TRUE(lobby_db.ok()) << lobby_db.status();
    lobby_db_ = *std::move(lobby_db);

    // The lobby's records part, in-process.
    pool_ = std::make_unique<storage::PgPool>(lobby_db_->PoolOptions());
    store_ = std::make_unique<PgRecordsStore>(*pool_);
    records_ = std::make_unique<Records>(*store_, RealClock::Instance(), RecordsOptions{},
                                         [this](std::string_view id) {
                                           std::lock_guard<std::mutex> lock(mu_);
                                           closed_.emplace_back(id);
                                         });
    service_ = std::make_unique<LobbyRecordsService>(*records_, RealClock::Instance(),
                                                     RecordsServerOptions{}, metrics_, log_);
    lossy_ = std::make_unique<LossyRecords>(*service_);
    absl::StatusOr<std::unique_ptr<common::GrpcServer>> server =
        common::GrpcServer::Start({.listen_address = "127.0.0.1:0"}, {lossy_.get()}, metrics_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    absl::StatusOr<std::unique_ptr<FakeReceivers>> moderation = FakeReceivers::Start();
    ASSERT_TRUE(moderation.ok()) << moderation.status();
    moderation_ = *std::move(moderation);

    wallet_addr_ = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    wallet_pid_ = common::Spawn(
        {common::BinDir() + "/courtpiece-wallet"},
        {"COURTPIECE_PG_URL=" + wallet_db_->url(), "COURTPIECE_WALLET_ADDR=" + wallet_addr_,
         "COURTPIECE_WALLET_METRICS_ADDR=off",
         absl::StrCat("COURTPIECE_WALLET_STARTING_GRANT=", kGrant),
         "COURTPIECE_WALLET_HOUSE_SHARDS=4", "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_GT(wallet_pid_, 0);
    ASSERT_TRUE(WaitHealthy(wallet_addr_));
    wallet_ =
        wv1::Wallet::NewStub(grpc::CreateChannel(wallet_addr_, grpc::InsecureChannelCredentials()));
    table_addr_ = StartTable();
  }

  void TearDown() override {
    people_.clear();
    for (pid_t pid : table_pids_) {
      if (pid <= 0) continue;
      kill(pid, SIGKILL);
      common::WaitExit(pid);
    }
    if (wallet_pid_ > 0) {
      kill(wallet_pid_, SIGTERM);
      common::WaitExit(wallet_pid_);
    }
    if (server_ != nullptr) server_->Shutdown(absl::Now() + absl::Seconds(1));
  }

  // Starts another courtpiece-table (same Redis, wallet and lobby); its address.
  std::string StartTable() {
    const std::string addr = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    const pid_t pid = common::Spawn(
        {common::BinDir() + "/courtpiece-table"},
        {"COURTPIECE_REDIS_ADDR=" + redis_addr_,
         absl::StrCat("COURTPIECE_TABLE_REDIS_DB=", RedisDb()), "COURTPIECE_TABLE_ADDR=" + addr,
         absl::StrCat("COURTPIECE_TABLE_INSTANCE_ID=records-", getpid(), "-", table_pids_.size()),
         "COURTPIECE_TABLE_METRICS_ADDR=off", "COURTPIECE_TABLE_WALLET_ADDR=" + wallet_addr_,
         "COURTPIECE_TABLE_LOBBY_ADDR=" + server_->LoopbackAddress(),
         "COURTPIECE_TABLE_MODERATION_ADDR=" + moderation_->address(), "COURTPIECE_TABLE_WORKERS=2",
         "COURTPIECE_TABLE_HEARTBEAT_TTL=1s", "COURTPIECE_TABLE_RPC_TIMEOUT=2s",
         "COURTPIECE_TABLE_COMMANDS_PER_SECOND=200", "COURTPIECE_TABLE_COMMANDS_BURST=200",
         "COURTPIECE_LOG_LEVEL=warn"});
    EXPECT_GT(pid, 0);
    EXPECT_TRUE(WaitHealthy(addr)) << "courtpiece-table at " << addr;
    table_pids_.push_back(pid);
    return addr;
  }

  void OpenAccount(const std::string& player) {
    wv1::OpenAccountRequest request;
    request.set_player_id(player);
    wv1::OpenAccountResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kRpc));
    grpc::Status s = wallet_->OpenAccount(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  // Creates `id` with `names` seated (the first hosts), auto players on; starts at once.
  void SeatAndStart(const std::string& id, const std::string& options,
                    const std::vector<std::string>& names) {
    pb::CreateTableRequest request;
    request.set_table_id(id);
    request.set_host_player(names[0]);
    request.set_bet_coins(25);
    request.set_turn_time_ms(30'000);
    request.set_game_options(options);
    request.set_code("654321");
    pb::CreateTableResponse response;
    auto stub = pb::TableService::NewStub(
        grpc::CreateChannel(table_addr_, grpc::InsecureChannelCredentials()));
    // As a client does: UNAVAILABLE (e.g. Redis slow to answer on a loaded machine, as in a
    // cold CI run) is retried, a bounded number of times; CreateTable is idempotent by id.
    grpc::Status s;
    for (int attempt = 0; attempt < 3; ++attempt) {
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + kRpc));
      s = stub->CreateTable(&context, request, &response);
      if (s.error_code() != grpc::StatusCode::UNAVAILABLE) break;
      absl::SleepFor(absl::Milliseconds(500));
    }
    ASSERT_TRUE(s.ok()) << s.error_message();
    for (const std::string& name : names) {
      auto p = std::make_unique<Person>();
      p->name = name;
      OpenAccount(name);
      p->stream = std::make_unique<PlayClient>(table_addr_, name);
      absl::StatusOr<pb::Opened> opened = p->stream->Open(id, 0, kRpc);
      ASSERT_TRUE(opened.ok()) << name << ": " << opened.status();
      p->seat = opened->seat();
      if (p->seat < 0) {
        absl::StatusOr<pb::CommandResult> r = p->stream->Send(MakeCommand("join"), kRpc);
        ASSERT_TRUE(r.ok() && r->code() == 0) << name << " join";
        p->seat = people_.empty() ? 0 : (people_.size() == 1 ? 2 : 1);
      }
      p->auto_player = std::make_unique<AutoPlayer>(*p->stream);
      people_.push_back(std::move(p));
    }
    absl::StatusOr<pb::CommandResult> r = people_[0]->stream->Send(MakeCommand("start_now"), kRpc);
    ASSERT_TRUE(r.ok() && r->code() == 0);
  }

  // The game_over event's team (-1 ended early) and the Courts per team from round_result
  // events, as the host's stream saw them.
  struct Seen {
    int winning_team = -2;
    int courts[2] = {0, 0};
    int goon_courts[2] = {0, 0};
  };
  Seen SeenBy(Person& p) {
    Seen seen;
    for (const pb::PlayResponse& m : p.stream->messages()) {
      if (!m.has_event()) continue;
      const pb::TableEvent& e = m.event();
      if (e.type() == "game_over") seen.winning_team = e.seat();
      if (e.type() != "round_result" || e.seat() < 0) continue;
      const std::string kind = e.detail().substr(0, e.detail().find(' '));
      if (kind == "court" || kind == "goon_court" || kind == "kot" || kind == "four_point" ||
          kind == "six_point") {
        ++seen.courts[e.seat()];
        if (kind == "goon_court") ++seen.goon_courts[e.seat()];
      }
    }
    return seen;
  }

  GameTypeStats StatsOf(const std::string& player, const std::string& game) {
    absl::StatusOr<StatsView> v = records_->Stats(player, absl::Now() + kRpc);
    EXPECT_TRUE(v.ok()) << v.status();
    if (v.ok()) {
      for (const GameTypeStats& g : v->by_game) {
        if (g.game == game) return g;
      }
    }
    return GameTypeStats{.game = game};
  }
  std::vector<PlayerGameResult> ResultsOf(const std::string& player) {
    absl::StatusOr<std::vector<PlayerGameResult>> r =
        records_->RecentResults(player, 0, absl::Now() + kRpc);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.value_or(std::vector<PlayerGameResult>{});
  }
  bool Closed(const std::string& table) {
    absl::StatusOr<bool> c = store_->TableClosed(table, absl::Now() + kRpc);
    return c.ok() && *c;
  }
  std::vector<std::string> ClosedCallbacks() {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }
  void WaitGameOver() {
    for (auto& p : people_) {
      if (!p->auto_player->WaitGameOver(kGame)) {
        std::string seen;
        for (const pb::PlayResponse& m : p->stream->messages()) {
          if (m.has_event()) absl::StrAppend(&seen, " ", m.event().type());
        }
        ADD_FAILURE() << p->name << ": no game over; events:" << seen;
      }
      EXPECT_THAT(p->auto_player->faults(), ::testing::IsEmpty()) << p->name;
    }
  }

  std::string redis_addr_, wallet_addr_, table_addr_;
  std::unique_ptr<storage::TestDatabase> wallet_db_, lobby_db_;
  common::Metrics metrics_{"lobby"};
  common::Logger log_{"lobby", common::LogLevel::kWarn};
  std::unique_ptr<storage::PgPool> pool_;
  std::unique_ptr<PgRecordsStore> store_;
  std::unique_ptr<Records> records_;
  std::unique_ptr<LobbyRecordsService> service_;
  std::unique_ptr<LossyRecords> lossy_;
  std::unique_ptr<common::GrpcServer> server_;
  std::unique_ptr<FakeReceivers> moderation_;
  pid_t wallet_pid_ = -1;
  std::vector<pid_t> table_pids_;
  std::unique_ptr<wv1::Wallet::Stub> wallet_;
  std::vector<std::unique_ptr<Person>> people_;
  std::mutex mu_;
  std::vector<std::string> closed_;  // guarded by mu_
};

// Two people (partners, seats 0 and 2) and two bots: the game counts for both (4.12), with
// their team's Courts; the table closes when they leave and its close reaches the lobby.
TEST_F(RecordsE2eTest, ATwoPersonGameCountsForBoth) {
  SeatAndStart("rt-two", R"({"game":"classic","target":1})", {"two-a", "two-b"});
  WaitGameOver();
  ASSERT_TRUE(Eventually([&] { return StatsOf("two-a", "classic").played == 1; }));
  const Seen seen = SeenBy(*people_[0]);
  ASSERT_TRUE(seen.winning_team == 0 || seen.winning_team == 1);
  const bool won = seen.winning_team == 0;  // both people are on team 0
  for (const char* p : {"two-a", "two-b"}) {
    GameTypeStats s = StatsOf(p, "classic");
    EXPECT_EQ(s.played, 1) << p;
    EXPECT_EQ(s.won, won ? 1 : 0) << p;
    EXPECT_EQ(s.lost, won ? 0 : 1) << p;
    EXPECT_EQ(s.quits, 0) << p;
    EXPECT_EQ(s.courts, seen.courts[0]) << p;
    EXPECT_EQ(s.goon_courts, seen.goon_courts[0]) << p;
    std::vector<PlayerGameResult> results = ResultsOf(p);
    ASSERT_EQ(results.size(), 1u) << p;
    EXPECT_EQ(results[0].table_id, "rt-two");
    EXPECT_EQ(results[0].game, "classic");
    EXPECT_TRUE(results[0].counts_for_stats);
    EXPECT_EQ(results[0].winning_team, seen.winning_team);
    EXPECT_EQ(results[0].won, won);
  }
  ASSERT_TRUE(Eventually([&] { return Closed("rt-two"); }));
  // The lobby's callback runs after the close is committed, so the store may show it first.
  EXPECT_TRUE(Eventually(
      [&] {
        const std::vector<std::string> closed = ClosedCallbacks();
        return std::find(closed.begin(), closed.end(), "rt-two") != closed.end();
      },
      absl::Seconds(10)))
      << "the lobby's close callback never ran for rt-two";
  // Every round's seed reached the lobby: a record of its own, sent beside the game's and
  // the close, so it may land after them (under load it did).
  absl::StatusOr<std::vector<RoundRow>> rounds;
  ASSERT_TRUE(Eventually([&] {
    rounds = records_->Rounds("rt-two", 0, 0, absl::Now() + kRpc);
    return rounds.ok() && !rounds->empty();
  }));
  EXPECT_EQ((*rounds)[0].round, 1u);
  EXPECT_EQ((*rounds)[0].seed_hex.size(), 64u);
}

// One person and three bots: recorded, but it does not count (4.12).
TEST_F(RecordsE2eTest, AOnePersonGameWithBotsDoesNotCount) {
  SeatAndStart("rt-solo", R"({"game":"classic","target":1})", {"solo-a"});
  WaitGameOver();
  ASSERT_TRUE(Eventually([&] { return ResultsOf("solo-a").size() == 1; }));
  std::vector<PlayerGameResult> results = ResultsOf("solo-a");
  EXPECT_FALSE(results[0].counts_for_stats);
  EXPECT_GE(results[0].winning_team, 0);
  GameTypeStats s = StatsOf("solo-a", "classic");
  EXPECT_EQ(s.played, 0);
  EXPECT_EQ(s.won, 0);
  EXPECT_EQ(s.lost, 0);
  EXPECT_EQ(s.quits, 0);
  ASSERT_TRUE(Eventually([&] { return Closed("rt-solo"); }));
}

// Everyone agrees to end the game early: recorded as ended early, does not count (4.12).
TEST_F(RecordsE2eTest, AGameEndedEarlyByAgreementDoesNotCount) {
  SeatAndStart("rt-early", R"({"game":"classic","target":100})", {"early-a", "early-b"});
  for (auto& p : people_) {
    ASSERT_TRUE(p->stream->WaitForEvent("hand", absl::Seconds(30)).has_value()) << p->name;
  }
  for (auto& p : people_) {
    absl::StatusOr<pb::CommandResult> r = p->stream->Send(MakeCommand("end_early"), kRpc);
    ASSERT_TRUE(r.ok() && r->code() == 0) << p->name;
  }
  WaitGameOver();
  ASSERT_TRUE(Eventually([&] { return ResultsOf("early-a").size() == 1; }));
  for (const char* p : {"early-a", "early-b"}) {
    std::vector<PlayerGameResult> results = ResultsOf(p);
    ASSERT_EQ(results.size(), 1u) << p;
    EXPECT_FALSE(results[0].counts_for_stats) << p;
    EXPECT_EQ(results[0].winning_team, -1) << p;
    EXPECT_FALSE(results[0].won) << p;
    GameTypeStats s = StatsOf(p, "classic");
    EXPECT_EQ(s.played, 0) << p;
    EXPECT_EQ(s.quits, 0) << p;
  }
}

// A player presses Leave mid-round (not in the round that ends the game): a quit (4.9); the
// other asks a bot for the freed seat (4.11), plays the game out, and it still counts for
// them (two people started it).
TEST_F(RecordsE2eTest, LeavingMidRoundIsAQuit) {
  SeatAndStart("rt-quit", R"({"game":"classic","target":3})", {"quit-a", "quit-b"});
  Person& b = *people_[1];
  ASSERT_TRUE(b.stream->WaitForEvent("hand", absl::Seconds(30)).has_value());
  b.auto_player->Stop();
  absl::StatusOr<pb::CommandResult> r = b.stream->Send(MakeCommand("leave"), kRpc);
  ASSERT_TRUE(r.ok() && r->code() == 0) << (r.ok() ? r->message() : r.status().ToString());
  // The round ends: b's seat is freed (a quit) and waits; a asks for a bot (the bots agree).
  Person& a = *people_[0];
  ASSERT_TRUE(a.stream->WaitForEvent("unseated", absl::Seconds(60)).has_value());
  pb::TableCommand ask = MakeCommand("ask_bot");
  ask.set_seat(b.seat);
  r = a.stream->Send(ask, kRpc);
  ASSERT_TRUE(r.ok() && r->code() == 0) << (r.ok() ? r->message() : r.status().ToString());
  EXPECT_TRUE(a.auto_player->WaitGameOver(kGame));
  ASSERT_TRUE(Eventually([&] { return StatsOf("quit-b", "classic").quits == 1; }));
  ASSERT_TRUE(Eventually([&] { return StatsOf("quit-a", "classic").played == 1; }));
  GameTypeStats quitter = StatsOf("quit-b", "classic");
  EXPECT_EQ(quitter.played, 0);
  EXPECT_EQ(quitter.quits, 1);
  absl::StatusOr<std::vector<QuitRow>> quits = records_->Quits("quit-b", 0, absl::Now() + kRpc);
  ASSERT_TRUE(quits.ok());
  ASSERT_EQ(quits->size(), 1u);
  EXPECT_EQ((*quits)[0].table_id, "rt-quit");
  EXPECT_EQ((*quits)[0].game_no, 1u);
  EXPECT_EQ((*quits)[0].game, "classic");
  EXPECT_TRUE(ResultsOf("quit-b").empty());  // not on the results: seat freed mid-game
  std::vector<PlayerGameResult> stayed = ResultsOf("quit-a");
  ASSERT_EQ(stayed.size(), 1u);
  EXPECT_TRUE(stayed[0].counts_for_stats);
  EXPECT_THAT(stayed[0].scores, ::testing::Contains(::testing::Ge(3)));
  EXPECT_EQ(StatsOf("quit-a", "classic").quits, 0);
}

// The lobby's replies are lost (applied, answered UNAVAILABLE) all game long, so the table
// keeps re-sending its records; its instance is then killed and another takes the closed
// table over and re-sends them again. Every re-send is a replay: the game counts once.
TEST_F(RecordsE2eTest, ReplaysAfterAFailoverDoNotDoubleCount) {
  const std::string other = StartTable();
  lossy_->SetLosing(true);
  SeatAndStart("rt-fo", R"({"game":"classic","target":1})", {"fo-a", "fo-b"});
  WaitGameOver();
  ASSERT_TRUE(Eventually([&] { return Closed("rt-fo"); }));
  ASSERT_TRUE(Eventually([&] { return lossy_->Replays("rt-fo:game:1") >= 1; }))
      << "the table never re-sent its game record";
  kill(table_pids_[0], SIGKILL);
  common::WaitExit(table_pids_[0]);
  table_pids_[0] = -1;
  lossy_->SetLosing(false);
  // The survivor takes the closed table over, re-sends what is pending and removes it.
  ASSERT_TRUE(Eventually(
      [&] { return lossy_->Acked("rt-fo:closed") >= 1 && lossy_->Acked("rt-fo:game:1") >= 1; },
      absl::Seconds(90)))
      << "nobody re-sent the records after the failover";
  EXPECT_GE(lossy_->Replays("rt-fo:game:1"), 2);  // before the kill and after the takeover
  const Seen seen = SeenBy(*people_[0]);
  const bool won = seen.winning_team == 0;
  for (const char* p : {"fo-a", "fo-b"}) {
    GameTypeStats s = StatsOf(p, "classic");
    EXPECT_EQ(s.played, 1) << p;
    EXPECT_EQ(s.won, won ? 1 : 0) << p;
    EXPECT_EQ(s.lost, won ? 0 : 1) << p;
    EXPECT_EQ(s.courts, seen.courts[0]) << p;
    EXPECT_EQ(ResultsOf(p).size(), 1u) << p;
  }
  absl::StatusOr<std::vector<RoundRow>> rounds;
  EXPECT_TRUE(Eventually([&] {
    rounds = records_->Rounds("rt-fo", 0, 0, absl::Now() + kRpc);
    return rounds.ok() && !rounds->empty();
  }));
  ASSERT_TRUE(rounds.ok());
  EXPECT_EQ(rounds->size(), 1u);
  (void)other;
}

}  // namespace
}  // namespace courtpiece::lobby
