// The real TableDialer (upstream.h): Play streams to table instances on gRPC's callback API
// (grpc::ClientBidiReactor), one cached channel per instance address.
//
// Contract (beyond upstream.h): messages over message_bytes_max either way are refused by
// gRPC (RESOURCE_EXHAUSTED); each stream has one write in flight and at most send_queue_max
// queued behind it (Send answers false past it); the channel cache holds at most
// channels_max addresses (least recently used dropped; streams keep their own channel).
// Play streams have no deadline (they live as long as the client's); a dead peer ends them
// UNAVAILABLE. The destructor cancels every stream still running (its observer gets OnEnd)
// and returns once they have all ended, or after finish_wait.
// Thread-safety: safe from many threads; `metrics` (may be null) must outlive the dialer and
// every stream.
#ifndef COURTPIECE_SERVICES_GATEWAY_GRPC_TABLE_DIALER_H_
#define COURTPIECE_SERVICES_GATEWAY_GRPC_TABLE_DIALER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/time/time.h"
#include "courtpiece/common/metrics.h"
#include "grpcpp/channel.h"
#include "services/gateway/live_calls.h"
#include "services/gateway/upstream.h"
#include "services/gateway/upstream_channels.h"

namespace courtpiece::gateway {

struct GrpcTableDialerOptions {
  int channels_max = 256;
  int message_bytes_max = 16 * 1024;
  int send_queue_max = 64;
  absl::Duration finish_wait = absl::Seconds(5);  // the destructor's wait for the streams' ends
};

class GrpcTableDialer final : public TableDialer {
 public:
  explicit GrpcTableDialer(common::Metrics* metrics, GrpcTableDialerOptions options = {});
  ~GrpcTableDialer() override;

  std::shared_ptr<UpstreamStream> Open(const std::string& addr, const std::string& player_id,
                                       table::v1::OpenTable open,
                                       std::shared_ptr<UpstreamObserver> observer) override;

  int cached_channels() const;

 private:
  const GrpcTableDialerOptions options_;
  mutable std::mutex mu_;
  ChannelCache channels_;                                                  // guarded by mu_
  const std::shared_ptr<LiveCalls> live_ = std::make_shared<LiveCalls>();  // every stream
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_GRPC_TABLE_DIALER_H_
