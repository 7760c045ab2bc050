#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "courtpiece/storage/migrations.h"
#include "gtest/gtest.h"

namespace courtpiece::storage {
namespace {

using C = absl::StatusCode;

TEST(ParseMigrationFileName, Valid) {
  absl::StatusOr<MigrationFile> f = ParseMigrationFileName("0012_create_accounts.sql");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->version, 12);
  EXPECT_EQ(f->name, "create_accounts");
  EXPECT_EQ(f->filename, "0012_create_accounts.sql");
  EXPECT_EQ(ParseMigrationFileName("20240101_x1.sql")->version, 20240101);
}

TEST(ParseMigrationFileName, Invalid) {
  for (const char* bad : {"001_short.sql", "0001-dash.sql", "0001_.sql", "0001_Upper.sql",
                          "abcd_x.sql", "0001_x.txt", "0001_x y.sql", "0001.sql"}) {
    EXPECT_EQ(ParseMigrationFileName(bad).status().code(), C::kInvalidArgument) << bad;
  }
}

MigrationFile File(int64_t version, const std::string& sql) {
  MigrationFile f;
  f.version = version;
  f.name = "m" + std::to_string(version);
  f.filename = std::to_string(version) + ".sql";
  f.sql = sql;
  f.checksum = MigrationChecksum(sql);
  return f;
}

TEST(OrderMigrations, SortsByVersionAndRejectsDuplicates) {
  absl::StatusOr<std::vector<MigrationFile>> ordered =
      OrderMigrations({File(10, "c"), File(2, "a"), File(3, "b")});
  ASSERT_TRUE(ordered.ok());
  ASSERT_EQ(ordered->size(), 3u);
  EXPECT_EQ((*ordered)[0].version, 2);
  EXPECT_EQ((*ordered)[1].version, 3);
  EXPECT_EQ((*ordered)[2].version, 10);
  EXPECT_EQ(OrderMigrations({File(2, "a"), File(2, "b")}).status().code(), C::kInvalidArgument);
}

TEST(MigrationChecksum, Sha256Hex) {
  EXPECT_EQ(MigrationChecksum(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(MigrationChecksum("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(PlanMigrations, PendingInOrderAndUnknownApplied) {
  std::vector<MigrationFile> files = {File(1, "a"), File(2, "b"), File(3, "c")};
  std::vector<AppliedMigration> applied = {{1, "m1", MigrationChecksum("a")}, {9, "gone", "x"}};
  absl::StatusOr<MigrationPlan> plan = PlanMigrations(files, applied);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->pending.size(), 2u);
  EXPECT_EQ(plan->pending[0].version, 2);
  EXPECT_EQ(plan->pending[1].version, 3);
  ASSERT_EQ(plan->unknown_applied.size(), 1u);
  EXPECT_EQ(plan->unknown_applied[0].version, 9);
}

TEST(PlanMigrations, ChangedChecksumRefused) {
  absl::StatusOr<MigrationPlan> plan =
      PlanMigrations({File(1, "a changed")}, {{1, "m1", MigrationChecksum("a")}});
  EXPECT_EQ(plan.status().code(), C::kFailedPrecondition);
}

TEST(LoadMigrationDir, ReadsOrdersAndIgnoresOtherFiles) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("cp_migs_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "0002_b.sql") << "SELECT 2;";
  std::ofstream(dir / "0001_a.sql") << "SELECT 1;";
  std::ofstream(dir / "README.md") << "not a migration";
  absl::StatusOr<std::vector<MigrationFile>> files = LoadMigrationDir(dir.string());
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].filename, "0001_a.sql");
  EXPECT_EQ((*files)[0].sql, "SELECT 1;");
  EXPECT_EQ((*files)[0].checksum, MigrationChecksum("SELECT 1;"));
  EXPECT_EQ((*files)[1].filename, "0002_b.sql");
  std::ofstream(dir / "3_bad.sql") << "x";
  EXPECT_EQ(LoadMigrationDir(dir.string()).status().code(), C::kInvalidArgument);
  fs::remove_all(dir);
  EXPECT_EQ(LoadMigrationDir(dir.string()).status().code(), C::kNotFound);
}

}  // namespace
}  // namespace courtpiece::storage
