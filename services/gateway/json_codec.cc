#include "services/gateway/json_codec.h"

#include "absl/strings/ascii.h"
#include "google/protobuf/util/json_util.h"

namespace courtpiece::gateway {

namespace {

// A JSON string literal (quotes included) of arbitrary bytes: control characters escaped,
// invalid UTF-8 bytes replaced by U+FFFD so the body stays valid JSON.
std::string JsonQuote(std::string_view text) {
  std::string out = "\"";
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
      bool valid = len != 0 && i + len <= text.size();
      for (size_t k = 1; valid && k < len; ++k) {
        valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
      }
      if (valid) {
        out.append(text.substr(i, len));
        i += len;
      } else {
        out += "\xef\xbf\xbd";
        ++i;
      }
    }
  }
  out += '"';
  return out;
}

}  // namespace

absl::Status ParseJson(std::string_view json, google::protobuf::Message* message) {
  message->Clear();
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message, options);
  if (!status.ok()) {
    message->Clear();
    std::string text(status.message().data(), status.message().size());
    if (text.empty()) text = "bad JSON";
    return absl::InvalidArgumentError(text);
  }
  return absl::OkStatus();
}

std::string PrintJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = false;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) return "{}";  // only on a message with invalid UTF-8 in a string
  return out;
}

std::string GrpcCodeName(absl::StatusCode code) { return absl::StatusCodeToString(code); }

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kCancelled:
      return 499;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

std::string ErrorJson(const absl::Status& status) {
  std::string out = "{\"code\":";
  out += std::to_string(static_cast<int>(status.code()));
  out += ",\"status\":";
  out += JsonQuote(GrpcCodeName(status.code()));
  out += ",\"message\":";
  out += JsonQuote(std::string_view(status.message().data(), status.message().size()));
  out += "}";
  return out;
}

std::string CutUtf8(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t end = max_bytes;
  // Back off continuation bytes so a multi-byte sequence is not split.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
  return std::string(text.substr(0, end));
}

WsClose WsCloseFor(const absl::Status& status) {
  WsClose close;
  if (status.ok()) {
    close.code = 1000;
  } else {
    close.code = static_cast<uint16_t>(4000 + static_cast<int>(status.code()));
  }
  close.reason =
      CutUtf8(std::string_view(status.message().data(), status.message().size()), kWsReasonMax);
  return close;
}

}  // namespace courtpiece::gateway
