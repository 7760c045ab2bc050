// The relay's real upstream parts against real table instances: each dialer (GrpcTableDialer,
// a gRPC call per player, and MuxTableDialer, sessions of one PlayMux stream) and
// RedisOwnerLookup with two courtpiece-table processes, the real courtpiece-wallet on a fresh
// Postgres database (COURTPIECE_TEST_PG_URL), a real Redis (COURTPIECE_TEST_REDIS_ADDR,
// database 9 or COURTPIECE_TEST_GATEWAY_REDIS_DB, flushed per test) and the fake lobby and
// moderation receivers in-process. Then a whole PlaySession over them across a kill -9.
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/redis_client.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/gateway/fake_upstream.h"
#include "services/gateway/grpc_table_dialer.h"
#include "services/gateway/mux_table_dialer.h"
#include "services/gateway/play_session.h"
#include "services/gateway/redis_owner_lookup.h"
#include "services/table/testing/fake_receivers.h"
#include "services/wallet/wallet_test_util.h"

namespace courtpiece::gateway {
namespace {

namespace pb = ::courtpiece::table::v1;
namespace wv1 = ::courtpiece::wallet::v1;

constexpr absl::Duration kWait = absl::Seconds(10);

int RedisDb() {
  // Its own database: 7..10 are the table e2e test's shards, 6 the gateway e2e test's.
  const char* env = std::getenv("COURTPIECE_TEST_RELAY_REDIS_DB");
  return env == nullptr ? 4 : std::atoi(env);
}

// Waits on a condition over state guarded by `mu`.
bool WaitUntil(std::mutex& mu, std::condition_variable& cv, absl::Duration timeout,
               const std::function<bool()>& done) {
  std::unique_lock<std::mutex> lock(mu);
  return cv.wait_for(lock, absl::ToChronoMilliseconds(timeout), done);
}

class RecordingSink final : public ClientSink {
 public:
  bool Send(client::v1::PlayResponse message) override {
    std::lock_guard<std::mutex> lock(mu);
    messages.push_back(std::move(message));
    cv.notify_all();
    return true;
  }
  void Finish(const absl::Status& status) override {
    std::lock_guard<std::mutex> lock(mu);
    if (!finish.has_value()) finish = status;
    cv.notify_all();
  }
  bool WaitFor(absl::Duration timeout,
               const std::function<bool(const client::v1::PlayResponse&)>& match) {
    return WaitUntil(mu, cv, timeout, [&] {
      for (const auto& m : messages) {
        if (match(m)) return true;
      }
      return finish.has_value();
    });
  }
  std::string Dump() {
    std::lock_guard<std::mutex> lock(mu);
    std::string out;
    for (const auto& m : messages) absl::StrAppend(&out, m.ShortDebugString(), "\n");
    return out;
  }
  std::vector<std::string> Notices() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> out;
    for (const auto& m : messages) {
      if (m.has_notice()) out.push_back(m.notice().type());
    }
    return out;
  }

  std::mutex mu;
  std::condition_variable cv;
  std::vector<client::v1::PlayResponse> messages;
  std::optional<absl::Status> finish;
};

pb::PlayRequest Command(uint64_t id, const std::string& type) {
  pb::PlayRequest r;
  r.mutable_command()->set_command_id(id);
  r.mutable_command()->set_type(type);
  return r;
}

pb::OpenTable Open(const std::string& table_id, uint64_t last_seq = 0) {
  pb::OpenTable open;
  open.set_table_id(table_id);
  open.set_last_seq(last_seq);
  return open;
}

struct Instance {
  std::string id, addr;
  pid_t pid = 0;
};

// Runs each test with each dialer (the parameter: "per_player" or "mux").
class RelayTableE2eTest : public ::testing::TestWithParam<std::string> {
 protected:
  TableDialer& dialer() {
    if (GetParam() == "mux") {
      if (mux_ == nullptr) mux_ = std::make_unique<MuxTableDialer>(nullptr);
      return *mux_;
    }
    if (per_player_ == nullptr) per_player_ = std::make_unique<GrpcTableDialer>(nullptr);
    return *per_player_;
  }

