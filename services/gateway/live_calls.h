// The outgoing gRPC calls a component started that have not finished yet, so that it can end
// them all and wait for them before what they use goes away.
//
// Why: a callback-API call outlives its starter's handle on it (a table dialer's stream keeps
// itself alive until OnDone; a unary relay's callback runs whenever the answer comes), but
// its channel records each finished call to the metrics (common/grpc_client.h) and its
// callback uses the starter's front. A call still finishing on a gRPC thread after main had
// destroyed those used freed memory: a gateway exited 139 on SIGTERM in CI (2026-12-04).
// So the table dialers' destructors, and main for the unary relays, CancelAndWait.
//
// Usage: Started when the call starts, with a cancel that holds the call weakly; Finished as
// the very last step of its completion (OnDone, or the end of its callback).
// Thread-safe; shared (shared_ptr) by the component and its calls.
#ifndef COURTPIECE_SERVICES_GATEWAY_LIVE_CALLS_H_
#define COURTPIECE_SERVICES_GATEWAY_LIVE_CALLS_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "absl/time/time.h"

namespace courtpiece::gateway {

class LiveCalls {
 public:
  // A call is starting. `cancel` may be called at any time until and after Finished (it
  // must hold the call weakly and be a no-op once the call is gone).
  uint64_t Started(std::function<void()> cancel);
  // The call's last step (the end of its OnDone or callback): it uses nothing after this.
  void Finished(uint64_t id);
  // Cancels every call still running (outside the set's lock) and waits until all have
  // finished or `timeout` passed. Returns how many were still running then (0: all ended).
  int CancelAndWait(absl::Duration timeout);
  int running() const;

  // For a callback-API call object that holds itself (`self`) until its OnDone and has a
  // Cancel(): Started with a cancel through a weak pointer to it.
  template <typename CallT>
  uint64_t StartedCancellable(const std::shared_ptr<CallT>& call) {
    return Started([weak = std::weak_ptr<CallT>(call)] {
      if (std::shared_ptr<CallT> c = weak.lock(); c != nullptr) c->Cancel();
    });
  }
  // The last step of such a call's OnDone: drops `self` (which may free the call: the caller
  // uses nothing of it afterwards), then Finished(id). `live` is a copy, so the set outlives
  // the call.
  template <typename CallT>
  static void Release(std::shared_ptr<LiveCalls> live, uint64_t id, std::shared_ptr<CallT>& self) {
    { std::shared_ptr<CallT> last = std::move(self); }
    live->Finished(id);
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable finished_;
  uint64_t next_id_ = 1;                               // guarded by mu_
  std::map<uint64_t, std::function<void()>> running_;  // guarded by mu_
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_LIVE_CALLS_H_
