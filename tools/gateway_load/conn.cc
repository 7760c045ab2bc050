#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <deque>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "courtpiece/client/v1/client.grpc.pb.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "load.h"
#include "services/gateway/json_codec.h"
#include "services/gateway/testing/client_json.h"
#include "tools/gateway_load/async_stream.h"

namespace courtpiece::gateway_load {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
namespace cv1 = ::courtpiece::client::v1;

namespace {

constexpr size_t kOutQueueMax = 1024;  // writes queued per connection; past it: dropped
constexpr size_t kInFlightMax = 4096;  // commands awaiting their result per connection
constexpr uint64_t kJoinId = 1;

int64_t MicrosSince(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - t).count();
}

// --- WebSocket --------------------------------------------------------------------------------

class WsConn final : public Conn, public std::enable_shared_from_this<WsConn> {
 public:
  WsConn(net::io_context& ioc, tcp::endpoint endpoint, std::string host, ConnSpec spec,
         Stats* stats)
      : ws_(net::make_strand(ioc)),
        endpoint_(endpoint),
        host_(std::move(host)),
        spec_(std::move(spec)),
        stats_(stats) {}

  void Start() override {
    net::dispatch(ws_.get_executor(), [self = shared_from_this()] { self->Connect(); });
  }
  bool ready() const override { return ready_.load(); }
  void SendCommand() override {
    net::post(ws_.get_executor(), [self = shared_from_this()] { self->Command(); });
  }
  void Stop() override {
    net::post(ws_.get_executor(), [self = shared_from_this()] {
      if (self->done_) return;
      self->ws_.async_close(websocket::close_code::normal, [self](beast::error_code) {});
    });
  }

 private:
  void Connect() {
    beast::get_lowest_layer(ws_).expires_after(std::chrono::seconds(10));
    beast::get_lowest_layer(ws_).async_connect(
        endpoint_, [self = shared_from_this()](beast::error_code ec) {
          if (ec) return self->End(absl::StrCat("connect: ", ec.message()));
          self->Upgrade();
        });
  }

  void Upgrade() {
    beast::get_lowest_layer(ws_).expires_never();
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
    const std::string auth = spec_.authorization;
    ws_.set_option(websocket::stream_base::decorator([auth](websocket::request_type& req) {
      if (!auth.empty()) req.set(beast::http::field::authorization, auth);
    }));
    ws_.async_handshake(host_, "/v1/play", [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->End(absl::StrCat("upgrade: ", ec.message()));
      self->stats_->connected.fetch_add(1);
      self->ws_.text(true);
      if (self->spec_.table_id.empty()) {
        self->Ready();
      } else {
        cv1::PlayRequest open;
        open.mutable_open()->set_table_id(self->spec_.table_id);
        self->Write(gateway::PrintJson(open));
      }
      self->Read();
    });
  }

  void Read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) {
        if (ec == websocket::error::closed) {
          return self->End(absl::StrCat("close_", self->ws_.reason().code));
        }
        return self->End(ec.message());
      }
      const std::string text = beast::buffers_to_string(self->in_.data());
      self->in_.consume(self->in_.size());
      self->OnText(text);
      self->Read();
    });
  }

  void OnText(const std::string& text) {
    cv1::PlayResponse m;
    if (!gateway::ParseJson(text, &m).ok()) {
      stats_->codes.Add("bad_json");
      return;
    }
    if (m.has_opened()) {
      if (m.opened().seat() >= 0) return Ready();
      cv1::PlayRequest join;
      join.mutable_command()->set_command_id(kJoinId);
      join.mutable_command()->set_type("join");
      Write(gateway::PrintJson(join));
      return;
    }
    if (!m.has_result()) return;
    if (!ready_ && m.result().command_id() == kJoinId) {
      if (m.result().code() == 0) return Ready();
      stats_->codes.Add(absl::StrCat("join_", gateway::testing::StatusCodeName(m.result().code())));
      return End("join refused");
    }
    OnResult(m.result().command_id(), m.result().code());
  }

  void OnResult(uint64_t id, int code) {
    while (!in_flight_.empty() && in_flight_.front().first < id) in_flight_.pop_front();
    if (in_flight_.empty() || in_flight_.front().first != id) return;
    stats_->latency.Add(MicrosSince(in_flight_.front().second));
    in_flight_.pop_front();
    stats_->answered.fetch_add(1, std::memory_order_relaxed);
    stats_->codes.Add(gateway::testing::StatusCodeName(code));
  }

  void Ready() {
    if (ready_.exchange(true)) return;
    stats_->ready.fetch_add(1);
  }

  void Command() {
    if (!ready_ || done_ || in_flight_.size() >= kInFlightMax) return;
    cv1::PlayRequest r;
    const uint64_t id = next_id_++;
    r.mutable_command()->set_command_id(id);
    r.mutable_command()->set_type("vote");
    r.mutable_command()->set_yes(true);
    in_flight_.emplace_back(id, SteadyClock::now());
    stats_->sent.fetch_add(1, std::memory_order_relaxed);
    Write(gateway::PrintJson(r));
  }

  void Write(std::string text) {
    if (done_) return;
    if (out_.size() >= kOutQueueMax) {
      stats_->codes.Add("client_queue_full");
      return;
    }
    out_.push_back(std::move(text));
    if (out_.size() == 1) DoWrite();
  }

  void DoWrite() {
    ws_.async_write(net::buffer(out_.front()),
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      if (ec) return self->End(absl::StrCat("write: ", ec.message()));
                      self->out_.pop_front();
                      if (!self->out_.empty()) self->DoWrite();
                    });
  }

  void End(const std::string& why) {
    if (done_) return;
    done_ = true;
    out_.clear();
    stats_->ends.Add(why);
    if (ready_) {
      stats_->ended.fetch_add(1);
    } else {
      stats_->failed.fetch_add(1);
    }
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
  }

  websocket::stream<beast::tcp_stream> ws_;
  const tcp::endpoint endpoint_;
  const std::string host_;
  const ConnSpec spec_;
  Stats* const stats_;
  beast::flat_buffer in_;
  std::deque<std::string> out_;
  std::deque<std::pair<uint64_t, SteadyClock::time_point>> in_flight_;
  uint64_t next_id_ = kJoinId + 1;
  std::atomic<bool> ready_{false};
  bool done_ = false;
};

