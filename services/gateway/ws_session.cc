#include "services/gateway/ws_session.h"

#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/post.hpp>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "services/gateway/json_codec.h"

namespace courtpiece::gateway {

namespace beast = boost::beast;
namespace net = boost::asio;
namespace websocket = boost::beast::websocket;

namespace {
constexpr std::string_view kKind = "websocket";
std::atomic<int64_t> g_live_sessions{0};
}  // namespace

int64_t WsSession::Live() { return g_live_sessions.load(); }

class WsSession::Sink final : public ClientSink {
 public:
  explicit Sink(std::weak_ptr<WsSession> session) : session_(std::move(session)) {}
  bool Send(client::v1::PlayResponse message) override {
    std::shared_ptr<WsSession> session = session_.lock();
    return session != nullptr && session->Enqueue(std::move(message));
  }
  void Finish(const absl::Status& status) override {
    if (std::shared_ptr<WsSession> session = session_.lock()) session->FinishFromRelay(status);
  }

 private:
  std::weak_ptr<WsSession> session_;
};

WsSession::WsSession(net::ip::tcp::socket socket, std::string peer, std::string player_id,
                     const WsOptions& options, PlayService* play, const TokenGate* gate,
                     GatewayMetrics* metrics, std::unique_ptr<ConnLimiter::Ticket> ticket)
    : ws_(std::move(socket)),
      peer_(std::move(peer)),
      player_id_(std::move(player_id)),
      options_(options),
      play_(play),
      gate_(gate),
      metrics_(metrics),
      ticket_(std::move(ticket)),
      open_timer_(ws_.get_executor()),
      close_timer_(ws_.get_executor()) {
  g_live_sessions.fetch_add(1);
}

WsSession::~WsSession() {
  g_live_sessions.fetch_sub(1);
  if (!gone_) {
    if (conn_ != nullptr) conn_->OnClientGone();
    if (started_) metrics_->ConnectionClosed(kKind);
  }
}

void WsSession::Run(beast::http::request<beast::http::string_body> request) {
  started_ = true;
  metrics_->ConnectionOpened(kKind);
  beast::get_lowest_layer(ws_).expires_never();
  websocket::stream_base::timeout timeout;
  timeout.handshake_timeout = absl::ToChronoNanoseconds(options_.handshake_timeout);
  timeout.idle_timeout = absl::ToChronoNanoseconds(options_.idle_timeout);
  timeout.keep_alive_pings = true;
  ws_.set_option(timeout);
  ws_.read_message_max(options_.message_max_bytes);
  ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& response) {
    response.set(beast::http::field::server, "courtpiece-gateway");
  }));
  sink_ = std::make_shared<Sink>(weak_from_this());
  ws_.async_accept(request, beast::bind_front_handler(&WsSession::OnAccept, shared_from_this()));
}

void WsSession::Drain() {
  net::post(ws_.get_executor(), [self = shared_from_this()] {
    self->CloseAfterQueue(static_cast<uint16_t>(websocket::close_code::going_away),
                          "server going away");
  });
}

void WsSession::OnAccept(beast::error_code ec) {
  if (ec) {
    Gone();
    return;
  }
  accepted_ = true;
  open_timer_.expires_after(absl::ToChronoNanoseconds(options_.open_timeout));
  open_timer_.async_wait([self = shared_from_this()](beast::error_code timer_ec) {
    if (timer_ec || self->opened_) return;
    self->CloseNow(
        4000 + static_cast<int>(absl::StatusCode::kInvalidArgument),
        absl::StrCat("no open message within ", absl::FormatDuration(self->options_.open_timeout)));
  });
  if (close_after_queue_.has_value()) WriteNext();
  ReadNext();
}

void WsSession::ReadNext() {
  if (gone_) return;
  ws_.async_read(buffer_, net::bind_cancellation_slot(
                              read_cancel_.slot(),
                              beast::bind_front_handler(&WsSession::OnRead, shared_from_this())));
}

void WsSession::OnRead(beast::error_code ec, size_t /*bytes*/) {
  if (ec) {
    // websocket::error::closed: the peer closed (or answered our close). message_too_big:
    // Beast already sent close 1009. Anything else: the connection broke or timed out.
    Gone();
    return;
  }
  if (closing_) {
    // Our close is out: Beast's close operation reads (and drops) what still comes until
    // the peer's close or EOF, then tears down and calls Gone. A read of ours beside it
    // could wait forever on a peer that half-closed.
    buffer_.consume(buffer_.size());
    return;
  }
  HandleFrame();
  if (!closing_) ReadNext();
}

void WsSession::HandleFrame() {
  constexpr uint16_t kInvalid = 4000 + static_cast<int>(absl::StatusCode::kInvalidArgument);
  if (!ws_.got_text()) {
    buffer_.consume(buffer_.size());
    CloseNow(kInvalid, "binary frames are not supported: send JSON text frames");
    return;
  }
  const std::string text = beast::buffers_to_string(buffer_.data());
  buffer_.consume(buffer_.size());
  metrics_->MessageIn(kKind);
  client::v1::PlayRequest message;
  if (absl::Status parsed = ParseJson(text, &message); !parsed.ok()) {
    WsClose close = WsCloseFor(parsed);
    CloseNow(close.code, close.reason);
    return;
  }
  if (!opened_) {
    if (!message.has_open()) {
      CloseNow(kInvalid, "the first message must be open");
      return;
    }
    if (player_id_.empty()) {
      absl::StatusOr<auth::Claims> claims = gate_->AuthenticateToken(message.open().access_token());
      if (!claims.ok()) {
        WsClose close = WsCloseFor(claims.status());
        CloseNow(close.code, close.reason);
        return;
      }
      player_id_ = claims->player_id;
    }
    opened_ = true;
    open_timer_.cancel();
    message.mutable_open()->clear_access_token();
    conn_ = play_->Connect(player_id_, peer_, sink_);
  } else if (message.has_open()) {
    message.mutable_open()->clear_access_token();  // never forwarded; the relay refuses it
  }
  if (conn_ != nullptr) conn_->OnClientMessage(std::move(message));
}

