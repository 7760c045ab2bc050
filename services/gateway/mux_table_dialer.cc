#include "services/gateway/mux_table_dialer.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "courtpiece/common/grpc_status.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/client_callback.h"

namespace courtpiece::gateway {

using table::v1::PlayMuxRequest;
using table::v1::PlayMuxResponse;
using table::v1::PlayRequest;
using table::v1::SessionRequest;
using table::v1::SessionResponse;

namespace {
// The largest command a session sends (the table ends a session over it; over gRPC's bound
// it would end the whole stream).
constexpr size_t kCommandBytesMax = 16 * 1024;
// A batch written at once: what waited, up to this many bytes (the table takes 64 KiB).
constexpr size_t kBatchBytesMax = 32 * 1024;
}  // namespace

// One PlayMux stream. It keeps itself alive (self_) until OnDone; the dialer and the
// sessions hold it by shared_ptr and may call it after the end (no-ops).
class MuxTableDialer::Call final : public grpc::ClientBidiReactor<PlayMuxRequest, PlayMuxResponse>,
                                   public std::enable_shared_from_this<MuxTableDialer::Call> {
 public:
  Call(std::shared_ptr<grpc::Channel> channel, const MuxTableDialerOptions& options,
       std::shared_ptr<LiveCalls> live)
      : stub_(table::v1::TableService::NewStub(std::move(channel))),
        options_(options),
        live_(std::move(live)) {}

  // The creator's first OpenSession must follow (first = true): until it, the call cannot
  // end (it owes a start), so that session always lands on a live stream.
  void Start() {
    self_ = shared_from_this();
    live_id_ = live_->StartedCancellable(self_);
    starts_.Begin();  // owed by the creator's first OpenSession
    stub_->async()->PlayMux(&context_, this);
    StartRead(&reading_);
    // Writes start from outside the reactions (Send, Open): the hold keeps OnDone (after
    // which gRPC frees the call) from running until none is under way and none may come.
    AddHold();
    StartCall();
  }

  // False when the stream has ended (the dialer then opens a new one). On a stream that is
  // ending, the session is taken and ends with it (OnDone).
  bool OpenSession(uint64_t session, const std::string& player, table::v1::OpenTable open,
                   std::shared_ptr<UpstreamObserver> observer, bool first) {
    SessionRequest request;
    request.set_session(session);
    request.set_player(player);
    *request.mutable_open() = std::move(open);
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (ended_) return false;
      sessions_.emplace(session, Entry{.observer = std::move(observer)});
      queue_.push_back(std::move(request));
      StartWriteIfIdle(lock);
    }
    if (first) EndStart();
    return true;
  }

  bool Send(uint64_t session, PlayRequest request) {
    if (!request.has_command() || request.command().ByteSizeLong() > kCommandBytesMax) {
      return false;
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (ended_ || starts_.stopped()) return false;
    auto it = sessions_.find(session);
    if (it == sessions_.end() || it->second.closing) return false;
    if (it->second.queued >= options_.send_queue_max ||
        static_cast<int>(queue_.size()) >= options_.stream_queue_max) {
      return false;
    }
    SessionRequest out;
    out.set_session(session);
    *out.mutable_command() = std::move(*request.mutable_command());
    ++it->second.queued;
    queue_.push_back(std::move(out));
    StartWriteIfIdle(lock);
    return true;
  }

  // Close (cancel = false) or Cancel: the table hears a close after (Close) or instead of
  // (Cancel) the session's queued commands.
  void CloseSession(uint64_t session, bool cancel) {
    std::unique_lock<std::mutex> lock(mu_);
    if (ended_ || starts_.stopped()) return;
    auto it = sessions_.find(session);
    if (it == sessions_.end()) return;
    Entry& e = it->second;
    if (cancel && !e.cancelled) {
      e.cancelled = true;
      if (e.queued > 0) {
        std::erase_if(queue_, [session](const SessionRequest& r) {
          return r.session() == session && r.has_command();
        });
        e.queued = 0;
      }
    }
    if (e.closing) return;
    e.closing = true;
    SessionRequest close;
    close.set_session(session);
    close.set_close(true);
    queue_.push_back(std::move(close));
    StartWriteIfIdle(lock);
  }

  bool ended() const {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_ || starts_.stopped();
  }
  int sessions() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(sessions_.size());
  }
  void Cancel() { context_.TryCancel(); }

