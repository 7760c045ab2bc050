// A fast path for protobuf's canonical JSON, for the messages the WebSocket front carries at
// every command and event (client.proto's PlayRequest and PlayResponse). protobuf's own
// converter (util::MessageToJsonString / JsonStringToMessage) serialises to the binary form
// and walks it through a type resolver, allocating at every field; at 10,000 messages a
// second that was a quarter of the gateway's CPU (docs/gateway.md "Measured").
//
// Contract:
// - TryPrintJsonFast(message, &out): true with `out` byte for byte what
//   MessageToJsonString prints with always_print_primitive_fields (fields in declaration
//   order, lowerCamelCase names, int64 and uint64 quoted, every primitive field at its
//   default, empty repeated fields as [], a oneof's set member only, an unset message field
//   left out, strings escaped as protobuf escapes them). False, with `out` unspecified, for
//   a message it does not handle: a proto2 message or a well-known type (at any depth), a
//   field of type enum, float, double or bytes, a map, a proto3 `optional`, a scalar member
//   of a oneof (protobuf prints it last), an extension, nesting past kFastJsonDepthMax, or
//   a string that is not valid UTF-8; the caller then asks protobuf.
// - TryParseJsonFast(json, &message): true with `message` exactly what ParseJson's full
//   path (JsonStringToMessage, unknown fields refused, then the shape check) would give.
//   It takes only a strict canonical subset: one JSON object (whitespace around tokens),
//   keys that are a field's json_name or proto name, each at most once and at most one
//   member of a oneof; strings (any escape, valid UTF-8) for string fields; true/false for
//   bools; integers (a JSON integer without fraction or exponent, no leading zeros, or the
//   same in a string) in the field's range; objects for message fields; arrays of these for
//   repeated ones; nesting up to kFastJsonDepthMax; the message types and fields the
//   printer handles. Anything else (null, an unknown key, a type or field it does not
//   handle, a malformed document) is false, with `message` unspecified:
//   the caller clears it and runs the full path, which gives the exact error.
// Thread-safety: free functions, safe from any thread.
#ifndef COURTPIECE_SERVICES_GATEWAY_FAST_JSON_H_
#define COURTPIECE_SERVICES_GATEWAY_FAST_JSON_H_

#include <string>
#include <string_view>

#include "google/protobuf/message.h"

namespace courtpiece::gateway {

inline constexpr int kFastJsonDepthMax = 16;  // nested objects and arrays

bool TryPrintJsonFast(const google::protobuf::Message& message, std::string* out);
bool TryParseJsonFast(std::string_view json, google::protobuf::Message* message);

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_FAST_JSON_H_
