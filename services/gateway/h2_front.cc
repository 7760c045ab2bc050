#include "services/gateway/h2_front.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/fifo.h"
#include "services/gateway/h2_conn.h"
#include "services/gateway/h2_reflection.h"

namespace courtpiece::gateway {
namespace {

namespace asio = boost::asio;
namespace cv1 = client::v1;
using tcp = asio::ip::tcp;
using SteadyTime = std::chrono::steady_clock::time_point;
using Executor = asio::any_io_executor;

constexpr char kKind[] = "grpc";
constexpr absl::string_view kServicePrefix = "/courtpiece.client.v1.CourtPiece/";
constexpr std::string_view kPlayPath = "/courtpiece.client.v1.CourtPiece/Play";
constexpr std::string_view kHealthCheckPath = "/grpc.health.v1.Health/Check";
constexpr std::string_view kReflectionPaths[] = {
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"};
// A connection's output (taken from H2Conn, being written) past which Play messages wait in
// their sinks' queues instead of the connection's buffers.
constexpr size_t kOutputHighBytes = 64 * 1024;
// Bytes read from a socket per wake-up before the others get their turn.
constexpr size_t kReadChunkBytes = 64 * 1024;
constexpr int kReadsPerWakeMax = 4;
// From the decision to close (a GOAWAY that ends the connection) to the cut, whatever the peer.
constexpr absl::Duration kCloseTimeout = absl::Seconds(2);
// Client pings more often than client_ping_min with nothing sent between: this many are
// forgiven (gRPC's max_ping_strikes).
constexpr int kPingStrikesMax = 2;
// Unary requests received and not yet handed on, a connection's calls together.
constexpr size_t kHeldRequestBytesMax = 2 * 1024 * 1024;
// New streams a connection may open per second (a stream costs a token check, and a Play
// stream an owner lookup: a client opening and resetting streams in a loop is sent away).
constexpr int kNewStreamsPerSecondMax = 200;

std::chrono::nanoseconds Chrono(absl::Duration d) { return absl::ToChronoNanoseconds(d); }

// The gRPC peer form: "ipv4:1.2.3.4:5", "ipv6:[::1]:5".
std::string PeerString(const tcp::endpoint& ep) {
  if (ep.address().is_v6()) {
    return absl::StrCat("ipv6:[", ep.address().to_string(), "]:", ep.port());
  }
  return absl::StrCat("ipv4:", ep.address().to_string(), ":", ep.port());
}

// grpc.health.v1.HealthCheckRequest's `service` (field 1), by hand: the only field.
std::optional<std::string> HealthService(const std::string& bytes) {
  std::string service;
  size_t i = 0;
  while (i < bytes.size()) {
    const auto tag = static_cast<uint8_t>(bytes[i++]);
    if (tag != 0x0a || i >= bytes.size()) return std::nullopt;
    size_t length = 0;
    int shift = 0;
    while (true) {
      if (i >= bytes.size() || shift > 28) return std::nullopt;
      const auto b = static_cast<uint8_t>(bytes[i++]);
      length |= size_t{b & 0x7fu} << shift;
      shift += 7;
      if ((b & 0x80) == 0) break;
    }
    if (length > bytes.size() - i) return std::nullopt;
    service.assign(bytes, i, length);
    i += length;
  }
  return service;
}

}  // namespace

class H2Session;

// Posts from threads outside the front (router callbacks, the relay's sinks) go through this:
// once the front shuts down, nothing more is posted to its io_context.
struct PostGate {
  std::mutex mu;
  bool open = true;  // guarded by mu
};

struct H2Front::Shared {
  Shared(H2FrontOptions o, UnaryRouter& r, PlayService& p, const TokenGate& g, GatewayMetrics& m,
         common::Metrics& server_metrics)
      : options(std::move(o)),
        router(r),
        play(p),
        gate(g),
        metrics(m),
        recorder(common::NewCallRecorder(server_metrics)),
        conn_limiter(options.connections_max, options.connections_per_ip_max),
        play_limiter(options.grpc.play_streams_max, options.grpc.play_streams_per_ip_max),
        post_gate(std::make_shared<PostGate>()),
        reflection({"courtpiece.client.v1.CourtPiece", "grpc.health.v1.Health",
                    "grpc.reflection.v1alpha.ServerReflection"}),
        acceptor(asio::make_strand(ioc)),
        accept_retry(acceptor.get_executor()) {
    conn_options.streams_max = options.streams_per_connection_max;
    conn_options.output_bytes_max = 1024 * 1024;
  }

