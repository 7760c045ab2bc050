// Integration tests of ApplyMigrations and courtpiece-migrate against a real PostgreSQL.
#include "courtpiece/storage/migrations.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/pg_pool.h"
#include "courtpiece/storage/testing.h"
#include "gtest/gtest.h"

namespace courtpiece::storage {
namespace {

namespace fs = std::filesystem;
using C = absl::StatusCode;

class MigrationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestDatabase>> db = TestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    static std::atomic<int> n{0};
    dir_ = fs::temp_directory_path() / absl::StrCat("cp_mig_", getpid(), "_", n++);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    pool_ = std::make_unique<PgPool>(db_->PoolOptions());
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& sql) {
    std::ofstream(dir_ / name, std::ios::binary | std::ios::trunc) << sql;
  }
  MigrateOptions Options(const std::string& schema = "wallet") {
    return {.pg_url = db_->url(), .schema = schema, .dir = dir_.string()};
  }
  int64_t Count(const std::string& sql) {
    int64_t n = -1;
    absl::Status s = pool_->Run([&](PgTransaction& tx) -> absl::Status {
      absl::StatusOr<PgRow> row = tx.ExecOneRow(sql);
      if (!row.ok()) return row.status();
      n = *row->Int64(0);
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << s;
    return n;
  }

  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<PgPool> pool_;
  fs::path dir_;
};

TEST_F(MigrationsTest, AppliesInOrderRecordsRowsAndIsIdempotent) {
  Write("0002_seed.sql", "INSERT INTO accounts (id, coins) VALUES (1, 100);");
  Write("0001_accounts.sql", "CREATE TABLE accounts (id bigint PRIMARY KEY, coins bigint);");
  absl::StatusOr<MigrateReport> first = ApplyMigrations(Options());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->applied, (std::vector<std::string>{"0001_accounts.sql", "0002_seed.sql"}));
  EXPECT_EQ(first->already_applied, 0);
  EXPECT_EQ(Count("SELECT coins FROM wallet.accounts WHERE id = 1"), 100);
  EXPECT_EQ(
      Count("SELECT count(*) FROM wallet.schema_migrations WHERE (version, name, checksum)"
            " IN ((1, 'accounts', '" +
            MigrationChecksum("CREATE TABLE accounts (id bigint PRIMARY KEY, coins bigint);") +
            "'), (2, 'seed', '" +
            MigrationChecksum("INSERT INTO accounts (id, coins) VALUES (1, 100);") + "'))"),
      2);

  absl::StatusOr<MigrateReport> again = ApplyMigrations(Options());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->applied.empty());
  EXPECT_EQ(again->already_applied, 2);

  Write("0003_more.sql", "INSERT INTO accounts (id, coins) VALUES (2, 5);");
  absl::StatusOr<MigrateReport> third = ApplyMigrations(Options());
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->applied, (std::vector<std::string>{"0003_more.sql"}));
  EXPECT_EQ(Count("SELECT count(*) FROM wallet.accounts"), 2);
}

