#include "services/gateway/json_codec.h"

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "services/gateway/fast_json.h"
#include "services/gateway/utf8.h"

namespace courtpiece::gateway {

namespace {

// A JSON string literal (quotes included) of arbitrary bytes: control characters escaped,
// the text made valid UTF-8 first (SanitizeUtf8) so the body is always valid JSON.
std::string JsonQuote(std::string_view raw) {
  const std::string text = SanitizeUtf8(raw);
  std::string out = "\"";
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

// protobuf's JSON parser takes a lone value where a list belongs ({"playerIds":"p-1"} as
// an empty list: a 200 for a request the client got wrong). After its parse succeeded,
// CheckShape walks the JSON beside the message's descriptor, at every depth, and refuses a
// repeated field that is not an array (and, to be sure, a map or a message that is not an
// object, which protobuf refuses itself); names, scalar types and unknown fields are
// protobuf's parser's to check. Well-known types (google.protobuf.*) have JSON forms of
// their own and are left to it. Nesting deeper than kShapeDepthMax is refused (our messages
// nest a few levels).
constexpr int kShapeDepthMax = 32;

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

const FieldDescriptor* FieldForKey(const Descriptor& d, const std::string& key) {
  if (const FieldDescriptor* f = d.FindFieldByName(key); f != nullptr) return f;
  for (int i = 0; i < d.field_count(); ++i) {
    if (d.field(i)->json_name() == key) return d.field(i);
  }
  return nullptr;
}

absl::Status CheckShape(const nlohmann::json& value, const Descriptor& d, const std::string& path,
                        int depth);

// One value of `f` (an element when f is repeated; a map's value when `map_value`).
absl::Status CheckOneValue(const nlohmann::json& value, const FieldDescriptor& f,
                           const std::string& path, int depth) {
  if (f.type() != FieldDescriptor::TYPE_MESSAGE || value.is_null()) return absl::OkStatus();
  if (f.message_type()->file()->package() == "google.protobuf") return absl::OkStatus();
  return CheckShape(value, *f.message_type(), path, depth + 1);
}

absl::Status CheckField(const nlohmann::json& value, const FieldDescriptor& f,
                        const std::string& path, int depth) {
  if (value.is_null()) return absl::OkStatus();  // the field's default
  if (f.is_map()) {
    if (!value.is_object()) return absl::InvalidArgumentError(path + ": expected an object");
    const FieldDescriptor& map_value = *f.message_type()->map_value();
    for (const auto& [key, item] : value.items()) {
      absl::Status s = CheckOneValue(item, map_value, absl::StrCat(path, ".", key), depth);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (f.is_repeated()) {
    if (!value.is_array()) return absl::InvalidArgumentError(path + ": expected an array");
    for (size_t i = 0; i < value.size(); ++i) {
      absl::Status s = CheckOneValue(value[i], f, absl::StrCat(path, "[", i, "]"), depth);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  return CheckOneValue(value, f, path, depth);
}

absl::Status CheckShape(const nlohmann::json& value, const Descriptor& d, const std::string& path,
                        int depth) {
  if (depth > kShapeDepthMax) return absl::InvalidArgumentError(path + ": nested too deep");
  if (!value.is_object()) {
    return absl::InvalidArgumentError((path.empty() ? std::string("the body") : path) +
                                      ": expected an object");
  }
  for (const auto& [key, item] : value.items()) {
    const FieldDescriptor* f = FieldForKey(d, key);
    if (f == nullptr) continue;  // protobuf's parser names it
    absl::Status s = CheckField(item, *f, path.empty() ? key : absl::StrCat(path, ".", key), depth);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = i;
    if (NextCodePoint(text, &i) < 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    } else {
      out.append(text.substr(start, i - start));
    }
  }
  return out;
}

absl::Status ParseJson(std::string_view json, google::protobuf::Message* message) {
  // The canonical documents clients send take the fast path; everything else (and every
  // error) is protobuf's parser's, then CheckShape's.
  if (TryParseJsonFast(json, message)) return absl::OkStatus();
  return ParseJsonFullPath(json, message);
}

absl::Status ParseJsonFullPath(std::string_view json, google::protobuf::Message* message) {
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
  // Well-formed for protobuf: now the shapes it lets through (see CheckShape).
  const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  absl::Status shape = parsed.is_discarded() ? absl::InvalidArgumentError("bad JSON")
                                             : CheckShape(parsed, *message->GetDescriptor(), "", 0);
  if (!shape.ok()) {
    message->Clear();
    return shape;
  }
  return absl::OkStatus();
}

std::string PrintJson(const google::protobuf::Message& message) {
  if (std::string fast; TryPrintJsonFast(message, &fast)) return fast;
  return PrintJsonFullPath(message);
}

std::string PrintJsonFullPath(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = false;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) return "{}";  // not seen: a string that is not UTF-8 prints as ""
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
      CutUtf8(SanitizeUtf8(std::string_view(status.message().data(), status.message().size())),
              kWsReasonMax);
  return close;
}

}  // namespace courtpiece::gateway
