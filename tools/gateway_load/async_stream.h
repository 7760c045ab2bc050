// A client bidi stream on gRPC's async API over the load tool's completion queues
// (common::AsyncQueues), instead of the callback API: the callback API puts every call of the
// process on one queue, and Debian's gRPC checks each completion against every operation
// outstanding on that queue (docs/gateway.md), which made thousands of streams a bottleneck of
// the tool itself.
//
//   ClientQueues queues(4);
//   auto s = std::make_shared<AsyncStream<Req, Resp>>(queues, index, handlers);
//   s->context().AddMetadata("authorization", token);
//   s->Start([&](grpc::ClientContext* ctx, grpc::CompletionQueue* cq) {
//     return stub->PrepareAsyncPlay(ctx, cq); }, {open});
//   ...
//   queues.CancelAllAndStop();  // at the end: every stream still open is cancelled
//
// Contract: on_message gets each message in order, then on_end the status once; both run on
// the queue's thread, never after on_end. Send queues a message (at most out_max; false when
// full or ended). Cancel ends the stream (CANCELLED). The stream keeps itself alive until
// on_end has run and its last operation completed.
// Thread-safety: Send and Cancel from any thread.
#ifndef COURTPIECE_TOOLS_GATEWAY_LOAD_ASYNC_STREAM_H_
#define COURTPIECE_TOOLS_GATEWAY_LOAD_ASYNC_STREAM_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "courtpiece/common/grpc_async.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/async_stream.h"

namespace courtpiece::gateway_load {

// The tool's client queues and the contexts of the streams open on them.
class ClientQueues {
 public:
  explicit ClientQueues(int count) : queues_(common::AsyncQueues::ForClients(count)) {}
  ~ClientQueues() { CancelAllAndStop(); }

  common::AsyncQueues& queues() { return *queues_; }
  size_t size() const { return queues_->size(); }

  void Add(grpc::ClientContext* context) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(context);
    if (closing_) context->TryCancel();  // started while the tool stops
  }
  void Remove(grpc::ClientContext* context) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.erase(context);
  }
  // Cancels every stream still open, then stops the queues once their operations are in.
  void CancelAllAndStop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
      for (grpc::ClientContext* context : live_) context->TryCancel();
    }
    queues_->Stop();
  }

 private:
  std::unique_ptr<common::AsyncQueues> queues_;
  std::mutex mu_;
  std::set<grpc::ClientContext*> live_;  // guarded by mu_
  bool closing_ = false;                 // guarded by mu_
};

template <typename Req, typename Resp>
class AsyncStream final : public std::enable_shared_from_this<AsyncStream<Req, Resp>> {
 public:
  using Rpc = grpc::ClientAsyncReaderWriter<Req, Resp>;
  using Prepare = std::function<std::unique_ptr<Rpc>(grpc::ClientContext*, grpc::CompletionQueue*)>;
  struct Handlers {
    std::function<void(const Resp&)> on_message;
    std::function<void(const grpc::Status&)> on_end;
  };

  AsyncStream(ClientQueues& queues, size_t index, Handlers handlers, size_t out_max)
      : queues_(queues),
        cq_(queues.queues().queue(index % queues.size())),
        handlers_(std::move(handlers)),
        out_max_(out_max) {}

  grpc::ClientContext& context() { return context_; }

  void Start(const Prepare& prepare, std::vector<Req> first) {
    std::unique_lock<std::mutex> lock(mu_);
    self_ = this->shared_from_this();
    queues_.Add(&context_);
    for (Req& r : first) out_.push_back(std::move(r));
    rpc_ = prepare(&context_, cq_);
    StartLocked([this] { rpc_->StartCall(&start_op_); });
    ReleaseLocked(lock);
  }

  bool Send(Req request) {
    std::lock_guard<std::mutex> lock(mu_);
    if (finishing_ || out_.size() >= out_max_) return false;
    out_.push_back(std::move(request));
    if (started_) WriteNextLocked();
    return true;
  }

  void Cancel() { context_.TryCancel(); }

 private:
  using Lock = std::unique_lock<std::mutex>;
  using Op = common::MemberOp<AsyncStream>;

  void OnStarted(bool ok) {
    Lock lock(mu_);
    --pending_;
    if (!ok) {
      FinishLocked();
    } else {
      started_ = true;
      StartLocked([this] { rpc_->Read(&in_, &read_op_); });
      WriteNextLocked();
    }
    ReleaseLocked(lock);
  }

  void OnRead(bool ok) {
    if (ok) handlers_.on_message(in_);  // only this thread touches in_ between reads
    Lock lock(mu_);
    --pending_;
    if (ok && !finishing_) {
      StartLocked([this] { rpc_->Read(&in_, &read_op_); });
    } else {
      FinishLocked();  // every message is in: the status comes next
    }
    ReleaseLocked(lock);
  }

  void OnWritten(bool ok) {
    Lock lock(mu_);
    --pending_;
    writing_ = false;
    if (!out_.empty()) out_.pop_front();
    if (!ok) {
      out_.clear();
    } else {
      WriteNextLocked();
    }
    ReleaseLocked(lock);
  }

  void OnFinished(bool /*ok*/) {
    handlers_.on_end(status_);
    Lock lock(mu_);
    --pending_;
    ended_ = true;  // finishing_ is set: the finish op was started
    ReleaseLocked(lock);
  }

  // A start refused (the tool is stopping) ends the stream: no status will come from gRPC.
  bool StartLocked(absl::FunctionRef<void()> start) {
    if (!queues_.queues().TryStart(start)) {
      finishing_ = true;
      return false;
    }
    ++pending_;
    return true;
  }

  void WriteNextLocked() {
    if (writing_ || finishing_ || out_.empty()) return;
    if (StartLocked([this] { rpc_->Write(out_.front(), &write_op_); })) writing_ = true;
  }

  void FinishLocked() {
    if (finishing_) return;
    finishing_ = true;
    StartLocked([this] { rpc_->Finish(&status_, &finish_op_); });
  }

  // Once finishing with nothing outstanding: delivers on_end if gRPC's status never came (a
  // refused start), then drops the stream's hold on itself.
  void ReleaseLocked(Lock& lock) {
    if (pending_ > 0 || !finishing_ || self_ == nullptr) return;
    const bool deliver = !ended_;
    ended_ = true;
    queues_.Remove(&context_);
    std::shared_ptr<AsyncStream> self = std::move(self_);
    lock.unlock();
    if (deliver) {
      handlers_.on_end(grpc::Status(grpc::StatusCode::CANCELLED, "the load tool is stopping"));
    }
    self.reset();  // may delete this: the last thing done
  }

  ClientQueues& queues_;
  grpc::CompletionQueue* const cq_;
  const Handlers handlers_;
  const size_t out_max_;
  grpc::ClientContext context_;
  std::unique_ptr<Rpc> rpc_;
  Resp in_;  // the read in flight's
  grpc::Status status_;
  Op start_op_{this, &AsyncStream::OnStarted};
  Op read_op_{this, &AsyncStream::OnRead};
  Op write_op_{this, &AsyncStream::OnWritten};
  Op finish_op_{this, &AsyncStream::OnFinished};

  std::mutex mu_;
  std::shared_ptr<AsyncStream> self_;  // guarded by mu_; alive until released
  std::deque<Req> out_;                // guarded by mu_; front() is being written
  int pending_ = 0;                    // guarded by mu_
  bool started_ = false, writing_ = false, finishing_ = false, ended_ = false;  // mu_
};

}  // namespace courtpiece::gateway_load

#endif  // COURTPIECE_TOOLS_GATEWAY_LOAD_ASYNC_STREAM_H_