  const H2FrontOptions options;
  UnaryRouter& router;
  PlayService& play;
  const TokenGate& gate;
  GatewayMetrics& metrics;
  std::shared_ptr<common::CallRecorder> recorder;
  h2::ConnOptions conn_options;
  ConnLimiter conn_limiter;
  ConnLimiter play_limiter;
  PlayStreamSet streams;
  std::shared_ptr<PostGate> post_gate;
  const Reflection reflection;
  std::atomic<bool> stopping{false};
  std::atomic<int> open_calls{0};
  std::atomic<int> live_sessions{0};
  std::mutex mu;
  std::map<uint64_t, std::weak_ptr<H2Session>> sessions;  // guarded by mu
  uint64_t next_session = 1;                              // guarded by mu
  // Last: destroyed first, with the handlers (and sessions) it still holds, while the
  // limiters and the stream set they release into are alive.
  asio::io_context ioc;
  tcp::acceptor acceptor;
  asio::steady_timer accept_retry;
};

// One TCP connection: its H2Conn, socket, timer and calls, on its strand.
class H2Session : public std::enable_shared_from_this<H2Session>, private h2::H2Conn::Handler {
 public:
  class Sink;

  H2Session(H2Front::Shared& shared, tcp::socket socket, std::string peer,
            std::unique_ptr<ConnLimiter::Ticket> ticket, uint64_t id)
      : shared_(shared),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        conn_(*this, shared.conn_options),
        peer_(std::move(peer)),
        ticket_(std::move(ticket)),
        id_(id) {
    ++shared_.live_sessions;
  }
  ~H2Session() override {
    Close(/*graceful=*/false);  // a session dropped with the io_context: its calls end once
    --shared_.live_sessions;
  }

  void Run() {
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->Begin(); });
  }
  // From any thread: GOAWAY (no new streams); the connection closes once its calls are done.
  void GoAway() {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      if (self->closed_) return;
      self->conn_.GoAway(h2::kNoError, "server shutting down");
      self->MaybeCloseWhenIdle();
      self->Pump();
    });
  }
  // From any thread: closes after what is queued (gracefully, as Pump does).
  void CloseSoon() {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      if (self->closed_) return;
      self->CloseAfterWrite();
      self->Pump();
    });
  }
  // On the strand: moves what `stream_id`'s sink queued into the connection.
  void DrainSink(uint32_t stream_id);

 private:
  struct Call {
    enum class Kind { kUnary, kPlay, kHealth, kReflection, kRefused };
    Kind kind = Kind::kRefused;
    std::string label;
    SteadyTime start;
    absl::StatusCode code = absl::StatusCode::kOk;  // the trailers'
    const UnaryMethod* method = nullptr;
    std::string request;
    int messages = 0;
    UnaryContext ctx;
    std::shared_ptr<Sink> sink;
    std::shared_ptr<PlayConnection> conn;
    std::unique_ptr<ConnLimiter::Ticket> ticket;
    uint64_t set_id = 0;
    bool opened = false;                 // counted as a connection
    bool gone = false;                   // the relay was told
    bool dispatched = false;             // unary: handed to the router (or answered)
    SteadyTime finishing_since{};        // trailers queued behind data
    std::optional<SteadyTime> deadline;  // the client's grpc-timeout
  };

  void Begin();
  void WaitReadable();
  void OnReadable(const boost::system::error_code& ec);
  void Pump();
  void OnWritten(const boost::system::error_code& ec);
  // Ends the session: every call ends (reset), the slot is let go. `graceful`: our FIN after
  // what was written, then the client's bytes are read and dropped until it closes (at most
  // kCloseTimeout): closing with unread bytes would send RST, and the client could lose our
  // last frames. Otherwise the socket is cut at once.
  void Close(bool graceful = false);
  void CutSocket();
  void ArmTimer(absl::Duration after);
  void OnTimer();
  void SweepCalls();
  void MaybeCloseWhenIdle();
  void CloseAfterWrite();

  Call* Find(uint32_t stream_id) {
    auto it = calls_.find(stream_id);
    return it == calls_.end() ? nullptr : it->second.get();
  }
  void Answer(uint32_t stream_id, const absl::Status& status);
  void ClientGone(Call& call);
  void StartPlay(uint32_t stream_id, Call& call, const h2::Request& request);
  void StartUnary(uint32_t stream_id);
  void OnUnaryDone(uint32_t stream_id, const absl::Status& status,
                   const google::protobuf::Message* reply);
  void EndCall(uint32_t stream_id, bool reset);

  // h2::H2Conn::Handler
  void OnRequest(uint32_t stream_id, const h2::Request& request) override;
  void OnMessage(uint32_t stream_id, std::string message) override;
  void OnBadMessage(uint32_t stream_id, const absl::Status& status) override;
  void OnHalfClose(uint32_t stream_id) override;
  void OnStreamGone(uint32_t stream_id, bool reset) override { EndCall(stream_id, reset); }
  void OnWritable(uint32_t stream_id) override { DrainSink(stream_id); }
  void OnPingAck() override;
  void OnPing() override;

  H2Front::Shared& shared_;
  tcp::socket socket_;  // its executor is the session's strand
  asio::steady_timer timer_;
  h2::H2Conn conn_;
  const std::string peer_;
  std::unique_ptr<ConnLimiter::Ticket> ticket_;
  const uint64_t id_;
  std::map<uint32_t, std::unique_ptr<Call>> calls_;
  std::string writing_;  // the bytes being written
  bool write_in_flight_ = false;
  bool read_waiting_ = false;
  bool closed_ = false;         // the session's calls are over
  bool lingering_ = false;      // closed, our FIN sent, reading until the client's
  bool socket_closed_ = false;  // the socket is closed
  size_t held_request_bytes_ = 0;
  SteadyTime streams_window_start_{};
  int streams_in_window_ = 0;
  bool close_after_write_ = false;
  bool sinks_waiting_ = false;  // a Play sink kept messages back (output or window full)
  uint64_t timer_generation_ = 0;
  uint64_t pings_sent_ = 0;
  bool ping_outstanding_ = false;
  SteadyTime idle_since_ = std::chrono::steady_clock::now();
  SteadyTime last_client_ping_{};
  bool sent_since_client_ping_ = true;
  int ping_strikes_ = 0;
};

