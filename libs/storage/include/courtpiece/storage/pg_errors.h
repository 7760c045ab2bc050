// How PostgreSQL errors map to absl::Status codes (pure; used by PgPool, tested alone).
//
// Thread-safety: stateless functions.
#ifndef COURTPIECE_STORAGE_PG_ERRORS_H_
#define COURTPIECE_STORAGE_PG_ERRORS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace courtpiece::storage {

// The code for a five-character SQLSTATE (e.g. "23505" -> kAlreadyExists). An empty or
// unknown state maps to kInternal.
absl::StatusCode PgSqlStateToCode(absl::string_view sqlstate);

// A status with that code whose message names the state and the server's message.
absl::Status PgErrorStatus(absl::string_view sqlstate, absl::string_view message);

}  // namespace courtpiece::storage

#endif  // COURTPIECE_STORAGE_PG_ERRORS_H_
