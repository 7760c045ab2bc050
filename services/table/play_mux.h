// PlayMux (table_service.proto): many players' Play streams as sessions of one gRPC stream,
// the gateway's way in (one stream per gateway and instance instead of one per player: a
// gRPC call costs ~12 KiB here and ~23 KiB in the gateway; docs/table-service.md "PlayMux").
//
// Contract: a session behaves exactly as a Play stream (server.cc's PlayReactor) does: the
// player (from its `open` instead of the metadata), the rate limit and the cut after
// refusals, the per-session queue bound (queue_max messages of that session waiting), the
// 16 KiB bound of a command (RESOURCE_EXHAUSTED), and every status a Play stream ends with,
// as the session's `end`. Messages of one session keep their order; those of different
// sessions interleave. Bounds of the whole stream (StreamLimits): mux_sessions_max live
// sessions (an `open` past it ends that session RESOURCE_EXHAUSTED) and mux_queue_max
// messages waiting in all (past it the whole stream is cut RESOURCE_EXHAUSTED: the caller
// does not read). Messages travel in batches of up to 64 KiB.
// When the stream ends, however it ends, every live session is a disconnect for the table.
// Thread-safety: gRPC drives the reactor; the host calls the sessions' sinks from workers.
#ifndef COURTPIECE_SERVICES_TABLE_PLAY_MUX_H_
#define COURTPIECE_SERVICES_TABLE_PLAY_MUX_H_

#include <chrono>
#include <cstdint>

#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "services/table/table_host.h"

namespace courtpiece::table_service {

class TableMetrics;
struct StreamLimits;

// A Play stream's (or session's) command bucket: `per_second` sustained, `burst` at once.
class CommandBucket {
 public:
  using Steady = std::chrono::steady_clock;
  CommandBucket(double per_second, double burst)
      : per_second_(per_second), burst_(burst), tokens_(burst), refill_at_(Steady::now()) {}
  // Takes one token at `now`; false when none is left.
  bool Take(Steady::time_point now);

 private:
  double per_second_;
  double burst_;
  double tokens_;
  Steady::time_point refill_at_;
};

// The largest PlayRequest / command a Play stream or a session takes.
inline constexpr size_t kPlayMessageBytesMax = 16 * 1024;

// A new reactor for one PlayMux call; it deletes itself when gRPC is done with it.
grpc::ServerBidiReactor<table::v1::PlayMuxRequest, table::v1::PlayMuxResponse>* NewPlayMuxReactor(
    TableHost& host, TableMetrics* metrics, const StreamLimits& limits);

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_PLAY_MUX_H_
