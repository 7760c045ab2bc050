#include "services/gateway/grpc_front.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/check.h"
#include "courtpiece/common/fifo.h"
#include "courtpiece/common/grpc_status.h"

namespace courtpiece::gateway {
namespace {

namespace cv1 = client::v1;
constexpr char kKind[] = "grpc";
constexpr char kPlayPath[] = "/courtpiece.client.v1.CourtPiece/Play";  // the metrics' label

std::string Metadata(const grpc::ServerContextBase& ctx, const char* key) {
  auto it = ctx.client_metadata().find(key);
  if (it == ctx.client_metadata().end()) return "";
  return std::string(it->second.data(), it->second.size());
}

}  // namespace

// One Play call on the async API, from the request for it to the last operation's Done:
// the request, then at most one read, one write and the finish outstanding at a time. Every
// operation starts through queues.TryStart; a refused start (the server is stopping) means
// the call is done. A live call always has an operation outstanding; the completion that
// leaves it with none once it is done deletes it (Release). The state is guarded by the
// sink's mutex: the relay calls the sink from its own threads.
class GrpcPlayCall {
 public:
  // The connection's ClientSink: outlives the call (the relay holds it) and then ignores
  // calls.
  class Sink final : public ClientSink {
   public:
    explicit Sink(GrpcPlayCall* call) : call_(call) {}
    bool Send(cv1::PlayResponse message) override {
      std::lock_guard<std::mutex> lock(mu_);
      if (call_ == nullptr) return false;
      return call_->EnqueueLocked(std::move(message));
    }
    void Finish(const absl::Status& status) override {
      std::lock_guard<std::mutex> lock(mu_);
      if (call_ != nullptr) call_->FinishLocked(status);
    }

   private:
    friend class GrpcPlayCall;
    std::mutex mu_;
    GrpcPlayCall* call_;  // guarded by mu_; null once the call is deleted
  };

  // Requests the next Play call on queue `index` (a call object waits for it).
  static void Request(GrpcFront& front, common::AsyncQueues& queues, size_t index) {
    auto* call = new GrpcPlayCall(front, queues, index);
    std::unique_lock<std::mutex> lock(call->sink_->mu_);
    grpc::ServerCompletionQueue* cq = queues.server_queue(index);
    call->StartLocked(
        [&] { front.RequestPlay(&call->ctx_, &call->stream_, cq, cq, &call->accept_op_); });
    call->ReleaseLocked(lock);
  }

 private:
  using Lock = std::unique_lock<std::mutex>;

  using Op = common::MemberOp<GrpcPlayCall>;

  GrpcPlayCall(GrpcFront& front, common::AsyncQueues& queues, size_t index)
      : front_(front), queues_(queues), index_(index), sink_(std::make_shared<Sink>(this)) {}

  void OnAccepted(bool ok) {
    if (!ok) {  // the server is shutting down
      Lock lock(sink_->mu_);
      done_ = true;
      EndOpLocked(lock);
      return;
    }
    accepted_ = true;
    accepted_at_ = std::chrono::steady_clock::now();
    Request(front_, queues_, index_);  // the next caller's
    std::string refused;
    ticket_ = front_.play_limiter_.TryAcquire(PeerAddress(ctx_.peer()), &refused);
    if (ticket_ == nullptr) {  // never counted as opened
      front_.metrics_.ConnectionRefused(absl::StrCat("grpc_", refused));
      Lock lock(sink_->mu_);
      FinishLocked(absl::ResourceExhaustedError(refused == "per_ip"
                                                    ? "too many connections from your address"
                                                    : "the gateway is full: retry later"));
      EndOpLocked(lock);
      return;
    }
    front_.metrics_.ConnectionOpened(kKind);
    absl::StatusOr<auth::Claims> claims =
        front_.gate_.Authenticate(Metadata(ctx_, "authorization"));
    if (!claims.ok()) {
      Lock lock(sink_->mu_);
      FinishLocked(claims.status());
      EndOpLocked(lock);
      return;
    }
    stream_id_ = front_.streams_.Add(sink_);
    {
      std::lock_guard<std::mutex> lock(conn_mu_);
      conn_ = front_.play_.Connect(claims->player_id, ctx_.peer(), sink_);
    }
    Lock lock(sink_->mu_);
    StartReadLocked();
    EndOpLocked(lock);
  }