  void SetUp() override {
    const char* redis = std::getenv("COURTPIECE_TEST_REDIS_ADDR");
    ASSERT_NE(redis, nullptr) << "COURTPIECE_TEST_REDIS_ADDR is not set";
    redis_addr_ = redis;
    absl::StatusOr<storage::RedisOptions> options = storage::ParseRedisAddr(redis_addr_);
    ASSERT_TRUE(options.ok()) << options.status();
    options->db = RedisDb();
    redis_ = std::make_unique<storage::RedisClient>(*options);
    ASSERT_TRUE(redis_->Command({"FLUSHDB"}).ok());
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db =
        wallet::testing::CreateWalletDatabase();
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    wallet_addr_ = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    wallet_pid_ =
        common::Spawn({common::BinDir() + "/courtpiece-wallet"},
                      {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_WALLET_ADDR=" + wallet_addr_,
                       "COURTPIECE_WALLET_METRICS_ADDR=off",
                       "COURTPIECE_WALLET_STARTING_GRANT=5000", "COURTPIECE_WALLET_HOUSE_SHARDS=4",
                       "COURTPIECE_WALLET_PG_POOL_SIZE=4", "COURTPIECE_LOG_LEVEL=warn"});
    ASSERT_GT(wallet_pid_, 0);
    ASSERT_TRUE(common::WaitServing(wallet_addr_, absl::Seconds(15)));
    absl::StatusOr<std::unique_ptr<table_service::testing::FakeReceivers>> receivers =
        table_service::testing::FakeReceivers::Start();
    ASSERT_TRUE(receivers.ok()) << receivers.status();
    receivers_ = *std::move(receivers);
    a_ = StartTable(0);
    b_ = StartTable(1);
  }

  void TearDown() override {
    for (Instance* i : {&a_, &b_}) {
      if (i->pid > 0) {
        kill(i->pid, SIGKILL);
        common::WaitExit(i->pid);
      }
    }
    if (wallet_pid_ > 0) {
      kill(wallet_pid_, SIGTERM);
      common::WaitExit(wallet_pid_);
    }
  }

  Instance StartTable(int n) {
    Instance i;
    i.id = absl::StrCat("gw-table-", getpid(), "-", n);
    i.addr = absl::StrCat("127.0.0.1:", common::FreeLoopbackPort());
    i.pid = common::Spawn(
        {common::BinDir() + "/courtpiece-table"},
        {"COURTPIECE_REDIS_ADDR=" + redis_addr_,
         absl::StrCat("COURTPIECE_TABLE_REDIS_DB=", RedisDb()), "COURTPIECE_TABLE_ADDR=" + i.addr,
         "COURTPIECE_TABLE_INSTANCE_ID=" + i.id, "COURTPIECE_TABLE_METRICS_ADDR=off",
         "COURTPIECE_TABLE_WALLET_ADDR=" + wallet_addr_,
         "COURTPIECE_TABLE_LOBBY_ADDR=" + receivers_->address(),
         "COURTPIECE_TABLE_MODERATION_ADDR=" + receivers_->address(), "COURTPIECE_TABLE_WORKERS=2",
         "COURTPIECE_TABLE_HEARTBEAT_TTL=1s", "COURTPIECE_TABLE_RPC_TIMEOUT=1s",
         "COURTPIECE_TABLE_ADOPT_GRACE=20s", "COURTPIECE_LOG_LEVEL=warn"});
    EXPECT_GT(i.pid, 0);
    EXPECT_TRUE(common::WaitServing(i.addr, absl::Seconds(15))) << i.addr;
    return i;
  }