  void OnWriteDone(bool ok) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      write_in_flight_ = false;
      if (ok) {
        for (const SessionRequest& r : writing_.requests()) {
          auto it = sessions_.find(r.session());
          if (it != sessions_.end() && r.has_command() && it->second.queued > 0) {
            --it->second.queued;
          }
        }
        writing_.Clear();
        StartWriteIfIdle(lock);  // the next batch, if any
        return;
      }
      queue_.clear();  // the stream is broken; OnDone tells why
    }
    StopStarts();
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the end: OnDone follows once the hold is gone
      StopStarts();
      return;
    }
    // Each session's messages in order: who gets each is looked up under one lock for the
    // batch; the observers are called after it, never under mu_.
    struct Delivery {
      std::shared_ptr<UpstreamObserver> observer;
      bool cancelled;
      SessionResponse* in;
    };
    std::vector<Delivery> deliveries;
    deliveries.reserve(static_cast<size_t>(reading_.responses_size()));
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (SessionResponse& in : *reading_.mutable_responses()) {
        auto it = sessions_.find(in.session());
        if (it == sessions_.end()) continue;
        deliveries.push_back({it->second.observer, it->second.cancelled, &in});
        if (in.has_end()) sessions_.erase(it);
      }
    }
    for (Delivery& d : deliveries) {
      if (d.in->has_end()) {
        const table::v1::SessionEnd& e = d.in->end();
        d.observer->OnEnd(d.cancelled
                              ? absl::CancelledError("cancelled by the gateway")
                              : absl::Status(static_cast<absl::StatusCode>(e.code()), e.message()),
                          e.owner_addr());
      } else if (d.in->has_response()) {
        d.observer->OnResponse(std::move(*d.in->mutable_response()));
      }
    }
    reading_.Clear();
    StartRead(&reading_);
  }

  void OnDone(const grpc::Status& status) override {
    std::unordered_map<uint64_t, Entry> left;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ended_ = true;
      queue_.clear();
      left.swap(sessions_);
    }
    // Every session still on the stream: the table connection is gone, resume elsewhere.
    const absl::Status why = absl::UnavailableError("the table instance's stream ended: " +
                                                    common::FromGrpcStatus(status).ToString());
    for (auto& [id, e] : left) {
      e.observer->OnEnd(e.cancelled ? absl::CancelledError("cancelled by the gateway") : why, "");
    }
    left.clear();  // the observers go before Finished: nothing of ours is held after it
    LiveCalls::Release(live_, live_id_, self_);  // may free this: the last step
  }

 private:
  struct Entry {
    std::shared_ptr<UpstreamObserver> observer;
    int queued = 0;          // its commands in queue_
    bool closing = false;    // its close is queued
    bool cancelled = false;  // Cancel: OnEnd says CANCELLED
  };

  // With the lock held: starts the next write if none is in flight (releasing the lock).
  void StartWriteIfIdle(std::unique_lock<std::mutex>& lock) {
    if (write_in_flight_ || queue_.empty() || ended_ || !starts_.Begin()) return;
    write_in_flight_ = true;
    // Everything that waited, in order, up to kBatchBytesMax (one larger request alone).
    size_t bytes = 0;
    while (!queue_.empty()) {
      const size_t next = queue_.front().ByteSizeLong();
      if (writing_.requests_size() > 0 && bytes + next > kBatchBytesMax) break;
      bytes += next;
      *writing_.add_requests() = std::move(queue_.front());
      queue_.pop_front();
    }
    lock.unlock();
    StartWrite(&writing_);
    EndStart();
  }

  // After a start from outside the reactions: the hold goes if it was the last one owed.
  void EndStart() { StepOutsideStarts(*this, mu_, starts_, &OutsideStarts::End); }
  // From a reaction that ends the stream: no start from outside after this.
  void StopStarts() { StepOutsideStarts(*this, mu_, starts_, &OutsideStarts::Stop); }

  std::unique_ptr<table::v1::TableService::Stub> stub_;
  const MuxTableDialerOptions options_;
  const std::shared_ptr<LiveCalls> live_;
  uint64_t live_id_ = 0;  // in live_, from Start
  grpc::ClientContext context_;
  PlayMuxResponse reading_;  // owned by the read in flight
  PlayMuxRequest writing_;   // owned by the write in flight: a batch
  std::shared_ptr<Call> self_;

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Entry> sessions_;  // guarded by mu_
  std::deque<SessionRequest> queue_;              // guarded by mu_: the next batches
  bool write_in_flight_ = false;                  // guarded by mu_
  bool ended_ = false;                            // guarded by mu_: OnDone ran
  OutsideStarts starts_;                          // guarded by mu_: the hold (Start)
};

