// Integration tests of RedisClient against a real Redis (COURTPIECE_TEST_REDIS_ADDR), plus
// one private redis-server the test starts and kills itself.
#include "courtpiece/storage/redis_client.h"

#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/testing.h"
#include "gtest/gtest.h"

extern char** environ;

namespace courtpiece::storage {
namespace {

using C = absl::StatusCode;
using R = RedisReply;

class RedisClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestRedis>> redis = TestRedis::Create();
    ASSERT_TRUE(redis.ok()) << redis.status();
    redis_ = *std::move(redis);
  }
  RedisClient& client() { return redis_->client(); }
  std::string Key(absl::string_view k) { return redis_->Key(k); }

  std::unique_ptr<TestRedis> redis_;
};

TEST_F(RedisClientTest, CommandsAndReplyTypes) {
  EXPECT_EQ(*client().Command({"SET", Key("s"), "v"}), R::Status("OK"));
  EXPECT_EQ(*client().Command({"GET", Key("s")}), R::String("v"));
  EXPECT_EQ(*client().Command({"GET", Key("missing")}), R::Nil());
  EXPECT_EQ(*client().Command({"INCRBY", Key("n"), "5"}), R::Integer(5));
  EXPECT_EQ(*client().Command({"RPUSH", Key("l"), "a", "b"}), R::Integer(2));
  EXPECT_EQ(*client().Command({"LRANGE", Key("l"), "0", "-1"}),
            R::Array({R::String("a"), R::String("b")}));
  EXPECT_EQ(client().reconnects(), 0);
}

TEST_F(RedisClientTest, APipelineAnswersEachCommandInOrderAndKeepsTheConnection) {
  absl::StatusOr<std::vector<absl::StatusOr<R>>> r = client().Pipeline(
      {{"SET", Key("p"), "1"}, {"INCR", Key("p")}, {"LPUSH", Key("p"), "x"}, {"GET", Key("p")}});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ(*(*r)[0], R::Status("OK"));
  EXPECT_EQ(*(*r)[1], R::Integer(2));
  EXPECT_EQ((*r)[2].status().code(), C::kFailedPrecondition);  // WRONGTYPE, alone
  EXPECT_EQ(*(*r)[3], R::String("2"));
  EXPECT_TRUE(client().Pipeline({})->empty());
  EXPECT_EQ(client().Pipeline({{"GET", Key("p")}, {}}).status().code(), C::kInvalidArgument);
  EXPECT_EQ(client().reconnects(), 0);
}

TEST_F(RedisClientTest, BinaryKeysAndValuesRoundTrip) {
  const std::string value("\x00\r\n\xff$*", 6);
  const std::string key = Key(std::string("bin\x00key", 7));
  EXPECT_EQ(*client().Command({"SET", key, value}), R::Status("OK"));
  EXPECT_EQ(*client().Command({"GET", key}), R::String(value));
  EXPECT_EQ(*client().Command({"STRLEN", key}), R::Integer(6));
}

TEST_F(RedisClientTest, ErrorRepliesBecomeStatusesAndKeepTheConnection) {
  ASSERT_TRUE(client().Command({"SET", Key("s"), "text"}).ok());
  EXPECT_EQ(client().Command({"INCR", Key("s")}).status().code(), C::kInvalidArgument);
  EXPECT_EQ(client().Command({"LPUSH", Key("s"), "x"}).status().code(), C::kFailedPrecondition);
  EXPECT_EQ(client().Command({"NO_SUCH_COMMAND"}).status().code(), C::kInvalidArgument);
  EXPECT_EQ(client().Command({}).status().code(), C::kInvalidArgument);
  EXPECT_EQ(*client().Command({"GET", Key("s")}), R::String("text"));
  EXPECT_EQ(client().reconnects(), 0);
}

TEST_F(RedisClientTest, EvalShaFallsBackToEvalOnNoScript) {
  // A body unique to this run, so the server cannot have it cached yet.
  const RedisScript script(absl::StrCat("-- ", redis_->prefix(), "\n",
                                        "redis.call('SET', KEYS[1], ARGV[1])\n"
                                        "return {redis.call('GET', KEYS[1]), 42}"));
  EXPECT_EQ(*client().Command({"SCRIPT", "EXISTS", script.sha()}), R::Array({R::Integer(0)}));
  EXPECT_EQ(*client().Eval(script, {Key("k")}, {"v1"}),
            R::Array({R::String("v1"), R::Integer(42)}));
  EXPECT_EQ(*client().Command({"SCRIPT", "EXISTS", script.sha()}), R::Array({R::Integer(1)}));
  EXPECT_EQ(*client().Eval(script, {Key("k")}, {"v2"}),
            R::Array({R::String("v2"), R::Integer(42)}));

  const std::string other = absl::StrCat("-- ", redis_->prefix(), " load\nreturn ARGV[1]");
  absl::StatusOr<std::string> sha = client().ScriptLoad(other);
  ASSERT_TRUE(sha.ok()) << sha.status();
  EXPECT_EQ(*sha, Sha1Hex(other));
  EXPECT_EQ(*client().EvalSha(*sha, "", {}, {"x"}), R::String("x"));
}

TEST_F(RedisClientTest, ScriptErrorsMapToStatuses) {
  const RedisScript fenced("return redis.error_reply('STALE_EPOCH owner moved')");
  absl::Status s = client().Eval(fenced, {Key("k")}, {}).status();
  EXPECT_EQ(s.code(), C::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("STALE_EPOCH owner moved"), absl::string_view::npos);
  const RedisScript broken("return redis.call('NOPE')");
  EXPECT_EQ(client().Eval(broken, {}, {}).status().code(), C::kInvalidArgument);
}