  void OpenAccount(const std::string& player) {
    auto wallet =
        wv1::Wallet::NewStub(grpc::CreateChannel(wallet_addr_, grpc::InsecureChannelCredentials()));
    wv1::OpenAccountRequest request;
    request.set_player_id(player);
    wv1::OpenAccountResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::Status s = wallet->OpenAccount(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  // Creates `id` on `addr` with `host` seated at 0; answers the owner's address.
  std::string CreateTable(const std::string& addr, const std::string& id, const std::string& host) {
    OpenAccount(host);
    auto stub =
        pb::TableService::NewStub(grpc::CreateChannel(addr, grpc::InsecureChannelCredentials()));
    pb::CreateTableRequest request;
    request.set_table_id(id);
    request.set_host_player(host);
    request.set_bet_coins(25);
    request.set_turn_time_ms(30'000);
    request.set_game_options(R"({"game":"classic","target":1})");
    request.set_code(absl::StrCat(100000 + getpid() % 800000));
    pb::CreateTableResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::Status s = stub->CreateTable(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.table().owner_addr();
  }

  std::string redis_addr_, wallet_addr_;
  std::unique_ptr<storage::RedisClient> redis_;
  std::unique_ptr<storage::TestDatabase> db_;
  std::unique_ptr<table_service::testing::FakeReceivers> receivers_;
  pid_t wallet_pid_ = 0;
  Instance a_, b_;
  std::unique_ptr<GrpcTableDialer> per_player_;
  std::unique_ptr<MuxTableDialer> mux_;
  placement::RegistryKeys keys_{"cp:"};
};

TEST_P(RelayTableE2eTest, DialerOpensRelaysCommandsAndReadsTheOwnerRedirect) {
  const std::string owner = CreateTable(a_.addr, "gw-t1", "p1");
  ASSERT_EQ(owner, a_.addr);
  const std::string elsewhere = b_.addr;
  TableDialer& dialer = this->dialer();
  RedisOwnerLookup lookup(*redis_, keys_);

  // The owner lookup.
  absl::StatusOr<std::string> found = lookup.Lookup("gw-t1");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, a_.addr);
  EXPECT_EQ(lookup.Lookup("gw-nope").status(), absl::NotFoundError("unknown table gw-nope"));

  // Open at the owner: opened with the host's seat, then commands and their results.
  auto seen = std::make_shared<RecordingObserver>();
  std::shared_ptr<UpstreamStream> stream = dialer.Open(a_.addr, "p1", Open("gw-t1"), seen);
  std::optional<pb::Opened> opened = seen->WaitOpened();
  ASSERT_TRUE(opened.has_value()) << (seen->end ? seen->end->ToString() : "no answer");
  EXPECT_EQ(opened->seat(), 0);
  EXPECT_FALSE(opened->resumed());
  EXPECT_EQ(opened->table().table_id(), "gw-t1");
  ASSERT_TRUE(stream->Send(Command(1, "no_such_command")));
  ASSERT_TRUE(stream->Send(Command(2, "ask_bot")));  // no bot at seat 0: refused
  std::optional<pb::CommandResult> r1 = seen->WaitResult(1);
  ASSERT_TRUE(r1.has_value());
  EXPECT_EQ(r1->code(), static_cast<int>(absl::StatusCode::kInvalidArgument)) << r1->message();
  std::optional<pb::CommandResult> r2 = seen->WaitResult(2);
  ASSERT_TRUE(r2.has_value());
  EXPECT_NE(r2->code(), 0);

  // Open at the wrong instance: FAILED_PRECONDITION naming the owner in trailing metadata.
  auto redirected = std::make_shared<RecordingObserver>();
  dialer.Open(elsewhere, "p1", Open("gw-t1"), redirected);
  ASSERT_TRUE(redirected->WaitEnd());
  EXPECT_EQ(redirected->end->code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(redirected->end_owner_addr, a_.addr);
  EXPECT_TRUE(redirected->responses.empty());

  // Unknown table: NOT_FOUND, no address.
  auto unknown = std::make_shared<RecordingObserver>();
  dialer.Open(a_.addr, "p1", Open("gw-nope"), unknown);
  ASSERT_TRUE(unknown->WaitEnd());
  EXPECT_EQ(unknown->end->code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(unknown->end_owner_addr, "");

  // Nothing listening: UNAVAILABLE.
  auto dead = std::make_shared<RecordingObserver>();
  dialer.Open(absl::StrCat("127.0.0.1:", common::FreeLoopbackPort()), "p1", Open("gw-t1"), dead);
  ASSERT_TRUE(dead->WaitEnd());
  EXPECT_EQ(dead->end->code(), absl::StatusCode::kUnavailable);
  if (per_player_ != nullptr) {
    EXPECT_EQ(per_player_->cached_channels(), 3);
  }
  if (mux_ != nullptr) {  // one stream per live instance; the dead address's has ended
    EXPECT_EQ(mux_->live_streams(), 2);
    EXPECT_EQ(mux_->live_sessions(), 1);  // p1's at a_: the others ended
  }

  // Cancel ends the stream once, CANCELLED; later calls are harmless.
  stream->Cancel();
  ASSERT_TRUE(seen->WaitEnd());
  EXPECT_EQ(seen->end->code(), absl::StatusCode::kCancelled);
  EXPECT_FALSE(stream->Send(Command(3, "leave")));
  stream->Cancel();
  EXPECT_EQ(seen->ends, 1);
}

// Close() (a client gone) writes every command queued before it, then half-closes: the
// table takes the last command (here a leave) and ends the stream OK, rather than the stream
// being cut with the leave still queued (which the table would see as a disconnect).
TEST_P(RelayTableE2eTest, CloseSendsEveryQueuedCommandThenEndsTheStream) {
  ASSERT_EQ(CreateTable(a_.addr, "gw-t3", "p1"), a_.addr);
  OpenAccount("p2");
  TableDialer& dialer = this->dialer();
  auto host = std::make_shared<RecordingObserver>();
  std::shared_ptr<UpstreamStream> host_stream = dialer.Open(a_.addr, "p1", Open("gw-t3"), host);
  ASSERT_TRUE(host->WaitOpened().has_value());
  auto guest = std::make_shared<RecordingObserver>();
  std::shared_ptr<UpstreamStream> stream = dialer.Open(a_.addr, "p2", Open("gw-t3"), guest);
  ASSERT_TRUE(guest->WaitOpened().has_value());
  ASSERT_TRUE(stream->Send(Command(1, "join")));
  std::optional<pb::CommandResult> joined = guest->WaitResult(1);
  ASSERT_TRUE(joined.has_value());
  ASSERT_EQ(joined->code(), 0) << joined->message();
  for (uint64_t id = 2; id <= 11; ++id) ASSERT_TRUE(stream->Send(Command(id, "voice_discard")));
  ASSERT_TRUE(stream->Send(Command(12, "leave")));
  stream->Close();
  EXPECT_FALSE(stream->Send(Command(13, "join")));  // nothing after Close
  ASSERT_TRUE(guest->WaitEnd());
  EXPECT_TRUE(guest->end->ok()) << guest->end->ToString();
  // The table ends a half-closed stream at once (the client is not reading any more), so
  // results after that are not sent; the commands still reach the table, in order. The
  // host saw p2 leave (a free seat), not p2's connection drop.
  std::optional<std::string> p2_went;
  WaitUntil(host->mu, host->cv, kWait, [&] {
    for (const pb::PlayResponse& m : host->responses) {
      if (m.has_event() && m.event().player() == "p2" &&
          (m.event().type() == "unseated" || m.event().type() == "away")) {
        p2_went = absl::StrCat(m.event().type(), " ", m.event().detail());
      }
    }
    return p2_went.has_value();
  });
  EXPECT_EQ(p2_went, std::optional<std::string>("unseated left"));
  EXPECT_EQ(guest->ends, 1);
  host_stream->Cancel();
}

// The gateway's shutdown: main destroys the dialer before the metrics its channels record
// each finished call to. Every stream still running has ended (its observer told) by the time
// the destructor returns, so no call finishes on a gRPC thread after that.
TEST_P(RelayTableE2eTest, DestroyingTheDialerEndsEveryStreamBeforeItReturns) {
  ASSERT_EQ(CreateTable(a_.addr, "gw-t4", "p1"), a_.addr);
  auto seen = std::make_shared<RecordingObserver>();
  std::shared_ptr<UpstreamStream> stream = dialer().Open(a_.addr, "p1", Open("gw-t4"), seen);
  ASSERT_TRUE(seen->WaitOpened().has_value());
  mux_.reset();
  per_player_.reset();
  {
    std::lock_guard<std::mutex> lock(seen->mu);  // no wait: it has ended already
    EXPECT_EQ(seen->ends, 1);
    ASSERT_TRUE(seen->end.has_value());
    EXPECT_EQ(seen->end->code(),
              GetParam() == "mux" ? absl::StatusCode::kUnavailable : absl::StatusCode::kCancelled)
        << *seen->end;
  }
  EXPECT_FALSE(stream->Send(Command(1, "leave")));  // the handle stays safe to call
  stream->Cancel();
}

TEST_P(RelayTableE2eTest, PlaySessionResumesOnTheSurvivorAfterKillNine) {
  const std::string owner = CreateTable(a_.addr, "gw-t2", "p1");
  ASSERT_EQ(owner, a_.addr);
  TableDialer& dialer = this->dialer();
  RedisOwnerLookup lookup(*redis_, keys_);
  ThreadScheduler scheduler;
  NullGatewayMetrics metrics;
  PlaySessionService service(PlayDeps{.dialer = dialer,
                                      .owners = lookup,
                                      .scheduler = scheduler,
                                      .clock = RealClock::Instance(),
                                      .metrics = metrics},
                             PlaySessionOptions{});
  auto sink = std::make_shared<RecordingSink>();
  std::shared_ptr<PlayConnection> conn = service.Connect("p1", "test", sink);
  client::v1::PlayRequest open;
  open.mutable_open()->set_table_id("gw-t2");
  conn->OnClientMessage(open);
  ASSERT_TRUE(sink->WaitFor(kWait, [](const auto& m) { return m.has_event(); }));
  ASSERT_FALSE(sink->finish.has_value()) << *sink->finish;
  uint64_t last_seq = 0;
  {
    std::lock_guard<std::mutex> lock(sink->mu);
    EXPECT_EQ(sink->messages[0].opened().seat(), 0);
    for (const auto& m : sink->messages) {
      if (m.has_event()) last_seq = std::max(last_seq, m.event().seq());
    }
  }
  EXPECT_GT(last_seq, 0u);  // the seat's view came with seqs

  const absl::Time killed_at = absl::Now();
  kill(a_.pid, SIGKILL);
  common::WaitExit(a_.pid);
  a_.pid = 0;
  ASSERT_TRUE(sink->WaitFor(absl::Seconds(20), [](const auto& m) {
    return m.has_notice() && m.notice().type() == "reconnected";
  })) << sink->Dump();
  std::cout << "resumed " << absl::FormatDuration(absl::Now() - killed_at)
            << " after the owner's kill -9 (heartbeat TTL 1s)\n";
  ASSERT_FALSE(sink->finish.has_value()) << *sink->finish;
  EXPECT_EQ(sink->Notices(), (std::vector<std::string>{"reconnecting", "reconnected"}))
      << sink->Dump();
  absl::StatusOr<std::string> now_owner = lookup.Lookup("gw-t2");
  ASSERT_TRUE(now_owner.ok()) << now_owner.status();
  EXPECT_EQ(*now_owner, b_.addr);

  // Commands reach the survivor; no event was doubled across the move.
  client::v1::PlayRequest command;
  command.mutable_command()->set_command_id(9);
  command.mutable_command()->set_type("no_such_command");
  conn->OnClientMessage(command);
  ASSERT_TRUE(sink->WaitFor(
      kWait, [](const auto& m) { return m.has_result() && m.result().command_id() == 9; }));
  {
    std::lock_guard<std::mutex> lock(sink->mu);
    uint64_t prev = 0;
    int results = 0;
    for (const auto& m : sink->messages) {
      if (m.has_event()) {
        EXPECT_GT(m.event().seq(), prev) << m.event().type();
        prev = m.event().seq();
      }
      if (m.has_result()) {
        ++results;
        EXPECT_EQ(m.result().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
      }
      EXPECT_EQ(m.opened().table().SerializeAsString().find("127.0.0.1"), std::string::npos);
    }
    EXPECT_EQ(results, 1);
  }
  conn->OnClientGone();
}

INSTANTIATE_TEST_SUITE_P(Dialers, RelayTableE2eTest, ::testing::Values("per_player", "mux"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

}  // namespace
}  // namespace courtpiece::gateway