TEST_F(MigrationsTest, ChangedAppliedFileIsRefusedAndNothingApplied) {
  Write("0001_a.sql", "CREATE TABLE a (id int);");
  ASSERT_TRUE(ApplyMigrations(Options()).ok());
  Write("0001_a.sql", "CREATE TABLE a (id bigint);");
  Write("0002_b.sql", "CREATE TABLE b (id int);");
  absl::StatusOr<MigrateReport> r = ApplyMigrations(Options());
  EXPECT_EQ(r.status().code(), C::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find("0001_a.sql was changed"), absl::string_view::npos);
  EXPECT_EQ(Count("SELECT count(*) FROM wallet.schema_migrations"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM pg_tables WHERE schemaname = 'wallet' AND tablename = 'b'"),
            0);
}

TEST_F(MigrationsTest, FailingFileRollsBackAndStops) {
  Write("0001_ok.sql", "CREATE TABLE ok (id int);");
  Write("0002_bad.sql", "CREATE TABLE half (id int); SELECT * FROM no_such_table;");
  Write("0003_after.sql", "CREATE TABLE after (id int);");
  absl::StatusOr<MigrateReport> r = ApplyMigrations(Options());
  EXPECT_EQ(r.status().code(), C::kInternal) << r.status();
  EXPECT_NE(r.status().message().find("applying 0002_bad.sql"), absl::string_view::npos);
  EXPECT_EQ(Count("SELECT count(*) FROM wallet.schema_migrations"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM pg_tables WHERE schemaname = 'wallet'"),
            2);  // schema_migrations and ok; not half, not after
}

TEST_F(MigrationsTest, ConcurrentRunsApplyEachFileOnce) {
  Write("0001_counter.sql", "CREATE TABLE counter (n int);");
  Write("0002_bump.sql", "INSERT INTO counter VALUES (1); SELECT pg_sleep(0.3);");
  constexpr int kRuns = 4;
  std::vector<absl::StatusOr<MigrateReport>> reports(kRuns, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kRuns; ++i) {
    threads.emplace_back([&, i] { reports[i] = ApplyMigrations(Options()); });
  }
  for (std::thread& t : threads) t.join();
  size_t applied = 0;
  for (const auto& r : reports) {
    ASSERT_TRUE(r.ok()) << r.status();
    applied += r->applied.size();
  }
  EXPECT_EQ(applied, 2u);
  EXPECT_EQ(Count("SELECT count(*) FROM wallet.counter"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM wallet.schema_migrations"), 2);
}

TEST_F(MigrationsTest, LockHeldElsewhereTimesOut) {
  Write("0001_a.sql", "CREATE TABLE a (id int);");
  PgPoolOptions one = db_->PoolOptions();
  one.size_max = 1;
  PgPool holder(one);
  // A session lock outlives the transaction on the holder's only connection.
  ASSERT_TRUE(holder
                  .Run([](PgTransaction& tx) {
                    return tx.Exec("SELECT pg_advisory_lock(17232, hashtext('wallet'))").status();
                  })
                  .ok());
  MigrateOptions options = Options();
  options.lock_timeout_ms = 200;
  EXPECT_EQ(ApplyMigrations(options).status().code(), C::kDeadlineExceeded);
  ASSERT_TRUE(holder
                  .Run([](PgTransaction& tx) {
                    return tx.Exec("SELECT pg_advisory_unlock(17232, hashtext('wallet'))").status();
                  })
                  .ok());
  EXPECT_TRUE(ApplyMigrations(options).ok());
}

TEST_F(MigrationsTest, RejectsBadSchemaNameAndMissingDir) {
  EXPECT_EQ(ApplyMigrations(Options("Wallet; DROP")).status().code(), C::kInvalidArgument);
  MigrateOptions missing = Options();
  missing.dir = (dir_ / "nope").string();
  EXPECT_EQ(ApplyMigrations(missing).status().code(), C::kNotFound);
}

TEST_F(MigrationsTest, TestDatabaseAppliesMigrationDirs) {
  Write("0001_t.sql", "CREATE TABLE t (id int); INSERT INTO t VALUES (7);");
  absl::StatusOr<std::unique_ptr<TestDatabase>> db =
      TestDatabase::Create({.migrations = {{"lobby", dir_.string()}, {"wallet", dir_.string()}}});
  ASSERT_TRUE(db.ok()) << db.status();
  PgPool pool((*db)->PoolOptions());
  int64_t sum = 0;
  ASSERT_TRUE(pool.Run([&](PgTransaction& tx) -> absl::Status {
                    absl::StatusOr<PgRow> row = tx.ExecOneRow(
                        "SELECT (SELECT id FROM lobby.t) + (SELECT id FROM wallet.t)");
                    if (!row.ok()) return row.status();
                    sum = *row->Int64(0);
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(sum, 14);
}

int RunTool(const std::string& args, std::string* output) {
  const std::string cmd = absl::StrCat(common::BinDir(), "/courtpiece-migrate ", args, " 2>&1");
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[512];
  output->clear();
  while (fgets(buf, sizeof(buf), pipe) != nullptr) output->append(buf);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(MigrationsTest, CommandLineTool) {
  Write("0001_a.sql", "CREATE TABLE a (id int);");
  const std::string args =
      absl::StrCat("--pg-url '", db_->url(), "' --schema wallet --dir '", dir_.string(), "'");
  std::string out;
  EXPECT_EQ(RunTool(args, &out), 0) << out;
  EXPECT_NE(out.find("applied 0001_a.sql"), std::string::npos) << out;
  EXPECT_EQ(RunTool(args, &out), 0) << out;
  EXPECT_NE(out.find("0 applied, 1 already applied"), std::string::npos) << out;
  Write("0001_a.sql", "CREATE TABLE a (id bigint);");
  EXPECT_EQ(RunTool(args, &out), 1) << out;
  EXPECT_NE(out.find("FAILED_PRECONDITION"), std::string::npos) << out;
  EXPECT_EQ(RunTool("--schema wallet", &out), 2) << out;
}

}  // namespace
}  // namespace courtpiece::storage