// The Play call's ClientSink: a bounded queue any thread fills; the session's strand drains it.
class H2Session::Sink final : public ClientSink {
 public:
  Sink(std::weak_ptr<H2Session> session, Executor executor, std::shared_ptr<PostGate> gate,
       uint32_t stream_id, size_t queue_max, GatewayMetrics& metrics)
      : session_(std::move(session)),
        executor_(std::move(executor)),
        gate_(std::move(gate)),
        stream_id_(stream_id),
        queue_max_(queue_max),
        metrics_(metrics) {}

  bool Send(cv1::PlayResponse message) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_ || finish_.has_value()) return false;
    if (queue_.size() >= queue_max_) {
      metrics_.SendQueueDrop(kKind);
      queue_.clear();
      finish_ = absl::ResourceExhaustedError("slow reader");
      ScheduleLocked();
      return false;
    }
    queue_.push_back(std::move(message));
    ScheduleLocked();
    return true;
  }
  void Finish(const absl::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_ || finish_.has_value()) return;
    finish_ = status;
    ScheduleLocked();
  }

  // The strand's side.
  bool Pop(cv1::PlayResponse* message) {
    std::lock_guard<std::mutex> lock(mu_);
    scheduled_ = false;
    if (queue_.empty()) return false;
    *message = std::move(queue_.front());
    queue_.pop_front();
    return true;
  }
  // The finish status once nothing is queued before it.
  std::optional<absl::Status> TakeFinish() {
    std::lock_guard<std::mutex> lock(mu_);
    scheduled_ = false;
    if (!queue_.empty() || !finish_.has_value() || finish_taken_) return std::nullopt;
    finish_taken_ = true;
    return finish_;
  }
  bool has_queued() {
    std::lock_guard<std::mutex> lock(mu_);
    return !queue_.empty() || (finish_.has_value() && !finish_taken_);
  }
  // The stream is gone: nothing more is taken or posted, and the strand is let go (the relay
  // may keep the sink after the front and its io_context are gone).
  void End() {
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
    queue_.clear();
    executor_.reset();
  }

 private:
  void ScheduleLocked() {
    if (scheduled_ || !executor_.has_value()) return;
    scheduled_ = true;
    std::lock_guard<std::mutex> gate(gate_->mu);
    if (!gate_->open) return;
    asio::post(*executor_, [weak = session_, id = stream_id_] {
      if (std::shared_ptr<H2Session> session = weak.lock(); session != nullptr) {
        session->DrainSink(id);
      }
    });
  }

  const std::weak_ptr<H2Session> session_;
  std::optional<Executor> executor_;  // guarded by mu_; the session's strand until End
  const std::shared_ptr<PostGate> gate_;
  const uint32_t stream_id_;
  const size_t queue_max_;
  GatewayMetrics& metrics_;
  std::mutex mu_;
  common::Fifo<cv1::PlayResponse> queue_;  // guarded by mu_
  std::optional<absl::Status> finish_;     // guarded by mu_
  bool finish_taken_ = false;              // guarded by mu_
  bool scheduled_ = false;                 // guarded by mu_
  bool ended_ = false;                     // guarded by mu_
};

void H2Session::Begin() {
  boost::system::error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
  socket_.non_blocking(true, ec);
  conn_.Start();
  Pump();
  WaitReadable();
  ArmTimer(shared_.options.ping_interval);
}

