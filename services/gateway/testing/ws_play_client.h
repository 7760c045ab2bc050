// A synchronous WebSocket JSON client of the gateway's /v1/play (Boost.Beast): one
// PlayRequest / PlayResponse per text frame, in protobuf's canonical JSON.
//
//   absl::StatusOr<std::unique_ptr<WsPlayClient>> c =
//       WsPlayClient::Connect({.host = "127.0.0.1", .port = 8080,
//                              .authorization = "Bearer " + token});
//   (*c)->Send(open);                                  // PlayRequest -> JSON text frame
//   absl::StatusOr<PlayResponse> m = (*c)->Read(absl::Seconds(5));
//   (*c)->end();                                       // close code + reason once closed
//
// Connect answers the upgraded connection, or: UNAVAILABLE (no connection), DEADLINE_EXCEEDED
// (no upgrade in time), or the status of a declined upgrade (StatusFromHttp of its answer,
// e.g. UNAUTHENTICATED for a 401 with the gateway's JSON error body). Read/Send/end as
// play_transport.h says; a text frame that is not a PlayResponse ends nothing: Read answers
// INVALID_ARGUMENT with the parser's message. SendText / SendBinary write raw frames
// (malformed-input tests). Internals: one io_context per client, run by the calling thread inside
// each call; a read is always pending, messages are queued (at most 100000; past that the client
// stops reading, which is what a slow reader looks like to the gateway). Thread-safety: not
// thread-safe; one thread at a time.
#ifndef COURTPIECE_SERVICES_GATEWAY_TESTING_WS_PLAY_CLIENT_H_
#define COURTPIECE_SERVICES_GATEWAY_TESTING_WS_PLAY_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/client/v1/client.pb.h"
#include "services/gateway/testing/play_transport.h"

namespace courtpiece::gateway::testing {

struct WsOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string path = "/v1/play";
  std::string authorization;                   // the upgrade's `authorization` header; "" for none
  absl::Duration timeout = absl::Seconds(10);  // connect + upgrade; each Send
  uint64_t read_message_max = 1 << 20;
  bool read = true;  // false: never read (a slow-reader test; Read then only times out)
};

class WsPlayClient final : public PlayTransport {
 public:
  static absl::StatusOr<std::unique_ptr<WsPlayClient>> Connect(const WsOptions& options);
  ~WsPlayClient() override;

  absl::Status Send(const client::v1::PlayRequest& request) override;
  absl::StatusOr<client::v1::PlayResponse> Read(absl::Duration timeout) override;
  std::optional<StreamEnd> end() const override;
  // Drops the TCP connection without a close frame (the gateway sees the client vanish).
  void Cancel() override;
  const char* kind() const override { return "websocket"; }

  absl::Status SendText(std::string_view text);
  absl::Status SendBinary(std::string_view bytes);
  // A clean close from the client's side (close frame with `code`), waits for the server's
  // close frame up to the timeout.
  absl::Status Close(int code = 1000, std::string_view reason = "");
  // The next raw text frame (Read parses it).
  absl::StatusOr<std::string> ReadText(absl::Duration timeout);
  // Waits until the stream ended, reading (and dropping) messages meanwhile.
  std::optional<StreamEnd> WaitEnd(absl::Duration timeout);

 private:
  struct Impl;
  explicit WsPlayClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace courtpiece::gateway::testing

#endif  // COURTPIECE_SERVICES_GATEWAY_TESTING_WS_PLAY_CLIENT_H_
