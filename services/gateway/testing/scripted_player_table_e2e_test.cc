// The scripted player against the real table service (no gateway yet): a real
// courtpiece-table, the real courtpiece-wallet on a fresh Postgres database
// (COURTPIECE_TEST_PG_URL), a real Redis (COURTPIECE_TEST_REDIS_ADDR, database 12, flushed),
// the fake lobby / moderation receivers in-process. The client messages mirror the table's
// field for field, so a small transport here relays them by bytes, as the gateway does; four
// scripted players then play a whole game of every type. This proves the brain plays real
// rules to the end (what the gateway's end-to-end tests rely on).
#include <signal.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/grpc_status.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/redis_client.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/gateway/testing/scripted_player.h"
#include "services/table/testing/fake_receivers.h"
#include "services/wallet/wallet_test_util.h"

namespace courtpiece::gateway::testing {
namespace {

namespace cv1 = ::courtpiece::client::v1;
namespace tv1 = ::courtpiece::table::v1;
namespace wv1 = ::courtpiece::wallet::v1;
using ::testing::IsEmpty;

constexpr int kRedisDb = 3;  // its own: 12 is the lobby directory e2e test's

// TableService.Play as a PlayTransport: client messages relayed by their bytes.
class TableTransport final : public PlayTransport {
 public:
  TableTransport(std::shared_ptr<grpc::Channel> channel, const std::string& player)
      : stub_(tv1::TableService::NewStub(std::move(channel))) {
    context_.AddMetadata("courtpiece-player-id", player);
    stream_ = stub_->Play(&context_);
    reader_ = std::thread([this] {
      tv1::PlayResponse m;
      while (stream_->Read(&m)) {
        cv1::PlayResponse c;
        c.ParseFromString(m.SerializeAsString());
        c.DiscardUnknownFields();
        std::lock_guard<std::mutex> lock(mu_);
        inbox_.push_back(std::move(c));
        cv_.notify_all();
      }
      std::lock_guard<std::mutex> wlock(write_mu_);
      closed_ = true;
      absl::Status s = common::FromGrpcStatus(stream_->Finish());
      std::lock_guard<std::mutex> lock(mu_);
      end_ = StreamEnd{s, 0, ""};
      cv_.notify_all();
    });
  }
  ~TableTransport() override {
    context_.TryCancel();
    reader_.join();
  }
  absl::Status Send(const cv1::PlayRequest& request) override {
    tv1::PlayRequest t;
    t.ParseFromString(request.SerializeAsString());
    std::lock_guard<std::mutex> lock(write_mu_);
    if (closed_ || !stream_->Write(t)) return absl::UnavailableError("ended");
    return absl::OkStatus();
  }
  absl::StatusOr<cv1::PlayResponse> Read(absl::Duration timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, absl::ToChronoTime(absl::Now() + timeout),
                   [&] { return !inbox_.empty() || end_.has_value(); });
    if (!inbox_.empty()) {
      cv1::PlayResponse m = std::move(inbox_.front());
      inbox_.pop_front();
      return m;
    }
    if (end_.has_value()) return absl::OutOfRangeError("stream ended");
    return absl::DeadlineExceededError("nothing");
  }
  std::optional<StreamEnd> end() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return end_;
  }
  void Cancel() override { context_.TryCancel(); }
  const char* kind() const override { return "table"; }

 private:
  std::unique_ptr<tv1::TableService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<tv1::PlayRequest, tv1::PlayResponse>> stream_;
  std::thread reader_;
  std::mutex write_mu_;
  bool closed_ = false;  // guarded by write_mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<cv1::PlayResponse> inbox_;
  std::optional<StreamEnd> end_;
};

