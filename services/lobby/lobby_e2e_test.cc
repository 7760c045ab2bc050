// The lobby as a client and an operator meet it: the real courtpiece-lobby, courtpiece-wallet,
// two courtpiece-table instances and courtpiece-admin, over gRPC, on a fresh Postgres database
// (COURTPIECE_TEST_PG_URL, schemas wallet and lobby) and a real Redis
// (COURTPIECE_TEST_REDIS_ADDR, database 13 or COURTPIECE_TEST_LOBBY_REDIS_DB, flushed per
// test). Moderation's report intake is the in-process stand-in (its own issue).
//
// Sign in -> create -> resolve the code and the link -> join over the table's Play stream ->
// the lobby is killed (-9) -> a whole game is played -> the lobby comes back -> the game's
// records arrive (re-sent by the table) and the stats, results, rounds and coins are exact.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/auth/keys.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/lobby/v1/lobby.grpc.pb.h"
#include "courtpiece/storage/redis_client.h"
#include "courtpiece/storage/testing.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/table/testing/fake_receivers.h"
#include "services/table/testing/play_client.h"

namespace courtpiece::lobby {
namespace {

namespace v1 = ::courtpiece::lobby::v1;
namespace pb = ::courtpiece::table::v1;
using table_service::testing::AutoPlayer;
using table_service::testing::FakeReceivers;
using table_service::testing::MakeCommand;
using table_service::testing::PlayClient;

constexpr int64_t kGrant = 5'000;
constexpr int64_t kBet = 25;
constexpr absl::Duration kRpc = absl::Seconds(5);
constexpr absl::Duration kGame = absl::Seconds(120);
constexpr char kBase[] = "https://play.courtpiece.test";

int RedisDb() {
  const char* env = std::getenv("COURTPIECE_TEST_LOBBY_REDIS_DB");
  return env == nullptr ? 13 : std::atoi(env);
}

bool WaitHealthy(const std::string& address) {
  return common::WaitServing(address, absl::Seconds(15));
}

struct Player {
  v1::Session session;
  std::unique_ptr<PlayClient> stream;
  std::unique_ptr<AutoPlayer> auto_player;
};

class LobbyE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> redis = storage::RequiredTestEnv(storage::kTestRedisAddrEnv);
    ASSERT_TRUE(redis.ok()) << redis.status();
    redis_addr_ = *redis;
    absl::StatusOr<storage::RedisOptions> ro = storage::ParseRedisAddr(redis_addr_);
    ASSERT_TRUE(ro.ok()) << ro.status();
    ro->db = RedisDb();
    storage::RedisClient flush(*ro);
    ASSERT_TRUE(flush.Command({"FLUSHDB"}).ok());
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db = storage::TestDatabase::Create(
        {.migrations = {
             {"wallet", ::courtpiece::common::SourceDir() + "/services/wallet/migrations"},
             {"lobby", ::courtpiece::common::SourceDir() + "/services/lobby/migrations"}}});
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    absl::StatusOr<std::unique_ptr<FakeReceivers>> receivers = FakeReceivers::Start();
    ASSERT_TRUE(receivers.ok()) << receivers.status();
    moderation_ = *std::move(receivers);