  void OnReadDone(bool ok) {
    if (!ok) {  // half-close, cancel or the server's end: the end of this connection
      ClientGone();
      sink_->Finish(absl::OkStatus());
    } else if (reading_.ByteSizeLong() >
               static_cast<size_t>(front_.options_.play_message_bytes_max)) {
      ClientGone();
      sink_->Finish(absl::ResourceExhaustedError(
          absl::StrCat("message over ", front_.options_.play_message_bytes_max, " bytes")));
    } else {
      if (reading_.has_open()) reading_.mutable_open()->clear_access_token();
      {
        std::lock_guard<std::mutex> lock(conn_mu_);
        if (conn_ != nullptr && !gone_) conn_->OnClientMessage(std::move(reading_));
      }
      reading_.Clear();
      Lock lock(sink_->mu_);
      StartReadLocked();
      EndOpLocked(lock);
      return;
    }
    Lock lock(sink_->mu_);
    EndOpLocked(lock);
  }

  void OnWriteDone(bool ok) {
    Lock lock(sink_->mu_);
    write_in_flight_ = false;
    if (!ok) {  // the client is gone; the read fails too
      broken_ = true;
      queue_.clear();
    }
    WriteNextLocked();
    EndOpLocked(lock);
  }

  void OnFinishDone(bool /*ok*/) {
    Lock lock(sink_->mu_);
    done_ = true;
    EndOpLocked(lock);
  }

  // Tells the relay once; conn_mu_ serialises the calls into the connection.
  void ClientGone() {
    std::lock_guard<std::mutex> lock(conn_mu_);
    if (gone_) return;
    gone_ = true;
    if (conn_ != nullptr) conn_->OnClientGone();
  }

  // Starts one operation (counted in pending_) unless the server is stopping, in which case
  // the call is done.
  bool StartLocked(absl::FunctionRef<void()> start) {
    if (done_) return false;
    if (!queues_.TryStart(start)) {
      done_ = true;
      return false;
    }
    ++pending_;
    return true;
  }

  // No new read once the stream is finishing (the relay may have ended it just now).
  void StartReadLocked() {
    if (finish_.has_value()) return;
    StartLocked([this] { stream_.Read(&reading_, &read_op_); });
  }

  bool EnqueueLocked(cv1::PlayResponse message) {
    if (finish_.has_value() || done_ || broken_) return false;
    if (static_cast<int>(queue_.size()) >= front_.options_.send_queue_max) {
      front_.metrics_.SendQueueDrop(kKind);
      queue_.clear();
      FinishLocked(absl::ResourceExhaustedError("slow reader"));
      return false;
    }
    queue_.push_back(std::move(message));
    WriteNextLocked();
    return true;
  }

  void WriteNextLocked() {
    if (write_in_flight_ || finished_) return;
    if (queue_.empty()) {
      if (finish_.has_value()) FinishNowLocked();
      return;
    }
    writing_ = std::move(queue_.front());
    queue_.pop_front();
    if (StartLocked([this] { stream_.Write(writing_, &write_op_); })) {
      write_in_flight_ = true;
    } else {
      queue_.clear();
    }
  }

  // After the messages already queued (a slow reader's queue was cleared first).
  void FinishLocked(const absl::Status& status) {
    if (finish_.has_value()) return;
    finish_ = status;
    if (!write_in_flight_ && queue_.empty()) FinishNowLocked();
  }

  void FinishNowLocked() {
    if (finished_) return;
    finished_ = true;
    const grpc::Status status = common::ToGrpcStatus(*finish_);
    if (StartLocked([&] { stream_.Finish(status, &finish_op_); })) sent_code_ = status.error_code();
  }

  // One operation has completed; the call is deleted when it was the last and nothing more
  // can start.
  void EndOpLocked(Lock& lock) {
    COURTPIECE_CHECK(pending_ > 0, "operation completed twice");
    --pending_;
    ReleaseLocked(lock);
  }

