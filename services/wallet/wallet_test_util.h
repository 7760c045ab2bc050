// Helpers shared by the wallet's integration tests (header-only, test code only).
#ifndef COURTPIECE_SERVICES_WALLET_WALLET_TEST_UTIL_H_
#define COURTPIECE_SERVICES_WALLET_WALLET_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/common/status_macros.h"
#include "courtpiece/storage/pg_pool.h"
#include "courtpiece/storage/testing.h"

namespace courtpiece::wallet::testing {

inline absl::StatusOr<std::unique_ptr<storage::TestDatabase>> CreateWalletDatabase() {
  return storage::TestDatabase::Create(
      {.migrations = {
           {"wallet", ::courtpiece::common::SourceDir() + "/services/wallet/migrations"}}});
}

inline absl::Status Exec(storage::PgPool& pool, const std::string& sql,
                         std::vector<storage::PgParam> params = {}) {
  return pool.Run([&](storage::PgTransaction& tx) { return tx.Exec(sql, params).status(); });
}

inline absl::StatusOr<int64_t> QueryInt(storage::PgPool& pool, const std::string& sql,
                                        std::vector<storage::PgParam> params = {}) {
  int64_t value = 0;
  absl::Status s = pool.Run([&](storage::PgTransaction& tx) -> absl::Status {
    ASSIGN_OR_RETURN(storage::PgRow row, tx.ExecOneRow(sql, params));
    ASSIGN_OR_RETURN(value, row.Int64(0));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return value;
}

// Terminates every backend of database `dbname` opened by `application_name`; returns how
// many were terminated.
inline absl::StatusOr<int64_t> TerminateBackends(storage::PgPool& admin, const std::string& dbname,
                                                 const std::string& application_name) {
  return QueryInt(admin,
                  // OFFSET 0 fences the filter: quals may otherwise run in any order, and
                  // pg_terminate_backend would see every backend, this one too.
                  "SELECT count(*) FROM (SELECT pid FROM pg_stat_activity WHERE datname = $1 "
                  "AND application_name = $2 AND pid <> pg_backend_pid() OFFSET 0) s "
                  "WHERE pg_terminate_backend(s.pid)",
                  {dbname, application_name});
}

}  // namespace courtpiece::wallet::testing

#endif  // COURTPIECE_SERVICES_WALLET_WALLET_TEST_UTIL_H_
