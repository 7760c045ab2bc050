#include "courtpiece/common/grpc_status.h"

#include <iterator>
#include <string>

namespace courtpiece::common {
namespace {

// Every code in both enums is in [0, 16]; anything else is UNKNOWN.
constexpr int kMaxCode = 16;

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  int code = static_cast<int>(status.code());
  if (code < 0 || code > kMaxCode) code = static_cast<int>(grpc::StatusCode::UNKNOWN);
  return grpc::Status(static_cast<grpc::StatusCode>(code), std::string(status.message()));
}

grpc::Status ToClientGrpcStatus(const absl::Status& status) {
  if (status.ok() || IsClientMessageCode(status.code())) return ToGrpcStatus(status);
  const grpc::StatusCode code = ToGrpcStatus(status).error_code();
  switch (code) {
    case grpc::StatusCode::CANCELLED:
      return grpc::Status(code, "cancelled");
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return grpc::Status(code,
                          "deadline exceeded before the server finished; the call may or may "
                          "not have taken effect");
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return grpc::Status(code, "server overloaded; retry later");
    case grpc::StatusCode::ABORTED:
      return grpc::Status(code, "conflict with a concurrent call; retry");
    case grpc::StatusCode::UNIMPLEMENTED:
      return grpc::Status(code, "not implemented");
    case grpc::StatusCode::UNAVAILABLE:
      return grpc::Status(code,
                          "temporarily unavailable; the call may or may not have taken effect; "
                          "retry");
    default:  // UNKNOWN, INTERNAL, DATA_LOSS
      return grpc::Status(code, "internal error; the details are in the server's log");
  }
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  int code = static_cast<int>(status.error_code());
  if (code < 0 || code > kMaxCode) code = static_cast<int>(absl::StatusCode::kUnknown);
  return absl::Status(static_cast<absl::StatusCode>(code), status.error_message());
}

const char* GrpcCodeName(int code) {
  static constexpr const char* kNames[] = {"OK",
                                           "CANCELLED",
                                           "UNKNOWN",
                                           "INVALID_ARGUMENT",
                                           "DEADLINE_EXCEEDED",
                                           "NOT_FOUND",
                                           "ALREADY_EXISTS",
                                           "PERMISSION_DENIED",
                                           "RESOURCE_EXHAUSTED",
                                           "FAILED_PRECONDITION",
                                           "ABORTED",
                                           "OUT_OF_RANGE",
                                           "UNIMPLEMENTED",
                                           "INTERNAL",
                                           "UNAVAILABLE",
                                           "DATA_LOSS",
                                           "UNAUTHENTICATED"};
  static_assert(std::size(kNames) == static_cast<size_t>(kMaxCode) + 1);
  if (code < 0 || code > kMaxCode) return "UNKNOWN";
  return kNames[code];
}

}  // namespace courtpiece::common
