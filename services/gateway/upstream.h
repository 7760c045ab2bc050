// What the Play relay (play_session.h) needs from the world: a way to open a Play stream to
// a table instance (TableDialer), the address of a table's owner (OwnerLookup), and delayed
// work (Scheduler). The real ones: grpc_table_dialer.h, placement::RedisOwnerLookup
// (libs/placement), ThreadScheduler below; the in-memory fakes: fake_upstream.h.
//
// Contracts:
// - TableDialer::Open starts one upstream Play stream at `addr` as `player_id` (metadata
//   courtpiece-player-id) and sends `open` first. The observer then gets the stream's
//   responses, in order, one call at a time, then exactly one OnEnd with the stream's status
//   and the `courtpiece-owner-addr` trailing metadata ("" when absent). Open never fails
//   synchronously: a bad or dead address is an OnEnd(UNAVAILABLE). Implementations never call
//   the observer from inside Open, Send or Cancel (callers may hold their own lock there).
// - UpstreamStream::Send queues a request after the ones before it; false when the stream is
//   ending or its bounded queue is full (the request was not sent). Cancel ends the stream
//   (the server sees a disconnect); OnEnd follows (CANCELLED) unless it came already. Both
//   are safe after the end (no-ops).
// - OwnerLookup::Lookup answers the host:port of the table's live owner; NOT_FOUND for an
//   unknown table; UNAVAILABLE when Redis is unreachable or the owner is not live (its
//   heartbeat expired: a survivor will claim the table, so callers retry).
// - Scheduler::After runs `fn` once, after `delay`, on the scheduler's thread; Cancel(id)
//   drops a task that has not started (a running or finished one: no-op, no wait).
// Thread-safety: every method of every interface is safe from any thread.
#ifndef COURTPIECE_SERVICES_GATEWAY_UPSTREAM_H_
#define COURTPIECE_SERVICES_GATEWAY_UPSTREAM_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/placement/owner_lookup.h"
#include "courtpiece/table/v1/table_service.pb.h"

namespace courtpiece::gateway {

// The trailing metadata key the table sets with FAILED_PRECONDITION (owner elsewhere).
inline constexpr char kOwnerAddrMetadata[] = "courtpiece-owner-addr";
// The metadata key naming the (gateway-authenticated) player to the table.
inline constexpr char kPlayerIdMetadata[] = "courtpiece-player-id";

class UpstreamObserver {
 public:
  virtual ~UpstreamObserver() = default;
  virtual void OnResponse(table::v1::PlayResponse response) = 0;
  virtual void OnEnd(absl::Status status, std::string owner_addr) = 0;
};

class UpstreamStream {
 public:
  virtual ~UpstreamStream() = default;
  virtual bool Send(table::v1::PlayRequest request) = 0;
  // Cuts the stream now: requests still queued may never reach the table.
  virtual void Cancel() = 0;
  // Ends the stream from this side once every request sent before has been written, so the
  // table takes them (a `leave` sent just before the client closed) and then sees the end.
  // Send after Close is refused; Cancel still cuts it (the caller bounds the wait).
  virtual void Close() = 0;
};

class TableDialer {
 public:
  virtual ~TableDialer() = default;
  // The dialer keeps `observer` alive until it delivered OnEnd.
  virtual std::shared_ptr<UpstreamStream> Open(const std::string& addr,
                                               const std::string& player_id,
                                               table::v1::OpenTable open,
                                               std::shared_ptr<UpstreamObserver> observer) = 0;
};

using OwnerLookup = placement::OwnerLookup;  // libs/placement (owner_lookup.h)

class Scheduler {
 public:
  using TaskId = uint64_t;
  virtual ~Scheduler() = default;
  virtual TaskId After(absl::Duration delay, std::function<void()> fn) = 0;
  virtual void Cancel(TaskId id) = 0;
};

// The real Scheduler: `threads` threads running tasks in deadline order (steady clock; a
// timer, not a decision, so no injected Clock). Tasks may block (the relay's owner lookups do
// Redis I/O), so main gives it a few threads. The destructor drops pending tasks and joins.
class ThreadScheduler final : public Scheduler {
 public:
  explicit ThreadScheduler(int threads = 1);
  ~ThreadScheduler() override;
  ThreadScheduler(const ThreadScheduler&) = delete;
  ThreadScheduler& operator=(const ThreadScheduler&) = delete;

  TaskId After(absl::Duration delay, std::function<void()> fn) override;
  void Cancel(TaskId id) override;

 private:
  using Steady = std::chrono::steady_clock;
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;   // guarded by mu_
  TaskId next_id_ = 1;  // guarded by mu_
  std::multimap<Steady::time_point, std::pair<TaskId, std::function<void()>>> tasks_;  // mu_
  std::vector<std::thread> threads_;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_UPSTREAM_H_