// --- gRPC (the gateway's CourtPiece.Play, or a table's TableService.Play) -----------------------

template <typename Stub, typename Req, typename Resp>
class GrpcConn final : public Conn, public std::enable_shared_from_this<GrpcConn<Stub, Req, Resp>> {
 public:
  GrpcConn(std::unique_ptr<Stub> stub, ClientQueues& queues, size_t index, bool direct,
           ConnSpec spec, Stats* stats)
      : stub_(std::move(stub)),
        direct_(direct),
        spec_(std::move(spec)),
        stats_(stats),
        stream_(std::make_shared<AsyncStream<Req, Resp>>(
            queues, index,
            typename AsyncStream<Req, Resp>::Handlers{
                .on_message = [this](const Resp& m) { Handle(m); },
                .on_end = [this](const grpc::Status& status) { OnEnd(status); }},
            kOutQueueMax)) {}

  void Start() override {
    self_ = this->shared_from_this();
    if (direct_) {
      stream_->context().AddMetadata("courtpiece-player-id", spec_.player_id);
    } else if (!spec_.authorization.empty()) {
      stream_->context().AddMetadata("authorization", spec_.authorization);
    }
    std::vector<Req> first;
    if (!spec_.table_id.empty()) {
      Req open;
      open.mutable_open()->set_table_id(spec_.table_id);
      first.push_back(std::move(open));
    }
    stats_->connected.fetch_add(1);
    if (spec_.table_id.empty()) MarkReady();  // a bare stream (idle mode without --open)
    stream_->Start([this](grpc::ClientContext* ctx,
                          grpc::CompletionQueue* cq) { return stub_->PrepareAsyncPlay(ctx, cq); },
                   std::move(first));
  }
  bool ready() const override { return ready_.load(); }
  void Stop() override { stream_->Cancel(); }

