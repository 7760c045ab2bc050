// End-to-end tests of the table service: real courtpiece-table processes (one to three),
// the real courtpiece-wallet on a fresh Postgres database (COURTPIECE_TEST_PG_URL), a real
// Redis (COURTPIECE_TEST_REDIS_ADDR, database 7 or COURTPIECE_TEST_TABLE_REDIS_DB, flushed
// per test), and the fake lobby and moderation receivers in-process. Players are
// PlayClients driven by AutoPlayers over Play. Each test ends with exact coins and a clean
// courtpiece-wallet-audit.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/common/test_scale.h"
#include "courtpiece/storage/redis_client.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/table/testing/fake_receivers.h"
#include "services/table/testing/play_client.h"
#include "services/wallet/wallet_test_util.h"

extern char** environ;

namespace courtpiece::table_service {
namespace {

namespace pb = ::courtpiece::table::v1;
namespace wv1 = ::courtpiece::wallet::v1;
using testing::AutoPlayer;
using testing::AutoPlayerOptions;
using testing::CoinDeltasBySeat;
using testing::FakeReceivers;
using testing::MakeCommand;
using testing::MakeMove;
using testing::PlayClient;
using testing::StreamEnd;

constexpr int64_t kGrant = 5'000;  // the wallet's starting grant
constexpr int64_t kBet = 25;
// This file's own Redis database, flushed before each test: 7, or
// COURTPIECE_TEST_TABLE_REDIS_DB (so that two runs against one Redis do not collide).
int RedisDb() {
  const char* env = std::getenv("COURTPIECE_TEST_TABLE_REDIS_DB");
  return env == nullptr ? 7 : std::atoi(env);
}
constexpr absl::Duration kRpc = absl::Seconds(5);
// A whole game, target 10 included: a bound, not a figure. Under tests/run.sh's lanes (ctest
// at 16 jobs beside the browser tests on 2 cores) a piles game to 10 once took over 150 s.
constexpr absl::Duration kGame = absl::Seconds(300);
// The heartbeat TTL of tests with two or more instances, where which instance owns a table
// matters. With 1 s a loaded machine once starved an owner's refresh for longer and another
// instance took its table over before the test's kill (its streams ended early).
constexpr char kTwoOrMoreHeartbeat[] = "3s";

bool WaitHealthy(const std::string& address) {
  return common::WaitServing(address, absl::Seconds(15));
}

template <typename T>
void SetDeadline(grpc::ClientContext& c, T d) {
  c.set_deadline(absl::ToChronoTime(absl::Now() + d));
}

// A courtpiece-table process.
struct Instance {
  std::string id, addr;
  pid_t pid = -1;
  bool stopped = false;  // SIGSTOPped
};

// One seat's player: its stream(s) and its auto player. Every stream it had, in order.
struct Player {
  std::string name;
  int seat = -1;
  std::vector<std::unique_ptr<PlayClient>> streams;
  std::unique_ptr<AutoPlayer> auto_player;
  PlayClient& stream() { return *streams.back(); }
  // Every event of every stream, in order.
  std::vector<pb::TableEvent> Events() const {
    std::vector<pb::TableEvent> out;
    for (const auto& s : streams) {
      for (const pb::PlayResponse& m : s->messages()) {
        if (m.has_event()) out.push_back(m.event());
      }
    }
    return out;
  }
};

// A table with its four players (seat order of `players` = join order, not seats).
struct TestTable {
  std::string id, game_options;
  std::vector<std::unique_ptr<Player>> players;
  Player* host() { return players[0].get(); }
};

class TableE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* redis = std::getenv("COURTPIECE_TEST_REDIS_ADDR");
    ASSERT_NE(redis, nullptr) << "COURTPIECE_TEST_REDIS_ADDR is not set";
    redis_addr_ = redis;
    FlushRedis();
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db =
        wallet::testing::CreateWalletDatabase();
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    StartWallet();
    absl::StatusOr<std::unique_ptr<FakeReceivers>> receivers = FakeReceivers::Start();
    ASSERT_TRUE(receivers.ok()) << receivers.status();
    receivers_ = *std::move(receivers);
  }

  void TearDown() override {
    tables_.clear();  // streams cancelled, auto players joined
    for (Instance& i : instances_) {
      if (i.pid <= 0) continue;
      kill(i.pid, SIGCONT);
      kill(i.pid, SIGKILL);
      ::courtpiece::common::WaitExit(i.pid);
    }
    if (wallet_pid_ > 0) {
      kill(wallet_pid_, SIGCONT);
      kill(wallet_pid_, SIGTERM);
      ::courtpiece::common::WaitExit(wallet_pid_);
    }
  }

  void FlushRedis() {
    absl::StatusOr<storage::RedisOptions> options = storage::ParseRedisAddr(redis_addr_);
    ASSERT_TRUE(options.ok()) << options.status();
    options->db = RedisDb();
    storage::RedisClient client(*options);
    absl::StatusOr<storage::RedisReply> r = client.Command({"FLUSHDB"});
    ASSERT_TRUE(r.ok()) << r.status();
  }

