// libpqxx glue shared by the storage sources; never included by callers.
#ifndef COURTPIECE_STORAGE_SRC_PG_INTERNAL_H_
#define COURTPIECE_STORAGE_SRC_PG_INTERNAL_H_

#include <exception>
#include <pqxx/pqxx>
#include <string>

#include "absl/status/status.h"
#include "courtpiece/storage/pg_pool.h"

namespace courtpiece::storage::internal {

// The status for a caught exception (libpqxx's or any other).
absl::Status PgExceptionToStatus(std::exception_ptr error);

// `url` plus connect_timeout (whole seconds, >= 2) and application_name parameters.
std::string WithConnectTimeout(const std::string& url, int connect_timeout_ms,
                               const std::string& application_name);

PgResult ToPgResult(const pqxx::result& r);

}  // namespace courtpiece::storage::internal

#endif  // COURTPIECE_STORAGE_SRC_PG_INTERNAL_H_
