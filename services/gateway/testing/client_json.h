// JSON <-> client.proto messages and the gateway's JSON error bodies, as a web client sees
// them (docs/gateway.md "Error mapping"): protobuf's canonical JSON (lowerCamelCase names,
// int64 as strings), error body {"code": <grpc int>, "status": "<NAME>", "message": "..."}.
// Thread-safety: pure functions.
#ifndef COURTPIECE_SERVICES_GATEWAY_TESTING_CLIENT_JSON_H_
#define COURTPIECE_SERVICES_GATEWAY_TESTING_CLIENT_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace courtpiece::gateway::testing {

// Canonical JSON of `message`, every primitive field printed (zeros and falses too).
std::string ToJson(const google::protobuf::Message& message);
// Parses `json` into `message` (cleared first). Strict: an unknown field is an error, so a
// test sees a gateway that sends what client.proto does not have. INVALID_ARGUMENT with the
// parser's message.
absl::Status FromJson(std::string_view json, google::protobuf::Message* message);

// The status an HTTP error answer stands for: the body's "code" and "message" when the body
// is the gateway's JSON error; else the code the HTTP status maps to (400 INVALID_ARGUMENT,
// 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND, 409 ABORTED, 429
// RESOURCE_EXHAUSTED, 499 CANCELLED, 501 UNIMPLEMENTED, 503 UNAVAILABLE, 504
// DEADLINE_EXCEEDED, others UNKNOWN) with the body as message. OK for 200.
absl::Status StatusFromHttp(int http_status, std::string_view body);

// "OK", "INVALID_ARGUMENT", ...
const char* StatusCodeName(int code);

}  // namespace courtpiece::gateway::testing

#endif  // COURTPIECE_SERVICES_GATEWAY_TESTING_CLIENT_JSON_H_
