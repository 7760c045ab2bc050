#include "services/gateway/grpc_front.h"

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_status.h"

namespace courtpiece::gateway {
namespace {

namespace cv1 = client::v1;
constexpr char kKind[] = "grpc";

std::string Metadata(const grpc::CallbackServerContext& ctx, const char* key) {
  auto it = ctx.client_metadata().find(key);
  if (it == ctx.client_metadata().end()) return "";
  return std::string(it->second.data(), it->second.size());
}

class PlayReactor final : public grpc::ServerBidiReactor<cv1::PlayRequest, cv1::PlayResponse> {
 public:
  // The connection's ClientSink: outlives the reactor (the session holds it) and then
  // ignores calls.
  class Sink final : public ClientSink {
   public:
    explicit Sink(PlayReactor* reactor) : reactor_(reactor) {}
    bool Send(cv1::PlayResponse message) override {
      std::lock_guard<std::mutex> lock(mu_);
      if (reactor_ == nullptr) return false;
      return reactor_->EnqueueLocked(std::move(message));
    }
    void Finish(const absl::Status& status) override {
      std::lock_guard<std::mutex> lock(mu_);
      if (reactor_ != nullptr) reactor_->FinishLocked(status);
    }
    void Detach() {
      std::lock_guard<std::mutex> lock(mu_);
      reactor_ = nullptr;
    }
    std::mutex& mu() { return mu_; }

   private:
    std::mutex mu_;
    PlayReactor* reactor_;  // guarded by mu_; null once the reactor is done
  };

  PlayReactor(grpc::CallbackServerContext* ctx, PlayService& play, const TokenGate& gate,
              GatewayMetrics& metrics, const GrpcFrontOptions& options, PlayStreamSet& streams)
      : metrics_(metrics),
        options_(options),
        streams_(streams),
        sink_(std::make_shared<Sink>(this)) {
    metrics_.ConnectionOpened(kKind);
    absl::StatusOr<auth::Claims> claims = gate.Authenticate(Metadata(*ctx, "authorization"));
    if (!claims.ok()) {
      std::lock_guard<std::mutex> lock(sink_->mu());
      FinishLocked(claims.status());
      return;
    }
    stream_id_ = streams_.Add(sink_);
    {
      std::lock_guard<std::mutex> lock(conn_mu_);
      conn_ = play.Connect(claims->player_id, ctx->peer(), sink_);
    }
    StartRead(&reading_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // half-close or gone: the end of this connection
      ClientGone();
      sink_->Finish(absl::OkStatus());
      return;
    }
    if (reading_.ByteSizeLong() > static_cast<size_t>(options_.play_message_bytes_max)) {
      ClientGone();
      sink_->Finish(absl::ResourceExhaustedError(
          absl::StrCat("message over ", options_.play_message_bytes_max, " bytes")));
      return;
    }
    if (reading_.has_open()) reading_.mutable_open()->clear_access_token();
    {
      std::lock_guard<std::mutex> lock(conn_mu_);
      if (conn_ != nullptr && !gone_) conn_->OnClientMessage(std::move(reading_));
    }
    reading_.Clear();
    // No new operation once the stream is finishing (the relay may have ended it just now);
    // under the sink's lock, so Finish cannot slip in between.
    std::lock_guard<std::mutex> lock(sink_->mu());
    if (finish_.has_value() || finished_) return;
    StartRead(&reading_);
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(sink_->mu());
    write_in_flight_ = false;
    if (!ok) {  // the client is gone; OnCancel / OnDone follow
      queue_.clear();
      if (finish_.has_value()) FinishNowLocked();
      return;
    }
    WriteNextLocked();
  }

  void OnCancel() override { ClientGone(); }

  void OnDone() override {
    ClientGone();
    if (stream_id_ != 0) streams_.Remove(stream_id_);
    sink_->Detach();
    metrics_.ConnectionClosed(kKind);
    delete this;
  }

 private:
  // Tells the relay once; conn_mu_ serialises the calls into the connection.
  void ClientGone() {
    std::shared_ptr<PlayConnection> conn;
    {
      std::lock_guard<std::mutex> lock(conn_mu_);
      if (gone_) return;
      gone_ = true;
      conn = conn_;
      if (conn != nullptr) conn->OnClientGone();
    }
  }

  bool EnqueueLocked(cv1::PlayResponse message) {
    if (finish_.has_value() || finished_) return false;
    if (static_cast<int>(queue_.size()) >= options_.send_queue_max) {
      metrics_.SendQueueDrop(kKind);
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
    write_in_flight_ = true;
    StartWrite(&writing_);
  }

  // After the messages already queued (a slow reader's queue was cleared first).
  void FinishLocked(const absl::Status& status) {
    if (finish_.has_value() || finished_) return;
    finish_ = status;
    if (!write_in_flight_ && queue_.empty()) FinishNowLocked();
  }

  void FinishNowLocked() {
    if (finished_) return;
    finished_ = true;
    Finish(common::ToGrpcStatus(*finish_));
  }

  GatewayMetrics& metrics_;
  const GrpcFrontOptions& options_;
  PlayStreamSet& streams_;
  uint64_t stream_id_ = 0;  // in streams_ (0: never added: refused before Connect)
  const std::shared_ptr<Sink> sink_;
  cv1::PlayRequest reading_;  // owned by the read in flight

  std::mutex conn_mu_;
  std::shared_ptr<PlayConnection> conn_;  // guarded by conn_mu_
  bool gone_ = false;                     // guarded by conn_mu_

  // Guarded by sink_->mu().
  std::deque<cv1::PlayResponse> queue_;
  cv1::PlayResponse writing_;  // owned by the write in flight
  bool write_in_flight_ = false;
  std::optional<absl::Status> finish_;
  bool finished_ = false;
};

}  // namespace

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

grpc::ServerBidiReactor<cv1::PlayRequest, cv1::PlayResponse>* GrpcFront::Play(
    grpc::CallbackServerContext* ctx) {
  return new PlayReactor(ctx, play_, gate_, metrics_, options_, streams_);
}

}  // namespace courtpiece::gateway