  void ReleaseLocked(Lock& lock) {
    if (pending_ > 0 || !done_) return;
    sink_->call_ = nullptr;
    const grpc::StatusCode code = sent_code_;
    lock.unlock();
    ClientGone();
    const bool counted = ticket_ != nullptr;  // ConnectionOpened was counted
    ticket_.reset();                          // the slot is free before the close is counted
    if (stream_id_ != 0) front_.streams_.Remove(stream_id_);
    if (accepted_) {
      if (counted) front_.metrics_.ConnectionClosed(kKind);
      const std::chrono::duration<double> lived = std::chrono::steady_clock::now() - accepted_at_;
      front_.recorder_->Record(kPlayPath, code, lived.count());
    }
    delete this;
  }

  GrpcFront& front_;
  common::AsyncQueues& queues_;
  const size_t index_;
  const std::shared_ptr<Sink> sink_;
  grpc::ServerContext ctx_;
  grpc::ServerAsyncReaderWriter<cv1::PlayResponse, cv1::PlayRequest> stream_{&ctx_};
  Op accept_op_{this, &GrpcPlayCall::OnAccepted};
  Op read_op_{this, &GrpcPlayCall::OnReadDone};
  Op write_op_{this, &GrpcPlayCall::OnWriteDone};
  Op finish_op_{this, &GrpcPlayCall::OnFinishDone};
  bool accepted_ = false;  // set on the accept's completion, read by the last completion
  std::chrono::steady_clock::time_point accepted_at_;  // likewise
  uint64_t stream_id_ = 0;  // in streams_ (0: never added: refused before Connect)
  std::unique_ptr<ConnLimiter::Ticket> ticket_;  // this stream's slot, from the accept on
  cv1::PlayRequest reading_;                     // owned by the read in flight

  std::mutex conn_mu_;
  std::shared_ptr<PlayConnection> conn_;  // guarded by conn_mu_
  bool gone_ = false;                     // guarded by conn_mu_

  // Guarded by sink_->mu_.
  int pending_ = 0;    // operations started and not yet completed
  bool done_ = false;  // no operation will start any more
  common::Fifo<cv1::PlayResponse> queue_;
  cv1::PlayResponse writing_;  // owned by the write in flight
  bool write_in_flight_ = false;
  bool broken_ = false;                 // a write failed: the client is gone
  std::optional<absl::Status> finish_;  // the end asked for (sent once nothing is queued)
  bool finished_ = false;               // Finish started (or refused); finish_ is set
  // The status sent, for the server's metrics; CANCELLED when none was.
  grpc::StatusCode sent_code_ = grpc::StatusCode::CANCELLED;
};

namespace {
bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
}  // namespace

std::string PeerAddress(std::string_view peer) {
  if (StartsWith(peer, "ipv4:")) {
    std::string_view rest = peer.substr(5);
    return std::string(rest.substr(0, rest.rfind(':')));  // npos: no port, the whole
  }
  if (StartsWith(peer, "ipv6:")) {
    std::string_view rest = peer.substr(5);
    for (auto [open, close] :
         {std::pair<std::string_view, std::string_view>{"%5B", "%5D"}, {"[", "]"}}) {
      if (!StartsWith(rest, open)) continue;
      const size_t end = rest.find(close, open.size());
      if (end == std::string_view::npos) break;
      return std::string(rest.substr(open.size(), end - open.size()));
    }
    return std::string(rest);
  }
  return std::string(peer);
}

uint64_t PlayStreamSet::Add(std::weak_ptr<ClientSink> sink) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t id = next_id_++;
  sinks_.emplace(id, std::move(sink));
  return id;
}

void PlayStreamSet::Remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  sinks_.erase(id);
}

void PlayStreamSet::FinishAll(const absl::Status& status) {
  std::vector<std::shared_ptr<ClientSink>> open;
  {
    std::lock_guard<std::mutex> lock(mu_);
    open.reserve(sinks_.size());
    for (const auto& [id, weak] : sinks_) {
      if (std::shared_ptr<ClientSink> sink = weak.lock(); sink != nullptr) {
        open.push_back(std::move(sink));
      }
    }
  }
  for (const std::shared_ptr<ClientSink>& sink : open) sink->Finish(status);
}

