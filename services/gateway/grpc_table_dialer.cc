#include "services/gateway/grpc_table_dialer.h"

#include <deque>
#include <utility>

#include "courtpiece/common/grpc_status.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/client_callback.h"

namespace courtpiece::gateway {
namespace {

using table::v1::PlayRequest;
using table::v1::PlayResponse;

// One upstream Play stream. It keeps itself alive (self_) until OnDone; the session holds it
// as the UpstreamStream handle, which stays safe to call after the end.
class PlayCall final : public grpc::ClientBidiReactor<PlayRequest, PlayResponse>,
                       public UpstreamStream,
                       public std::enable_shared_from_this<PlayCall> {
 public:
  PlayCall(std::shared_ptr<grpc::Channel> channel, std::shared_ptr<UpstreamObserver> observer,
           int send_queue_max, std::shared_ptr<LiveCalls> live)
      : stub_(table::v1::TableService::NewStub(std::move(channel))),
        observer_(std::move(observer)),
        send_queue_max_(send_queue_max),
        live_(std::move(live)) {}

  void Start(const std::string& player_id, table::v1::OpenTable open) {
    self_ = shared_from_this();
    live_id_ = live_->StartedCancellable(self_);
    context_.AddMetadata(kPlayerIdMetadata, player_id);
    *writing_.mutable_open() = std::move(open);
    write_in_flight_ = true;
    stub_->async()->Play(&context_, this);
    StartWrite(&writing_);
    StartRead(&reading_);
    // Send() and Close() start operations from outside the reactions: the hold keeps OnDone
    // (after which gRPC frees the call) from running until no such start can come any more
    // (StopStarts) and none is under way (EndStart).
    AddHold();
    StartCall();
  }

  bool Send(PlayRequest request) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ended_ || broken_ || closing_ || starts_.stopped()) return false;
      if (write_in_flight_) {
        if (static_cast<int>(queue_.size()) >= send_queue_max_) return false;
        queue_.push_back(std::move(request));
        return true;
      }
      write_in_flight_ = true;
      writing_ = std::move(request);
      starts_.Begin();
    }
    StartWrite(&writing_);
    EndStart();
    return true;
  }

  void Cancel() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ended_) return;
    }
    context_.TryCancel();
  }

  void Close() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ended_ || broken_ || closing_ || starts_.stopped()) return;
      closing_ = true;
      if (write_in_flight_) return;  // OnWriteDone half-closes after the queue
      write_in_flight_ = true;       // the writes-done is the last "write"
      starts_.Begin();
    }
    StartWritesDone();
    EndStart();
  }

  void OnWritesDoneDone(bool) override { StopStarts(); }

  void OnWriteDone(bool ok) override {
    bool writes_done = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!ok) {  // the stream is broken; OnDone tells why
        broken_ = true;
        write_in_flight_ = false;
        queue_.clear();
      } else if (!queue_.empty()) {
        writing_ = std::move(queue_.front());
        queue_.pop_front();
      } else if (closing_) {
        writes_done = true;  // everything sent before Close() is written
      } else {
        write_in_flight_ = false;
        return;
      }
    }
    if (!ok) {
      StopStarts();
      return;
    }
    if (writes_done) {
      StartWritesDone();
      return;
    }
    StartWrite(&writing_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the end: OnDone follows once the hold is gone
      StopStarts();
      return;
    }
    observer_->OnResponse(std::move(reading_));
    reading_.Clear();
    StartRead(&reading_);
  }

  void OnDone(const grpc::Status& status) override {
    std::string owner_addr;
    const auto& trailers = context_.GetServerTrailingMetadata();
    auto it = trailers.find(kOwnerAddrMetadata);
    if (it != trailers.end()) owner_addr.assign(it->second.data(), it->second.size());
    {
      std::lock_guard<std::mutex> lock(mu_);
      ended_ = true;
      queue_.clear();
    }
    std::shared_ptr<UpstreamObserver> observer = std::move(observer_);
    observer->OnEnd(common::FromGrpcStatus(status), std::move(owner_addr));
    observer.reset();  // before Finished: nothing of ours is held after it
    LiveCalls::Release(live_, live_id_, self_);  // may free this: the last step
  }

 private:
  std::unique_ptr<table::v1::TableService::Stub> stub_;
  std::shared_ptr<UpstreamObserver> observer_;  // until OnDone
  const int send_queue_max_;
  const std::shared_ptr<LiveCalls> live_;
  uint64_t live_id_ = 0;  // in live_, from Start
  grpc::ClientContext context_;
  PlayResponse reading_;  // owned by the read in flight
  PlayRequest writing_;   // owned by the write in flight
  std::shared_ptr<PlayCall> self_;

  std::mutex mu_;
  std::deque<PlayRequest> queue_;  // guarded by mu_
  bool write_in_flight_ = false;   // guarded by mu_
  bool broken_ = false;            // guarded by mu_
  bool ended_ = false;             // guarded by mu_
  // The hold taken in Start() (upstream_channels.h). Guarded by mu_.
  OutsideStarts starts_;

  // After a start from outside the reactions: the hold goes if it was the last one owed.
  void EndStart() { StepOutsideStarts(*this, mu_, starts_, &OutsideStarts::End); }
  // From a reaction that ends the writes or the stream: no start from outside after this.
  void StopStarts() { StepOutsideStarts(*this, mu_, starts_, &OutsideStarts::Stop); }
  bool closing_ = false;  // guarded by mu_: Close() was called
};

}  // namespace

GrpcTableDialer::GrpcTableDialer(common::Metrics* metrics, GrpcTableDialerOptions options)
    : options_(options), channels_(metrics, options.channels_max, options.message_bytes_max) {}

GrpcTableDialer::~GrpcTableDialer() { live_->CancelAndWait(options_.finish_wait); }

int GrpcTableDialer::cached_channels() const {
  std::lock_guard<std::mutex> lock(mu_);
  return channels_.size();
}

std::shared_ptr<UpstreamStream> GrpcTableDialer::Open(const std::string& addr,
                                                      const std::string& player_id,
                                                      table::v1::OpenTable open,
                                                      std::shared_ptr<UpstreamObserver> observer) {
  std::shared_ptr<grpc::Channel> channel;
  {
    std::lock_guard<std::mutex> lock(mu_);
    channel = channels_.For(addr);
  }
  auto call = std::make_shared<PlayCall>(std::move(channel), std::move(observer),
                                         options_.send_queue_max, live_);
  call->Start(player_id, std::move(open));
  return call;
}

}  // namespace courtpiece::gateway
