// Which status messages may reach a client. A service writes the messages of some codes
// for its clients (validation, lookups, conflicts, preconditions, auth); every other code
// comes from infrastructure and its message may carry database text, SQL or addresses, so
// it goes to the log and the client gets a fixed message (common::ToClientGrpcStatus).
// Header-only, part of courtpiece_common_core (no gRPC). Thread-safety: pure functions.
#ifndef COURTPIECE_COMMON_CLIENT_ERRORS_H_
#define COURTPIECE_COMMON_CLIENT_ERRORS_H_

#include "absl/status/status.h"

namespace courtpiece::common {

// INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION, OUT_OF_RANGE,
// PERMISSION_DENIED, UNAUTHENTICATED.
inline bool IsClientMessageCode(absl::StatusCode code) {
  using C = absl::StatusCode;
  return code == C::kInvalidArgument || code == C::kNotFound || code == C::kAlreadyExists ||
         code == C::kFailedPrecondition || code == C::kOutOfRange || code == C::kPermissionDenied ||
         code == C::kUnauthenticated;
}

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_CLIENT_ERRORS_H_
