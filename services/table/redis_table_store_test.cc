// RedisTableStore's own integration tests (the shared contract is in
// table_store_contract_test.cc): a Redis restart with AOF through deploy/local/redis.sh, the
// hash slot of a table's keys, bad input refused before any I/O.
#include "services/table/redis_table_store.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/redis_client.h"
#include "courtpiece/storage/testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::table_service {
namespace {

using C = absl::StatusCode;
using storage::RedisReply;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// A redis-server of the test's own, run by deploy/local/redis.sh in a temporary dir.
class ScriptRedis {
 public:
  ScriptRedis() : port_(::courtpiece::common::FreeLoopbackPort()) {
    char dir[] = "/tmp/cp-tstore-redis-XXXXXX";
    dir_ = ::mkdtemp(dir) != nullptr ? dir : "";
  }
  ~ScriptRedis() {
    Run("stop");
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  bool Run(const std::string& command) {
    const std::string line =
        absl::StrCat(::courtpiece::common::SourceDir(), "/deploy/local/redis.sh ", command,
                     " --port ", port_, " --dir ", dir_, " >/dev/null");
    return !dir_.empty() && std::system(line.c_str()) == 0;
  }
  int port() const { return port_; }

 private:
  int port_;
  std::string dir_;
};

TEST(RedisTableStore, RestartWithAofKeepsTheDataAndTheOutageIsUnavailable) {
  ScriptRedis server;
  ASSERT_TRUE(server.Run("start"));
  storage::RedisOptions options;
  options.port = server.port();
  options.reconnect_backoff_ms = 20;
  {  // deploy/local/redis.sh runs Redis with AOF, fsynced every second.
    storage::RedisClient probe(options);
    EXPECT_EQ(*probe.Command({"CONFIG", "GET", "appendonly"}),
              RedisReply::Array({RedisReply::String("appendonly"), RedisReply::String("yes")}));
    EXPECT_EQ(
        *probe.Command({"CONFIG", "GET", "appendfsync"}),
        RedisReply::Array({RedisReply::String("appendfsync"), RedisReply::String("everysec")}));
  }
  RedisTableStore store({.redis = options, .connections = 2});
  ASSERT_TRUE(store.Heartbeat({"a", "127.0.0.1:1001"}, 600'000).ok());
  ASSERT_EQ(*store.Create("t1", "a", "s0"), (Owner{"a", 1}));
  ASSERT_TRUE(store.Save("t1", {"a", 1}, "s1", {"e1", "e2"}, 10).ok());

  ASSERT_TRUE(server.Run("stop"));  // a clean shutdown: the AOF is flushed
  EXPECT_EQ(store.Save("t1", {"a", 1}, "s2", {"e3"}, 10).code(), C::kUnavailable);
  EXPECT_EQ(store.Load("t1").status().code(), C::kUnavailable);

  ASSERT_TRUE(server.Run("start"));
  absl::StatusOr<StoredTableBytes> loaded = store.Load("t1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->owner, (Owner{"a", 1}));
  EXPECT_EQ(loaded->state, "s1");
  EXPECT_THAT(loaded->events, ElementsAre("e1", "e2"));
  EXPECT_THAT(*store.KnownInstances(), ElementsAre("a"));
  EXPECT_THAT(*store.TablesOf("a"), ElementsAre("t1"));

  ASSERT_TRUE(store.Save("t1", {"a", 1}, "s2", {"e3"}, 10).ok());
  loaded = store.Load("t1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->state, "s2");
  EXPECT_THAT(loaded->events, ElementsAre("e1", "e2", "e3"));
}

// The hash tag of a key by the Redis Cluster rule: the text between the first '{' and the
// next '}' when it is not empty, else the whole key.
std::string HashTag(const std::string& key) {
  size_t open = key.find('{');
  if (open == std::string::npos) return key;
  size_t close = key.find('}', open + 1);
  if (close == std::string::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), the Redis Cluster key hash.
int Slot(const std::string& key) {
  uint16_t crc = 0;
  for (unsigned char byte : HashTag(key)) {
    crc ^= static_cast<uint16_t>(byte) << 8;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) != 0 ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                                : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc % 16384;
}

TEST(RedisTableStore, KeysOfOneTableShareOneHashSlot) {
  // CLUSTER KEYSLOT answers only in cluster mode; check the tags and compute the slots.
  EXPECT_EQ(Slot("123456789"), 0x31C3 % 16384);  // the CRC16/XMODEM check value
  absl::StatusOr<std::unique_ptr<storage::TestRedis>> redis = storage::TestRedis::Create();
  ASSERT_TRUE(redis.ok()) << redis.status();
  RedisTableStore store({.redis = (*redis)->options(), .key_prefix = (*redis)->prefix()});
  ASSERT_TRUE(store.Create("t-1.x_y", "a", "s").ok());
  ASSERT_TRUE(store.Save("t-1.x_y", {"a", 1}, "s1", {"e1"}, 10).ok());
  ASSERT_TRUE(store.Create("t2", "a", "s").ok());

  std::vector<std::string> table_keys;
  std::string cursor = "0";
  do {
    absl::StatusOr<RedisReply> page = (*redis)->client().Command(
        {"SCAN", cursor, "MATCH", (*redis)->prefix() + "{t-1.x_y}*", "COUNT", "1000"});
    ASSERT_TRUE(page.ok()) << page.status();
    cursor = page->elements[0].str;
    for (const RedisReply& key : page->elements[1].elements) table_keys.push_back(key.str);
  } while (cursor != "0");
  EXPECT_THAT(table_keys, UnorderedElementsAre(store.OwnerKey("t-1.x_y"), store.StateKey("t-1.x_y"),
                                               store.EventsKey("t-1.x_y")));
  for (const std::string& key : table_keys) {
    SCOPED_TRACE(key);
    EXPECT_EQ(HashTag(key), "t-1.x_y");
    EXPECT_EQ(Slot(key), Slot("{t-1.x_y}"));
  }
  EXPECT_NE(Slot(store.OwnerKey("t-1.x_y")), Slot(store.OwnerKey("t2")));  // really hashed
}

TEST(RedisTableStore, ALostClaimUndoesOnlyTheIndexEntryItAdded) {
  absl::StatusOr<std::unique_ptr<storage::TestRedis>> redis = storage::TestRedis::Create();
  ASSERT_TRUE(redis.ok()) << redis.status();
  RedisTableStore store({.redis = (*redis)->options(), .key_prefix = (*redis)->prefix()});
  ASSERT_TRUE(store.Create("t1", "a", "s").ok());
  EXPECT_EQ(store.Claim("t1", "c", 7).status().code(), C::kAborted);
  EXPECT_THAT(*store.TablesOf("c"), ::testing::IsEmpty());  // its own entry undone
  // An entry c already had (another call of c's, in flight before its script) stays.
  ASSERT_TRUE((*redis)->client().Command({"SADD", store.InstanceTablesKey("c"), "t1"}).ok());
  EXPECT_EQ(store.Claim("t1", "c", 7).status().code(), C::kAborted);
  EXPECT_EQ(store.Create("t1", "c", "s").status().code(), C::kAlreadyExists);
  EXPECT_THAT(*store.TablesOf("c"), ElementsAre("t1"));
  EXPECT_EQ(*store.GetOwner("t1"), (Owner{"a", 1}));
}

TEST(RedisTableStore, BadInputIsRefusedBeforeAnyIo) {
  storage::RedisOptions nowhere;
  nowhere.port = 1;  // nothing listens: any I/O would be Unavailable
  nowhere.reconnect_attempts_max = 1;
  RedisTableStore store({.redis = nowhere, .connections = 1});
  EXPECT_EQ(store.Create("", "a", "s").status().code(), C::kInvalidArgument);
  EXPECT_EQ(store.Create(std::string(65, 't'), "a", "s").status().code(), C::kInvalidArgument);
  EXPECT_EQ(store.Create("t{1}", "a", "s").status().code(), C::kInvalidArgument);
  EXPECT_EQ(store.Save("t1", {"a", 1}, "s", {}, -1).code(), C::kInvalidArgument);
  EXPECT_EQ(store.Claim("t1", "b", 0).status().code(), C::kInvalidArgument);
  EXPECT_EQ(store.Heartbeat({"a", "h:1"}, 0).code(), C::kInvalidArgument);
  // The same calls with good input do reach for the server.
  EXPECT_EQ(store.Create("t1", "a", "s").status().code(), C::kUnavailable);
  EXPECT_EQ(store.Save("t1", {"a", 1}, "s", {}, 1).code(), C::kUnavailable);
}

}  // namespace
}  // namespace courtpiece::table_service