  void SendCommand() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready_ || done_ || in_flight_.size() >= kInFlightMax) return;
    const uint64_t id = next_id_++;
    Req r;
    r.mutable_command()->set_command_id(id);
    r.mutable_command()->set_type("vote");
    r.mutable_command()->set_yes(true);
    if (!stream_->Send(std::move(r))) return;
    in_flight_.emplace_back(id, SteadyClock::now());
    stats_->sent.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  void OnEnd(const grpc::Status& status) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    stats_->ends.Add(gateway::testing::StatusCodeName(status.error_code()));
    if (ready_) {
      stats_->ended.fetch_add(1);
    } else {
      stats_->failed.fetch_add(1);
    }
    self_.reset();  // may delete this: the last thing done
  }

  void Handle(const Resp& m) {
    std::lock_guard<std::mutex> lock(mu_);
    if (m.has_opened()) {
      if (m.opened().seat() >= 0) {
        MarkReady();
      } else {
        Req join;
        join.mutable_command()->set_command_id(kJoinId);
        join.mutable_command()->set_type("join");
        stream_->Send(std::move(join));
      }
      return;
    }
    if (!m.has_result()) return;
    const uint64_t id = m.result().command_id();
    if (!ready_ && id == kJoinId) {
      if (m.result().code() == 0) {
        MarkReady();
      } else {
        stats_->codes.Add(
            absl::StrCat("join_", gateway::testing::StatusCodeName(m.result().code())));
        stream_->Cancel();
      }
      return;
    }
    while (!in_flight_.empty() && in_flight_.front().first < id) in_flight_.pop_front();
    if (in_flight_.empty() || in_flight_.front().first != id) return;
    stats_->latency.Add(MicrosSince(in_flight_.front().second));
    in_flight_.pop_front();
    stats_->answered.fetch_add(1, std::memory_order_relaxed);
    stats_->codes.Add(gateway::testing::StatusCodeName(m.result().code()));
  }

  void MarkReady() {
    if (ready_.exchange(true)) return;
    stats_->ready.fetch_add(1);
  }

  std::unique_ptr<Stub> stub_;
  const bool direct_;
  const ConnSpec spec_;
  Stats* const stats_;
  const std::shared_ptr<AsyncStream<Req, Resp>> stream_;
  std::shared_ptr<GrpcConn> self_;  // alive until OnEnd
  std::mutex mu_;
  bool done_ = false;                                                   // guarded by mu_
  std::deque<std::pair<uint64_t, SteadyClock::time_point>> in_flight_;  // guarded by mu_
  uint64_t next_id_ = kJoinId + 1;                                      // guarded by mu_
  std::atomic<bool> ready_{false};
};

// --- the play mode's streams ---------------------------------------------------------------

// The WebSocket: every completion runs on the player's strand (the stream's executor).
class WsPlayStream final : public PlayStream, public std::enable_shared_from_this<WsPlayStream> {
 public:
  WsPlayStream(Strand strand, tcp::endpoint endpoint, std::string host, std::string auth,
               PlayStreamHandlers handlers)
      : ws_(strand),
        endpoint_(endpoint),
        host_(std::move(host)),
        auth_(std::move(auth)),
        handlers_(std::move(handlers)) {}

  void Start(cv1::PlayRequest open) override {
    open_ = gateway::PrintJson(open);
    beast::get_lowest_layer(ws_).expires_after(std::chrono::seconds(10));
    beast::get_lowest_layer(ws_).async_connect(
        endpoint_, [self = shared_from_this()](beast::error_code ec) {
          if (ec) return self->End(14, absl::StrCat("connect: ", ec.message()));
          self->Upgrade();
        });
  }

  void Send(cv1::PlayRequest request) override { Write(gateway::PrintJson(request)); }

  void Close() override {
    if (done_ || closing_) return;
    closing_ = true;
    if (!upgraded_) {
      beast::error_code ec;
      beast::get_lowest_layer(ws_).socket().close(ec);
      return;
    }
    ws_.async_close(websocket::close_code::normal, [self = shared_from_this()](beast::error_code) {
      beast::error_code ec;
      beast::get_lowest_layer(self->ws_).socket().close(ec);
    });
  }

 private:
  void Upgrade() {
    beast::get_lowest_layer(ws_).expires_never();
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
    const std::string auth = auth_;
    ws_.set_option(websocket::stream_base::decorator([auth](websocket::request_type& req) {
      req.set(beast::http::field::authorization, auth);
    }));
    ws_.async_handshake(host_, "/v1/play", [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->End(14, absl::StrCat("upgrade: ", ec.message()));
      self->upgraded_ = true;
      self->ws_.text(true);
      if (self->closing_) {
        self->closing_ = false;
        return self->Close();
      }
      self->Write(std::move(self->open_));
      self->Read();
    });
  }

  void Read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) {
        if (ec == websocket::error::closed) {
          const int close = self->ws_.reason().code;
          const int code = close == 1000 ? 0 : close >= 4000 && close < 4017 ? close - 4000 : 14;
          return self->End(code, absl::StrCat("close_", close));
        }
        return self->End(self->closing_ ? 1 : 14, ec.message());
      }
      cv1::PlayResponse m;
      const bool ok = gateway::ParseJson(beast::buffers_to_string(self->in_.data()), &m).ok();
      self->in_.consume(self->in_.size());
      if (ok) {
        self->handlers_.on_message(m);
      } else {
        cv1::PlayResponse bad;  // an empty message: the player counts it as a fault
        self->handlers_.on_message(bad);
      }
      if (!self->done_) self->Read();
    });
  }

  void Write(std::string text) {
    if (done_ || !upgraded_) return;
    if (out_.size() >= kOutQueueMax) return End(8, "client queue full");
    out_.push_back(std::move(text));
    if (out_.size() == 1) DoWrite();
  }

  void DoWrite() {
    ws_.async_write(net::buffer(out_.front()),
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      if (self->done_) return;
                      if (ec) return self->End(14, absl::StrCat("write: ", ec.message()));
                      self->out_.pop_front();
                      if (!self->out_.empty()) self->DoWrite();
                    });
  }

  void End(int code, const std::string& why) {
    if (done_) return;
    done_ = true;
    out_.clear();
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
    handlers_.on_end(code, why);
  }

  websocket::stream<beast::tcp_stream> ws_;
  const tcp::endpoint endpoint_;
  const std::string host_, auth_;
  const PlayStreamHandlers handlers_;
  std::string open_;
  beast::flat_buffer in_;
  std::deque<std::string> out_;
  bool upgraded_ = false, closing_ = false, done_ = false;
};