namespace {

// One session, as the relay's UpstreamStream.
class MuxSession final : public UpstreamStream {
 public:
  MuxSession(std::shared_ptr<MuxTableDialer::Call> call, uint64_t session)
      : call_(std::move(call)), session_(session) {}
  bool Send(PlayRequest request) override { return call_->Send(session_, std::move(request)); }
  void Cancel() override { call_->CloseSession(session_, /*cancel=*/true); }
  void Close() override { call_->CloseSession(session_, /*cancel=*/false); }

 private:
  std::shared_ptr<MuxTableDialer::Call> call_;
  const uint64_t session_;
};

// Session ids: unique in the process, so never reused on a stream.
std::atomic<uint64_t> next_session{1};

}  // namespace

MuxTableDialer::MuxTableDialer(common::Metrics* metrics, MuxTableDialerOptions options)
    : options_(options), channels_(metrics, options.channels_max, options.message_bytes_max) {}

MuxTableDialer::~MuxTableDialer() { live_->CancelAndWait(options_.finish_wait); }

std::shared_ptr<UpstreamStream> MuxTableDialer::Open(const std::string& addr,
                                                     const std::string& player_id,
                                                     table::v1::OpenTable open,
                                                     std::shared_ptr<UpstreamObserver> observer) {
  const uint64_t session = next_session.fetch_add(1);
  std::lock_guard<std::mutex> lock(mu_);
  std::string dropped;
  std::shared_ptr<grpc::Channel> channel = channels_.For(addr, &dropped);
  if (!dropped.empty()) calls_.erase(dropped);  // the calls keep their channel while they live
  std::vector<std::shared_ptr<Call>>& calls = calls_[addr];
  calls.resize(static_cast<size_t>(std::max(1, options_.streams_per_instance)));
  std::shared_ptr<Call>& call = calls[session % calls.size()];
  if (call != nullptr && call->OpenSession(session, player_id, open, observer, false)) {
    return std::make_shared<MuxSession>(call, session);
  }
  // None yet, or it ended: a new stream, which cannot end before its first session is on it.
  call = std::make_shared<Call>(std::move(channel), options_, live_);
  call->Start();
  const bool opened = call->OpenSession(session, player_id, std::move(open), std::move(observer),
                                        /*first=*/true);
  assert(opened);
  (void)opened;
  return std::make_shared<MuxSession>(call, session);
}

int MuxTableDialer::live_streams() const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& [addr, calls] : calls_) {
    for (const auto& call : calls) n += call != nullptr && !call->ended() ? 1 : 0;
  }
  return n;
}

int MuxTableDialer::live_sessions() const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& [addr, calls] : calls_) {
    for (const auto& call : calls) n += call != nullptr ? call->sessions() : 0;
  }
  return n;
}

}  // namespace courtpiece::gateway
