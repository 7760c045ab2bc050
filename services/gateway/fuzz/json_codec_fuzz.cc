// libFuzzer target for json_codec: any bytes as a PlayRequest and a GuestLoginRequest (a
// parse that succeeds must print and parse back to the same message; what the fast path
// takes protobuf's own parser must take as the same message, and the fast printer must
// print it as protobuf does), and as a status
// message (the error body must stay valid JSON carrying the message made valid UTF-8; the
// close reason must be valid UTF-8, fit 120 bytes and be a prefix of it). docs/gateway.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "courtpiece/client/v1/client.pb.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "services/gateway/fast_json.h"
#include "services/gateway/json_codec.h"

namespace {

using courtpiece::gateway::ParseJson;
using courtpiece::gateway::PrintJson;

#define FUZZ_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      __builtin_printf("check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

// Well-formed UTF-8 (RFC 3629), written independently of json_codec's.
bool IsUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const uint32_t c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xe  ? 3
                 : (c >> 3) == 0x1e ? 4
                                    : 0;
    if (len == 0 || i + len > text.size()) return false;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) {
      const uint32_t b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    const uint32_t min = len == 1 ? 0 : len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

template <class Message>
void RoundTrip(std::string_view input) {
  Message message;
  if (!ParseJson(input, &message).ok()) {
    FUZZ_CHECK(message.ByteSizeLong() == 0);  // cleared on failure
    return;
  }
  const std::string printed = PrintJson(message);
  Message again;
  FUZZ_CHECK(ParseJson(printed, &again).ok());
  FUZZ_CHECK(google::protobuf::util::MessageDifferencer::Equals(message, again));
}

template <class Message>
void FastPathAgrees(std::string_view input) {
  Message fast;
  if (!courtpiece::gateway::TryParseJsonFast(input, &fast)) return;
  Message reference;
  google::protobuf::util::JsonParseOptions parse;
  FUZZ_CHECK(google::protobuf::util::JsonStringToMessage(
                 google::protobuf::StringPiece(input.data(), input.size()), &reference, parse)
                 .ok());
  FUZZ_CHECK(google::protobuf::util::MessageDifferencer::Equals(fast, reference));
  Message full;  // protobuf's parser, then the shape check: the gateway's answer before
  FUZZ_CHECK(courtpiece::gateway::ParseJsonFullPath(input, &full).ok());
  FUZZ_CHECK(google::protobuf::util::MessageDifferencer::Equals(fast, full));
  std::string printed, expected;
  if (!courtpiece::gateway::TryPrintJsonFast(fast, &printed)) return;
  google::protobuf::util::JsonPrintOptions print;
  print.always_print_primitive_fields = true;
  FUZZ_CHECK(google::protobuf::util::MessageToJsonString(fast, &expected, print).ok());
  FUZZ_CHECK(printed == expected);
  FUZZ_CHECK(printed == courtpiece::gateway::PrintJsonFullPath(fast));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  RoundTrip<courtpiece::client::v1::PlayRequest>(input);
  RoundTrip<courtpiece::client::v1::GuestLoginRequest>(input);
  RoundTrip<courtpiece::client::v1::TableOptions>(input);
  FastPathAgrees<courtpiece::client::v1::PlayRequest>(input);
  FastPathAgrees<courtpiece::client::v1::PlayResponse>(input);

  const absl::Status status = absl::AbortedError(std::string(input));
  const std::string sanitized = courtpiece::gateway::SanitizeUtf8(input);
  FUZZ_CHECK(IsUtf8(sanitized));
  if (IsUtf8(input)) FUZZ_CHECK(sanitized == input);
  google::protobuf::Struct body;
  FUZZ_CHECK(ParseJson(courtpiece::gateway::ErrorJson(status), &body).ok());
  FUZZ_CHECK(body.fields().at("code").number_value() == 10);
  FUZZ_CHECK(body.fields().at("status").string_value() == "ABORTED");
  FUZZ_CHECK(body.fields().at("message").string_value() == sanitized);

  const courtpiece::gateway::WsClose close = courtpiece::gateway::WsCloseFor(status);
  FUZZ_CHECK(close.code == 4010);
  FUZZ_CHECK(close.reason.size() <= courtpiece::gateway::kWsReasonMax);
  FUZZ_CHECK(std::string_view(sanitized).substr(0, close.reason.size()) == close.reason);
  FUZZ_CHECK(IsUtf8(close.reason));
  return 0;
}
