// Schema migrations: ordered NNNN_name.sql files applied once each, per schema.
//
//   ASSIGN_OR_RETURN(MigrateReport report, ApplyMigrations({.pg_url = url, .schema = "wallet",
//                                                           .dir = "deploy/migrations/wallet"}));
//
// Contract:
//  - A migration file is named <version>_<name>.sql: at least 4 digits, '_', then
//    [a-z0-9_]+ (e.g. 0001_create_accounts.sql). Other .sql names in the dir are an
//    InvalidArgument error; files not ending in .sql are ignored. Versions must be unique.
//  - ApplyMigrations takes a session advisory lock per schema (waiting at most
//    lock_timeout_ms, then DeadlineExceeded), creates the schema and
//    <schema>.schema_migrations(version, name, checksum, applied_at) if missing, then applies
//    every file whose version is not recorded, in version order, each in its own transaction
//    together with its schema_migrations row. search_path is set to "<schema>, public" for
//    each file, so files may use unqualified names.
//  - A recorded version whose file now has a different checksum (SHA-256 of the bytes) is
//    FailedPrecondition and nothing is applied. Recorded versions with no file are reported
//    in unknown_applied (a newer release may have added them) and are not an error.
//  - Idempotent and safe to run concurrently (the lock serializes runs; the second applies
//    nothing). A file cannot contain statements that refuse transactions (CREATE INDEX
//    CONCURRENTLY, VACUUM).
//
// Thread-safety: free functions without shared state.
#ifndef COURTPIECE_STORAGE_MIGRATIONS_H_
#define COURTPIECE_STORAGE_MIGRATIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace courtpiece::storage {

struct MigrationFile {
  int64_t version = 0;
  std::string name;      // "create_accounts"
  std::string filename;  // "0001_create_accounts.sql"
  std::string sql;
  std::string checksum;  // lowercase hex SHA-256 of sql
};

struct AppliedMigration {
  int64_t version = 0;
  std::string name;
  std::string checksum;
};

// Version and name from a file name; InvalidArgument when it does not follow the pattern.
absl::StatusOr<MigrationFile> ParseMigrationFileName(absl::string_view filename);
// Sorts by version; InvalidArgument on a duplicate version.
absl::StatusOr<std::vector<MigrationFile>> OrderMigrations(std::vector<MigrationFile> files);
// Lowercase hex SHA-256.
std::string MigrationChecksum(absl::string_view sql);
// Reads, parses, checksums and orders the .sql files of `dir` (NotFound if it is missing).
absl::StatusOr<std::vector<MigrationFile>> LoadMigrationDir(const std::string& dir);

struct MigrationPlan {
  std::vector<MigrationFile> pending;  // in version order
  std::vector<AppliedMigration> unknown_applied;
};
// What to apply, given ordered files and the recorded rows; FailedPrecondition when a
// recorded file's checksum changed.
absl::StatusOr<MigrationPlan> PlanMigrations(const std::vector<MigrationFile>& files,
                                             const std::vector<AppliedMigration>& applied);

struct MigrateOptions {
  std::string pg_url;
  std::string schema;  // [a-z_][a-z0-9_]*, at most 63 chars
  std::string dir;
  int lock_timeout_ms = 60000;
  int connect_timeout_ms = 5000;
  int statement_timeout_ms = 0;  // 0: none (migrations may be slow)
};

struct MigrateReport {
  std::vector<std::string> applied;  // filenames applied by this run, in order
  int already_applied = 0;           // files found recorded
  std::vector<AppliedMigration> unknown_applied;
};

absl::StatusOr<MigrateReport> ApplyMigrations(const MigrateOptions& options);

}  // namespace courtpiece::storage

#endif  // COURTPIECE_STORAGE_MIGRATIONS_H_