void H2Session::WaitReadable() {
  if (socket_closed_ || read_waiting_) return;
  read_waiting_ = true;
  socket_.async_wait(
      tcp::socket::wait_read,
      [self = shared_from_this()](const boost::system::error_code& ec) { self->OnReadable(ec); });
}

void H2Session::OnReadable(const boost::system::error_code& ec) {
  read_waiting_ = false;
  if (socket_closed_) return;
  // One buffer per I/O thread: an idle connection holds none.
  thread_local char buffer[kReadChunkBytes];
  if (lingering_) {  // dropped: we only wait for the client's end
    for (int i = 0; i < kReadsPerWakeMax; ++i) {
      boost::system::error_code read_ec;
      const size_t n = socket_.read_some(asio::buffer(buffer), read_ec);
      if (read_ec == asio::error::would_block || read_ec == asio::error::try_again) break;
      if (read_ec || n == 0) {
        CutSocket();
        return;
      }
    }
    WaitReadable();
    return;
  }
  if (closed_) return;
  if (ec) {
    Close();
    return;
  }
  for (int i = 0; i < kReadsPerWakeMax; ++i) {
    boost::system::error_code read_ec;
    const size_t n = socket_.read_some(asio::buffer(buffer), read_ec);
    if (read_ec == asio::error::would_block || read_ec == asio::error::try_again) break;
    if (read_ec || n == 0) {  // the peer closed (or reset) the connection
      Close();
      return;
    }
    if (!conn_.Feed(buffer, n)) {
      CloseAfterWrite();
      Pump();
      return;
    }
    if (n < sizeof(buffer)) break;
  }
  Pump();
  WaitReadable();
}

void H2Session::Pump() {
  if (closed_) return;
  if (write_in_flight_) {
    // Answers piling up behind a write the client does not read (H2Conn checks this only
    // for what the client's own frames produce).
    if (conn_.output_size() > shared_.conn_options.output_bytes_max) Close();
    return;
  }
  if (conn_.output_size() == 0) {
    if (close_after_write_ || conn_.dead()) Close(/*graceful=*/true);
    return;
  }
  writing_ = conn_.TakeOutput();
  write_in_flight_ = true;
  asio::async_write(socket_, asio::buffer(writing_),
                    [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                      self->OnWritten(ec);
                    });
}

void H2Session::OnWritten(const boost::system::error_code& ec) {
  write_in_flight_ = false;
  std::string().swap(writing_);
  if (closed_ || socket_closed_) return;
  if (ec) {
    Close();
    return;
  }
  if (sinks_waiting_) {
    sinks_waiting_ = false;
    std::vector<uint32_t> ids;
    for (const auto& [id, call] : calls_) {
      if (call->sink != nullptr) ids.push_back(id);
    }
    for (const uint32_t id : ids) DrainSink(id);
  }
  Pump();
}

void H2Session::CloseAfterWrite() {
  close_after_write_ = true;
  ArmTimer(kCloseTimeout);
}

void H2Session::MaybeCloseWhenIdle() {
  if (calls_.empty() && (conn_.goaway_sent() || conn_.peer_goaway())) CloseAfterWrite();
}

void H2Session::Close(bool graceful) {
  if (closed_) {
    if (!graceful) CutSocket();
    return;
  }
  closed_ = true;
  conn_.Abort();  // nothing more is read from it: its streams end (EndCall) here
  while (!calls_.empty()) EndCall(calls_.begin()->first, /*reset=*/true);
  ticket_.reset();
  {
    std::lock_guard<std::mutex> lock(shared_.mu);
    shared_.sessions.erase(id_);
  }
  if (!graceful || write_in_flight_ || socket_closed_) {
    CutSocket();
    return;
  }
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  lingering_ = true;
  ArmTimer(kCloseTimeout);
  WaitReadable();
}

void H2Session::CutSocket() {
  if (socket_closed_) return;
  socket_closed_ = true;
  lingering_ = false;
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  timer_.cancel();
}

void H2Session::ArmTimer(absl::Duration after) {
  const uint64_t generation = ++timer_generation_;
  timer_.expires_after(Chrono(after));
  timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& ec) {
    if (ec || generation != self->timer_generation_ || self->socket_closed_) return;
    self->OnTimer();
  });
}

void H2Session::OnTimer() {
  if (lingering_) {  // the client did not close in time
    CutSocket();
    return;
  }
  if (closed_) return;
  if (close_after_write_ || ping_outstanding_) {
    // The close's time is up, or the client did not answer our ping: it is gone.
    Close();
    return;
  }
  SweepCalls();
  if (closed_) return;
  const H2FrontOptions& o = shared_.options;
  if (calls_.empty() && std::chrono::steady_clock::now() - idle_since_ >= Chrono(o.idle_timeout)) {
    conn_.GoAway(h2::kNoError, "idle");
    CloseAfterWrite();
    Pump();
    return;
  }
  conn_.Ping(++pings_sent_);
  ping_outstanding_ = true;
  ArmTimer(o.ping_timeout);
  Pump();
}

