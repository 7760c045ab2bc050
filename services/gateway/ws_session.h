// The WebSocket Play front: one browser connection at /v1/play, JSON PlayRequest /
// PlayResponse one per text frame, relayed through PlayService (play_service.h).
// docs/gateway.md "HTTP and WebSocket front" has the whole behaviour; in short:
//   - authentication: the upgrade's `authorization` header (checked by the HTTP server
//     before the upgrade: 401 when bad), or else the first frame's open.access_token
//     (UNAUTHENTICATED -> close 4016); the token is cleared before the relay sees it;
//   - the first frame must arrive within `open_timeout` and be an `open` (else 4003);
//   - text frames only (binary -> 4003), at most `message_max_bytes` (else 1009), each a
//     JSON PlayRequest (bad JSON -> 4003 with the parser's message);
//   - the relay's messages wait in a queue of at most `send_queue_max` (full -> 4008 "slow
//     reader"); Finish(status) closes after the queue with 1000 (OK) or 4000 + the code;
//   - Drain() closes with 1001 "server going away";
//   - once the session decides to close, the connection is gone within `close_timeout`
//     (2 s) whatever the peer does.
// Thread-safety: the session runs on its socket's strand; the sink it hands to the relay
// may be called from any thread; Drain may be called from any thread.
#ifndef COURTPIECE_SERVICES_GATEWAY_WS_SESSION_H_
#define COURTPIECE_SERVICES_GATEWAY_WS_SESSION_H_

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "courtpiece/client/v1/client.pb.h"
#include "courtpiece/common/fifo.h"
#include "services/gateway/client_sink.h"
#include "services/gateway/conn_limiter.h"
#include "services/gateway/gateway_metrics.h"
#include "services/gateway/play_service.h"
#include "services/gateway/token_gate.h"

namespace courtpiece::gateway {

struct WsOptions {
  size_t message_max_bytes = 16 * 1024;
  size_t send_queue_max = 256;  // messages
  absl::Duration handshake_timeout = absl::Seconds(10);
  absl::Duration idle_timeout = absl::Seconds(60);  // Beast pings at half of it
  absl::Duration open_timeout = absl::Seconds(10);  // the first frame
  // From our decision to close to the socket cut, whatever the peer does: our close frame
  // is out by then unless the peer reads nothing (the write before it blocks), and the
  // peer's answer is not awaited longer. It also ends a wait in Beast (ws_session.cc).
  absl::Duration close_timeout = absl::Seconds(2);
};

class WsSession : public std::enable_shared_from_this<WsSession> {
 public:
  // `player_id`: from the upgrade's authorization header, or "" to authenticate by
  // open.access_token. `play`, `gate` and `metrics` must outlive the session.
  WsSession(boost::asio::ip::tcp::socket socket, std::string peer, std::string player_id,
            const WsOptions& options, PlayService* play, const TokenGate* gate,
            GatewayMetrics* metrics, std::unique_ptr<ConnLimiter::Ticket> ticket);
  ~WsSession();
  WsSession(const WsSession&) = delete;
  WsSession& operator=(const WsSession&) = delete;

  // Accepts the upgrade `request` (already read) and runs until the connection ends.
  void Run(boost::beast::http::request<boost::beast::http::string_body> request);

  // Closes with 1001 "server going away" (after what is queued).
  void Drain();

  // Sessions alive in this process (constructed, not yet destroyed): tests check that a
  // session ends, not only its connection count.
  static int64_t Live();

 private:
  class Sink;
  friend class Sink;

  void OnAccept(boost::beast::error_code ec);
  void ReadNext();
  void OnRead(boost::beast::error_code ec, size_t bytes);
  void HandleFrame();
  // From the sink, any thread: false when full (then the session closes 4008) or closed.
  bool Enqueue(client::v1::PlayResponse message);
  void FinishFromRelay(const absl::Status& status);
  // On the strand.
  void WriteNext();
  void OnWrite(boost::beast::error_code ec, size_t bytes);
  // Closes now (queued messages dropped) with `code` and `reason`.
  void CloseNow(uint16_t code, const std::string& reason);
  void StartClose(const boost::beast::websocket::close_reason& close_reason);
  // Closes after the queue drains.
  void CloseAfterQueue(uint16_t code, const std::string& reason);
  void Gone();

  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  const std::string peer_;
  std::string player_id_;
  const WsOptions options_;
  PlayService* const play_;
  const TokenGate* const gate_;
  GatewayMetrics* const metrics_;
  std::unique_ptr<ConnLimiter::Ticket> ticket_;

  // Strand state. (Declared after ws_: the timers use its executor.)
  boost::beast::flat_buffer buffer_;
  boost::asio::steady_timer open_timer_;
  boost::asio::steady_timer close_timer_;
  // Bound to our async_close and to our reads: the close timer cuts the socket and emits
  // both, which wakes a close and a read that wait on each other inside Beast
  // (ws_session.cc, CloseNow).
  boost::asio::cancellation_signal close_cancel_;
  boost::asio::cancellation_signal read_cancel_;
  std::shared_ptr<Sink> sink_;
  std::shared_ptr<PlayConnection> conn_;
  std::string out_;  // the frame being written
  bool started_ = false;
  bool accepted_ = false;
  bool opened_ = false;
  bool writing_ = false;
  bool closing_ = false;  // a close frame was sent or is being sent
  // CloseNow during a write: the close frame goes when the write is done (StartClose).
  // Beast with a write, a close and a read failing on a protocol error at once could wait
  // for its idle timeout instead of closing.
  std::optional<boost::beast::websocket::close_reason> close_pending_;
  bool gone_ = false;  // OnClientGone was called / the connection ended
  std::optional<std::pair<uint16_t, std::string>> close_after_queue_;

  // Shared with the sink's callers (any thread).
  std::mutex mu_;
  common::Fifo<client::v1::PlayResponse> queue_;
  bool accepting_sends_ = true;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_WS_SESSION_H_
