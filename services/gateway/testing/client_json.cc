#include "services/gateway/testing/client_json.h"

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_status.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "services/gateway/json_codec.h"
#include "services/gateway/testing/play_transport.h"

namespace courtpiece::gateway::testing {

namespace pbu = ::google::protobuf::util;

std::string ToJson(const google::protobuf::Message& message) { return PrintJson(message); }

absl::Status FromJson(std::string_view json, google::protobuf::Message* message) {
  absl::Status parsed = ParseJson(json, message);
  if (parsed.ok()) return parsed;
  return absl::InvalidArgumentError(
      absl::StrCat("bad JSON for ", message->GetTypeName(), ": ", parsed.message()));
}

const char* StatusCodeName(int code) { return common::GrpcCodeName(code); }

namespace {

absl::StatusCode CodeOfHttp(int http_status) {
  switch (http_status) {
    case 200:
      return absl::StatusCode::kOk;
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return absl::StatusCode::kAborted;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 499:
      return absl::StatusCode::kCancelled;
    case 501:
      return absl::StatusCode::kUnimplemented;
    case 503:
      return absl::StatusCode::kUnavailable;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      return absl::StatusCode::kUnknown;
  }
}

}  // namespace

absl::Status StatusFromHttp(int http_status, std::string_view body) {
  if (http_status == 200) return absl::OkStatus();
  google::protobuf::Struct parsed;
  pbu::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (pbu::JsonStringToMessage(google::protobuf::StringPiece(body.data(), body.size()), &parsed,
                               options)
          .ok()) {
    const auto& f = parsed.fields();
    auto code = f.find("code");
    auto message = f.find("message");
    if (code != f.end() && code->second.has_number_value()) {
      const int c = static_cast<int>(code->second.number_value());
      if (c > 0 && c <= 16) {
        return absl::Status(static_cast<absl::StatusCode>(c),
                            message != f.end() ? message->second.string_value() : "");
      }
    }
  }
  return absl::Status(CodeOfHttp(http_status),
                      absl::StrCat("HTTP ", http_status, ": ", std::string(body)));
}

absl::Status StatusFromCloseCode(int code, const std::string& reason) {
  if (code == 1000) return absl::OkStatus();
  if (code > 4000 && code <= 4016) {
    return absl::Status(static_cast<absl::StatusCode>(code - 4000), reason);
  }
  if (code == 1009) {
    return absl::ResourceExhaustedError(absl::StrCat("close 1009: ", reason));
  }
  return absl::UnavailableError(absl::StrCat("close ", code, ": ", reason));
}

}  // namespace courtpiece::gateway::testing
