// absl::Status <-> grpc::Status. Codes map 1:1 (both follow google.rpc.Code); the message is
// kept; absl payloads and grpc error details are dropped.
//
//   return ToGrpcStatus(domain.Join(...));           // in a service method
//   absl::Status s = FromGrpcStatus(stub->Call(...));  // in a client
//
// Thread-safety: pure functions.
#ifndef COURTPIECE_COMMON_GRPC_STATUS_H_
#define COURTPIECE_COMMON_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "courtpiece/common/client_errors.h"
#include "grpcpp/support/status.h"

namespace courtpiece::common {

grpc::Status ToGrpcStatus(const absl::Status& status);

// What a client may see: a client-message code (client_errors.h) as it is; any other code with a
// fixed message of its own (e.g. DEADLINE_EXCEEDED "deadline exceeded before the server finished;
// the call may or may not have taken effect"). The caller logs the original status.
grpc::Status ToClientGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

// The canonical upper-snake name of a code, e.g. "OK", "INVALID_ARGUMENT" (metrics labels);
// "UNKNOWN" for a number that is no gRPC code. Takes the number, not grpc::StatusCode: a
// number out of the enum's range cast to it is undefined behaviour (clang's UBSan says so).
const char* GrpcCodeName(int code);
inline const char* GrpcCodeName(grpc::StatusCode code) {
  return GrpcCodeName(static_cast<int>(code));
}

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_GRPC_STATUS_H_
