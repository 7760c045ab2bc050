// A TableDialer (upstream.h) whose Play streams are sessions of one PlayMux stream per table
// instance (table_service.proto): a player connection costs the gateway no gRPC call of its
// own (an upstream Play call was ~23 KiB of gRPC's memory per player; docs/gateway.md).
//
// Contract (beyond upstream.h):
// - streams_per_instance PlayMux streams per instance address (default one), each opened by
//   the first Open to it and replaced by the next Open after it ended. When it ends, every session
//   on it ends UNAVAILABLE (the relay then resumes them by seq, as after an instance's death).
// - Each session has at most send_queue_max requests waiting behind the stream's writes
//   (Send answers false past it), and the stream at most stream_queue_max in all; an
//   `open` or `close` is never refused (they are bounded by the sessions).
// - A session's end from the table is its OnEnd, with the table's code, message and owner
//   address; after Cancel, OnEnd says CANCELLED (its queued requests are dropped and the
//   table hears a close); after Close, the table's own end.
// - Requests go in batches (what waited while the previous write was in flight, in order,
//   up to 32 KiB), one write in flight per stream. A command over 16 KiB is refused by Send
//   (false): the table would end the session, and gRPC's bound the whole stream.
// - The channel cache holds at most channels_max addresses (least recently used dropped;
//   a live stream keeps its own channel).
// - The destructor cancels every stream still running (each session's observer gets OnEnd
//   UNAVAILABLE, as when a stream dies) and returns once they have all ended, or after
//   finish_wait.
// Thread-safety: safe from many threads; `metrics` (may be null) must outlive the dialer and
// every stream. Observers are called from gRPC's threads, one call at a time per stream.
#ifndef COURTPIECE_SERVICES_GATEWAY_MUX_TABLE_DIALER_H_
#define COURTPIECE_SERVICES_GATEWAY_MUX_TABLE_DIALER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "courtpiece/common/metrics.h"
#include "grpcpp/channel.h"
#include "services/gateway/live_calls.h"
#include "services/gateway/upstream.h"
#include "services/gateway/upstream_channels.h"

namespace courtpiece::gateway {

struct MuxTableDialerOptions {
  int channels_max = 256;
  // gRPC's bound both ways: the table answers in batches of up to 64 KiB (one larger message
  // alone); the dialer sends batches of up to 32 KiB (the table takes 64 KiB).
  int message_bytes_max = 256 * 1024;
  int send_queue_max = 64;        // per session
  int stream_queue_max = 65'536;  // per PlayMux stream, every session's requests
  // PlayMux streams per instance (a session goes on its id modulo this). Each is read by one
  // gRPC thread at a time; more deliver responses in parallel, but 4 measured no better than
  // 1 at 10,000 commands/s here (docs/gateway.md), so one.
  int streams_per_instance = 1;
  absl::Duration finish_wait = absl::Seconds(5);  // the destructor's wait for the streams' ends
};

class MuxTableDialer final : public TableDialer {
 public:
  explicit MuxTableDialer(common::Metrics* metrics, MuxTableDialerOptions options = {});
  ~MuxTableDialer() override;

  std::shared_ptr<UpstreamStream> Open(const std::string& addr, const std::string& player_id,
                                       table::v1::OpenTable open,
                                       std::shared_ptr<UpstreamObserver> observer) override;

  // PlayMux streams open now (not yet ended), and sessions on them.
  int live_streams() const;
  int live_sessions() const;

  class Call;  // one PlayMux stream (mux_table_dialer.cc)

 private:
  const MuxTableDialerOptions options_;
  mutable std::mutex mu_;
  ChannelCache channels_;  // guarded by mu_
  // By address, streams_per_instance each (a session's: its id modulo that).
  std::map<std::string, std::vector<std::shared_ptr<Call>>> calls_;        // guarded by mu_
  const std::shared_ptr<LiveCalls> live_ = std::make_shared<LiveCalls>();  // every stream
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_MUX_TABLE_DIALER_H_
