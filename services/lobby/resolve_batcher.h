// ResolveCode requests gathered into batches (docs/lobby.md "ResolveCode in batches"): each
// of `threads` threads takes what waits, up to batch_max requests, resolves them together
// (Directory::ResolveCodes: two Redis round trips for the whole batch instead of two per
// code) and answers each through its callback. Under load the batches grow by themselves;
// a lone request is a batch of one.
//
// Contract: Submit queues a request and returns true, or returns false when queue_max
// requests wait already (nothing is queued: the caller answers RESOURCE_EXHAUSTED). Every
// queued request's `done` runs exactly once, on a batcher thread, with the answer
// ResolveCodes gives it, or DEADLINE_EXCEEDED without resolving it when its `deadline` has
// passed by the time a thread takes it (its caller has given up: an overloaded lobby does
// not spend Redis round trips on answers nobody reads). The destructor answers whatever
// still waits before its threads end. No Submit may start once the destructor has begun
// (a CHECK).
// Thread-safety: Submit from any thread.
#ifndef COURTPIECE_SERVICES_LOBBY_RESOLVE_BATCHER_H_
#define COURTPIECE_SERVICES_LOBBY_RESOLVE_BATCHER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "services/lobby/directory.h"

namespace courtpiece::lobby {

struct ResolveBatchOptions {
  static constexpr int kThreadsMax = 16;
  static constexpr int kBatchMax = 1024;
  static constexpr int kQueueMax = 1 << 20;
  int threads = 2;       // 1..kThreadsMax
  int batch_max = 64;    // 1..kBatchMax requests resolved at once
  int queue_max = 4096;  // 1..kQueueMax requests waiting
};

class ResolveBatcher {
 public:
  using Done = absl::AnyInvocable<void(absl::StatusOr<TableRef>) &&>;
  // One answer per input, in order (Directory::ResolveCodes in production).
  using ResolveFn =
      std::function<std::vector<absl::StatusOr<TableRef>>(const std::vector<std::string>&)>;

  ResolveBatcher(ResolveFn resolve, ResolveBatchOptions options);  // starts the threads
  ~ResolveBatcher();
  ResolveBatcher(const ResolveBatcher&) = delete;
  ResolveBatcher& operator=(const ResolveBatcher&) = delete;

  bool Submit(std::string code_or_link, absl::Time deadline, Done done);

  // Counters for the tests: batches resolved, requests in them, requests past their deadline.
  int64_t batches() const;
  int64_t requests() const;
  int64_t expired() const;

 private:
  void Run();

  const ResolveFn resolve_;
  const ResolveBatchOptions options_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  struct Waiting {
    std::string code_or_link;
    absl::Time deadline;
    Done done;
  };
  std::deque<Waiting> queue_;  // guarded by mu_
  bool stopping_ = false;      // guarded by mu_
  int64_t batches_ = 0;        // guarded by mu_
  int64_t requests_ = 0;       // guarded by mu_
  int64_t expired_ = 0;        // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_RESOLVE_BATCHER_H_