bool WsSession::Enqueue(client::v1::PlayResponse message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!accepting_sends_) return false;
    if (queue_.size() >= options_.send_queue_max) {
      accepting_sends_ = false;
      net::post(ws_.get_executor(), [self = shared_from_this()] {
        self->metrics_->SendQueueDrop(kKind);
        self->CloseNow(4000 + static_cast<int>(absl::StatusCode::kResourceExhausted),
                       "slow reader: the send queue is full");
      });
      return false;
    }
    queue_.push_back(std::move(message));
  }
  net::post(ws_.get_executor(), [self = shared_from_this()] { self->WriteNext(); });
  return true;
}

void WsSession::FinishFromRelay(const absl::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    accepting_sends_ = false;  // later messages are ignored; the queued ones go out first
  }
  net::post(ws_.get_executor(), [self = shared_from_this(), status] {
    WsClose close = WsCloseFor(status);
    self->CloseAfterQueue(close.code, close.reason);
  });
}

void WsSession::WriteNext() {
  if (writing_ || closing_ || gone_ || !accepted_) return;
  std::optional<client::v1::PlayResponse> next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!queue_.empty()) {
      next = std::move(queue_.front());
      queue_.pop_front();
    }
  }
  if (!next.has_value()) {
    if (close_after_queue_.has_value()) {
      auto [code, reason] = *close_after_queue_;
      CloseNow(code, reason);
    }
    return;
  }
  out_ = PrintJson(*next);
  writing_ = true;
  ws_.text(true);
  ws_.async_write(net::buffer(out_),
                  beast::bind_front_handler(&WsSession::OnWrite, shared_from_this()));
}

void WsSession::OnWrite(beast::error_code ec, size_t /*bytes*/) {
  writing_ = false;
  if (close_pending_.has_value() && !gone_) {
    websocket::close_reason close_reason = std::move(*close_pending_);
    close_pending_.reset();
    StartClose(close_reason);
    return;
  }
  if (ec) {
    std::lock_guard<std::mutex> lock(mu_);
    accepting_sends_ = false;
    queue_.clear();
    return;  // the read fails too and ends the session
  }
  metrics_->MessageOut(kKind);
  WriteNext();
}

void WsSession::CloseAfterQueue(uint16_t code, const std::string& reason) {
  if (closing_ || gone_ || close_after_queue_.has_value()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    accepting_sends_ = false;
  }
  close_after_queue_ = std::make_pair(code, reason);
  WriteNext();
}

void WsSession::CloseNow(uint16_t code, const std::string& reason) {
  if (closing_ || gone_) return;
  closing_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    accepting_sends_ = false;
    queue_.clear();
  }
  open_timer_.cancel();
  // After `close_timeout`, whatever happens, the socket is cut and our close and our read
  // cancelled. Two waits only the timer ends: a peer that reads nothing never lets a
  // pending write (nor the close behind it) finish; and in Beast (Boost 1.81) our close,
  // once its frame is out, holds the write lock while it waits for the read lock, so a read
  // of ours that meets a protocol error meanwhile (it needs the write lock to send close
  // 1002) waits for the close, which waits for it. Neither has I/O on the socket, so
  // cutting the socket wakes neither. Cancelled, the close shuts the stream down and
  // completes without freeing its locks, so the read must be cancelled too: each then
  // completes with operation_aborted, and their handlers (which hold the session) go.
  // Found by fuzz/http_fuzz.cc: the corpus inputs ws-close-then-protocol-error-{1,2,3};
  // without the cancellations the session and its connection slot were never released.
  close_timer_.expires_after(absl::ToChronoNanoseconds(options_.close_timeout));
  close_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec) return;
    beast::get_lowest_layer(self->ws_).close();
    self->close_cancel_.emit(net::cancellation_type::terminal);
    self->read_cancel_.emit(net::cancellation_type::terminal);
  });
  websocket::close_reason close_reason;
  close_reason.code = code;
  close_reason.reason = CutUtf8(reason, kWsReasonMax);
  if (writing_) {
    close_pending_ = std::move(close_reason);
    return;
  }
  StartClose(close_reason);
}

void WsSession::StartClose(const websocket::close_reason& close_reason) {
  ws_.async_close(close_reason,
                  net::bind_cancellation_slot(close_cancel_.slot(),
                                              [self = shared_from_this()](beast::error_code) {
                                                // Done (the peer answered, hung up, or the timer
                                                // cut the socket and cancelled us): the connection
                                                // is down.
                                                self->Gone();
                                              }));
}

void WsSession::Gone() {
  if (gone_) return;
  gone_ = true;
  open_timer_.cancel();
  close_timer_.cancel();
  {
    std::lock_guard<std::mutex> lock(mu_);
    accepting_sends_ = false;
    queue_.clear();
  }
  if (conn_ != nullptr) {
    std::shared_ptr<PlayConnection> conn = std::move(conn_);
    conn_ = nullptr;
    conn->OnClientGone();
  }
  metrics_->ConnectionClosed(kKind);
  ticket_.reset();
}

}  // namespace courtpiece::gateway