  void StartWallet() {
    wallet_addr_ = absl::StrCat("127.0.0.1:", ::courtpiece::common::FreeLoopbackPort());
    wallet_pid_ = ::courtpiece::common::Spawn(
        {::courtpiece::common::BinDir() + "/courtpiece-wallet"},
        {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_WALLET_ADDR=" + wallet_addr_,
         "COURTPIECE_WALLET_METRICS_ADDR=off",
         absl::StrCat("COURTPIECE_WALLET_STARTING_GRANT=", kGrant),
         "COURTPIECE_WALLET_HOUSE_SHARDS=4", "COURTPIECE_WALLET_PG_POOL_SIZE=8",
         "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_GT(wallet_pid_, 0);
    ASSERT_TRUE(WaitHealthy(wallet_addr_)) << "courtpiece-wallet at " << wallet_addr_;
    wallet_ =
        wv1::Wallet::NewStub(grpc::CreateChannel(wallet_addr_, grpc::InsecureChannelCredentials()));
  }

  // Starts courtpiece-table number n (instance id "table-<test pid>-<n>") and waits until it
  // serves.
  Instance& StartTable(const std::string& heartbeat_ttl = "1s") {
    Instance i;
    i.id = absl::StrCat("table-", getpid(), "-", instances_.size());
    i.addr = absl::StrCat("127.0.0.1:", ::courtpiece::common::FreeLoopbackPort());
    i.pid = ::courtpiece::common::Spawn(
        {::courtpiece::common::BinDir() + "/courtpiece-table"},
        {"COURTPIECE_REDIS_ADDR=" + redis_addr_,
         absl::StrCat("COURTPIECE_TABLE_REDIS_DB=", RedisDb()), "COURTPIECE_TABLE_ADDR=" + i.addr,
         "COURTPIECE_TABLE_INSTANCE_ID=" + i.id, "COURTPIECE_TABLE_METRICS_ADDR=off",
         "COURTPIECE_TABLE_WALLET_ADDR=" + wallet_addr_,
         "COURTPIECE_TABLE_LOBBY_ADDR=" + receivers_->address(),
         "COURTPIECE_TABLE_MODERATION_ADDR=" + receivers_->address(), "COURTPIECE_TABLE_WORKERS=2",
         "COURTPIECE_TABLE_HEARTBEAT_TTL=" + heartbeat_ttl, "COURTPIECE_TABLE_RPC_TIMEOUT=1s",
         "COURTPIECE_TABLE_COMMANDS_PER_SECOND=200", "COURTPIECE_TABLE_COMMANDS_BURST=200",
         "COURTPIECE_TABLE_ADOPT_GRACE=20s", "COURTPIECE_LOG_LEVEL=warn"});
    EXPECT_GT(i.pid, 0);
    EXPECT_TRUE(WaitHealthy(i.addr)) << "courtpiece-table at " << i.addr;
    instances_.push_back(i);
    return instances_.back();
  }

  std::unique_ptr<pb::TableService::Stub> TableStub(const std::string& addr) {
    return pb::TableService::NewStub(grpc::CreateChannel(addr, grpc::InsecureChannelCredentials()));
  }

  void OpenAccount(const std::string& player) {
    wv1::OpenAccountRequest request;
    request.set_player_id(player);
    wv1::OpenAccountResponse response;
    grpc::ClientContext context;
    SetDeadline(context, kRpc);
    grpc::Status s = wallet_->OpenAccount(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(response.balance(), kGrant);
    ++accounts_;
  }

  int64_t Balance(const std::string& account) {
    wv1::GetBalanceRequest request;
    request.set_account_id(account);
    wv1::GetBalanceResponse response;
    grpc::ClientContext context;
    SetDeadline(context, kRpc);
    grpc::Status s = wallet_->GetBalance(&context, request, &response);
    EXPECT_TRUE(s.ok()) << account << ": " << s.error_message();
    return response.balance();
  }

  std::vector<wv1::Entry> History(const std::string& account) {
    std::vector<wv1::Entry> out;
    std::string cursor;
    do {
      wv1::HistoryRequest request;
      request.set_account_id(account);
      request.set_page_size(100);
      request.set_cursor(cursor);
      wv1::HistoryResponse page;
      grpc::ClientContext context;
      SetDeadline(context, kRpc);
      grpc::Status s = wallet_->History(&context, request, &page);
      EXPECT_TRUE(s.ok()) << account << ": " << s.error_message();
      if (!s.ok()) break;
      out.insert(out.end(), page.entries().begin(), page.entries().end());
      cursor = page.next_cursor();
    } while (!cursor.empty());
    return out;
  }

  int RunAudit() {
    return ::courtpiece::common::WaitExit(::courtpiece::common::Spawn(
        {::courtpiece::common::BinDir() + "/courtpiece-wallet-audit", "--pg-url", db_->url()}, {}));
  }

  absl::StatusOr<pb::TableInfo> GetTable(const std::string& addr, const std::string& table_id) {
    pb::GetTableRequest request;
    request.set_table_id(table_id);
    pb::TableInfo info;
    grpc::ClientContext context;
    SetDeadline(context, absl::Seconds(2));
    grpc::Status s = TableStub(addr)->GetTable(&context, request, &info);
    if (!s.ok())
      return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
    return info;
  }

  std::vector<std::string> ListTables(const std::string& addr) {
    pb::ListTablesResponse response;
    grpc::ClientContext context;
    SetDeadline(context, absl::Seconds(2));
    grpc::Status s = TableStub(addr)->ListTables(&context, {}, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::vector<std::string> out;
    for (const pb::TableInfo& t : response.tables()) out.push_back(t.table_id());
    return out;
  }

  // Polls GetTable on `ask` until the owner is not `old_owner` (bounded); the new owner.
  std::optional<pb::TableInfo> WaitNewOwner(const std::string& ask, const std::string& table_id,
                                            const std::string& old_owner) {
    for (int i = 0; i < 200; ++i) {
      absl::StatusOr<pb::TableInfo> info = GetTable(ask, table_id);
      if (info.ok() && info->owner_instance() != old_owner && !info->owner_addr().empty()) {
        return *info;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    return std::nullopt;
  }

  // Creates `id` on `addr` with four players (accounts opened), all connected and seated;
  // the host starts the game at once when `start`.
  TestTable& SeatTable(const std::string& addr, const std::string& id, const std::string& options,
                       bool start = true, int64_t turn_time_ms = 30'000,
                       AutoPlayerOptions auto_options = {}) {
    auto t = std::make_unique<TestTable>();
    t->id = id;
    t->game_options = options;
    pb::CreateTableRequest request;
    request.set_table_id(id);
    request.set_host_player(id + "-a");
    request.set_bet_coins(kBet);
    request.set_turn_time_ms(turn_time_ms);
    request.set_game_options(options);
    request.set_code(absl::StrCat(100000 + tables_.size()));
    pb::CreateTableResponse response;
    grpc::ClientContext context;
    SetDeadline(context, kRpc);
    grpc::Status s = TableStub(addr)->CreateTable(&context, request, &response);
    EXPECT_TRUE(s.ok()) << id << ": " << s.error_message();
    EXPECT_TRUE(response.created());
    for (const char* suffix : {"-a", "-b", "-c", "-d"}) {
      auto p = std::make_unique<Player>();
      p->name = id + suffix;
      OpenAccount(p->name);
      p->streams.push_back(std::make_unique<PlayClient>(addr, p->name));
      absl::StatusOr<pb::Opened> opened = p->stream().Open(id, 0, kRpc);
      EXPECT_TRUE(opened.ok()) << p->name << ": " << opened.status();
      if (opened.ok() && opened->seat() < 0) {
        // UNAVAILABLE ("the wallet is unreachable: try again", its balance check timed out
        // on a loaded machine) asks the client to try again: as a client does, a few times.
        absl::StatusOr<pb::CommandResult> r;
        for (int attempt = 0; attempt < 5; ++attempt) {
          if (attempt > 0) absl::SleepFor(absl::Milliseconds(500));
          r = p->stream().Send(MakeCommand("join"), kRpc);
          if (!r.ok() || r->code() != static_cast<int>(grpc::StatusCode::UNAVAILABLE)) break;
        }
        EXPECT_TRUE(r.ok() && r->code() == 0)
            << p->name << " join: " << (r.ok() ? r->message() : r.status().ToString());
      }
      t->players.push_back(std::move(p));
    }
    absl::StatusOr<pb::TableInfo> info = GetTable(addr, id);
    EXPECT_TRUE(info.ok()) << info.status();
    if (info.ok()) {
      for (const pb::SeatInfo& seat : info->seats()) {
        for (auto& p : t->players) {
          if (p->name == seat.player()) p->seat = seat.seat();
        }
      }
    }
    for (auto& p : t->players) EXPECT_GE(p->seat, 0) << p->name;
    for (auto& p : t->players) {
      p->auto_player = std::make_unique<AutoPlayer>(p->stream(), auto_options);
    }
    if (start) {
      absl::StatusOr<pb::CommandResult> r =
          t->host()->stream().Send(MakeCommand("start_now"), kRpc);
      EXPECT_TRUE(r.ok() && r->code() == 0) << (r.ok() ? r->message() : r.status().ToString());
    }
    tables_.push_back(std::move(t));
    return *tables_.back();
  }

  // Waits until the host's stream has `count` events of `type` (bounded).
  bool WaitEvents(TestTable& t, const std::string& type, int count,
                  absl::Duration timeout = absl::Seconds(60)) {
    return t.host()->stream().WaitFor(
        [&](const std::vector<pb::PlayResponse>& m) {
          int n = 0;
          for (const pb::PlayResponse& x : m) n += x.has_event() && x.event().type() == type;
          return n >= count;
        },
        timeout);
  }

  void Kill(Instance& i, int signo) {
    kill(i.pid, signo);
    if (signo == SIGKILL) {
      ::courtpiece::common::WaitExit(i.pid);
      i.pid = -1;
    }
  }

  // Every player's events over all its streams: each seq once, strictly increasing.
  void ExpectEventsOnceInOrder(TestTable& t) {
    for (auto& p : t.players) {
      uint64_t last = 0;
      int n = 0;
      for (const pb::TableEvent& e : p->Events()) {
        EXPECT_GT(e.seq(), last) << p->name << ": event " << e.type() << " #" << n;
        last = e.seq();
        ++n;
      }
      EXPECT_GT(n, 0) << p->name;
    }
  }

  // Every stream of `t`'s players on the old owner ended with `code`.
  void ExpectStreamsEnded(TestTable& t, grpc::StatusCode code) {
    for (auto& p : t.players) {
      std::optional<StreamEnd> end = p->stream().WaitEnd(absl::Seconds(15));
      ASSERT_TRUE(end.has_value()) << p->name << ": the old owner's stream did not end";
      EXPECT_EQ(end->code, code) << p->name << ": " << end->message;
    }
  }

  // Every player reconnects to `addr` resuming by seq; its auto player goes on there.
  void Reconnect(TestTable& t, const std::string& addr) {
    for (auto& p : t.players) {
      const uint64_t last = p->stream().last_seq();
      p->stream().Cancel();
      p->streams.push_back(std::make_unique<PlayClient>(addr, p->name));
      absl::StatusOr<pb::Opened> opened = p->stream().Open(t.id, last, kRpc);
      ASSERT_TRUE(opened.ok()) << p->name << ": " << opened.status();
      EXPECT_EQ(opened->seat(), p->seat) << p->name;
      EXPECT_TRUE(opened->resumed()) << p->name << " last_seq " << last;
      p->auto_player->Switch(p->stream());
    }
  }

  void WaitGameOver(TestTable& t) {
    for (auto& p : t.players) {
      // A player who never got a seat (a failure already reported) ends no game: do not
      // wait the whole game bound for it.
      if (p->seat < 0) {
        ADD_FAILURE() << p->name << " has no seat at " << t.id;
        return;
      }
      EXPECT_TRUE(p->auto_player->WaitGameOver(kGame)) << p->name;
      EXPECT_THAT(p->auto_player->faults(), ::testing::IsEmpty()) << p->name;
    }
  }

  // What the rounds' results on the host's stream imply for each player's coins.
  std::map<std::string, int64_t> ExpectedCoins(TestTable& t, int* rounds) {
    std::map<int, std::string> by_seat;
    for (auto& p : t.players) by_seat[p->seat] = p->name;
    const std::vector<int64_t> delta = CoinDeltasBySeat(t.host()->Events(), kBet, rounds);
    std::map<std::string, int64_t> out;
    for (auto& p : t.players) out[p->name] = kGrant;
    for (int s = 0; s < 4; ++s) out[by_seat[s]] += delta[s];
    return out;
  }

  // Exact coins at the end: every player's balance as the results imply and as its wallet
  // History adds up to, the house holding what it granted, every pot of the table empty
  // with exactly one payout or refund, and a clean audit.
  void ExpectCoins(TestTable& t, bool exactly_once_records = true) {
    int rounds = 0;
    std::map<std::string, int64_t> expected = ExpectedCoins(t, &rounds);
    EXPECT_GE(rounds, 1) << t.id;
    // A payout is not awaited (docs/table.md "Coins"): game_over can reach the players
    // before the wallet has applied the last round's payout, and after a takeover it may be
    // in its retry backoff (up to 5 s). Wait, bounded, for every pot of the table to empty.
    for (int i = 0; i < 150; ++i) {
      bool pending = false;
      for (int r = 1; r <= rounds && !pending; ++r) {
        pending = Balance(absl::StrCat("pot:", t.id, ":", r)) != 0;
      }
      if (!pending) break;
      absl::SleepFor(absl::Milliseconds(100));
    }
    for (auto& [player, coins] : expected) {
      EXPECT_EQ(Balance("player:" + player), coins) << player;
      int64_t sum = 0;
      for (const wv1::Entry& e : History("player:" + player)) sum += e.amount();
      EXPECT_EQ(sum, coins) << player;
    }
    for (int r = 1; r <= rounds; ++r) {
      const std::string pot = absl::StrCat("pot:", t.id, ":", r);
      EXPECT_EQ(Balance(pot), 0) << pot;
      int outs = 0;
      for (const wv1::Entry& e : History(pot)) {
        if (e.amount() < 0) {
          ++outs;
          EXPECT_TRUE(absl::EndsWith(e.idempotency_key(), ":payout") ||
                      absl::EndsWith(e.idempotency_key(), ":refund"))
              << e.idempotency_key();
        }
      }
      EXPECT_EQ(outs, 1) << pot;
    }
    // The lobby got the game record and every round record (once, when nothing failed over).
    const std::string game_key = t.id + ":game:1";
    for (int i = 0; i < 100 && receivers_->received(game_key) == 0; ++i) {
      absl::SleepFor(absl::Milliseconds(100));
    }
    std::map<std::string, lobby::v1::RecordGameRequest> games = receivers_->games();
    ASSERT_EQ(games.count(game_key), 1u) << game_key;
    EXPECT_FALSE(games[game_key].ended_early());
    EXPECT_EQ(games[game_key].players_size(), 4);
    std::map<std::string, lobby::v1::RecordRoundRequest> recorded = receivers_->rounds();
    for (int r = 1; r <= rounds; ++r) {
      const std::string key = absl::StrCat(t.id, ":round:", r);
      EXPECT_EQ(recorded.count(key), 1u) << key;
      if (exactly_once_records) {
        EXPECT_EQ(receivers_->received(key), 1) << key;
      }
    }
    EXPECT_EQ(recorded.count(absl::StrCat(t.id, ":round:", rounds + 1)), 0u);
    if (exactly_once_records) {
      EXPECT_EQ(receivers_->received(game_key), 1);
    }
  }

  void ExpectHouseAndAudit() {
    EXPECT_EQ(Balance("house"), -kGrant * accounts_);  // people only: the stakes net to zero
    EXPECT_EQ(RunAudit(), 0);
  }

  std::string redis_addr_;
  std::unique_ptr<storage::TestDatabase> db_;
  std::string wallet_addr_;
  pid_t wallet_pid_ = -1;
  std::unique_ptr<wv1::Wallet::Stub> wallet_;
  std::unique_ptr<FakeReceivers> receivers_;
  std::deque<Instance> instances_;  // a deque: references stay valid
  std::vector<std::unique_ptr<TestTable>> tables_;
  int64_t accounts_ = 0;
};

// --- Seat privacy ---------------------------------------------------------------------------

// Checks every round on the four seats' streams (RULES.md §2.3 for hidden): on seat S's
// stream, until the round's result, a card may appear only if it is in S's own hand (its
// "hand" / "hidden" events) or was played face up ("played" on S's stream) before; a
// face-down throw of the hidden caller reaches other seats as "??" and its card never
// appears on their streams in that round. Afterwards, across seats: each hand is 13 cards,
// the four are disjoint, and every face-up "played" card was in the player's own hand.
// Returns the rounds checked.
int CheckPrivacy(TestTable& t) {
  std::map<int, std::vector<pb::TableEvent>> events;
  for (auto& p : t.players) events[p->seat] = p->Events();
  // Per round number (the n-th round_started on each stream is the same round: every
  // stream was open from the first round on).
  struct SeatRound {
    std::set<std::string> hand, seen;
    std::vector<std::pair<int, std::string>> played;  // (seat, card), "??" included
    std::vector<std::string> led;                     // the led suit of each of them
    bool trump_shown = false;
    int caller = -1;
  };
  std::map<int, std::array<SeatRound, 4>> rounds;
  for (int s = 0; s < 4; ++s) {
    int round = 0;
    bool in_round = false;
    std::string led;
    for (const pb::TableEvent& e : events[s]) {
      if (e.type() == "round_started") {
        ++round;
        in_round = true;
        led.clear();
        continue;
      }
      if (!in_round) continue;
      if (e.type() == "round_result") {
        in_round = false;
        continue;
      }
      SeatRound& r = rounds[round][s];
      if (e.type() == "round") r.caller = e.seat();
      if (e.type() == "trump_shown") r.trump_shown = true;
      if (e.type() == "trick") led.clear();
      if (e.type() == "hand" || e.type() == "hidden") {
        if (e.cards_size() > 0) {
          EXPECT_EQ(e.seat(), s) << t.id << " round " << round << ": seat " << s
                                 << " got the cards of seat " << e.seat() << " in " << e.type();
        }
        for (const std::string& c : e.cards()) r.hand.insert(c);
        continue;
      }
      if (e.type() == "played" && e.cards_size() == 1) {
        const std::string& c = e.cards(0);
        if (led.empty() && c != "??") led = c.substr(c.size() - 1);
        r.played.push_back({e.seat(), c});
        r.led.push_back(led);
        if (c != "??") {
          if (e.seat() == s) {
            EXPECT_TRUE(r.hand.count(c)) << t.id << " seat " << s << " played " << c;
          }
          r.seen.insert(c);
        }
        continue;
      }
      for (const std::string& c : e.cards()) {
        EXPECT_TRUE(c == "??" || r.hand.count(c) || r.seen.count(c))
            << t.id << " round " << round << ": seat " << s << " saw " << c << " in " << e.type()
            << " before it was played face up";
      }
    }
  }
  int checked = 0;
  for (auto& [round, seats] : rounds) {
    std::set<std::string> all;
    bool complete = true;
    for (int s = 0; s < 4; ++s) {
      if (seats[s].hand.size() != 13) complete = false;
      for (const std::string& c : seats[s].hand) all.insert(c);
    }
    if (!complete) continue;  // a round cut short by the end of the test
    ++checked;
    EXPECT_EQ(all.size(), 52u) << t.id << " round " << round << ": hands overlap";
    // Face-down throws: the caller's own stream shows the card; everyone else's "??".
    const int caller = seats[0].caller;
    if (caller < 0) continue;
    const SeatRound& own = seats[caller];
    for (int s = 0; s < 4; ++s) {
      const SeatRound& other = seats[s];
      for (const auto& [seat, card] : other.played) {
        if (card == "??") {
          EXPECT_EQ(seat, caller) << t.id << ": only the hidden caller throws face down";
          EXPECT_NE(s, caller);
        } else {
          EXPECT_TRUE(seats[seat].hand.count(card))
              << t.id << ": seat " << seat << " played " << card << " not in its hand";
        }
      }
      if (s == caller) continue;
      for (size_t i = 0; i < own.played.size() && i < other.played.size(); ++i) {
        if (other.played[i].second != "??") continue;
        // The face-down card is never shown to this seat in this round.
        EXPECT_FALSE(other.seen.count(own.played[i].second))
            << t.id << ": seat " << s << " saw the face-down " << own.played[i].second;
      }
    }
  }
  return checked;
}

// --- a. full games of every game type -------------------------------------------------------

TEST_F(TableE2eTest, FullGamesOfEveryTypeEndWithExactCoins) {
  const Instance& a = StartTable();
  const std::vector<std::pair<std::string, std::string>> games = {
      {"classic", R"({"game":"classic","target":1})"}, {"piles", R"({"game":"piles","target":10})"},
      {"hidden", R"({"game":"hidden","target":10})"},  {"kaat", R"({"game":"kaat","target":10})"},
      {"stack", R"({"game":"stack","target":5})"},
  };
  for (const auto& [name, options] : games) SeatTable(a.addr, "full-" + name, options);
  for (auto& t : tables_) WaitGameOver(*t);
  for (auto& t : tables_) {
    ExpectCoins(*t);
    EXPECT_GE(CheckPrivacy(*t), 1) << t->id;
    // The game record names the winners the last round_result implies.
    int rounds = 0;
    ExpectedCoins(*t, &rounds);
    SCOPED_TRACE(t->id + ": " + std::to_string(rounds) + " rounds");
  }
  ExpectHouseAndAudit();
}

// --- f. bad input through gRPC --------------------------------------------------------------

TEST_F(TableE2eTest, BadInputGetsExactCodesAndHarmsNoOtherTable) {
  const Instance& a = StartTable(kTwoOrMoreHeartbeat);
  const Instance& b = StartTable(kTwoOrMoreHeartbeat);
  // A table playing on A all along: it must finish untouched by the abuse below.
  TestTable& playing = SeatTable(a.addr, "calm", R"({"game":"classic","target":1})");
  TestTable& idle = SeatTable(a.addr, "idle", R"({"game":"classic","target":1})", false);

  // A player not at the table: PERMISSION_DENIED, nothing changes.
  OpenAccount("stranger");
  const uint64_t seq_before = GetTable(a.addr, idle.id)->seq();
  PlayClient stranger(a.addr, "stranger");
  absl::StatusOr<pb::Opened> opened = stranger.Open(idle.id, 0, kRpc);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->seat(), -1);
  absl::StatusOr<pb::CommandResult> r = stranger.Send(MakeCommand("start_now"), kRpc);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->code(), static_cast<int>(grpc::StatusCode::PERMISSION_DENIED)) << r->message();
  r = stranger.Send(MakeMove("play", "AS"), kRpc);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->code(), static_cast<int>(grpc::StatusCode::PERMISSION_DENIED)) << r->message();

  // Malformed commands: INVALID_ARGUMENT.
  PlayClient& host = idle.host()->stream();
  r = host.Send(MakeCommand("fly"), kRpc);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT)) << r->message();
  r = host.Send(MakeMove("dance", "AS"), kRpc);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT)) << r->message();
  pb::PlayRequest second_open;
  second_open.mutable_open()->set_table_id(idle.id);
  ASSERT_TRUE(host.Write(second_open));
  ASSERT_TRUE(host.WaitFor(
      [](const std::vector<pb::PlayResponse>& m) {
        return !m.empty() && m.back().has_result() && m.back().result().command_id() == 0;
      },
      kRpc));
  EXPECT_EQ(host.messages().back().result().code(),
            static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  absl::StatusOr<pb::TableInfo> info = GetTable(a.addr, idle.id);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->seq(), seq_before);  // refused commands changed nothing

  // An unknown table: the stream ends NOT_FOUND.
  PlayClient lost(a.addr, "stranger");
  EXPECT_EQ(lost.Open("no-such-table", 0, kRpc).status().code(), absl::StatusCode::kNotFound);
  std::optional<StreamEnd> end = lost.WaitEnd(kRpc);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code, grpc::StatusCode::NOT_FOUND);

  // A table owned by another instance: FAILED_PRECONDITION naming the owner's address.
  PlayClient elsewhere(b.addr, idle.host()->name);
  EXPECT_EQ(elsewhere.Open(idle.id, 0, kRpc).status().code(),
            absl::StatusCode::kFailedPrecondition);
  end = elsewhere.WaitEnd(kRpc);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code, grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(end->owner_addr, a.addr);

  // No player metadata: UNAUTHENTICATED.
  PlayClient anonymous(a.addr, "");
  EXPECT_EQ(anonymous.Open(idle.id, 0, kRpc).status().code(), absl::StatusCode::kUnauthenticated);

  // A message over 16 KiB: the stream is refused.
  PlayClient big(a.addr, "stranger");
  ASSERT_TRUE(big.Open(idle.id, 0, kRpc).ok());
  pb::PlayRequest oversized;
  oversized.mutable_command()->set_type("report");
  oversized.mutable_command()->set_note_id(std::string(20 * 1024, 'n'));
  big.Write(oversized);
  end = big.WaitEnd(kRpc);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code, grpc::StatusCode::RESOURCE_EXHAUSTED) << end->message;

  // A flooding stream: RESOURCE_EXHAUSTED results, then it is cut.
  PlayClient flood(a.addr, "stranger");
  ASSERT_TRUE(flood.Open(idle.id, 0, kRpc).ok());
  pb::PlayRequest spam;
  spam.mutable_command()->set_type("start_now");
  for (int i = 0; i < 1000 && !flood.ended(); ++i) {
    spam.mutable_command()->set_command_id(i + 1);
    if (!flood.Write(spam)) break;
  }
  end = flood.WaitEnd(kRpc);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code, grpc::StatusCode::RESOURCE_EXHAUSTED) << end->message;
  int exhausted = 0;
  for (const pb::PlayResponse& m : flood.messages()) {
    if (m.has_result() &&
        m.result().code() == static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED)) {
      ++exhausted;
    }
  }
  EXPECT_GT(exhausted, 0);

  // The other tables are unharmed: both games (the idle one starts by itself 7 s after its
  // fourth seat) play to their ends with exact coins.
  EXPECT_FALSE(host.ended());
  WaitGameOver(playing);
  WaitGameOver(idle);
  ExpectCoins(playing);
  ExpectCoins(idle);
  ExpectHouseAndAudit();
}

