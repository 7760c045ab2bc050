// libFuzzer target for json_codec: any bytes as a PlayRequest and a GuestLoginRequest (a
// parse that succeeds must print and parse back to the same message), and as a status
// message (the error body must stay valid JSON carrying the same text when it is UTF-8; the
// close reason must fit 120 bytes and be a prefix of the message). docs/gateway.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "courtpiece/client/v1/client.pb.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/message_differencer.h"
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

bool IsUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80             ? 1
                 : (c & 0xe0) == 0xc0 ? 2
                 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4
                                      : 0;
    if (len == 0 || i + len > text.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return false;
    }
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  RoundTrip<courtpiece::client::v1::PlayRequest>(input);
  RoundTrip<courtpiece::client::v1::GuestLoginRequest>(input);
  RoundTrip<courtpiece::client::v1::TableOptions>(input);

  const absl::Status status = absl::AbortedError(std::string(input));
  google::protobuf::Struct body;
  FUZZ_CHECK(ParseJson(courtpiece::gateway::ErrorJson(status), &body).ok());
  FUZZ_CHECK(body.fields().at("code").number_value() == 10);
  FUZZ_CHECK(body.fields().at("status").string_value() == "ABORTED");
  if (IsUtf8(input)) FUZZ_CHECK(body.fields().at("message").string_value() == input);

  const courtpiece::gateway::WsClose close = courtpiece::gateway::WsCloseFor(status);
  FUZZ_CHECK(close.code == 4010);
  FUZZ_CHECK(close.reason.size() <= courtpiece::gateway::kWsReasonMax);
  FUZZ_CHECK(input.substr(0, close.reason.size()) == close.reason);
  if (IsUtf8(input)) FUZZ_CHECK(IsUtf8(close.reason));
  return 0;
}
