#include "courtpiece/common/grpc_status.h"

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

const char* GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

}  // namespace courtpiece::common
