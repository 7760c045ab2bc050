// JSON <-> protobuf for the web front (protobuf's canonical JSON mapping), and how a status
// reaches a web client: an HTTP status with a JSON error body, or a WebSocket close code and
// reason (docs/gateway.md "HTTP and WebSocket front", /work design "Error mapping").
//
// Contract: ParseJson fills `message` from JSON text (canonical documents through
// fast_json.h, with the same result), refusing unknown fields and wrong
// types with INVALID_ARGUMENT carrying the parser's message; the message is cleared first.
// PrintJson prints lowerCamelCase names, int64 as strings and every primitive field, even
// at its default. HttpStatusFor maps gRPC codes to HTTP statuses (OK 200, ... others 500);
// ErrorJson is {"code":<int>,"status":"<NAME>","message":"..."}. WsCloseFor: OK -> 1000,
// else 4000 + the code; the reason is the status message made valid UTF-8 (a WebSocket
// reason must be) and cut to kWsReasonMax bytes, never in the middle of a character. The
// error body's message is made valid UTF-8 the same way, so the body is always valid JSON.
// Thread-safety: free functions, safe from any thread.
#ifndef COURTPIECE_SERVICES_GATEWAY_JSON_CODEC_H_
#define COURTPIECE_SERVICES_GATEWAY_JSON_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace courtpiece::gateway {

inline constexpr size_t kWsReasonMax = 120;  // bytes; the WebSocket limit is 123

absl::Status ParseJson(std::string_view json, google::protobuf::Message* message);
std::string PrintJson(const google::protobuf::Message& message);
// The full path alone (protobuf's converter; for a parse, then the shape check): what
// ParseJson and PrintJson answer whenever fast_json.h's fast path declines. For the tests
// that hold the fast path to it.
absl::Status ParseJsonFullPath(std::string_view json, google::protobuf::Message* message);
std::string PrintJsonFullPath(const google::protobuf::Message& message);

// "INVALID_ARGUMENT" etc.
std::string GrpcCodeName(absl::StatusCode code);
int HttpStatusFor(absl::StatusCode code);
std::string ErrorJson(const absl::Status& status);

struct WsClose {
  uint16_t code = 1000;
  std::string reason;
};
WsClose WsCloseFor(const absl::Status& status);
// `text` with every byte that is not part of well-formed UTF-8 replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view text);
// `text` cut to at most `max_bytes`, not splitting a UTF-8 sequence.
std::string CutUtf8(std::string_view text, size_t max_bytes);

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_JSON_CODEC_H_
