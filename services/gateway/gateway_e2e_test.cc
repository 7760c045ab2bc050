// The gateway as clients meet it: the real courtpiece-gateway in front of the real
// courtpiece-lobby, courtpiece-wallet and two courtpiece-table instances, on a fresh Postgres
// database (COURTPIECE_TEST_PG_URL) and a real Redis (COURTPIECE_TEST_REDIS_ADDR, database 6
// or COURTPIECE_TEST_GATEWAY_REDIS_DB, flushed per test). Mobile clients speak gRPC
// (CourtPiece), web clients HTTP + WebSocket JSON; both only through the gateway.
// Moderation's report intake is the in-process stand-in (its own issue).
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/auth/keys.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/client/v1/client.grpc.pb.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/redis_client.h"
#include "courtpiece/storage/testing.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/gateway/testing/http_client.h"
#include "services/gateway/testing/scripted_player.h"
#include "services/gateway/testing/ws_play_client.h"
#include "services/table/testing/fake_receivers.h"
#include "services/table/testing/play_client.h"

namespace courtpiece::gateway {
namespace {

namespace cv1 = ::courtpiece::client::v1;
namespace pb = ::courtpiece::table::v1;
namespace wv1 = ::courtpiece::wallet::v1;
using table_service::testing::CoinDeltasBySeat;
using table_service::testing::FakeReceivers;
using testing::GrpcDialer;
using testing::HttpClient;
using testing::ScriptedPlayer;
using testing::ScriptedPlayerOptions;
using testing::WebSocketDialer;
using testing::WsOptions;

constexpr int64_t kGrant = 5'000;
constexpr int64_t kBet = 25;
constexpr absl::Duration kRpc = absl::Seconds(5);
constexpr absl::Duration kGame = absl::Seconds(240);

int RedisDb() {
  const char* env = std::getenv("COURTPIECE_TEST_GATEWAY_REDIS_DB");
  return env == nullptr ? 6 : std::atoi(env);
}

bool WaitHealthy(const std::string& address) {
  return common::WaitServing(address, absl::Seconds(15));
}

// One person at a table, through the gateway: a mobile client (gRPC) or a web client
// (HTTP JSON for sign-in, a WebSocket for play). Either way a scripted player that does not
// resume by itself: the gateway must.
struct Player {
  std::string name;
  bool web = false;
  cv1::Session session;
  std::unique_ptr<ScriptedPlayer> play;