// The gRPC stream: each message (a copy) and the end are posted to the player's strand.
class GrpcPlayStream final : public PlayStream,
                             public std::enable_shared_from_this<GrpcPlayStream> {
 public:
  using Stream = AsyncStream<cv1::PlayRequest, cv1::PlayResponse>;

  GrpcPlayStream(Strand strand, ClientQueues& queues, size_t index,
                 std::shared_ptr<grpc::Channel> channel, std::string auth,
                 PlayStreamHandlers handlers)
      : strand_(strand),
        stub_(cv1::CourtPiece::NewStub(std::move(channel))),
        handlers_(std::move(handlers)),
        stream_(std::make_shared<Stream>(
            queues, index,
            Stream::Handlers{.on_message =
                                 [this](const cv1::PlayResponse& m) {
                                   net::post(strand_, [self = shared_from_this(), m] {
                                     self->handlers_.on_message(m);
                                   });
                                 },
                             .on_end =
                                 [this](const grpc::Status& status) {
                                   // self_ goes with the posted handler: alive until it ran
                                   net::post(strand_, [self = std::move(self_),
                                                       code = static_cast<int>(status.error_code()),
                                                       why = status.error_message()] {
                                     self->handlers_.on_end(code, why);
                                   });
                                 }},
            kOutQueueMax)) {
    stream_->context().AddMetadata("authorization", auth);
  }

  void Start(cv1::PlayRequest open) override {
    self_ = shared_from_this();
    std::vector<cv1::PlayRequest> first;
    first.push_back(std::move(open));
    stream_->Start([this](grpc::ClientContext* ctx,
                          grpc::CompletionQueue* cq) { return stub_->PrepareAsyncPlay(ctx, cq); },
                   std::move(first));
  }

  void Send(cv1::PlayRequest request) override { stream_->Send(std::move(request)); }

  void Close() override { stream_->Cancel(); }

 private:
  Strand strand_;
  std::unique_ptr<cv1::CourtPiece::Stub> stub_;
  const PlayStreamHandlers handlers_;
  const std::shared_ptr<Stream> stream_;
  std::shared_ptr<GrpcPlayStream> self_;  // alive until on_end was posted
};

}  // namespace

std::shared_ptr<Conn> MakeWsConn(net::io_context& ioc, const tcp::endpoint& gateway,
                                 const std::string& host_header, ConnSpec spec, Stats* stats) {
  return std::make_shared<WsConn>(ioc, gateway, host_header, std::move(spec), stats);
}

std::shared_ptr<Conn> MakeGrpcConn(std::shared_ptr<grpc::Channel> channel, ClientQueues& queues,
                                   size_t index, bool direct, ConnSpec spec, Stats* stats) {
  if (direct) {
    using S = table::v1::TableService::Stub;
    return std::make_shared<GrpcConn<S, table::v1::PlayRequest, table::v1::PlayResponse>>(
        table::v1::TableService::NewStub(std::move(channel)), queues, index, true, std::move(spec),
        stats);
  }
  using S = cv1::CourtPiece::Stub;
  return std::make_shared<GrpcConn<S, cv1::PlayRequest, cv1::PlayResponse>>(
      cv1::CourtPiece::NewStub(std::move(channel)), queues, index, false, std::move(spec), stats);
}

std::shared_ptr<PlayStream> MakeWsPlayStream(Strand strand, const tcp::endpoint& gateway,
                                             const std::string& host_header,
                                             const std::string& authorization,
                                             PlayStreamHandlers handlers) {
  return std::make_shared<WsPlayStream>(strand, gateway, host_header, authorization,
                                        std::move(handlers));
}

std::shared_ptr<PlayStream> MakeGrpcPlayStream(Strand strand, ClientQueues& queues, size_t index,
                                               std::shared_ptr<grpc::Channel> channel,
                                               const std::string& authorization,
                                               PlayStreamHandlers handlers) {
  return std::make_shared<GrpcPlayStream>(strand, queues, index, std::move(channel), authorization,
                                          std::move(handlers));
}

}  // namespace courtpiece::gateway_load
