#include "services/gateway/testing/ws_play_client.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>

#include "absl/strings/str_cat.h"
#include "services/gateway/testing/client_json.h"

namespace courtpiece::gateway::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
constexpr size_t kInboxMax = 100'000;
}

struct WsPlayClient::Impl {
  explicit Impl(const WsOptions& o) : options(o), ws(ioc) {}

  ~Impl() {
    beast::error_code ec;
    beast::get_lowest_layer(ws).socket().close(ec);
    ioc.restart();
    ioc.poll();  // completes the pending handlers (they touch this object)
  }

  // Runs handlers until `pred` holds, `deadline` passes or nothing is left to run.
  template <typename Pred>
  bool RunUntil(Pred pred, absl::Time deadline) {
    while (!pred()) {
      const absl::Time now = absl::Now();
      if (now >= deadline) return false;
      if (ioc.stopped()) ioc.restart();
      const size_t ran = ioc.run_one_for(absl::ToChronoNanoseconds(deadline - now));
      if (ran == 0 && ioc.stopped() && !pred()) {
        // No work left at all (no read pending): nothing can change any more.
        if (!reading && !writing) return pred();
      }
    }
    return true;
  }

  void StartRead() {
    if (end.has_value() || reading || !options.read || inbox.size() >= kInboxMax) return;
    reading = true;
    ws.async_read(rbuf, [this](beast::error_code ec, size_t) {
      reading = false;
      if (ec) {
        OnReadError(ec);
        return;
      }
      inbox.push_back(beast::buffers_to_string(rbuf.data()));
      rbuf.consume(rbuf.size());
      StartRead();
    });
  }

  void OnReadError(beast::error_code ec) {
    if (end.has_value()) return;
    StreamEnd e;
    if (ec == websocket::error::closed) {
      const websocket::close_reason& r = ws.reason();
      e.ws_close_code = r.code;
      e.ws_reason.assign(r.reason.data(), r.reason.size());
    } else {
      e.ws_close_code = 1006;
      e.ws_reason = ec.message();
    }
    e.status = StatusFromCloseCode(e.ws_close_code, e.ws_reason);
    end = std::move(e);
  }

  absl::Status Write(std::string text, bool binary) {
    if (end.has_value()) return absl::UnavailableError("the stream has ended");
    bool done = false;
    beast::error_code write_ec;
    ws.binary(binary);
    writing = true;
    ws.async_write(net::buffer(text), [&](beast::error_code ec, size_t) {
      write_ec = ec;
      done = true;
      writing = false;
    });
    StartRead();
    if (!RunUntil([&] { return done; }, absl::Now() + options.timeout)) {
      Drop("write timed out");
      RunUntil([&] { return done; }, absl::Now() + absl::Seconds(5));
      return absl::DeadlineExceededError("write timed out (the server does not read)");
    }
    if (write_ec) {
      if (!end.has_value()) OnReadError(write_ec);
      return absl::UnavailableError(absl::StrCat("write: ", write_ec.message()));
    }
    return absl::OkStatus();
  }

  void Drop(const std::string& why) {
    beast::error_code ec;
    beast::get_lowest_layer(ws).socket().close(ec);
    if (!end.has_value()) end = StreamEnd{absl::CancelledError(why), 1006, why};
  }

  WsOptions options;
  net::io_context ioc;
  websocket::stream<beast::tcp_stream> ws;
  beast::flat_buffer rbuf;
  std::deque<std::string> inbox;
  bool reading = false;
  bool writing = false;
  std::optional<StreamEnd> end;
};

WsPlayClient::WsPlayClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WsPlayClient::~WsPlayClient() = default;

