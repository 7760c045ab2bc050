// What the two table dialers (grpc_table_dialer.h, mux_table_dialer.h) share: a bounded
// cache of channels by instance address, and the bookkeeping of a callback reactor's hold.
#ifndef COURTPIECE_SERVICES_GATEWAY_UPSTREAM_CHANNELS_H_
#define COURTPIECE_SERVICES_GATEWAY_UPSTREAM_CHANNELS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "courtpiece/common/metrics.h"
#include "grpcpp/channel.h"

namespace courtpiece::gateway {

// At most `channels_max` channels, by address; the least recently used is dropped past it (a
// call on it keeps its own reference, so dropping never breaks a live stream).
// Messages over `message_bytes_max` either way are refused by gRPC.
// Thread-compatible: the dialer calls it under its own lock.
class ChannelCache {
 public:
  ChannelCache(common::Metrics* metrics, int channels_max, int message_bytes_max)
      : metrics_(metrics), channels_max_(channels_max), message_bytes_max_(message_bytes_max) {}

  // The channel to `addr`, made on first use. `dropped` (may be null) gets the address
  // dropped to make room, or "" when none was.
  std::shared_ptr<grpc::Channel> For(const std::string& addr, std::string* dropped = nullptr);
  int size() const { return static_cast<int>(channels_.size()); }

 private:
  struct Cached {
    std::shared_ptr<grpc::Channel> channel;
    uint64_t used = 0;
  };
  common::Metrics* const metrics_;
  const int channels_max_;
  const int message_bytes_max_;
  std::map<std::string, Cached> channels_;
  uint64_t uses_ = 0;
};

// A client reactor takes one hold (AddHold) for operations it starts from outside its
// reactions (a Send from the relay's thread); gRPC frees the call after OnDone, which
// cannot run while the hold is on. This counts those starts and says when the hold may go:
// once no start is under way and none may come (a reaction saw the stream end). Every
// method is called under the reactor's own lock; one that answers true obliges the caller
// to call RemoveHold() once the lock is released (it answers true at most once in all).
class OutsideStarts {
 public:
  // A start from outside is about to be made; false when none may be made any more.
  bool Begin() {
    if (stopped_) return false;
    ++starting_;
    return true;
  }
  // The start is made.
  bool End() {
    --starting_;
    return Release();
  }
  // From a reaction that ends the stream: no start from outside after this.
  bool Stop() {
    stopped_ = true;
    return Release();
  }
  bool stopped() const { return stopped_; }

 private:
  bool Release() {
    const bool release = stopped_ && starting_ == 0 && !released_;
    released_ = released_ || release;
    return release;
  }
  int starting_ = 0;
  bool stopped_ = false;
  bool released_ = false;
};

// The glue for a reactor (any gRPC client reactor) whose OutsideStarts `starts` is guarded
// by `mu`: called without holding `mu`, applies `step` (&OutsideStarts::End or ::Stop)
// under it and removes the reactor's hold when that answered true.
template <typename Reactor>
void StepOutsideStarts(Reactor& reactor, std::mutex& mu, OutsideStarts& starts,
                       bool (OutsideStarts::*step)()) {
  bool release = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    release = (starts.*step)();
  }
  if (release) reactor.RemoveHold();
}

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_UPSTREAM_CHANNELS_H_
