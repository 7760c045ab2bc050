// gRPC's async API on completion queues of our own, each polled by a thread of its own.
//
//   auto queues = AsyncQueues::ForClients(4);
//   queues->TryStart([&] { call->reader = stub->PrepareAsyncPlay(&call->ctx, queues->queue(i)); ...
//                          call->reader->StartCall(&call->start_op); });
//   ...
//   queues->Stop();  // after every call has ended (clients) or after Server::Shutdown
//
// Every tag given to gRPC is an AsyncOp: the queue's thread calls Done(ok) exactly once when
// the operation completes (ok as grpc::CompletionQueue::Next gives it).
//
// Why: gRPC 1.51 as Debian builds it (without NDEBUG) checks every completion against all
// the operations outstanding on its queue, under the queue's lock; the callback API puts
// every call of a process on one queue. With thousands of streams open that check was the
// largest single cost of the gateway and serialised its threads. Calls spread over several
// queues of our own each pay for their own queue only.
//
// Contract: a queue must get no new operation once it is shutting down, so every operation
// starts through TryStart, which refuses (false) once Stop has begun; the caller treats a
// refused operation as never started (no Done comes for it). Stop shuts the queues down and
// returns once every outstanding operation's Done has run; for a server's queues call it
// after grpc::Server::Shutdown (which ends every call), for a client's once its calls are
// cancelled or ended.
// Thread-safety: every method is safe from any thread; Stop is idempotent (a concurrent
// second call returns once the first has finished) and must not be called from a queue's
// own thread.
#ifndef COURTPIECE_COMMON_GRPC_ASYNC_H_
#define COURTPIECE_COMMON_GRPC_ASYNC_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/server_builder.h"

namespace courtpiece::common {

class AsyncOp {
 public:
  virtual void Done(bool ok) = 0;

 protected:
  ~AsyncOp() = default;
};

// An AsyncOp that calls a member function of its owner: one per kind of operation of a call,
//   MemberOp<Call> read_op_{this, &Call::OnReadDone};
template <typename T>
class MemberOp final : public AsyncOp {
 public:
  MemberOp(T* owner, void (T::*done)(bool)) : owner_(owner), done_(done) {}
  void Done(bool ok) override { (owner_->*done_)(ok); }

 private:
  T* const owner_;
  void (T::*const done_)(bool);
};

class AsyncQueues {
 public:
  static constexpr int kQueuesMax = 64;

  // `count` (1..kQueuesMax) new queues for client calls; their threads start now.
  static std::unique_ptr<AsyncQueues> ForClients(int count);
  // `count` queues added to `builder` before BuildAndStart; StartThreads once it started.
  static std::unique_ptr<AsyncQueues> ForServer(grpc::ServerBuilder& builder, int count);

  ~AsyncQueues();  // Stop()
  AsyncQueues(const AsyncQueues&) = delete;
  AsyncQueues& operator=(const AsyncQueues&) = delete;

  size_t size() const { return queues_.size(); }
  grpc::CompletionQueue* queue(size_t index) const;
  // A server's queue (ForServer only).
  grpc::ServerCompletionQueue* server_queue(size_t index) const;

  // Runs start(), which must start exactly one operation on one of these queues, unless Stop
  // has begun; whether it ran.
  bool TryStart(absl::FunctionRef<void()> start);

  void StartThreads();  // once; ForClients has done it
  void Stop();

 private:
  AsyncQueues(std::vector<std::unique_ptr<grpc::CompletionQueue>> queues, bool server);

  const std::vector<std::unique_ptr<grpc::CompletionQueue>> queues_;
  const bool server_;
  std::mutex stop_mu_;                // held through Stop
  std::vector<std::thread> threads_;  // touched by StartThreads and Stop only
  std::shared_mutex mu_;              // not absl::Mutex: visible to TSan
  bool stopping_ = false;             // guarded by mu_
};

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_GRPC_ASYNC_H_
