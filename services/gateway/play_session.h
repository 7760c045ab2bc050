// The Play relay: PlayService (play_service.h) over the table tier. One PlaySession per client
// connection relays it to the table's owner instance and moves it by itself when the table
// moves (docs/gateway.md "Relay and the gRPC front"; design: docs/gateway.md "Design").
//
// Contract (beyond play_service.h):
// - The first client message must be `open` (else the stream ends INVALID_ARGUMENT); its
//   table_id is 1..64 chars of [A-Za-z0-9_-]. The session looks up the owner, opens the
//   upstream stream with open{table_id, last_seq} and relays. Commands sent before the first
//   upstream stream exists are held (at most pending_before_open_max) and sent after open.
// - Events with seq <= the highest seq already delivered are dropped (never a doubled event);
//   an `opened` with resumed=false resets that mark (the client replaces its view).
// - Upstream UNAVAILABLE, CANCELLED, INTERNAL, or FAILED_PRECONDITION with an owner address:
//   resume. Notice "reconnecting" (when the stream had opened), commands in flight answered
//   14 "...may not have been applied; check the events", commands in the pause answered 14
//   "...not applied"; retries (owner lookup or the named address, then open{last_seq}) with
//   backoff backoff_initial doubling to backoff_max until resume_timeout, then the stream
//   ends UNAVAILABLE. A resumed `opened` is swallowed and Notice "reconnected" sent; a
//   not-resumed one is forwarded. The first connect retries the same way, silently.
// - Any other upstream end (OK included): the client's stream ends with that status.
// - Commands pass a token bucket (commands_per_second, commands_burst): past it a command is
//   answered CommandResult{8} without reaching the table; the command_refusals_max-th refusal
//   ends the stream RESOURCE_EXHAUSTED.
// - OnClientGone cancels the upstream stream and any pending retry; the sink is not called,
//   and the deps are not used, after it returned (it waits for a message another thread is
//   handing to the sink at that moment; a sink that calls it from inside Send is not waited
//   for). Upstream callbacks may still hold the session for a moment after that; they do
//   nothing. The one exception is an owner lookup already running on deps.scheduler, which
//   the scheduler's destructor waits for: destroy the scheduler before the owner lookup.
// Thread-safety: one mutex per session; the sink is called without it (an outbox drained by
// one thread at a time, in order), so a sink may call back into the session. Upstream
// callbacks hold only a weak_ptr to the session and a generation number, so late callbacks of
// a replaced or freed stream are ignored.
#ifndef COURTPIECE_SERVICES_GATEWAY_PLAY_SESSION_H_
#define COURTPIECE_SERVICES_GATEWAY_PLAY_SESSION_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/log.h"
#include "services/gateway/gateway_metrics.h"
#include "services/gateway/play_service.h"
#include "services/gateway/upstream.h"

namespace courtpiece::gateway {

struct PlaySessionOptions {
  std::string kind = "grpc";  // the metrics label of the front: "grpc" or "websocket"
  double commands_per_second = 20;
  int commands_burst = 40;
  int command_refusals_max = 100;
  absl::Duration resume_timeout = absl::Seconds(30);
  absl::Duration backoff_initial = absl::Milliseconds(50);
  absl::Duration backoff_max = absl::Seconds(1);
  int in_flight_max = 256;                // commands sent upstream awaiting their result
  int pending_before_open_max = 16;       // commands held until the first upstream stream
  int redirects_without_backoff_max = 2;  // FAILED_PRECONDITION hops retried at once
  // A client gone: its upstream stream is closed after the commands it sent (a `leave`
  // just before closing reaches the table), and cut if it has not ended after this.
  absl::Duration upstream_close_grace = absl::Seconds(2);
};

struct PlayDeps {
  TableDialer& dialer;
  OwnerLookup& owners;
  Scheduler& scheduler;
  const Clock& clock;
  GatewayMetrics& metrics;
  common::Logger* log = nullptr;  // resumes are logged at info when set
};

// One per front (the metrics kind); the deps are shared and must outlive it and every session
// not yet told OnClientGone.
class PlaySessionService final : public PlayService {
 public:
  PlaySessionService(PlayDeps deps, PlaySessionOptions options)
      : deps_(deps), options_(std::move(options)) {}

  std::shared_ptr<PlayConnection> Connect(std::string player_id, std::string peer,
                                          std::shared_ptr<ClientSink> sink) override;

 private:
  PlayDeps deps_;
  PlaySessionOptions options_;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_PLAY_SESSION_H_