void H2Session::SweepCalls() {
  const SteadyTime now = std::chrono::steady_clock::now();
  std::vector<uint32_t> ids;
  ids.reserve(calls_.size());
  for (const auto& [id, call] : calls_) ids.push_back(id);
  for (const uint32_t id : ids) {
    Call* call = Find(id);
    if (call == nullptr) continue;
    if (call->finishing_since != SteadyTime{}) {
      if (now - call->finishing_since >= Chrono(shared_.options.finish_timeout)) {
        conn_.ResetStream(id, h2::kCancel);
      }
      continue;
    }
    const bool unary = call->kind == Call::Kind::kUnary || call->kind == Call::Kind::kHealth;
    if (unary && !call->dispatched &&
        now - call->start >= Chrono(shared_.options.request_timeout)) {
      Answer(id, absl::DeadlineExceededError("the request did not arrive in time"));
    } else if (call->deadline.has_value() && now >= *call->deadline) {
      if (call->kind == Call::Kind::kPlay && call->sink != nullptr) {
        ClientGone(*call);
        call->sink->Finish(absl::DeadlineExceededError("deadline exceeded"));
      } else if (!call->dispatched) {
        Answer(id, absl::DeadlineExceededError("deadline exceeded"));
      }
    }
  }
  Pump();
}

void H2Session::OnPingAck() {
  if (!ping_outstanding_) return;
  ping_outstanding_ = false;
  if (!close_after_write_) ArmTimer(shared_.options.ping_interval);
}

void H2Session::OnPing() {
  const SteadyTime now = std::chrono::steady_clock::now();
  if (sent_since_client_ping_) {
    ping_strikes_ = 0;
  } else if (now - last_client_ping_ < Chrono(shared_.options.client_ping_min) &&
             ++ping_strikes_ > kPingStrikesMax) {
    conn_.GoAway(h2::kEnhanceYourCalm, "too_many_pings");
    CloseAfterWrite();
  }
  last_client_ping_ = now;
  sent_since_client_ping_ = false;
}

void H2Session::OnRequest(uint32_t stream_id, const h2::Request& request) {
  const SteadyTime now = std::chrono::steady_clock::now();
  if (now - streams_window_start_ >= std::chrono::seconds(1)) {
    streams_window_start_ = now;
    streams_in_window_ = 0;
  }
  if (++streams_in_window_ > kNewStreamsPerSecondMax) {
    conn_.GoAway(h2::kEnhanceYourCalm, "too many new streams");  // ends this stream too
    CloseAfterWrite();
    return;
  }
  auto call = std::make_unique<Call>();
  call->start = now;
  // The client's grpc-timeout, -1 when none (or malformed: then none).
  const int64_t timeout_nanos =
      request.timeout.empty() ? -1 : h2::ParseGrpcTimeoutNanos(request.timeout);
  if (timeout_nanos >= 0) call->deadline = now + std::chrono::nanoseconds(timeout_nanos);
  call->label = common::MethodLabel(request.path.c_str());
  Call& c = *call;
  calls_.emplace(stream_id, std::move(call));
  ++shared_.open_calls;
  if (request.path == kPlayPath) {
    c.kind = Call::Kind::kPlay;
    StartPlay(stream_id, c, request);
    return;
  }
  if (request.path == kHealthCheckPath) {
    c.kind = Call::Kind::kHealth;
    conn_.SetMessageLimit(stream_id, 1024);
    return;
  }
  for (const std::string_view path : kReflectionPaths) {
    if (request.path != path) continue;
    c.kind = Call::Kind::kReflection;  // a stream: one answer per request
    conn_.SetMessageLimit(stream_id, 4096);
    return;
  }
  if (!absl::StartsWith(request.path, kServicePrefix)) {
    Answer(stream_id, absl::UnimplementedError(absl::StrCat("unknown method ", request.path)));
    return;
  }
  const std::string name = request.path.substr(kServicePrefix.size());
  shared_.metrics.MessageIn(kKind);
  c.method = shared_.router.Find(name);
  if (c.method == nullptr) {
    Answer(stream_id, absl::UnimplementedError(absl::StrCat("unknown method ", name)));
    return;
  }
  c.kind = Call::Kind::kUnary;
  c.ctx.authorization = request.authorization;
  c.ctx.peer = peer_;
  if (timeout_nanos >= 0) c.ctx.deadline = absl::Now() + absl::Nanoseconds(timeout_nanos);
  conn_.SetMessageLimit(stream_id, static_cast<uint32_t>(c.method->request_bytes_max));
}