TEST_F(RedisClientTest, CommandTimeoutIsDeadlineExceededThenReconnects) {
  RedisOptions options = redis_->options();
  options.command_timeout_ms = 200;
  RedisClient fast(options);
  const absl::Time start = absl::Now();
  absl::Status s = fast.Command({"BLPOP", Key("never"), "20"}).status();
  EXPECT_EQ(s.code(), C::kDeadlineExceeded) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(*fast.Command({"PING"}), R::Status("PONG"));
  EXPECT_EQ(fast.reconnects(), 1);
}

TEST_F(RedisClientTest, IdleConnectionKilledIsReplacedBeforeTheNextCommand) {
  RedisClient victim(redis_->options());
  absl::StatusOr<RedisReply> id = victim.Command({"CLIENT", "ID"});
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*client().Command({"CLIENT", "KILL", "ID", std::to_string(id->integer)}),
            R::Integer(1));
  // Wait (bounded) until the server has freed the connection: its close() has then put
  // the FIN on our loopback socket, whatever the machine's load.
  const std::string gone_id = "id=" + std::to_string(id->integer) + " ";
  for (int i = 0; i < 200; ++i) {
    absl::StatusOr<RedisReply> list = client().Command({"CLIENT", "LIST"});
    ASSERT_TRUE(list.ok()) << list.status();
    if (list->str.find(gone_id) == std::string::npos) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(*victim.Command({"PING"}), R::Status("PONG"));
  EXPECT_EQ(victim.reconnects(), 1);
}

TEST_F(RedisClientTest, ConnectionKilledMidCommandIsUnavailableThenReconnects) {
  RedisOptions options = redis_->options();
  options.command_timeout_ms = 60000;
  RedisClient victim(options);
  absl::StatusOr<RedisReply> id = victim.Command({"CLIENT", "ID"});
  ASSERT_TRUE(id.ok()) << id.status();
  absl::Status blocked;
  absl::Duration took;
  std::thread waiter([&] {
    const absl::Time start = absl::Now();
    blocked = victim.Command({"BLPOP", Key("never"), "30"}).status();
    took = absl::Now() - start;
  });
  const std::string id_field = absl::StrCat("id=", id->integer, " ");
  bool in_blpop = false;
  for (int i = 0; i < 500 && !in_blpop; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
    absl::StatusOr<RedisReply> list = client().Command({"CLIENT", "LIST"});
    if (!list.ok()) continue;
    for (absl::string_view line : absl::StrSplit(list->str, '\n')) {
      if (absl::StartsWith(line, id_field) && absl::StrContains(line, "cmd=blpop")) {
        in_blpop = true;
      }
    }
  }
  if (!in_blpop) {
    waiter.join();
    FAIL() << "the victim never reached BLPOP";
  }
  EXPECT_EQ(*client().Command({"CLIENT", "KILL", "ID", std::to_string(id->integer)}),
            R::Integer(1));
  waiter.join();
  EXPECT_EQ(blocked.code(), C::kUnavailable) << blocked;
  EXPECT_LT(took, absl::Seconds(10));  // the BLPOP was 30 s
  EXPECT_EQ(*victim.Command({"PING"}), R::Status("PONG"));
  EXPECT_EQ(victim.reconnects(), 1);
}

TEST(RedisClientNoServer, ConnectRefusedIsUnavailableWithinBound) {
  RedisOptions options;
  options.port = 1;
  options.reconnect_attempts_max = 3;
  options.reconnect_backoff_ms = 20;
  RedisClient client(options);
  const absl::Time start = absl::Now();
  EXPECT_EQ(client.Command({"PING"}).status().code(), C::kUnavailable);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

// A redis-server owned by the test, to kill and restart.
class OwnRedis {
 public:
  explicit OwnRedis(int port) : port_(port) {}
  ~OwnRedis() { Kill(); }
  bool Start() {
    const std::string port = std::to_string(port_);
    std::vector<std::string> args = {"redis-server", "--port",    port,       "--bind",
                                     "127.0.0.1",    "--save",    "",         "--appendonly",
                                     "no",           "--logfile", "/dev/null"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawnp(&pid_, "redis-server", nullptr, nullptr, argv.data(), environ) != 0) {
      return false;
    }
    RedisOptions options;
    options.port = port_;
    RedisClient probe(options);
    for (int i = 0; i < 200; ++i) {
      if (probe.Command({"PING"}).ok()) return true;
      absl::SleepFor(absl::Milliseconds(25));
    }
    return false;
  }
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  int port_;
  pid_t pid_ = -1;
};

TEST(RedisClientOwnServer, ServerKilledIsUnavailableAndClientReconnectsAfterRestart) {
  const int port = ::courtpiece::common::FreeLoopbackPort();
  OwnRedis server(port);
  ASSERT_TRUE(server.Start());
  RedisOptions options;
  options.port = port;
  options.reconnect_backoff_ms = 20;
  RedisClient client(options);
  ASSERT_EQ(*client.Command({"SET", "k", "v"}), R::Status("OK"));
  server.Kill();
  EXPECT_EQ(client.Command({"GET", "k"}).status().code(), C::kUnavailable);
  EXPECT_EQ(client.Command({"GET", "k"}).status().code(), C::kUnavailable);  // still down
  ASSERT_TRUE(server.Start());
  EXPECT_EQ(*client.Command({"GET", "k"}), R::Nil());  // no persistence: a fresh server
  EXPECT_EQ(client.reconnects(), 1);
}

}  // namespace
}  // namespace courtpiece::storage