  // The events as the table service's messages (the client API mirrors them on the wire).
  std::vector<pb::TableEvent> Events() const {
    std::vector<pb::TableEvent> out;
    for (const cv1::TableEvent& e : play->events()) {
      pb::TableEvent copy;
      copy.ParseFromString(e.SerializeAsString());
      out.push_back(std::move(copy));
    }
    return out;
  }
  std::vector<std::string> Notices() const {
    std::vector<std::string> out;
    for (const cv1::Notice& n : play->notices()) out.push_back(n.type());
    return out;
  }
};

struct Game {
  std::string name, options;
  cv1::TableRef ref;
  std::vector<std::unique_ptr<Player>> players;  // players[0] is the host
  bool closed_before_kill = false;  // its game ended and its table closed before the kill
};

class GatewayE2eTest : public ::testing::Test {
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
    for (int i = 0; i < 2; ++i) ASSERT_NO_FATAL_FAILURE(StartTable(i));
    ASSERT_NO_FATAL_FAILURE(StartLobby());
    ASSERT_NO_FATAL_FAILURE(StartGateway());
    client_ = cv1::CourtPiece::NewStub(
        grpc::CreateChannel(gateway_addr_, grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    games_.clear();  // auto players stopped, streams cancelled
    std::vector<pid_t> pids = table_pids_;
    for (pid_t pid : {gateway_pid_, lobby_pid_, wallet_pid_}) pids.push_back(pid);
    for (pid_t pid : pids) {
      if (pid <= 0) continue;
      kill(pid, SIGTERM);
      EXPECT_EQ(common::WaitExit(pid), 0);
    }
    if (!web_root_.empty()) std::filesystem::remove_all(web_root_);
  }

  void StartTable(int i) {
    const std::string addr = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    const pid_t pid = common::Spawn(
        {common::BinDir() + "/courtpiece-table"},
        {"COURTPIECE_REDIS_ADDR=" + redis_addr_,
         absl::StrCat("COURTPIECE_TABLE_REDIS_DB=", RedisDb()), "COURTPIECE_TABLE_ADDR=" + addr,
         absl::StrCat("COURTPIECE_TABLE_INSTANCE_ID=gateway-e2e-", getpid(), "-", i),
         "COURTPIECE_TABLE_METRICS_ADDR=off", "COURTPIECE_TABLE_WALLET_ADDR=" + wallet_addr_,
         "COURTPIECE_TABLE_LOBBY_ADDR=" + lobby_addr_,
         "COURTPIECE_TABLE_MODERATION_ADDR=" + moderation_->address(), "COURTPIECE_TABLE_WORKERS=2",
         "COURTPIECE_TABLE_HEARTBEAT_TTL=1s", "COURTPIECE_TABLE_RPC_TIMEOUT=1s",
         "COURTPIECE_TABLE_COMMANDS_PER_SECOND=200", "COURTPIECE_TABLE_COMMANDS_BURST=200",
         "COURTPIECE_LOG_LEVEL=warn"});
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
         "COURTPIECE_LOBBY_INVITE_BASE_URL=http://" + http_addr_,
         "COURTPIECE_LOBBY_SIGNING_KEY=" + key_.SeedText(), "COURTPIECE_LOBBY_PG_POOL_SIZE=4",
         "COURTPIECE_LOBBY_OPEN_TABLES_CACHE=0s", "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_GT(lobby_pid_, 0);
    ASSERT_TRUE(WaitHealthy(lobby_addr_)) << "courtpiece-lobby at " << lobby_addr_;
  }

  virtual std::vector<std::string> GatewayEnv() {
    return {"COURTPIECE_GATEWAY_ADDR=" + gateway_addr_,
            "COURTPIECE_GATEWAY_HTTP_ADDR=" + http_addr_, "COURTPIECE_GATEWAY_METRICS_ADDR=off",
            "COURTPIECE_GATEWAY_LOBBY_ADDR=" + lobby_addr_, "COURTPIECE_REDIS_ADDR=" + redis_addr_,
            absl::StrCat("COURTPIECE_GATEWAY_REDIS_DB=", RedisDb()),
            "COURTPIECE_GATEWAY_VERIFY_KEYS=" + key_.PublicText(),
            "COURTPIECE_GATEWAY_WEB_ROOT=" + WebRoot(),
            "COURTPIECE_GATEWAY_COMMANDS_PER_SECOND=200", "COURTPIECE_GATEWAY_COMMANDS_BURST=200",
            // info: each resume is logged with its duration (for a failure's diagnosis).
            "COURTPIECE_LOG_LEVEL=info"};
  }

  void StartGateway() {
    gateway_addr_ = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    if (http_addr_.empty()) http_addr_ = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    gateway_pid_ = common::Spawn({common::BinDir() + "/courtpiece-gateway"}, GatewayEnv());
    ASSERT_GT(gateway_pid_, 0);
    ASSERT_TRUE(WaitHealthy(gateway_addr_)) << "courtpiece-gateway at " << gateway_addr_;
  }

  // A web root with an index page and one hashed asset.
  std::string WebRoot() {
    const std::string root = absl::StrCat(::testing::TempDir(), "/gateway_e2e_web_", getpid());
    web_root_ = root;  // removed by TearDown
    std::system(absl::StrCat("mkdir -p ", root, "/assets").c_str());
    std::ofstream(root + "/index.html") << "<!doctype html><title>Court Piece</title>";
    std::ofstream(root + "/assets/app-1a2b3c.js") << "console.log('court piece');";
    return root;
  }

  std::unique_ptr<grpc::ClientContext> As(const Player& p) {
    auto context = std::make_unique<grpc::ClientContext>();
    common::SetTimeout(*context, kRpc);
    context->AddMetadata("authorization", "Bearer " + p.session.access_token());
    return context;
  }

  void Login(Player& p) {
    cv1::GuestLoginRequest request;
    request.set_device_secret(absl::StrCat("device-", p.name, "-0123456789abcdef0123456789"));
    request.set_display_name(p.name);
    if (p.web) {
      absl::StatusOr<cv1::Session> session = Http().Call<cv1::Session>("GuestLogin", request);
      ASSERT_TRUE(session.ok()) << session.status();
      p.session = *session;
      return;
    }
    grpc::ClientContext context;
    common::SetTimeout(context, kRpc);
    grpc::Status s = client_->GuestLogin(&context, request, &p.session);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  int64_t CoinsOf(const Player& p) {
    cv1::Profile profile;
    grpc::Status s = client_->GetProfile(As(p).get(), cv1::GetProfileRequest(), &profile);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return profile.coins();
  }

  HttpClient& Http() {
    if (http_ == nullptr) http_ = std::make_unique<HttpClient>("127.0.0.1", HttpPort());
    return *http_;
  }
  WsOptions Ws(const std::string& authorization = "") const {
    WsOptions options;
    options.port = HttpPort();
    options.authorization = authorization;
    return options;
  }
  uint16_t HttpPort() const {
    return static_cast<uint16_t>(std::stoi(http_addr_.substr(http_addr_.rfind(':') + 1)));
  }

  // A fresh connection for `p` per dial: a WebSocket (the token in its first message, as a
  // browser sends it) or a gRPC stream (the token in the metadata).
  ScriptedPlayer::Dialer DialerFor(const Player& p) {
    if (p.web) return WebSocketDialer(Ws());
    return GrpcDialer(grpc::CreateChannel(gateway_addr_, grpc::InsecureChannelCredentials()),
                      "Bearer " + p.session.access_token());
  }

  // Opens `p`'s play stream through the gateway and seats them (the host is seated already).
  void Sit(Player& p, const std::string& table_id) {
    ScriptedPlayerOptions options;
    options.player_id = p.session.player_id();
    options.commands_per_second = 15;
    options.auto_reconnect = false;
    // Free the seat at the game's end, so no second game (it starts by itself 7 s later,
    // RULES.md §4.3) stakes coins the first game's results do not show.
    options.leave_at_game_over = true;
    if (p.web) options.open_access_token = p.session.access_token();
    p.play = std::make_unique<ScriptedPlayer>(p.name, DialerFor(p), options);
    absl::StatusOr<cv1::Opened> opened = p.play->Open(table_id);
    ASSERT_TRUE(opened.ok()) << opened.status();
    if (opened->seat() < 0) {
      absl::Status joined = p.play->Join();
      ASSERT_TRUE(joined.ok()) << p.name << ": " << joined;
    }
    ASSERT_GE(p.play->seat(), 0) << p.name;
  }

  // Four players sign in; the first creates the table through the gateway, the others find
  // it by its code and sit; the host starts.
  Game& SeatGame(const std::string& name, const std::string& options) {
    auto game = std::make_unique<Game>();
    game->name = name;
    game->options = options;
    for (int i = 0; i < 4; ++i) {
      auto p = std::make_unique<Player>();
      p->name = absl::StrCat(name, "P", i);
      p->web = i % 2 == 1;
      EXPECT_NO_FATAL_FAILURE(Login(*p));
      game->players.push_back(std::move(p));
    }
    cv1::CreateTableRequest create;
    create.set_request_id("table-" + name);
    create.mutable_options()->set_game_options(options);
    create.mutable_options()->set_bet_coins(kBet);
    // The longest turn (30 s): on a loaded CI machine a client must never time out.
    create.mutable_options()->set_turn_time_ms(30'000);
    grpc::Status s = client_->CreateTable(As(*game->players[0]).get(), create, &game->ref);
    EXPECT_TRUE(s.ok()) << s.error_message();
    for (auto& p : game->players) {
      cv1::ResolveCodeRequest resolve;
      resolve.set_code(game->ref.code());
      cv1::TableRef found;
      EXPECT_TRUE(client_->ResolveCode(As(*p).get(), resolve, &found).ok());
      EXPECT_EQ(found.table_id(), game->ref.table_id());
      EXPECT_NO_FATAL_FAILURE(Sit(*p, found.table_id()));
    }
    cv1::TableCommand start_now;
    start_now.set_type("start_now");
    absl::StatusOr<cv1::CommandResult> start = game->players[0]->play->Send(start_now);
    EXPECT_TRUE(start.ok()) << start.status();
    if (start.ok()) {
      EXPECT_EQ(start->code(), 0) << start->message();
    }
    for (auto& p : game->players) p->play->Start();
    games_.push_back(std::move(game));
    return *games_.back();
  }

  // Every player's stream: seqs strictly increasing (never a doubled event), every trick
  // preceded by its four cards, and the same tricks seen by all four (nothing lost).
  void ExpectCompleteStreams(const Game& g) {
    std::vector<std::vector<std::string>> tricks;
    for (const auto& p : g.players) {
      uint64_t last = 0;
      int played = 0;
      std::vector<std::string> mine;
      for (const pb::TableEvent& e : p->Events()) {
        EXPECT_GT(e.seq(), last) << g.name << " " << p->name << ": seq " << e.seq() << " after "
                                 << last;
        last = e.seq();
        if (e.type() == "round_started") played = 0;
        if (e.type() == "played") ++played;
        if (e.type() == "trick") {
          EXPECT_EQ(played, 4) << g.name << " " << p->name << " trick at seq " << e.seq();
          played = 0;
          // Seqs differ per seat (each seat's copy of an event has its own): compare content.
          mine.push_back(absl::StrCat(e.seat(), ":", e.value(), ":", e.detail()));
        }
      }
      EXPECT_FALSE(mine.empty()) << g.name << " " << p->name;
      tricks.push_back(std::move(mine));
    }
    for (size_t i = 1; i < tricks.size(); ++i) {
      EXPECT_EQ(tricks[i], tricks[0])
          << g.name << " " << g.players[i]->name << ": " << TimeoutsAndAbsences(*g.players[i]);
    }
  }

  // What explains coins other than the results imply: seats the table played for (turn
  // timeouts, bot driving) or counted away, as one stream saw them.
  static std::string TimeoutsAndAbsences(const Player& p) {
    std::string out;
    for (const pb::TableEvent& e : p.Events()) {
      if (e.type() == "timeout" || e.type() == "bot_driving" || e.type() == "away" ||
          e.type() == "presence" || e.type() == "back") {
        absl::StrAppend(&out, e.type(), "(seat ", e.seat(), " ", e.detail(), ") ");
      }
    }
    for (const cv1::Opened& o : p.play->opens())
      absl::StrAppend(&out, "opened(resumed ", o.resumed(), ") ");
    return out.empty() ? "no timeouts or absences seen" : out;
  }

  static std::string RoundResults(const Player& p) {
    std::string out;
    for (const pb::TableEvent& e : p.Events()) {
      if (e.type() == "round_result" || e.type() == "round_started" || e.type() == "game_over") {
        absl::StrAppend(&out, e.type(), "(seq ", e.seq(), " seat ", e.seat(), " ", e.detail(),
                        ") ");
      }
    }
    return out;
  }

  // A player's wallet entries, oldest first (what explains a balance the results do not).
  std::string WalletHistory(const std::string& player_id) {
    auto wallet =
        wv1::Wallet::NewStub(grpc::CreateChannel(wallet_addr_, grpc::InsecureChannelCredentials()));
    wv1::HistoryRequest request;
    request.set_account_id("player:" + player_id);
    request.set_page_size(100);
    wv1::HistoryResponse page;
    grpc::ClientContext context;
    common::SetTimeout(context, kRpc);
    const grpc::Status s = wallet->History(&context, request, &page);
    if (!s.ok()) return "history: " + s.error_message();
    std::string out;
    for (int i = page.entries_size() - 1; i >= 0; --i) {
      const wv1::Entry& e = page.entries(i);
      absl::StrAppend(&out, e.reason(), "(", e.table_id(), " r", e.round(), " ", e.amount(),
                      " key ", e.idempotency_key(), ") ");
    }
    return out;
  }

  // Each player's coins as the round results on the host's stream imply (so also: every pot
  // paid out exactly once across the failover).
  void ExpectCoins(const Game& g) {
    int rounds = 0;
    const std::vector<int64_t> delta = CoinDeltasBySeat(g.players[0]->Events(), kBet, &rounds);
    EXPECT_GE(rounds, 1) << g.name;
    for (const auto& p : g.players) {
      const int seat = p->play->seat();
      ASSERT_GE(seat, 0);
      // The last round's payout is not awaited by the table: it may land a moment after
      // game_over (or after a failover re-sends it).
      const int64_t want = kGrant + delta[seat];
      int64_t coins = CoinsOf(*p);
      for (absl::Time until = absl::Now() + absl::Seconds(20); coins != want && absl::Now() < until;
           coins = CoinsOf(*p)) {
        absl::SleepFor(absl::Milliseconds(200));
      }
      EXPECT_EQ(coins, want) << g.name << " " << p->name << " at seat " << seat << ": "
                             << TimeoutsAndAbsences(*g.players[0])
                             << "\nresults: " << RoundResults(*g.players[0])
                             << "\nwallet: " << WalletHistory(p->session.player_id());
    }
  }

  std::string redis_addr_, wallet_addr_, lobby_addr_, gateway_addr_, http_addr_;
  std::unique_ptr<storage::TestDatabase> db_;
  std::unique_ptr<FakeReceivers> moderation_;
  pid_t wallet_pid_ = -1, lobby_pid_ = -1, gateway_pid_ = -1;
  std::string web_root_;  // WebRoot(): a scratch directory, removed by TearDown
  std::vector<pid_t> table_pids_;
  std::vector<std::string> table_addrs_;
  const auth::SigningKey key_ = auth::SigningKey::Generate("e2e");
  std::unique_ptr<cv1::CourtPiece::Stub> client_;
  std::unique_ptr<HttpClient> http_;
  std::vector<std::unique_ptr<Game>> games_;
};

// The player's game ended and it left; the table, everyone gone, was closing when its
// instance died: the new owner finished the closed table's last effects and removed it, so
// the gateway's resume found no table (NOT_FOUND), which is right for a closed table. (A game
// that ends just as the kill comes: seen once on a loaded machine, with stack's short game.)
bool ClosedUnderTheKill(const Player& p) {
  return p.play->left() && p.play->games_over() >= 1 && p.play->ended() &&
         absl::IsNotFound(p.play->end()->status);
}

const std::vector<std::pair<std::string, std::string>>& EveryGameType() {
  static const auto* games = new std::vector<std::pair<std::string, std::string>>{
      {"classic", R"({"game":"classic","target":1})"}, {"piles", R"({"game":"piles","target":10})"},
      {"hidden", R"({"game":"hidden","target":10})"},  {"kaat", R"({"game":"kaat","target":10})"},
      {"stack", R"({"game":"stack","target":5})"},
  };
  return *games;
}

// Games of every type through the gateway; mid-game the table instance owning most of them
// is killed (-9). The gateway moves every stream to the survivor by itself: the clients
// never reconnect, see "reconnecting"/"reconnected", no event twice and none lost, and the
// games end with exact coins.
TEST_F(GatewayE2eTest, EveryGameTypeSurvivesAKillNineOfItsTableInstance) {
  for (const auto& [name, options] : EveryGameType()) SeatGame(name, options);
  ASSERT_FALSE(HasFailure());

  // Wait until every game is playing (a few cards down), then kill the busier instance.
  for (auto& g : games_) {
    Player& host = *g->players[0];
    ASSERT_TRUE(
        host.play->WaitUntil([&] { return !host.play->EventSeqs("played").empty(); }, kGame))
        << g->name;
  }
  // Which instance owns each table: GetTable on either names the owner. Asked again for up
  // to kGame: on a loaded machine (tests/run.sh runs many tests at once) one call once took
  // over kRpc; the owner is what matters here, not how fast it answers.
  std::map<std::string, int> owned;
  for (auto& g : games_) {
    auto stub = pb::TableService::NewStub(
        grpc::CreateChannel(table_addrs_[0], grpc::InsecureChannelCredentials()));
    pb::GetTableRequest request;
    request.set_table_id(g->ref.table_id());
    pb::TableInfo info;
    grpc::Status status;
    const absl::Time give_up = absl::Now() + kGame;
    do {
      grpc::ClientContext context;
      common::SetTimeout(context, kRpc);
      status = stub->GetTable(&context, request, &info);
    } while (!status.ok() && status.error_code() != grpc::StatusCode::NOT_FOUND &&
             absl::Now() < give_up);
    // NOT_FOUND: its game already ended and the table closed (a short classic game on a
    // loaded machine, while the other games were still dealing): nothing to move there.
    if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
      g->closed_before_kill = true;
      continue;
    }
    ASSERT_TRUE(status.ok()) << status.error_message();
    ++owned[info.owner_addr()];
  }
  const int victim = owned[table_addrs_[0]] >= owned[table_addrs_[1]] ? 0 : 1;
  const int moved = owned[table_addrs_[victim]];
  ASSERT_GE(moved, 1);
  kill(table_pids_[victim], SIGKILL);
  EXPECT_EQ(common::WaitExit(table_pids_[victim]), 128 + SIGKILL);
  table_pids_[victim] = -1;

  for (auto& g : games_) {
    for (auto& p : g->players) {
      EXPECT_TRUE(p->play->WaitGameOver(kGame)) << g->name << " " << p->name;
      EXPECT_THAT(p->play->faults(), ::testing::IsEmpty()) << g->name;
      // A stream ends only as the table closes (OK), everyone having left at the game's end;
      // any other end is the gateway giving up.
      // A closed table's streams may still have been open on the killed instance: the
      // gateway then finds no table to resume (NOT_FOUND), which is right for a game over.
      if (p->play->ended() && !g->closed_before_kill && !ClosedUnderTheKill(*p)) {
        EXPECT_TRUE(p->play->end()->status.ok())
            << "the gateway gave up on " << p->name << ": " << p->play->end()->status;
        EXPECT_GE(p->play->games_over(), 1) << p->name;
      }
      EXPECT_TRUE(p->play->CheckSeqs().ok()) << p->play->CheckSeqs();
      EXPECT_EQ(p->play->reconnects(), 0) << "the client had to reconnect itself";
    }
  }
  int resumed_streams = 0;
  for (auto& g : games_) {
    ExpectCompleteStreams(*g);
    ExpectCoins(*g);
    for (auto& p : g->players) {
      if (g->closed_before_kill) break;  // not moved: nothing to resume
      if (ClosedUnderTheKill(*p)) {
        ++resumed_streams;  // moved, and found its table closed, as it should
        continue;
      }
      const std::vector<std::string> notices = p->Notices();
      if (std::find(notices.begin(), notices.end(), "reconnecting") != notices.end()) {
        EXPECT_THAT(notices, ::testing::Contains("reconnected")) << g->name << " " << p->name;
        ++resumed_streams;
      }
    }
  }
  EXPECT_EQ(resumed_streams, 4 * moved);
}

// What a client without a valid token gets, and what an admin gets.
TEST_F(GatewayE2eTest, TokensAreCheckedAtTheGatewayWithExactCodes) {
  Player ann;
  ann.name = "Ann";
  ASSERT_NO_FATAL_FAILURE(Login(ann));
  EXPECT_EQ(CoinsOf(ann), kGrant);

  auto call_profile = [&](const std::string& authorization) {
    grpc::ClientContext context;
    common::SetTimeout(context, kRpc);
    if (!authorization.empty()) context.AddMetadata("authorization", authorization);
    cv1::Profile out;
    return client_->GetProfile(&context, cv1::GetProfileRequest(), &out);
  };
  EXPECT_EQ(call_profile("").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call_profile("Basic abc").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  // Signed by a key the gateway does not know.
  const auth::SigningKey stranger = auth::SigningKey::Generate("e2e");
  const auth::TokenSigner forger(stranger, RealClock::Instance());
  const std::string forged =
      forger.Sign(ann.session.player_id(), auth::Role::kAdmin, absl::Minutes(5));
  grpc::Status s = call_profile("Bearer " + forged);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), ::testing::HasSubstr("bad signature"));
  // Expired: issued an hour ago for a minute.
  FakeClock past(absl::Now() - absl::Hours(1));
  const auth::TokenSigner old(key_, past);  // also used below
  s = call_profile("Bearer " +
                   old.Sign(ann.session.player_id(), auth::Role::kPlayer, absl::Minutes(1)));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), ::testing::HasSubstr("expired token"));