void H2Session::StartPlay(uint32_t stream_id, Call& call, const h2::Request& request) {
  std::string refused;
  call.ticket = shared_.play_limiter.TryAcquire(PeerAddress(peer_), &refused);
  if (call.ticket == nullptr) {  // never counted as opened
    shared_.metrics.ConnectionRefused(absl::StrCat("grpc_", refused));
    Answer(stream_id, absl::ResourceExhaustedError(refused == "per_ip"
                                                       ? "too many connections from your address"
                                                       : "the gateway is full: retry later"));
    return;
  }
  call.opened = true;
  shared_.metrics.ConnectionOpened(kKind);
  absl::StatusOr<auth::Claims> claims = shared_.gate.Authenticate(request.authorization);
  if (!claims.ok()) {
    Answer(stream_id, claims.status());
    return;
  }
  conn_.SetMessageLimit(stream_id,
                        static_cast<uint32_t>(shared_.options.grpc.play_message_bytes_max));
  call.sink = std::make_shared<Sink>(
      weak_from_this(), socket_.get_executor(), shared_.post_gate, stream_id,
      static_cast<size_t>(shared_.options.grpc.send_queue_max), shared_.metrics);
  call.set_id = shared_.streams.Add(call.sink);
  call.conn = shared_.play.Connect(claims->player_id, peer_, call.sink);
}

void H2Session::OnMessage(uint32_t stream_id, std::string message) {
  Call* call = Find(stream_id);
  if (call == nullptr) return;
  switch (call->kind) {
    case Call::Kind::kPlay: {
      if (call->conn == nullptr || call->gone) return;
      cv1::PlayRequest request;
      if (!request.ParseFromString(message)) {
        ClientGone(*call);
        call->sink->Finish(absl::InvalidArgumentError("the message is not a PlayRequest"));
        return;
      }
      if (request.has_open()) request.mutable_open()->clear_access_token();
      call->conn->OnClientMessage(std::move(request));
      return;
    }
    case Call::Kind::kReflection: {
      std::optional<std::string> answer = shared_.reflection.Answer(message);
      if (!answer.has_value()) {
        Answer(stream_id, absl::InvalidArgumentError("not a ServerReflectionRequest"));
        return;
      }
      conn_.SendMessage(stream_id, *answer);
      sent_since_client_ping_ = true;
      return;
    }
    case Call::Kind::kUnary:
    case Call::Kind::kHealth:
      if (++call->messages > 1) {
        Answer(stream_id, absl::InternalError("a unary call with more than one request"));
        return;
      }
      if (held_request_bytes_ + message.size() > kHeldRequestBytesMax) {
        Answer(stream_id,
               absl::ResourceExhaustedError("too much request data waiting on this connection"));
        return;
      }
      held_request_bytes_ += message.size();
      call->request = std::move(message);
      return;
    case Call::Kind::kRefused:
      return;  // answered already
  }
}

void H2Session::OnBadMessage(uint32_t stream_id, const absl::Status& status) {
  Call* call = Find(stream_id);
  if (call == nullptr) return;
  absl::Status answer = status;
  if (status.code() == absl::StatusCode::kResourceExhausted) {
    if (call->kind == Call::Kind::kPlay) {
      answer = absl::ResourceExhaustedError(
          absl::StrCat("message over ", shared_.options.grpc.play_message_bytes_max, " bytes"));
    } else if (call->kind == Call::Kind::kUnary) {
      answer = absl::ResourceExhaustedError(absl::StrCat(
          call->method->name, " request over ", call->method->request_bytes_max, " bytes"));
    }
  }
  if (call->kind == Call::Kind::kPlay && call->sink != nullptr) {
    ClientGone(*call);
    call->sink->Finish(answer);
    return;
  }
  Answer(stream_id, answer);
}

void H2Session::OnHalfClose(uint32_t stream_id) {
  Call* call = Find(stream_id);
  if (call == nullptr) return;
  switch (call->kind) {
    case Call::Kind::kPlay:
      if (call->sink == nullptr) return;  // refused: answered already
      ClientGone(*call);
      call->sink->Finish(absl::OkStatus());
      return;
    case Call::Kind::kHealth: {
      std::optional<std::string> service;
      if (call->messages == 1) service = HealthService(call->request);
      if (!service.has_value()) {
        Answer(stream_id, absl::InternalError("not a HealthCheckRequest"));
      } else if (!service->empty() && *service != "courtpiece.client.v1.CourtPiece") {
        Answer(stream_id, absl::NotFoundError(absl::StrCat("unknown service ", *service)));
      } else {
        // HealthCheckResponse{status: SERVING (1) or NOT_SERVING (2)}.
        const char reply[2] = {0x08, shared_.stopping.load() ? '\x02' : '\x01'};
        conn_.SendMessage(stream_id, std::string_view(reply, 2));
        Answer(stream_id, absl::OkStatus());
      }
      return;
    }
    case Call::Kind::kUnary:
      if (call->messages != 1) {
        Answer(stream_id, absl::InternalError("a unary call without its request"));
        return;
      }
      StartUnary(stream_id);
      return;
    case Call::Kind::kReflection:
      Answer(stream_id, absl::OkStatus());
      return;
    case Call::Kind::kRefused:
      return;
  }
}