absl::StatusOr<std::unique_ptr<WsPlayClient>> WsPlayClient::Connect(const WsOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  Impl& m = *impl;
  const absl::Time deadline = absl::Now() + options.timeout;
  beast::error_code ec;
  tcp::resolver resolver(m.ioc);
  auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
  if (ec) return absl::UnavailableError(absl::StrCat("resolve: ", ec.message()));
  bool done = false;
  beast::error_code step_ec;
  beast::get_lowest_layer(m.ws).expires_after(absl::ToChronoNanoseconds(options.timeout));
  beast::get_lowest_layer(m.ws).async_connect(results,
                                              [&](beast::error_code e, const tcp::endpoint&) {
                                                step_ec = e;
                                                done = true;
                                              });
  m.RunUntil([&] { return done; }, deadline + absl::Seconds(1));
  if (step_ec == beast::error::timeout) return absl::DeadlineExceededError("connect timed out");
  if (step_ec) return absl::UnavailableError(absl::StrCat("connect: ", step_ec.message()));
  beast::get_lowest_layer(m.ws).expires_never();

  websocket::stream_base::timeout timeouts{};
  timeouts.handshake_timeout = absl::ToChronoNanoseconds(options.timeout);
  timeouts.idle_timeout = websocket::stream_base::none();
  timeouts.keep_alive_pings = false;
  m.ws.set_option(timeouts);
  const std::string authorization = options.authorization;
  m.ws.set_option(websocket::stream_base::decorator([authorization](websocket::request_type& req) {
    req.set(http::field::user_agent, "courtpiece-gateway-testing");
    if (!authorization.empty()) req.set(http::field::authorization, authorization);
  }));
  m.ws.read_message_max(options.read_message_max);
  websocket::response_type res;
  done = false;
  m.ws.async_handshake(res, absl::StrCat(options.host, ":", options.port), options.path,
                       [&](beast::error_code e) {
                         step_ec = e;
                         done = true;
                       });
  m.RunUntil([&] { return done; }, deadline + absl::Seconds(1));
  if (!done) return absl::DeadlineExceededError("no upgrade in time");
  if (step_ec == websocket::error::upgrade_declined) {
    return StatusFromHttp(static_cast<int>(res.result_int()), res.body());
  }
  if (step_ec == beast::error::timeout) return absl::DeadlineExceededError("upgrade timed out");
  if (step_ec) return absl::UnavailableError(absl::StrCat("upgrade: ", step_ec.message()));
  m.ws.text(true);
  m.StartRead();
  return std::unique_ptr<WsPlayClient>(new WsPlayClient(std::move(impl)));
}

absl::Status WsPlayClient::Send(const client::v1::PlayRequest& request) {
  return impl_->Write(ToJson(request), /*binary=*/false);
}

absl::Status WsPlayClient::SendText(std::string_view text) {
  return impl_->Write(std::string(text), /*binary=*/false);
}

absl::Status WsPlayClient::SendBinary(std::string_view bytes) {
  return impl_->Write(std::string(bytes), /*binary=*/true);
}

absl::StatusOr<std::string> WsPlayClient::ReadText(absl::Duration timeout) {
  Impl& m = *impl_;
  m.StartRead();
  m.RunUntil([&] { return !m.inbox.empty() || m.end.has_value(); }, absl::Now() + timeout);
  if (!m.inbox.empty()) {
    std::string text = std::move(m.inbox.front());
    m.inbox.pop_front();
    m.StartRead();
    return text;
  }
  if (m.end.has_value()) return absl::OutOfRangeError("stream ended");
  return absl::DeadlineExceededError("no message in time");
}

absl::StatusOr<client::v1::PlayResponse> WsPlayClient::Read(absl::Duration timeout) {
  absl::StatusOr<std::string> text = ReadText(timeout);
  if (!text.ok()) return text.status();
  client::v1::PlayResponse response;
  absl::Status s = FromJson(*text, &response);
  if (!s.ok()) return s;
  return response;
}

std::optional<StreamEnd> WsPlayClient::end() const { return impl_->end; }

void WsPlayClient::Cancel() { impl_->Drop("cancelled by the client"); }

absl::Status WsPlayClient::Close(int code, std::string_view reason) {
  Impl& m = *impl_;
  if (m.end.has_value()) return absl::OkStatus();
  bool done = false;
  beast::error_code close_ec;
  websocket::close_reason why(static_cast<websocket::close_code>(code));
  why.reason = beast::string_view(reason.data(), reason.size());
  m.writing = true;
  m.ws.async_close(why, [&](beast::error_code ec) {
    close_ec = ec;
    done = true;
    m.writing = false;
  });
  m.StartRead();
  const absl::Time deadline = absl::Now() + m.options.timeout;
  if (!m.RunUntil([&] { return done; }, deadline)) {
    m.Drop("close timed out");
    m.RunUntil([&] { return done; }, absl::Now() + absl::Seconds(5));
    return absl::DeadlineExceededError("the server did not answer the close");
  }
  if (!m.end.has_value()) {
    m.end = StreamEnd{StatusFromCloseCode(code, std::string(reason)), code, std::string(reason)};
  }
  if (close_ec) return absl::UnavailableError(absl::StrCat("close: ", close_ec.message()));
  return absl::OkStatus();
}

std::optional<StreamEnd> WsPlayClient::WaitEnd(absl::Duration timeout) {
  Impl& m = *impl_;
  const absl::Time deadline = absl::Now() + timeout;
  while (!m.end.has_value() && absl::Now() < deadline) {
    m.inbox.clear();
    m.StartRead();
    m.RunUntil([&] { return !m.inbox.empty() || m.end.has_value(); }, deadline);
  }
  return m.end;
}

}  // namespace courtpiece::gateway::testing