size_t PlayStreamSet::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sinks_.size();
}

grpc::ServerUnaryReactor* GrpcFront::Unary(grpc::CallbackServerContext* ctx, const char* name,
                                           const google::protobuf::Message& request,
                                           google::protobuf::Message* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  metrics_.MessageIn(kKind);
  const UnaryMethod* method = router_.Find(name);
  if (method == nullptr) {
    reactor->Finish(
        grpc::Status(grpc::StatusCode::UNIMPLEMENTED, absl::StrCat("unknown method ", name)));
    return reactor;
  }
  if (request.ByteSizeLong() > method->request_bytes_max) {
    reactor->Finish(
        grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                     absl::StrCat(name, " request over ", method->request_bytes_max, " bytes")));
    return reactor;
  }
  UnaryContext uctx;
  uctx.authorization = Metadata(*ctx, "authorization");
  uctx.peer = ctx->peer();
  const auto deadline = ctx->deadline();
  if (deadline != std::chrono::system_clock::time_point::max()) {
    uctx.deadline = absl::FromChrono(deadline);
  }
  std::unique_ptr<google::protobuf::Message> copy(method->request_prototype->New());
  copy->CopyFrom(request);
  GatewayMetrics* metrics = &metrics_;
  router_.Call(*method, std::move(copy), uctx,
               [reactor, response, metrics](absl::Status status,
                                            std::unique_ptr<google::protobuf::Message> reply) {
                 if (status.ok() && reply != nullptr) {
                   response->CopyFrom(*reply);
                   metrics->MessageOut(kKind);
                 }
                 reactor->Finish(common::ToGrpcStatus(status));
               });
  return reactor;
}

#define COURTPIECE_GATEWAY_UNARY(Method, Request, Response)                                     \
  grpc::ServerUnaryReactor* GrpcFront::Method(                                                  \
      grpc::CallbackServerContext* ctx, const cv1::Request* request, cv1::Response* response) { \
    return Unary(ctx, #Method, *request, response);                                             \
  }
COURTPIECE_GATEWAY_UNARY(GuestLogin, GuestLoginRequest, Session)
COURTPIECE_GATEWAY_UNARY(Refresh, RefreshRequest, Session)
COURTPIECE_GATEWAY_UNARY(GetProfile, GetProfileRequest, Profile)
COURTPIECE_GATEWAY_UNARY(UpdateProfile, UpdateProfileRequest, Profile)
COURTPIECE_GATEWAY_UNARY(GetPublicProfiles, GetPublicProfilesRequest, GetPublicProfilesResponse)
COURTPIECE_GATEWAY_UNARY(GetStats, GetStatsRequest, StatsResponse)
COURTPIECE_GATEWAY_UNARY(RecentResults, RecentResultsRequest, RecentResultsResponse)
COURTPIECE_GATEWAY_UNARY(CreateTable, CreateTableRequest, TableRef)
COURTPIECE_GATEWAY_UNARY(ResolveCode, ResolveCodeRequest, TableRef)
COURTPIECE_GATEWAY_UNARY(ListOpenTables, ListOpenTablesRequest, ListOpenTablesResponse)
COURTPIECE_GATEWAY_UNARY(QuickJoin, QuickJoinRequest, TableRef)
COURTPIECE_GATEWAY_UNARY(MyTables, MyTablesRequest, MyTablesResponse)
COURTPIECE_GATEWAY_UNARY(UploadNote, UploadNoteRequest, UploadNoteResponse)
COURTPIECE_GATEWAY_UNARY(GetNote, GetNoteRequest, GetNoteResponse)
#undef COURTPIECE_GATEWAY_UNARY

// Several requests waiting on each queue, so that a burst of new streams is not accepted one
// completion at a time.
constexpr int kPlayRequestsPerQueue = 8;

void GrpcFront::ServeOn(common::AsyncQueues& queues, common::CallRecorder& recorder) {
  recorder_ = &recorder;
  for (size_t i = 0; i < queues.size(); ++i) {
    for (int n = 0; n < kPlayRequestsPerQueue; ++n) GrpcPlayCall::Request(*this, queues, i);
  }
}

}  // namespace courtpiece::gateway