void H2Session::StartUnary(uint32_t stream_id) {
  Call& call = *Find(stream_id);
  std::unique_ptr<google::protobuf::Message> request(call.method->request_prototype->New());
  if (!request->ParseFromString(call.request)) {
    Answer(stream_id, absl::InternalError(
                          absl::StrCat("the request is not a ", request->GetDescriptor()->name())));
    return;
  }
  held_request_bytes_ -= call.request.size();
  std::string().swap(call.request);
  call.dispatched = true;
  shared_.router.Call(
      *call.method, std::move(request), call.ctx,
      // Holds no strand (the router may keep it past the front): the session's, if alive.
      [weak = weak_from_this(), gate = shared_.post_gate, stream_id](
          absl::Status status, std::unique_ptr<google::protobuf::Message> reply) {
        std::shared_ptr<google::protobuf::Message> answer(std::move(reply));
        std::lock_guard<std::mutex> lock(gate->mu);
        if (!gate->open) return;
        std::shared_ptr<H2Session> self = weak.lock();
        if (self == nullptr) return;
        asio::post(self->socket_.get_executor(),
                   [self, stream_id, status = std::move(status), answer] {
                     self->OnUnaryDone(stream_id, status, answer.get());
                   });
      });
}

void H2Session::OnUnaryDone(uint32_t stream_id, const absl::Status& status,
                            const google::protobuf::Message* reply) {
  if (Find(stream_id) == nullptr) return;  // the client cancelled it
  if (status.ok() && reply != nullptr) {
    conn_.SendMessage(stream_id, reply->SerializeAsString());
    shared_.metrics.MessageOut(kKind);
  }
  Answer(stream_id, status);
  Pump();
}

void H2Session::Answer(uint32_t stream_id, const absl::Status& status) {
  Call* call = Find(stream_id);
  if (call == nullptr) return;
  call->code = status.code();
  call->dispatched = true;
  sent_since_client_ping_ = true;
  conn_.SendTrailers(stream_id, status);  // may end the call at once (EndCall)
  if (Call* waiting = Find(stream_id); waiting != nullptr) {
    waiting->finishing_since = std::chrono::steady_clock::now();  // behind unsent data
  }
}

void H2Session::DrainSink(uint32_t stream_id) {
  Call* call = Find(stream_id);
  if (call == nullptr || call->sink == nullptr || closed_) return;
  Sink& sink = *call->sink;
  cv1::PlayResponse message;
  std::string bytes;
  while (conn_.unsent_bytes(stream_id) < h2::H2Conn::kWritableBytes &&
         conn_.output_size() + writing_.size() < kOutputHighBytes) {
    if (!sink.Pop(&message)) break;
    bytes.clear();
    message.SerializeToString(&bytes);
    conn_.SendMessage(stream_id, bytes);
    sent_since_client_ping_ = true;
  }
  if (std::optional<absl::Status> finish = sink.TakeFinish(); finish.has_value()) {
    Answer(stream_id, *finish);
  } else if (sink.has_queued()) {
    sinks_waiting_ = true;
  }
  Pump();
}

void H2Session::ClientGone(Call& call) {
  if (call.gone) return;
  call.gone = true;
  if (call.conn != nullptr) call.conn->OnClientGone();
}

void H2Session::EndCall(uint32_t stream_id, bool reset) {
  auto it = calls_.find(stream_id);
  if (it == calls_.end()) return;
  std::unique_ptr<Call> call = std::move(it->second);
  calls_.erase(it);
  held_request_bytes_ -= call->request.size();
  if (call->sink != nullptr) call->sink->End();
  if (call->set_id != 0) shared_.streams.Remove(call->set_id);
  ClientGone(*call);
  if (call->opened) shared_.metrics.ConnectionClosed(kKind);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - call->start;
  shared_.recorder->Record(
      call->label, reset ? grpc::StatusCode::CANCELLED : static_cast<grpc::StatusCode>(call->code),
      elapsed.count());
  --shared_.open_calls;
  if (calls_.empty()) {
    idle_since_ = std::chrono::steady_clock::now();
    if (!closed_) MaybeCloseWhenIdle();
  }
}