  // The same over HTTP: 401 with the JSON error body; a player's token on the admin API: 403;
  // an admin's token: the player's dossier.
  absl::StatusOr<testing::HttpResponse> r = Http().Post("/v1/GetProfile", "{}");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 401);
  EXPECT_THAT(r->body, ::testing::HasSubstr("\"code\":16"));
  r = Http().Post("/v1/GetProfile", "{}",
                  {{"authorization", "Bearer " + ann.session.access_token()}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_THAT(r->body, ::testing::HasSubstr(absl::StrCat("\"coins\":\"", kGrant, "\"")));
  const std::string dossier_request =
      absl::StrCat(R"({"playerId":")", ann.session.player_id(), R"("})");
  r = Http().Post("/admin/v1/GetPlayer", dossier_request);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 401) << r->body;
  r = Http().Post("/admin/v1/GetPlayer", dossier_request,
                  {{"authorization", "Bearer " + ann.session.access_token()}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 403) << r->body;
  const auth::TokenSigner admin_signer(key_, RealClock::Instance());
  const std::string admin_token =
      admin_signer.Sign("ops-admin-1", auth::Role::kAdmin, absl::Minutes(5));
  r = Http().Post("/admin/v1/GetPlayer", dossier_request,
                  {{"authorization", "Bearer " + admin_token}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_THAT(r->body, ::testing::HasSubstr(ann.session.player_id()));

  // Play without a token ends UNAUTHENTICATED before anything reaches a table: over gRPC,
  // and over a WebSocket (close 4016) with no token or an expired one; with a token, an
  // unknown table ends NOT_FOUND (4005).
  auto channel = grpc::CreateChannel(gateway_addr_, grpc::InsecureChannelCredentials());
  ScriptedPlayer anonymous("anonymous", GrpcDialer(channel, ""));
  EXPECT_EQ(anonymous.Open("no-such-table").status().code(), absl::StatusCode::kUnauthenticated);
  ScriptedPlayer lost("lost", GrpcDialer(channel, "Bearer " + ann.session.access_token()));
  EXPECT_EQ(lost.Open("no-such-table").status().code(), absl::StatusCode::kNotFound);
  struct WebCase {
    std::string token;
    int close_code;
  };
  const std::string expired =
      old.Sign(ann.session.player_id(), auth::Role::kPlayer, absl::Minutes(1));
  for (const WebCase& c :
       {WebCase{"", 4016}, WebCase{expired, 4016}, WebCase{ann.session.access_token(), 4005}}) {
    ScriptedPlayerOptions options;
    options.auto_reconnect = false;
    options.open_access_token = c.token;
    ScriptedPlayer web("web", WebSocketDialer(Ws()), options);
    EXPECT_FALSE(web.Open("no-such-table").ok());
    ASSERT_TRUE(web.end().has_value());
    EXPECT_EQ(web.end()->ws_close_code, c.close_code) << web.end()->ws_reason;
  }
}

// Limits and bad input through the real gateway, each with its exact code; the gateway
// serves others all along.
class GatewayLimitsE2eTest : public GatewayE2eTest {
 protected:
  std::vector<std::string> GatewayEnv() override {
    std::vector<std::string> env = GatewayE2eTest::GatewayEnv();
    env.push_back("COURTPIECE_GATEWAY_CONNECTIONS_PER_IP_MAX=8");
    return env;
  }
};

TEST_F(GatewayLimitsE2eTest, EveryLimitAnswersWithItsExactCode) {
  Player ann;
  ann.name = "Ann";
  ann.web = true;
  ASSERT_NO_FATAL_FAILURE(Login(ann));  // one keep-alive HTTP connection from now on
  const std::string bearer = "Bearer " + ann.session.access_token();
  cv1::CreateTableRequest create;
  create.set_request_id("limits");
  create.mutable_options()->set_game_options(R"({"game":"classic","target":1})");
  create.mutable_options()->set_bet_coins(kBet);
  create.mutable_options()->set_turn_time_ms(15'000);
  absl::StatusOr<cv1::TableRef> table = Http().Call<cv1::TableRef>("CreateTable", create, bearer);
  ASSERT_TRUE(table.ok()) << table.status();

  // Bad HTTP: unknown method 404, wrong verb 405, malformed JSON 400, an unknown field 400.
  absl::StatusOr<testing::HttpResponse> r = Http().Post("/v1/NoSuchMethod", "{}");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 404);
  r = Http().Get("/v1/GuestLogin");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 405);
  r = Http().Post("/v1/ResolveCode", "{\"code\":", {{"authorization", bearer}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  r = Http().Post("/v1/ResolveCode", R"({"code":"123456","ownerAddr":"x"})",
                  {{"authorization", bearer}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  // The web client and its invite links.
  r = Http().Get(absl::StrCat("/t/", table->code()));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->body, ::testing::HasSubstr("<title>Court Piece</title>"));
  r = Http().Get("/assets/app-1a2b3c.js");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->Header("cache-control"), ::testing::HasSubstr("immutable"));
  EXPECT_THAT(r->Header("content-type"), ::testing::HasSubstr("javascript"));

  // WebSocket: a first frame that is not JSON -> 4003; a frame over 16 KiB -> 1009.
  const WsOptions ws = Ws(bearer);
  {
    absl::StatusOr<std::unique_ptr<testing::WsPlayClient>> c = testing::WsPlayClient::Connect(ws);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->SendText("{not json").ok());
    std::optional<testing::StreamEnd> end = (*c)->WaitEnd(kRpc);
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(end->ws_close_code, 4003) << end->ws_reason;
  }
  {
    absl::StatusOr<std::unique_ptr<testing::WsPlayClient>> c = testing::WsPlayClient::Connect(ws);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->SendText(std::string(17 * 1024, ' ')).ok());
    std::optional<testing::StreamEnd> end = (*c)->WaitEnd(kRpc);
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(end->ws_close_code, 1009) << end->ws_reason;
  }
  // A flood of commands (200/s, burst 200 here): refusals with code 8, and after 100 of them
  // the stream is closed 4008; the table never saw the refused ones. The client reads what
  // has arrived after every 20 commands, as a live client does: 600 frames sent unread made
  // the gateway's answers (the refusals and the table's results, 300 and more) outgrow its
  // send queue of 256 when its writer was starved of CPU, and the stream ended "slow reader"
  // instead (seen once on a loaded machine).
  {
    absl::StatusOr<std::unique_ptr<testing::WsPlayClient>> c = testing::WsPlayClient::Connect(ws);
    ASSERT_TRUE(c.ok()) << c.status();
    cv1::PlayRequest open;
    open.mutable_open()->set_table_id(table->table_id());
    ASSERT_TRUE((*c)->Send(open).ok());
    absl::StatusOr<cv1::PlayResponse> opened = (*c)->Read(kRpc);
    ASSERT_TRUE(opened.ok()) << opened.status();
    ASSERT_TRUE(opened->has_opened());
    int refused = 0;
    // Reads until nothing arrives for `quiet` or the stream ends.
    const auto read_arrived = [&](absl::Duration quiet) {
      for (;;) {
        absl::StatusOr<cv1::PlayResponse> m = (*c)->Read(quiet);
        if (!m.ok()) return;
        if (m->has_result() && m->result().code() == 8 &&
            absl::StartsWith(m->result().message(), "too many commands: at most")) {
          ++refused;
        }
      }
    };
    for (int i = 1; i <= 600 && !(*c)->end().has_value(); ++i) {
      cv1::PlayRequest vote;
      vote.mutable_command()->set_command_id(i);
      vote.mutable_command()->set_type("vote");
      if (!(*c)->Send(vote).ok()) break;
      if (i % 20 == 0) read_arrived(absl::Milliseconds(2));
    }
    read_arrived(kRpc);  // the rest, up to the close
    const std::optional<testing::StreamEnd> end = (*c)->end();
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(end->ws_close_code, 4008) << end->ws_reason;
    EXPECT_EQ(end->ws_reason, "too many commands: 100 refused");
    EXPECT_EQ(refused, 100);
  }
  // Connections per address (8 here; the HTTP client holds one): the 8th WebSocket is
  // refused, and one closing makes room again.
  // The streams above were closed by the server; it frees their slots as it notices (under
  // load, once later than the next connect), so each of the 7 is tried for up to 10 s.
  std::vector<std::unique_ptr<testing::WsPlayClient>> held;
  for (int i = 0; i < 7; ++i) {
    absl::StatusOr<std::unique_ptr<testing::WsPlayClient>> c = testing::WsPlayClient::Connect(ws);
    for (int retry = 0; retry < 100 && !c.ok(); ++retry) {
      absl::SleepFor(absl::Milliseconds(100));
      c = testing::WsPlayClient::Connect(ws);
    }
    ASSERT_TRUE(c.ok()) << i << ": " << c.status();
    held.push_back(*std::move(c));
  }
  EXPECT_FALSE(testing::WsPlayClient::Connect(ws).ok());
  ASSERT_TRUE(held.back()->Close().ok());
  held.pop_back();
  // The gateway notices the close (200 ms on a quiet machine; tried for up to 10 s).
  bool reconnected = false;
  for (int retry = 0; retry < 50 && !reconnected; ++retry) {
    absl::SleepFor(absl::Milliseconds(200));
    reconnected = testing::WsPlayClient::Connect(ws).ok();
  }
  EXPECT_TRUE(reconnected);
}

}  // namespace
}  // namespace courtpiece::gateway