// --- g. a voice note: the lock over Play, the announce over gRPC, a report to moderation -----

TEST_F(TableE2eTest, VoiceNoteAnnouncedOverGrpcIsHeardAndReportedToModeration) {
  const Instance& a = StartTable();
  std::unique_ptr<pb::TableService::Stub> stub = TableStub(a.addr);
  // Two people and no game (nothing changes the voice round under the test).
  pb::CreateTableRequest create;
  create.set_table_id("voice");
  create.set_host_player("voice-a");
  create.set_bet_coins(kBet);
  create.set_turn_time_ms(30'000);
  create.set_game_options(R"({"game":"classic","target":1})");
  create.set_code("424242");
  {
    pb::CreateTableResponse response;
    grpc::ClientContext context;
    SetDeadline(context, kRpc);
    grpc::Status s = stub->CreateTable(&context, create, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  OpenAccount("voice-a");
  OpenAccount("voice-b");
  PlayClient author(a.addr, "voice-a");
  ASSERT_TRUE(author.Open("voice", 0, kRpc).ok());
  PlayClient listener(a.addr, "voice-b");
  ASSERT_TRUE(listener.Open("voice", 0, kRpc).ok());
  absl::StatusOr<pb::CommandResult> r = listener.Send(MakeCommand("join"), kRpc);
  ASSERT_TRUE(r.ok() && r->code() == 0) << (r.ok() ? r->message() : r.status().ToString());

  // The lock over Play; the client's own voice_sent is refused and changes nothing.
  r = author.Send(MakeCommand("voice_start"), kRpc);
  ASSERT_TRUE(r.ok() && r->code() == 0) << (r.ok() ? r->message() : r.status().ToString());
  pb::TableCommand sent = MakeCommand("voice_sent");
  sent.set_note_id("note-e2e");
  sent.set_duration_ms(2'000);
  r = author.Send(sent, kRpc);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT)) << r->message();

  // Moderation's side: CheckVoiceLock, then AnnounceVoiceNote with the probed duration.
  pb::CheckVoiceLockRequest check;
  check.set_table_id("voice");
  check.set_player("voice-a");
  pb::CheckVoiceLockResponse lock;
  {
    grpc::ClientContext context;
    SetDeadline(context, kRpc);
    ASSERT_TRUE(stub->CheckVoiceLock(&context, check, &lock).ok());
  }
  ASSERT_TRUE(lock.may_send()) << lock.reason();
  pb::AnnounceVoiceNoteRequest announce;
  announce.set_table_id("voice");
  announce.set_player("voice-a");
  announce.set_round(lock.round());
  announce.set_note_id("note-e2e");
  announce.set_duration_ms(2'000);
  pb::AnnounceVoiceNoteResponse announced;
  const int64_t before_ms = absl::ToUnixMillis(absl::Now());
  {
    grpc::ClientContext context;
    SetDeadline(context, kRpc);
    grpc::Status s = stub->AnnounceVoiceNote(&context, announce, &announced);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_FALSE(announced.replayed());
  EXPECT_GE(announced.play_at_ms(), before_ms + 1'000);
  EXPECT_LE(announced.play_at_ms(), absl::ToUnixMillis(absl::Now()) + 1'000);

  // The listener's stream gets the note, with the same play time.
  std::optional<size_t> at = listener.WaitForEvent("voice_note", kRpc);
  ASSERT_TRUE(at.has_value());
  const pb::TableEvent note = listener.messages()[*at].event();
  EXPECT_EQ(note.detail(), "note-e2e");
  EXPECT_EQ(note.player(), "voice-a");
  EXPECT_EQ(note.seat(), 0);
  EXPECT_EQ(note.value(), announced.play_at_ms());
  {  // a retry is a replay
    pb::AnnounceVoiceNoteResponse again;
    grpc::ClientContext context;
    SetDeadline(context, kRpc);
    ASSERT_TRUE(stub->AnnounceVoiceNote(&context, announce, &again).ok());
    EXPECT_TRUE(again.replayed());
    EXPECT_EQ(again.play_at_ms(), announced.play_at_ms());
  }

  // Once it plays, the listener reports it; the report reaches moderation's ReportIntake.
  absl::SleepFor(absl::Milliseconds(announced.play_at_ms() - absl::ToUnixMillis(absl::Now()) + 50));
  pb::TableCommand report = MakeCommand("report");
  report.set_note_id("note-e2e");
  r = listener.Send(report, kRpc);
  ASSERT_TRUE(r.ok() && r->code() == 0) << (r.ok() ? r->message() : r.status().ToString());
  const std::string key = "voice:report:note-e2e:voice-b";
  for (int i = 0; i < 100 && receivers_->received(key) == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  std::map<std::string, moderation::v1::FileReportRequest> reports = receivers_->reports();
  ASSERT_EQ(reports.count(key), 1u);
  const moderation::v1::FileReportRequest& filed = reports.at(key);
  EXPECT_EQ(filed.key(), key);
  EXPECT_EQ(filed.table_id(), "voice");
  EXPECT_EQ(filed.note_id(), "note-e2e");
  EXPECT_EQ(filed.author(), "voice-a");
  EXPECT_EQ(filed.reporter(), "voice-b");
  EXPECT_EQ(filed.round(), 0u);
  EXPECT_EQ(receivers_->received(key), 1);
  EXPECT_EQ(reports.size(), 1u);
  ExpectHouseAndAudit();  // no game: no coins moved
}

// --- b. kill -9 of the owner: mid-round, mid-stake, mid-payout ---------------------------

TEST_F(TableE2eTest, KillNineMidRoundResumesOnTheOtherInstance) {
  Instance& a = StartTable(kTwoOrMoreHeartbeat);
  Instance& b = StartTable(kTwoOrMoreHeartbeat);
  TestTable& t = SeatTable(a.addr, "kill-round", R"({"game":"classic","target":1})");
  ASSERT_TRUE(WaitEvents(t, "played", 10));
  Kill(a, SIGKILL);
  std::optional<pb::TableInfo> info = WaitNewOwner(b.addr, t.id, a.id);
  ASSERT_TRUE(info.has_value()) << "nobody took the table over";
  EXPECT_EQ(info->owner_instance(), b.id);
  EXPECT_EQ(info->owner_addr(), b.addr);
  EXPECT_EQ(info->phase(), "playing");
  EXPECT_EQ(info->round(), 1u);
  ASSERT_NO_FATAL_FAILURE(Reconnect(t, b.addr));
  WaitGameOver(t);
  ExpectEventsOnceInOrder(t);
  ExpectCoins(t, /*exactly_once_records=*/false);
  EXPECT_GE(CheckPrivacy(t), 1);
  ExpectHouseAndAudit();
}

TEST_F(TableE2eTest, KillNineMidStakeThenMidPayoutWithThreeInstances) {
  std::vector<Instance*> live = {&StartTable(kTwoOrMoreHeartbeat), &StartTable(kTwoOrMoreHeartbeat),
                                 &StartTable(kTwoOrMoreHeartbeat)};
  // Two points to win: the kill after the first round's result comes while the game goes on
  // (or, after a Court, while its second stake is awaited), so nobody has seen game_over and
  // left. (With one point the game ended with that result, and under load the auto players
  // had left before the kill came: the new owner rightly had them unseated.)
  TestTable& t = SeatTable(live[0]->addr, "kill-stake", R"({"game":"classic","target":2})",
                           /*start=*/false);
  // The wallet is stopped while the stake is awaited; the owner dies; the wallet resumes.
  kill(wallet_pid_, SIGSTOP);
  absl::StatusOr<pb::CommandResult> r = t.host()->stream().Send(MakeCommand("start_now"), kRpc);
  ASSERT_TRUE(r.ok() && r->code() == 0);
  ASSERT_TRUE(WaitEvents(t, "staking", 1));
  Instance* owner = live[0];
  Kill(*owner, SIGKILL);
  live.erase(live.begin());
  kill(wallet_pid_, SIGCONT);
  std::optional<pb::TableInfo> info = WaitNewOwner(live[0]->addr, t.id, owner->id);
  ASSERT_TRUE(info.has_value()) << "nobody took the table over";
  ASSERT_NO_FATAL_FAILURE(Reconnect(t, info->owner_addr()));
  // Now the payout: the wallet stops in the round, the first round ends, the new owner dies.
  ASSERT_TRUE(WaitEvents(t, "played", 8));
  kill(wallet_pid_, SIGSTOP);
  ASSERT_TRUE(WaitEvents(t, "round_result", 1));
  for (Instance* i : live) {
    if (i->id == info->owner_instance()) owner = i;
  }
  ASSERT_EQ(owner->id, info->owner_instance());
  Kill(*owner, SIGKILL);
  std::erase(live, owner);
  kill(wallet_pid_, SIGCONT);
  info = WaitNewOwner(live[0]->addr, t.id, owner->id);
  ASSERT_TRUE(info.has_value()) << "nobody took the table over the second time";
  EXPECT_EQ(info->owner_instance(), live[0]->id);
  ASSERT_NO_FATAL_FAILURE(Reconnect(t, live[0]->addr));
  WaitGameOver(t);
  ExpectEventsOnceInOrder(t);
  // The payout was re-sent by the last owner: the pot is emptied exactly once.
  ExpectCoins(t, /*exactly_once_records=*/false);
  ExpectHouseAndAudit();
}

// --- c. SIGSTOP past the heartbeat: the old owner is fenced ----------------------------------

TEST_F(TableE2eTest, StoppedOwnerIsFencedAndDropsTheTable) {
  Instance& a = StartTable(kTwoOrMoreHeartbeat);
  Instance& b = StartTable(kTwoOrMoreHeartbeat);
  TestTable& t = SeatTable(a.addr, "fenced", R"({"game":"classic","target":1})");
  ASSERT_TRUE(WaitEvents(t, "played", 6));
  Kill(a, SIGSTOP);
  std::optional<pb::TableInfo> info = WaitNewOwner(b.addr, t.id, a.id);
  ASSERT_TRUE(info.has_value()) << "nobody took the table over";
  EXPECT_EQ(info->owner_instance(), b.id);
  Kill(a, SIGCONT);
  // The old owner's next write is refused by the epoch fence: it drops the table and ends
  // its streams with UNAVAILABLE.
  ExpectStreamsEnded(t, grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(ListTables(a.addr), ::testing::Not(::testing::Contains(t.id)));
  EXPECT_THAT(ListTables(b.addr), ::testing::Contains(t.id));
  // The table on the new owner is intact: the same people in the same seats, mid-round, and
  // nothing any client saw is missing from it.
  absl::StatusOr<pb::TableInfo> now = GetTable(b.addr, t.id);
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_EQ(now->phase(), "playing");
  EXPECT_EQ(now->round(), 1u);
  for (auto& p : t.players) {
    EXPECT_EQ(now->seats(p->seat).player(), p->name);
    EXPECT_EQ(now->seats(p->seat).kind(), "person");
    EXPECT_LE(p->stream().last_seq(), now->seq()) << p->name;
  }
  ASSERT_NO_FATAL_FAILURE(Reconnect(t, b.addr));
  WaitGameOver(t);
  ExpectEventsOnceInOrder(t);
  ExpectCoins(t, /*exactly_once_records=*/false);
  ExpectHouseAndAudit();
}

// --- g. SIGTERM hands the tables over at once ------------------------------------------------

TEST_F(TableE2eTest, SigtermHandsTheTableOverWithoutWaitingForTheHeartbeat) {
  // A long heartbeat: a takeover by expiry would take 10 s; the handover must not.
  Instance& a = StartTable("10s");
  Instance& b = StartTable("10s");
  TestTable& t = SeatTable(a.addr, "drained", R"({"game":"classic","target":1})");
  ASSERT_TRUE(WaitEvents(t, "played", 6));
  const absl::Time start = absl::Now();
  Kill(a, SIGTERM);
  ExpectStreamsEnded(t, grpc::StatusCode::UNAVAILABLE);
  std::optional<pb::TableInfo> info = WaitNewOwner(b.addr, t.id, a.id);
  ASSERT_TRUE(info.has_value()) << "nobody took the table over";
  EXPECT_EQ(info->owner_instance(), b.id);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << "taken over by expiry, not handed over";
  EXPECT_EQ(::courtpiece::common::WaitExit(a.pid), 0);
  a.pid = -1;
  ASSERT_NO_FATAL_FAILURE(Reconnect(t, b.addr));
  WaitGameOver(t);
  ExpectEventsOnceInOrder(t);
  ExpectCoins(t, /*exactly_once_records=*/false);
  ExpectHouseAndAudit();
}

// --- e. seat privacy through the service -----------------------------------------------------

// Many tables of four auto players (mostly hidden, the game with secrets beyond the hands)
// play round after round; every seat's stream is checked by CheckPrivacy. CI plays about
// 100 rounds (scaled by COURTPIECE_TEST_SCALE_DIVISOR); COURTPIECE_TABLE_E2E_PRIVACY_ROUNDS
// asks for more, COURTPIECE_TABLE_E2E_PRIVACY_TABLES on that many tables
// (docs/table-service.md reports the longer runs).
TEST_F(TableE2eTest, NoStreamCarriesACardItsSeatMayNotSee) {
  int rounds_wanted = 100;
  if (const char* env = std::getenv("COURTPIECE_TABLE_E2E_PRIVACY_ROUNDS")) {
    rounds_wanted = std::max(1, std::atoi(env));
  }
  rounds_wanted = ScaledIterations(rounds_wanted);
  int tables = std::min(100, std::max(4, rounds_wanted / 5));
  if (const char* env = std::getenv("COURTPIECE_TABLE_E2E_PRIVACY_TABLES")) {
    tables = std::max(1, std::atoi(env));
  }
  const Instance& a = StartTable();
  const char* kGames[] = {R"({"game":"hidden","target":100})", R"({"game":"hidden","target":100})",
                          R"({"game":"piles","target":100})", R"({"game":"kaat","target":100})",
                          R"({"game":"classic","target":100})"};
  AutoPlayerOptions keep_playing;
  keep_playing.leave_at_game_over = false;
  keep_playing.commands_per_second = 50;
  for (int i = 0; i < tables; ++i) {
    SeatTable(a.addr, absl::StrCat("priv", i), kGames[i % 5], true, 30'000, keep_playing);
  }
  const absl::Time deadline =
      absl::Now() + absl::Seconds(60 + 40 * (rounds_wanted + tables - 1) / tables);
  int rounds = 0;
  while (absl::Now() < deadline) {
    rounds = 0;
    for (auto& t : tables_) {
      for (const pb::TableEvent& e : t->host()->Events()) rounds += e.type() == "round_result";
    }
    if (rounds >= rounds_wanted) break;
    absl::SleepFor(absl::Seconds(1));
  }
  EXPECT_GE(rounds, rounds_wanted);
  for (auto& t : tables_) {
    for (auto& p : t->players) {
      p->auto_player->Stop();
      EXPECT_THAT(p->auto_player->faults(), ::testing::IsEmpty()) << p->name;
    }
  }
  int checked = 0, hidden_face_down = 0;
  for (auto& t : tables_) {
    checked += CheckPrivacy(*t);
    for (const pb::TableEvent& e : t->host()->Events()) {
      hidden_face_down += e.type() == "played" && e.cards_size() == 1 && e.cards(0) == "??";
    }
  }
  EXPECT_GE(checked, rounds_wanted);
  EXPECT_GT(hidden_face_down, 0) << "no face-down throw was seen: the hidden case went untested";
  std::cout << "privacy: " << tables << " tables, " << checked << " rounds checked, "
            << hidden_face_down << " face-down throws seen by the hosts" << std::endl;
  EXPECT_EQ(RunAudit(), 0);
}

// --- d. Redis and Postgres restarted under play ----------------------------------------------

// This test restarts its servers, so it runs its own Redis and Postgres (deploy/local, on
// free ports, in a temporary directory) instead of the shared ones.
class TableE2eRestartTest : public TableE2eTest {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / absl::StrCat("table-e2e-", getpid());
    std::filesystem::remove_all(dir_);
    redis_port_ = ::courtpiece::common::FreeLoopbackPort();
    pg_port_ = ::courtpiece::common::FreeLoopbackPort();
    ASSERT_EQ(Script("redis.sh", "start", redis_port_, "redis", ""), 0);
    ASSERT_EQ(Script("postgres.sh", "start", pg_port_, "pg", " --fast"), 0);
    for (const char* name : {"COURTPIECE_TEST_REDIS_ADDR", "COURTPIECE_TEST_PG_URL"}) {
      const char* v = std::getenv(name);
      saved_env_[name] = v == nullptr ? "" : v;
    }
    setenv("COURTPIECE_TEST_REDIS_ADDR", absl::StrCat("127.0.0.1:", redis_port_).c_str(), 1);
    setenv("COURTPIECE_TEST_PG_URL",
           absl::StrCat("postgresql://postgres@127.0.0.1:", pg_port_, "/postgres").c_str(), 1);
    TableE2eTest::SetUp();
  }
  void TearDown() override {
    TableE2eTest::TearDown();
    db_.reset();  // drops the database while the server still runs
    Script("redis.sh", "stop", redis_port_, "redis", "");
    Script("postgres.sh", "stop", pg_port_, "pg", "");
    std::filesystem::remove_all(dir_);
    for (const auto& [name, value] : saved_env_) setenv(name.c_str(), value.c_str(), 1);
  }
  int Script(const std::string& script, const std::string& command, int port,
             const std::string& sub, const std::string& extra) {
    const std::string line =
        absl::StrCat(::courtpiece::common::SourceDir(), "/deploy/local/", script, " ", command,
                     " --port ", port, " --dir ", (dir_ / sub).string(), extra, " > /dev/null");
    return std::system(line.c_str());
  }

  std::filesystem::path dir_;
  int redis_port_ = 0, pg_port_ = 0;
  std::map<std::string, std::string> saved_env_;
};

TEST_F(TableE2eRestartTest, RedisAndPostgresRestartedUnderPlayTheGameFinishesWithExactCoins) {
  const Instance& a = StartTable();
  TestTable& t = SeatTable(a.addr, "restarts", R"({"game":"classic","target":2})");
  // Redis goes away mid-round (the tables wait and retry their saves) and comes back with
  // its AOF.
  ASSERT_TRUE(WaitEvents(t, "played", 6));
  ASSERT_EQ(Script("redis.sh", "stop", redis_port_, "redis", ""), 0);
  absl::SleepFor(absl::Seconds(2));
  ASSERT_EQ(Script("redis.sh", "start", redis_port_, "redis", ""), 0);
  // Postgres goes away when the round ends (the payout and the next stake wait for the
  // wallet, which reconnects by itself).
  ASSERT_TRUE(WaitEvents(t, "round_result", 1));
  ASSERT_EQ(Script("postgres.sh", "stop", pg_port_, "pg", ""), 0);
  absl::SleepFor(absl::Seconds(3));
  ASSERT_EQ(Script("postgres.sh", "start", pg_port_, "pg", ""), 0);
  WaitGameOver(t);
  ExpectEventsOnceInOrder(t);
  ExpectCoins(t, /*exactly_once_records=*/false);
  ExpectHouseAndAudit();
}

}  // namespace
}  // namespace courtpiece::table_service
