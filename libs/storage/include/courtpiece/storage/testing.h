// Integration-test helpers: a fresh database per test, a private Redis key prefix per test.
//
//   absl::StatusOr<std::unique_ptr<TestDatabase>> db = TestDatabase::Create(
//       {.migrations = {{"wallet", common::SourceDir() + "/services/wallet/migrations"}}});
//   ASSERT_TRUE(db.ok()) << db.status();
//   PgPool pool((*db)->PoolOptions());
//
//   absl::StatusOr<std::unique_ptr<TestRedis>> redis = TestRedis::Create();
//   ASSERT_TRUE(redis.ok()) << redis.status();
//   (*redis)->client().Command({"SET", (*redis)->Key("x"), "1"});
//
// Contract:
//  - Create() reads COURTPIECE_TEST_PG_URL (admin URL) / COURTPIECE_TEST_REDIS_ADDR
//    (host:port); when unset it returns FailedPrecondition saying how to start the local
//    servers (tests must fail, not skip). CreateOn(admin_url, ...) uses the server given (a
//    test that runs a server of its own).
//  - TestDatabase creates a uniquely named database (cpt_<pid>_<n>_<random>), applies the
//    given migration dirs in order, and in its destructor terminates that database's
//    backends and drops it (kept when COURTPIECE_TEST_KEEP_DB=1, for debugging).
//  - TestRedis picks a unique key prefix ("cpt:<pid>:<n>:<random>:"); its destructor deletes
//    every key with that prefix (SCAN + DEL). Tests must use Key() for every key they touch
//    (hash tags still work: Key("{table-1}:seat")) and must never FLUSHDB/FLUSHALL: other
//    tests share the server.
//
// Thread-safety: the objects are immutable after Create; their clients follow their own
// thread-safety notes.
#ifndef COURTPIECE_STORAGE_TESTING_H_
#define COURTPIECE_STORAGE_TESTING_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "courtpiece/storage/pg_pool.h"
#include "courtpiece/storage/redis_client.h"

namespace courtpiece::storage {

inline constexpr char kTestPgUrlEnv[] = "COURTPIECE_TEST_PG_URL";
inline constexpr char kTestRedisAddrEnv[] = "COURTPIECE_TEST_REDIS_ADDR";

// The value of an environment variable, or FailedPrecondition with setup instructions.
absl::StatusOr<std::string> RequiredTestEnv(const char* name);

// `url` with its database replaced by `dbname` (libpq URL or key=value conninfo).
std::string ReplaceDatabaseInUrl(absl::string_view url, absl::string_view dbname);

struct TestDatabaseOptions {
  // (schema, dir) pairs applied in order with ApplyMigrations.
  std::vector<std::pair<std::string, std::string>> migrations;
};

class TestDatabase {
 public:
  static absl::StatusOr<std::unique_ptr<TestDatabase>> Create(TestDatabaseOptions options = {});
  static absl::StatusOr<std::unique_ptr<TestDatabase>> CreateOn(const std::string& admin_url,
                                                                TestDatabaseOptions options = {});
  ~TestDatabase();
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& name() const { return name_; }
  const std::string& url() const { return url_; }
  const std::string& admin_url() const { return admin_url_; }
  // Pool options for this database (size_max 4, short timeouts suited to tests).
  PgPoolOptions PoolOptions() const;

 private:
  TestDatabase(std::string admin_url, std::string name);
  std::string admin_url_;
  std::string name_;
  std::string url_;
};

class TestRedis {
 public:
  static absl::StatusOr<std::unique_ptr<TestRedis>> Create();
  ~TestRedis();
  TestRedis(const TestRedis&) = delete;
  TestRedis& operator=(const TestRedis&) = delete;

  const std::string& prefix() const { return prefix_; }
  std::string Key(absl::string_view suffix) const { return prefix_ + std::string(suffix); }
  const RedisOptions& options() const { return options_; }
  // A client for the test's own use (the helper uses a separate one for cleanup).
  RedisClient& client() { return *client_; }

 private:
  TestRedis(RedisOptions options, std::string prefix);
  RedisOptions options_;
  std::string prefix_;
  std::unique_ptr<RedisClient> client_;
};

}  // namespace courtpiece::storage

#endif  // COURTPIECE_STORAGE_TESTING_H_
