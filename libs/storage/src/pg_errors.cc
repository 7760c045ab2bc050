#include "courtpiece/storage/pg_errors.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace courtpiece::storage {

absl::StatusCode PgSqlStateToCode(absl::string_view sqlstate) {
  using C = absl::StatusCode;
  if (sqlstate.size() != 5) return C::kInternal;
  const absl::string_view klass = sqlstate.substr(0, 2);
  // Exact states first: they refine their class.
  if (sqlstate == "40001" || sqlstate == "40P01") return C::kAborted;  // retry the txn
  if (sqlstate == "40003") return C::kUnavailable;       // statement completion unknown
  if (sqlstate == "55P03") return C::kAborted;           // lock not available (NOWAIT/lock_timeout)
  if (sqlstate == "57014") return C::kDeadlineExceeded;  // statement timeout / cancel
  if (sqlstate == "23505") return C::kAlreadyExists;
  if (sqlstate == "P0001") return C::kFailedPrecondition;  // RAISE EXCEPTION in plpgsql
  if (sqlstate == "53300") return C::kUnavailable;         // too many connections
  if (sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03") {
    return C::kUnavailable;  // admin/crash shutdown, cannot connect now
  }
  if (klass == "08") return C::kUnavailable;         // connection exception
  if (klass == "23") return C::kFailedPrecondition;  // integrity constraint violation
  if (klass == "22") return C::kInvalidArgument;     // data exception (bad value)
  if (klass == "40") return C::kAborted;             // other transaction rollbacks
  if (klass == "53") return C::kResourceExhausted;   // disk full, out of memory
  return C::kInternal;
}

absl::Status PgErrorStatus(absl::string_view sqlstate, absl::string_view message) {
  absl::string_view trimmed = absl::StripTrailingAsciiWhitespace(message);
  return absl::Status(
      PgSqlStateToCode(sqlstate),
      absl::StrCat("postgres [", sqlstate.empty() ? "-----" : sqlstate, "] ", trimmed));
}

}  // namespace courtpiece::storage