class ScriptedPlayerTableE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* redis = std::getenv("COURTPIECE_TEST_REDIS_ADDR");
    ASSERT_NE(redis, nullptr) << "COURTPIECE_TEST_REDIS_ADDR is not set";
    redis_addr_ = redis;
    absl::StatusOr<storage::RedisOptions> options = storage::ParseRedisAddr(redis_addr_);
    ASSERT_TRUE(options.ok()) << options.status();
    options->db = kRedisDb;
    storage::RedisClient client(*options);
    ASSERT_TRUE(client.Command({"FLUSHDB"}).ok());
    auto db = wallet::testing::CreateWalletDatabase();
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    auto receivers = table_service::testing::FakeReceivers::Start();
    ASSERT_TRUE(receivers.ok()) << receivers.status();
    receivers_ = *std::move(receivers);
    const std::string wallet_addr = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    wallet_pid_ =
        common::Spawn({common::BinDir() + "/courtpiece-wallet"},
                      {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_WALLET_ADDR=" + wallet_addr,
                       "COURTPIECE_WALLET_METRICS_ADDR=off", "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_TRUE(common::WaitServing(wallet_addr, absl::Seconds(15)));
    wallet_ =
        wv1::Wallet::NewStub(grpc::CreateChannel(wallet_addr, grpc::InsecureChannelCredentials()));
    table_addr_ = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    table_pid_ = common::Spawn(
        {common::BinDir() + "/courtpiece-table"},
        {"COURTPIECE_REDIS_ADDR=" + redis_addr_,
         absl::StrCat("COURTPIECE_TABLE_REDIS_DB=", kRedisDb),
         "COURTPIECE_TABLE_ADDR=" + table_addr_, "COURTPIECE_TABLE_INSTANCE_ID=scripted-e2e",
         "COURTPIECE_TABLE_METRICS_ADDR=off", "COURTPIECE_TABLE_WALLET_ADDR=" + wallet_addr,
         "COURTPIECE_TABLE_LOBBY_ADDR=" + receivers_->address(),
         "COURTPIECE_TABLE_MODERATION_ADDR=" + receivers_->address(),
         "COURTPIECE_TABLE_COMMANDS_PER_SECOND=200", "COURTPIECE_TABLE_COMMANDS_BURST=200",
         "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_TRUE(common::WaitServing(table_addr_, absl::Seconds(15)));
    channel_ = grpc::CreateChannel(table_addr_, grpc::InsecureChannelCredentials());
  }
  void TearDown() override {
    players_.clear();
    for (pid_t pid : {table_pid_, wallet_pid_}) {
      if (pid <= 0) continue;
      kill(pid, SIGTERM);
      common::WaitExit(pid);
    }
  }

  void OpenAccount(const std::string& player) {
    wv1::OpenAccountRequest request;
    request.set_player_id(player);
    wv1::OpenAccountResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    ASSERT_TRUE(wallet_->OpenAccount(&context, request, &response).ok());
  }

  // A table with four scripted players seated and playing in their threads.
  void SeatAndStart(const std::string& id, const std::string& options) {
    tv1::CreateTableRequest request;
    request.set_table_id(id);
    request.set_host_player(id + "-0");
    request.set_bet_coins(25);
    request.set_turn_time_ms(30'000);
    request.set_game_options(options);
    request.set_code(absl::StrCat(200000 + players_.size()));
    tv1::CreateTableResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    grpc::Status s =
        tv1::TableService::NewStub(channel_)->CreateTable(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    std::vector<ScriptedPlayer*> seated;
    for (int i = 0; i < 4; ++i) {
      const std::string name = absl::StrCat(id, "-", i);
      OpenAccount(name);
      ScriptedPlayerOptions o;
      o.player_id = name;
      o.commands_per_second = 50;
      auto p = std::make_unique<ScriptedPlayer>(
          name,
          [this, name]() -> absl::StatusOr<std::unique_ptr<PlayTransport>> {
            return std::unique_ptr<PlayTransport>(new TableTransport(channel_, name));
          },
          o);
      absl::StatusOr<cv1::Opened> opened = p->Open(id);
      ASSERT_TRUE(opened.ok()) << name << ": " << opened.status();
      if (opened->seat() < 0) {
        ASSERT_TRUE(p->Join().ok()) << name;
      }
      seated.push_back(p.get());
      players_.push_back(std::move(p));
    }
    cv1::TableCommand start;
    start.set_type("start_now");
    absl::StatusOr<cv1::CommandResult> r = seated[0]->Send(start);
    ASSERT_TRUE(r.ok() && r->code() == 0) << (r.ok() ? r->message() : r.status().ToString());
    for (ScriptedPlayer* p : seated) p->Start();
  }

  std::string redis_addr_, table_addr_;
  std::unique_ptr<storage::TestDatabase> db_;
  std::unique_ptr<table_service::testing::FakeReceivers> receivers_;
  pid_t wallet_pid_ = -1, table_pid_ = -1;
  std::unique_ptr<wv1::Wallet::Stub> wallet_;
  std::shared_ptr<grpc::Channel> channel_;
  std::vector<std::unique_ptr<ScriptedPlayer>> players_;
};

TEST_F(ScriptedPlayerTableE2eTest, FourPlayersFinishAGameOfEveryType) {
  const std::vector<std::pair<std::string, std::string>> games = {
      {"classic", R"({"game":"classic","target":1})"}, {"piles", R"({"game":"piles","target":10})"},
      {"hidden", R"({"game":"hidden","target":10})"},  {"kaat", R"({"game":"kaat","target":10})"},
      {"stack", R"({"game":"stack","target":5})"},
  };
  for (const auto& [name, options] : games) SeatAndStart("sp-" + name, options);
  for (auto& p : players_) {
    EXPECT_TRUE(p->WaitGameOver(absl::Seconds(240))) << p->name();
  }
  for (auto& p : players_) {
    p->Stop();
    EXPECT_THAT(p->faults(), IsEmpty()) << p->name();
    EXPECT_TRUE(p->CheckSeqs().ok()) << p->CheckSeqs();
    EXPECT_GT(p->moves_ok(), 0) << p->name();
    EXPECT_FALSE(p->ended()) << p->name();
  }
  // Events every seat gets (each seat's copy has its own seq) arrive on all four streams:
  // the same turns, in the same order (none lost). Up to the game's end: the next game
  // starts by itself 7 s later (RULES.md §4.3), and the players are stopped one by one, so
  // a player stopped later may see more of it.
  auto turns = [](const ScriptedPlayer& p) {
    std::vector<int> seats;
    for (const cv1::TableEvent& e : p.events()) {
      if (e.type() == "game_over") break;
      if (e.type() == "turn") seats.push_back(e.seat());
    }
    return seats;
  };
  for (size_t t = 0; t < players_.size(); t += 4) {
    const std::vector<int> first = turns(*players_[t]);
    EXPECT_GT(first.size(), 4u) << players_[t]->name();
    for (size_t i = 1; i < 4; ++i) {
      EXPECT_EQ(turns(*players_[t + i]), first) << players_[t + i]->name();
    }
  }
}

}  // namespace
}  // namespace courtpiece::gateway::testing