namespace {

void Accept(H2Front::Shared& shared);

// Over a connection limit: a GOAWAY with the reason in place of our SETTINGS, best effort,
// and close. A gRPC client takes a server that never sent SETTINGS as a failed connect, so its
// calls fail UNAVAILABLE at once (with SETTINGS first it would count the connection as made
// and keep dialing until its calls' deadlines).
void Refuse(tcp::socket socket, const std::string& reason) {
  std::string bytes;
  h2::PutGoAway(bytes, 0, h2::kEnhanceYourCalm, reason);
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  socket.write_some(asio::buffer(bytes), ec);
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

void OnAccepted(H2Front::Shared& shared, tcp::socket socket) {
  boost::system::error_code ec;
  const tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  std::string refused;
  std::unique_ptr<ConnLimiter::Ticket> ticket =
      shared.conn_limiter.TryAcquire(remote.address().to_string(), &refused);
  if (ticket == nullptr) {
    shared.metrics.ConnectionRefused(absl::StrCat("grpc_conn_", refused));
    Refuse(std::move(socket), refused == "per_ip" ? "too many connections from your address"
                                                  : "the gateway is full: retry later");
    return;
  }
  std::shared_ptr<H2Session> session;
  {
    std::lock_guard<std::mutex> lock(shared.mu);
    const uint64_t id = shared.next_session++;
    session = std::make_shared<H2Session>(shared, std::move(socket), PeerString(remote),
                                          std::move(ticket), id);
    shared.sessions.emplace(id, session);
  }
  session->Run();
}

void Accept(H2Front::Shared& shared) {
  shared.acceptor.async_accept(
      asio::make_strand(shared.ioc),
      [&shared](const boost::system::error_code& ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted || !shared.acceptor.is_open()) return;
        if (ec) {  // out of descriptors, say: try again in a moment
          shared.accept_retry.expires_after(std::chrono::milliseconds(50));
          shared.accept_retry.async_wait([&shared](const boost::system::error_code& wait_ec) {
            if (!wait_ec) Accept(shared);
          });
          return;
        }
        OnAccepted(shared, std::move(socket));
        Accept(shared);
      });
}

}  // namespace

H2Front::H2Front(H2FrontOptions options, UnaryRouter& router, PlayService& play,
                 const TokenGate& gate, GatewayMetrics& metrics, common::Metrics& server_metrics)
    : shared_(std::make_shared<Shared>(std::move(options), router, play, gate, metrics,
                                       server_metrics)) {}

H2Front::~H2Front() { Shutdown(absl::Now()); }

absl::Status H2Front::Start() {
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(shared_->options.host, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("bad host ", shared_->options.host));
  const tcp::endpoint endpoint(address, static_cast<uint16_t>(shared_->options.port));
  tcp::acceptor& acceptor = shared_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("gRPC front: cannot listen on ",
                                               shared_->options.host, ":", shared_->options.port,
                                               ": ", ec.message()));
  }
  port_ = acceptor.local_endpoint().port();
  asio::post(acceptor.get_executor(), [shared = shared_.get()] { Accept(*shared); });
  const int threads = std::max(1, shared_->options.threads);
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([shared = shared_.get()] {
      auto guard = asio::make_work_guard(shared->ioc);
      shared->ioc.run();
    });
  }
  return absl::OkStatus();
}

std::string H2Front::LoopbackAddress() const { return absl::StrCat("127.0.0.1:", port_); }

void H2Front::EndPlayStreams(const absl::Status& status) { shared_->streams.FinishAll(status); }

size_t H2Front::open_play_streams() const { return shared_->streams.size(); }

void H2Front::Shutdown(absl::Time deadline) {
  if (shut_down_) return;
  shut_down_ = true;
  Shared& shared = *shared_;
  shared.stopping = true;
  if (threads_.empty()) return;  // never started
  asio::post(shared.acceptor.get_executor(), [&shared] {
    boost::system::error_code ignored;
    shared.acceptor.close(ignored);
    shared.accept_retry.cancel();
  });
  auto each_session = [&shared](auto&& fn) {
    std::vector<std::shared_ptr<H2Session>> sessions;
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      for (const auto& [id, weak] : shared.sessions) {
        if (auto s = weak.lock(); s != nullptr) sessions.push_back(std::move(s));
      }
    }
    for (const auto& s : sessions) fn(*s);
  };
  each_session([](H2Session& s) { s.GoAway(); });
  while (shared.open_calls.load() > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  running_at_drain_end_ = shared.open_calls.load();
  each_session([](H2Session& s) { s.CloseSoon(); });
  // Every session closed (its calls ended), then gone: a closing one waits at most
  // kCloseTimeout for its client to read our last frames and close.
  const absl::Time close_until = absl::Now() + kCloseTimeout + absl::Milliseconds(500);
  while (absl::Now() < close_until && shared.live_sessions.load() > 0) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  {
    std::lock_guard<std::mutex> lock(shared.post_gate->mu);
    shared.post_gate->open = false;
  }
  shared.ioc.stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

}  // namespace courtpiece::gateway