    wallet_addr_ = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    wallet_pid_ =
        common::Spawn({common::BinDir() + "/courtpiece-wallet"},
                      {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_WALLET_ADDR=" + wallet_addr_,
                       "COURTPIECE_WALLET_METRICS_ADDR=off",
                       absl::StrCat("COURTPIECE_WALLET_STARTING_GRANT=", kGrant),
                       "COURTPIECE_WALLET_HOUSE_SHARDS=2", "COURTPIECE_WALLET_PG_POOL_SIZE=4",
                       "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_GT(wallet_pid_, 0);
    ASSERT_TRUE(WaitHealthy(wallet_addr_));
    lobby_addr_ = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    for (int i = 0; i < 2; ++i) StartTable(i);
    StartLobby();
    accounts_ = v1::Accounts::NewStub(Channel());
    directory_ = v1::Directory::NewStub(Channel());
    stats_ = v1::Stats::NewStub(Channel());
    admin_ = v1::LobbyAdmin::NewStub(Channel());
  }

  void TearDown() override {
    for (Player* p : {&ann_, &bob_}) {
      p->auto_player.reset();
      p->stream.reset();
    }
    std::vector<pid_t> pids = table_pids_;
    pids.push_back(lobby_pid_);
    pids.push_back(wallet_pid_);
    for (pid_t pid : pids) {
      if (pid <= 0) continue;
      kill(pid, SIGTERM);
      EXPECT_EQ(common::WaitExit(pid), 0);
    }
  }

  std::shared_ptr<grpc::Channel> Channel() {
    return grpc::CreateChannel(lobby_addr_, grpc::InsecureChannelCredentials());
  }

  void StartTable(int i) {
    const std::string addr = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    const pid_t pid = common::Spawn(
        {common::BinDir() + "/courtpiece-table"},
        {"COURTPIECE_REDIS_ADDR=" + redis_addr_,
         absl::StrCat("COURTPIECE_TABLE_REDIS_DB=", RedisDb()), "COURTPIECE_TABLE_ADDR=" + addr,
         absl::StrCat("COURTPIECE_TABLE_INSTANCE_ID=lobby-e2e-", getpid(), "-", i),
         "COURTPIECE_TABLE_METRICS_ADDR=off", "COURTPIECE_TABLE_WALLET_ADDR=" + wallet_addr_,
         "COURTPIECE_TABLE_LOBBY_ADDR=" + lobby_addr_,
         "COURTPIECE_TABLE_MODERATION_ADDR=" + moderation_->address(), "COURTPIECE_TABLE_WORKERS=2",
         "COURTPIECE_TABLE_RPC_TIMEOUT=1s", "COURTPIECE_TABLE_COMMANDS_PER_SECOND=200",
         "COURTPIECE_TABLE_COMMANDS_BURST=200", "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(WaitHealthy(addr)) << addr;
    table_pids_.push_back(pid);
    table_addrs_.push_back(addr);
  }

  void StartLobby() {
    lobby_pid_ = common::Spawn(
        {common::BinDir() + "/courtpiece-lobby"},
        {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_LOBBY_ADDR=" + lobby_addr_,
         "COURTPIECE_LOBBY_METRICS_ADDR=off", "COURTPIECE_LOBBY_WALLET_ADDR=" + wallet_addr_,
         "COURTPIECE_REDIS_ADDR=" + redis_addr_,
         absl::StrCat("COURTPIECE_LOBBY_REDIS_DB=", RedisDb()),
         absl::StrCat("COURTPIECE_LOBBY_INVITE_BASE_URL=", kBase),
         "COURTPIECE_LOBBY_SIGNING_KEY=" + key_.SeedText(), "COURTPIECE_LOBBY_PG_POOL_SIZE=4",
         "COURTPIECE_LOBBY_OPEN_TABLES_CACHE=0s", "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_GT(lobby_pid_, 0);
    ASSERT_TRUE(WaitHealthy(lobby_addr_)) << "courtpiece-lobby at " << lobby_addr_;
  }

  std::unique_ptr<grpc::ClientContext> As(const Player& p) {
    auto context = std::make_unique<grpc::ClientContext>();
    common::SetTimeout(*context, kRpc);
    context->AddMetadata("authorization", "Bearer " + p.session.access_token());
    return context;
  }

  void Login(const std::string& device, const std::string& name, Player& out) {
    v1::GuestLoginRequest request;
    request.set_device_secret(device);
    request.set_display_name(name);
    grpc::ClientContext context;
    common::SetTimeout(context, kRpc);
    grpc::Status s = accounts_->GuestLogin(&context, request, &out.session);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_TRUE(out.session.created());
  }

  v1::Profile ProfileOf(const Player& p) {
    v1::Profile out;
    grpc::Status s = accounts_->GetProfile(As(p).get(), v1::GetProfileRequest(), &out);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return out;
  }

  grpc::Status Resolve(const Player& p, const std::string& code, v1::TableRef* out) {
    v1::ResolveCodeRequest request;
    request.set_code(code);
    return directory_->ResolveCode(As(p).get(), request, out);
  }

  v1::StatsResponse StatsOf(const Player& p) {
    v1::StatsResponse out;
    grpc::Status s = stats_->GetStats(As(p).get(), v1::GetStatsRequest(), &out);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return out;
  }

  // Connects `p` to the table's owner and seats them (the host is seated by CreateTable).
  void Sit(Player& p, const v1::TableRef& table, int want_seat) {
    p.stream = std::make_unique<PlayClient>(table.owner_addr(), p.session.player_id());
    absl::StatusOr<pb::Opened> opened = p.stream->Open(table.table_id(), 0, kRpc);
    ASSERT_TRUE(opened.ok()) << opened.status();
    if (opened->seat() < 0) {
      absl::StatusOr<pb::CommandResult> r = p.stream->Send(MakeCommand("join"), kRpc);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->code(), 0) << r->message();
    } else {
      EXPECT_EQ(opened->seat(), want_seat);
    }
    p.auto_player = std::make_unique<AutoPlayer>(*p.stream);
  }

  int Admin(const std::vector<std::string>& args, std::string* out = nullptr) {
    const std::string path = absl::StrCat(::testing::TempDir(), "/lobby_e2e_admin_", getpid());
    std::string command =
        absl::StrCat("COURTPIECE_PG_URL='", db_->url(), "' COURTPIECE_LOBBY_SIGNING_KEY='",
                     key_.SeedText(), "' ", common::BinDir(), "/courtpiece-admin");
    for (const std::string& a : args) absl::StrAppend(&command, " '", a, "'");
    absl::StrAppend(&command, " >", path, " 2>&1");
    const int rc = std::system(command.c_str());
    if (out != nullptr) {
      std::ifstream in(path);
      std::stringstream s;
      s << in.rdbuf();
      *out = s.str();
    }
    unlink(path.c_str());
    return WEXITSTATUS(rc);
  }

  std::string redis_addr_, wallet_addr_, lobby_addr_;
  std::unique_ptr<storage::TestDatabase> db_;
  std::unique_ptr<FakeReceivers> moderation_;
  pid_t wallet_pid_ = -1, lobby_pid_ = -1;
  std::vector<pid_t> table_pids_;
  std::vector<std::string> table_addrs_;
  const auth::SigningKey key_ = auth::SigningKey::Generate("e2e");
  std::unique_ptr<v1::Accounts::Stub> accounts_;
  std::unique_ptr<v1::Directory::Stub> directory_;
  std::unique_ptr<v1::Stats::Stub> stats_;
  std::unique_ptr<v1::LobbyAdmin::Stub> admin_;
  Player ann_, bob_;
};

TEST_F(LobbyE2eTest, ACodeGameSurvivesALobbyKillAndIsRecordedExactlyOnce) {
  ASSERT_NO_FATAL_FAILURE(Login("device-ann-0123456789abcdef0123456789abcdef", "Ann", ann_));
  ASSERT_NO_FATAL_FAILURE(Login("device-bob-0123456789abcdef0123456789abcdef", "Bob", bob_));
  EXPECT_EQ(ProfileOf(ann_).coins(), kGrant);

  // Create a private classic table (one round: target 1).
  v1::CreateTableRequest create;
  create.set_request_id("first-table");
  create.mutable_options()->set_game_options(R"({"game":"classic","target":1})");
  create.mutable_options()->set_bet_coins(kBet);
  create.mutable_options()->set_turn_time_ms(15'000);
  v1::TableRef table;
  grpc::Status s = directory_->CreateTable(As(ann_).get(), create, &table);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(table.code().size(), 6u);
  EXPECT_EQ(table.invite_link(), absl::StrCat(kBase, "/t/", table.code()));
  EXPECT_EQ(table.host_player(), ann_.session.player_id());
  EXPECT_THAT(table_addrs_, ::testing::Contains(table.owner_addr()));

  // Bob finds it by the code and by the link; bad codes are refused exactly.
  v1::TableRef by_code, by_link, none;
  ASSERT_TRUE(Resolve(bob_, table.code(), &by_code).ok());
  ASSERT_TRUE(Resolve(bob_, table.invite_link(), &by_link).ok());
  EXPECT_EQ(by_code.table_id(), table.table_id());
  EXPECT_EQ(by_link.table_id(), table.table_id());
  EXPECT_EQ(by_code.owner_addr(), table.owner_addr());
  EXPECT_EQ(Resolve(bob_, "12345", &none).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const std::string unknown = table.code() == "000000" ? "000001" : "000000";
  EXPECT_EQ(Resolve(bob_, unknown, &none).error_code(), grpc::StatusCode::NOT_FOUND);
  Player nobody;
  EXPECT_EQ(Resolve(nobody, table.code(), &none).error_code(), grpc::StatusCode::UNAUTHENTICATED);

  ASSERT_NO_FATAL_FAILURE(Sit(ann_, table, 0));
  ASSERT_NO_FATAL_FAILURE(Sit(bob_, table, 2));
  v1::MyTablesResponse mine;
  ASSERT_TRUE(directory_->MyTables(As(bob_).get(), v1::MyTablesRequest(), &mine).ok());
  ASSERT_EQ(mine.tables_size(), 1);
  EXPECT_EQ(mine.tables(0).table_id(), table.table_id());

  // The lobby dies; the game goes on; its records wait in the table until the lobby is back.
  kill(lobby_pid_, SIGKILL);
  EXPECT_EQ(common::WaitExit(lobby_pid_), 128 + SIGKILL);
  lobby_pid_ = -1;
  absl::StatusOr<pb::CommandResult> start = ann_.stream->Send(MakeCommand("start_now"), kRpc);
  ASSERT_TRUE(start.ok()) << start.status();
  ASSERT_EQ(start->code(), 0) << start->message();
  for (Player* p : {&ann_, &bob_}) {
    EXPECT_TRUE(p->auto_player->WaitGameOver(kGame)) << p->session.player_id();
    EXPECT_THAT(p->auto_player->faults(), ::testing::IsEmpty());
  }
  int winning_team = -2;
  for (const pb::PlayResponse& m : ann_.stream->messages()) {
    if (m.has_event() && m.event().type() == "game_over") winning_team = m.event().seat();
  }
  ASSERT_TRUE(winning_team == 0 || winning_team == 1) << winning_team;
  ASSERT_NO_FATAL_FAILURE(StartLobby());

  // The stats arrive once (the table re-sends with backoff of at most 5 s).
  v1::StatsResponse ann_stats;
  const absl::Time until = absl::Now() + absl::Seconds(30);
  while (absl::Now() < until) {
    ann_stats = StatsOf(ann_);
    if (ann_stats.total().played() >= 1) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  const bool won = winning_team == 0;  // Ann (seat 0) and Bob (seat 2) are team 0
  for (Player* p : {&ann_, &bob_}) {
    const v1::StatsResponse st = StatsOf(*p);
    ASSERT_EQ(st.by_game_size(), 1) << p->session.player_id();
    EXPECT_EQ(st.by_game(0).game(), "classic");
    EXPECT_EQ(st.total().played(), 1);
    EXPECT_EQ(st.total().won(), won ? 1 : 0);
    EXPECT_EQ(st.total().lost(), won ? 0 : 1);
    EXPECT_EQ(st.total().quits(), 0);
    v1::RecentResultsResponse results;
    ASSERT_TRUE(stats_->RecentResults(As(*p).get(), v1::RecentResultsRequest(), &results).ok());
    ASSERT_EQ(results.results_size(), 1);
    EXPECT_EQ(results.results(0).table_id(), table.table_id());
    EXPECT_EQ(results.results(0).winning_team(), winning_team);
    EXPECT_EQ(results.results(0).won(), won);
    EXPECT_TRUE(results.results(0).counts_for_stats());
  }
  // Partners end with the same coins, above the grant when they won (bots' shares go to the
  // house; a Court pays double).
  const int64_t ann_coins = ProfileOf(ann_).coins(), bob_coins = ProfileOf(bob_).coins();
  EXPECT_EQ(ann_coins, bob_coins);
  if (won) {
    EXPECT_GT(ann_coins, kGrant);
  } else {
    EXPECT_LT(ann_coins, kGrant);
  }

  // Admin reads: only with a role granted by the operator's tool.
  v1::ListRoundsRequest rounds_request;
  rounds_request.set_table_id(table.table_id());
  v1::ListRoundsResponse rounds;
  EXPECT_EQ(admin_->ListRounds(As(bob_).get(), rounds_request, &rounds).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  std::string out;
  ASSERT_EQ(Admin({"grant", ann_.session.player_id(), "--reason", "e2e dispute desk"}, &out), 0)
      << out;
  v1::RefreshRequest refresh;
  refresh.set_refresh_token(ann_.session.refresh_token());
  v1::Session admin_session;
  {
    grpc::ClientContext context;
    common::SetTimeout(context, kRpc);
    ASSERT_TRUE(accounts_->Refresh(&context, refresh, &admin_session).ok());
  }
  EXPECT_EQ(admin_session.role(), "admin");
  Player ann_admin;
  ann_admin.session = admin_session;
  grpc::Status rs = admin_->ListRounds(As(ann_admin).get(), rounds_request, &rounds);
  ASSERT_TRUE(rs.ok()) << rs.error_message();
  ASSERT_GE(rounds.rounds_size(), 1);
  EXPECT_EQ(rounds.rounds(0).round(), 1u);
  EXPECT_EQ(rounds.rounds(0).seed_hex().size(), 64u);
  v1::GetPlayerRequest dossier_request;
  dossier_request.set_player_id(bob_.session.player_id());
  v1::PlayerDossier dossier;
  ASSERT_TRUE(admin_->GetPlayer(As(ann_admin).get(), dossier_request, &dossier).ok());
  EXPECT_EQ(dossier.profile().display_name(), "Bob");
  EXPECT_EQ(dossier.stats().total().played(), 1);
  EXPECT_EQ(dossier.quits_total(), 0);
}

}  // namespace
}  // namespace courtpiece::lobby
