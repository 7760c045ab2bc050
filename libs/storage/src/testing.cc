#include "courtpiece/storage/testing.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <pqxx/pqxx>
#include <random>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "courtpiece/storage/migrations.h"
#include "pg_internal.h"

namespace courtpiece::storage {
namespace {

constexpr int kAdminConnectTimeoutMs = 5000;
constexpr int kScanBatch = 500;
constexpr int kScanRoundsMax = 100000;  // bounds the cleanup loop

std::string UniqueSuffix() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  return absl::StrCat(getpid(), "_", counter.fetch_add(1), "_",
                      absl::Hex(rd() & 0xffffff, absl::kZeroPad6));
}

absl::Status RunAdmin(const std::string& admin_url, const std::vector<std::string>& statements) {
  try {
    pqxx::connection conn(
        internal::WithConnectTimeout(admin_url, kAdminConnectTimeoutMs, "courtpiece-test"));
    pqxx::nontransaction tx(conn);
    for (const std::string& sql : statements) tx.exec(sql);
    return absl::OkStatus();
  } catch (...) {
    return internal::PgExceptionToStatus(std::current_exception());
  }
}

}  // namespace

absl::StatusOr<std::string> RequiredTestEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value != nullptr && *value != '\0') return std::string(value);
  return absl::FailedPreconditionError(
      absl::StrCat(name,
                   " is not set. Integration tests need real servers: run\n"
                   "  deploy/local/postgres.sh start --port 55432 && deploy/local/redis.sh start "
                   "--port 56379\n"
                   "  export COURTPIECE_TEST_PG_URL=$(deploy/local/postgres.sh url --port 55432)\n"
                   "  export COURTPIECE_TEST_REDIS_ADDR=127.0.0.1:56379"));
}

std::string ReplaceDatabaseInUrl(absl::string_view url, absl::string_view dbname) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == absl::string_view::npos) {
    return absl::StrCat(url, " dbname=", dbname);  // key=value: the last keyword wins
  }
  const size_t authority_begin = scheme_end + 3;
  const size_t authority_end = url.find_first_of("/?", authority_begin);
  const absl::string_view head =
      url.substr(0, authority_end == absl::string_view::npos ? url.size() : authority_end);
  const size_t query = url.find('?', authority_begin);
  const absl::string_view tail =
      query == absl::string_view::npos ? absl::string_view() : url.substr(query);
  return absl::StrCat(head, "/", dbname, tail);
}

TestDatabase::TestDatabase(std::string admin_url, std::string name)
    : admin_url_(std::move(admin_url)),
      name_(std::move(name)),
      url_(ReplaceDatabaseInUrl(admin_url_, name_)) {}

absl::StatusOr<std::unique_ptr<TestDatabase>> TestDatabase::Create(TestDatabaseOptions options) {
  absl::StatusOr<std::string> admin_url = RequiredTestEnv(kTestPgUrlEnv);
  if (!admin_url.ok()) return admin_url.status();
  return CreateOn(*admin_url, std::move(options));
}

absl::StatusOr<std::unique_ptr<TestDatabase>> TestDatabase::CreateOn(const std::string& admin_url,
                                                                     TestDatabaseOptions options) {
  const std::string name = absl::StrCat("cpt_", UniqueSuffix());
  absl::Status created = RunAdmin(admin_url, {absl::StrCat("CREATE DATABASE ", name)});
  if (!created.ok()) {
    return absl::Status(created.code(), absl::StrCat("creating test database via ", admin_url, ": ",
                                                     created.message()));
  }
  std::unique_ptr<TestDatabase> db(new TestDatabase(admin_url, name));
  for (const auto& [schema, dir] : options.migrations) {
    absl::StatusOr<MigrateReport> report =
        ApplyMigrations({.pg_url = db->url(), .schema = schema, .dir = dir});
    if (!report.ok()) return report.status();  // ~TestDatabase drops it
  }
  return db;
}

TestDatabase::~TestDatabase() {
  const char* keep = std::getenv("COURTPIECE_TEST_KEEP_DB");
  if (keep != nullptr && std::string(keep) == "1") {
    std::fprintf(stderr, "TestDatabase: kept %s\n", url_.c_str());
    return;
  }
  absl::Status dropped = RunAdmin(
      admin_url_,
      {absl::StrCat("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '",
                    name_, "' AND pid <> pg_backend_pid()"),
       absl::StrCat("DROP DATABASE IF EXISTS ", name_, " WITH (FORCE)")});
  if (!dropped.ok()) {
    std::fprintf(stderr, "TestDatabase: dropping %s failed: %s\n", name_.c_str(),
                 dropped.ToString().c_str());
  }
}

PgPoolOptions TestDatabase::PoolOptions() const {
  PgPoolOptions options;
  options.url = url_;
  options.size_max = 4;
  options.acquire_timeout_ms = 5000;
  options.connect_timeout_ms = 5000;
  options.statement_timeout_ms = 30000;
  options.application_name = "courtpiece-test";
  return options;
}

TestRedis::TestRedis(RedisOptions options, std::string prefix)
    : options_(std::move(options)),
      prefix_(std::move(prefix)),
      client_(std::make_unique<RedisClient>(options_)) {}

absl::StatusOr<std::unique_ptr<TestRedis>> TestRedis::Create() {
  absl::StatusOr<std::string> addr = RequiredTestEnv(kTestRedisAddrEnv);
  if (!addr.ok()) return addr.status();
  absl::StatusOr<RedisOptions> options = ParseRedisAddr(*addr);
  if (!options.ok()) return options.status();
  std::string suffix = UniqueSuffix();
  std::unique_ptr<TestRedis> redis(new TestRedis(
      *options, absl::StrCat("cpt:", absl::StrReplaceAll(suffix, {{"_", ":"}}), ":")));
  absl::Status connected = redis->client_->Connect();
  if (!connected.ok()) {
    return absl::Status(connected.code(), absl::StrCat("connecting via ", kTestRedisAddrEnv, "=",
                                                       *addr, ": ", connected.message()));
  }
  return redis;
}

TestRedis::~TestRedis() {
  RedisClient cleaner(options_);
  std::string cursor = "0";
  for (int round = 0; round < kScanRoundsMax; ++round) {
    absl::StatusOr<RedisReply> page = cleaner.Command(
        {"SCAN", cursor, "MATCH", prefix_ + "*", "COUNT", std::to_string(kScanBatch)});
    if (!page.ok() || page->elements.size() != 2) {
      std::fprintf(stderr, "TestRedis: cleanup of %s* failed\n", prefix_.c_str());
      return;
    }
    cursor = page->elements[0].str;
    std::vector<std::string> del = {"UNLINK"};
    for (const RedisReply& key : page->elements[1].elements) del.push_back(key.str);
    if (del.size() > 1) (void)cleaner.Command(del);
    if (cursor == "0") return;
  }
}

}  // namespace courtpiece::storage
