// ApplyMigrations: the database side of migrations (one session, advisory lock per schema).
#include "courtpiece/storage/migrations.h"

#include <exception>
#include <pqxx/pqxx>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "pg_internal.h"

namespace courtpiece::storage {
namespace {

// Advisory lock keyspace for migrations ("CP" in ASCII); the second key is the schema's hash.
constexpr int kMigrationLockClass = 0x4350;

bool ValidSchemaName(absl::string_view schema) {
  if (schema.empty() || schema.size() > 63) return false;
  if (!absl::ascii_islower(schema[0]) && schema[0] != '_') return false;
  for (char c : schema) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '_') return false;
  }
  return true;
}

absl::Status WithContext(absl::Status s, absl::string_view context) {
  return absl::Status(s.code(), absl::StrCat(context, ": ", s.message()));
}

absl::Status Lock(pqxx::connection& conn, const std::string& schema, int lock_timeout_ms) {
  try {
    pqxx::nontransaction tx(conn);
    tx.exec(absl::StrCat("SET lock_timeout = ", std::max(1, lock_timeout_ms)));
    tx.exec_params("SELECT pg_advisory_lock($1, hashtext($2))", kMigrationLockClass, schema);
    tx.exec("SET lock_timeout = 0");
    return absl::OkStatus();
  } catch (...) {
    absl::Status s = internal::PgExceptionToStatus(std::current_exception());
    if (s.code() == absl::StatusCode::kAborted) {  // 55P03 lock_not_available
      return absl::DeadlineExceededError(absl::StrCat(
          "another migration of schema ", schema, " held the lock for ", lock_timeout_ms, " ms"));
    }
    return s;
  }
}

absl::StatusOr<std::vector<AppliedMigration>> PrepareTable(pqxx::connection& conn,
                                                           const std::string& schema) {
  const std::string table = absl::StrCat("\"", schema, "\".schema_migrations");
  pqxx::nontransaction tx(conn);
  tx.exec(absl::StrCat("CREATE SCHEMA IF NOT EXISTS \"", schema, "\""));
  tx.exec(absl::StrCat("CREATE TABLE IF NOT EXISTS ", table,
                       " (version bigint PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,"
                       " applied_at timestamptz NOT NULL DEFAULT now())"));
  std::vector<AppliedMigration> applied;
  for (const pqxx::row& row :
       tx.exec(absl::StrCat("SELECT version, name, checksum FROM ", table, " ORDER BY version"))) {
    applied.push_back({row[0].as<int64_t>(), row[1].as<std::string>(), row[2].as<std::string>()});
  }
  return applied;
}

absl::Status ApplyOne(pqxx::connection& conn, const std::string& schema, const MigrationFile& f) {
  try {
    pqxx::work tx(conn);
    tx.exec(absl::StrCat("SET LOCAL search_path TO \"", schema, "\", public"));
    tx.exec(f.sql);
    tx.exec_params(absl::StrCat("INSERT INTO \"", schema,
                                "\".schema_migrations (version, name, checksum) "
                                "VALUES ($1, $2, $3)"),
                   f.version, f.name, f.checksum);
    tx.commit();
    return absl::OkStatus();
  } catch (...) {
    return WithContext(internal::PgExceptionToStatus(std::current_exception()),
                       absl::StrCat("applying ", f.filename));
  }
}

absl::StatusOr<MigrateReport> ApplyLocked(pqxx::connection& conn, const MigrateOptions& options,
                                          const std::vector<MigrationFile>& files) {
  absl::StatusOr<std::vector<AppliedMigration>> applied;
  try {
    applied = PrepareTable(conn, options.schema);
  } catch (...) {
    return WithContext(internal::PgExceptionToStatus(std::current_exception()),
                       "reading schema_migrations");
  }
  if (!applied.ok()) return applied.status();
  absl::StatusOr<MigrationPlan> plan = PlanMigrations(files, *applied);
  if (!plan.ok()) return plan.status();
  MigrateReport report;
  report.already_applied = static_cast<int>(files.size() - plan->pending.size());
  report.unknown_applied = plan->unknown_applied;
  for (const MigrationFile& f : plan->pending) {
    absl::Status s = ApplyOne(conn, options.schema, f);
    if (!s.ok()) return s;
    report.applied.push_back(f.filename);
  }
  return report;
}

}  // namespace

absl::StatusOr<MigrateReport> ApplyMigrations(const MigrateOptions& options) {
  if (!ValidSchemaName(options.schema)) {
    return absl::InvalidArgumentError(
        absl::StrCat("schema name '", options.schema, "' is not [a-z_][a-z0-9_]{0,62}"));
  }
  absl::StatusOr<std::vector<MigrationFile>> files = LoadMigrationDir(options.dir);
  if (!files.ok()) return files.status();
  std::unique_ptr<pqxx::connection> conn;
  try {
    conn = std::make_unique<pqxx::connection>(internal::WithConnectTimeout(
        options.pg_url, options.connect_timeout_ms, "courtpiece-migrate"));
    if (options.statement_timeout_ms > 0) {
      pqxx::nontransaction tx(*conn);
      tx.exec(absl::StrCat("SET statement_timeout = ", options.statement_timeout_ms));
    }
  } catch (...) {
    return WithContext(internal::PgExceptionToStatus(std::current_exception()), "connecting");
  }
  absl::Status locked = Lock(*conn, options.schema, options.lock_timeout_ms);
  if (!locked.ok()) return locked;
  // The session lock is released when the connection closes, on every path.
  return ApplyLocked(*conn, options, *files);
}

}  // namespace courtpiece::storage
