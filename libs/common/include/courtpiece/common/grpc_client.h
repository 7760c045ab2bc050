// Client side of our gRPC plumbing: channels whose calls are measured, and deadlines.
//
//   auto channel = CreateGrpcChannel("wallet:7003", metrics.get());
//   auto stub = courtpiece::wallet::v1::Wallet::NewStub(channel);
//   grpc::ClientContext context;
//   SetTimeout(context, absl::Seconds(2));   // every RPC has a deadline (house rule 4)
//
// With a non-null `metrics`, each finished call is recorded, labels {method, code}, as
//   courtpiece_<service>_grpc_client_handled_total      counter
//   courtpiece_<service>_grpc_client_handling_seconds   histogram (default buckets)
// where <service> is the calling service (metrics.service()).
// Contract: `metrics` must outlive the channel and every stub made from it. Plaintext.
// Thread-safety: channels and these functions are safe from any thread.
#ifndef COURTPIECE_COMMON_GRPC_CLIENT_H_
#define COURTPIECE_COMMON_GRPC_CLIENT_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "courtpiece/common/metrics.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace courtpiece::common {

struct GrpcChannelOptions {
  int max_receive_message_bytes = 4 * 1024 * 1024;
  int max_send_message_bytes = 4 * 1024 * 1024;
};

// Connects lazily: a wrong or down address shows up as UNAVAILABLE on the first call.
std::shared_ptr<grpc::Channel> CreateGrpcChannel(const std::string& address, Metrics* metrics,
                                                 const GrpcChannelOptions& options = {});

// Keeps gRPC's process-wide callback queue alive until the process exits. The callback API
// (stub->async()) runs its callbacks on the "callback alternative" completion queue when the
// poller cannot run them itself (Linux, gRPC 1.51), with a reference per channel that used
// it; when the last such channel is destroyed the queue is shut down, its threads joined and
// the queue deleted, by whichever thread drops that channel. If that is one of the queue's
// own threads (a callback holding the last reference to its channel, e.g. a port destroyed
// while its call finishes), it joins itself, deletes the queue and goes on polling it: a
// double free in grpc_cq_internal_unref (seen under ASan). One never-destroyed channel that
// has made a callback call holds a reference for good, so the queue is never torn down.
// Idempotent and thread-safe; the first call makes one call that fails at once (its
// deadline is already past), to a Unix socket path nothing listens on. Every component that
// uses the callback API calls it (CreateGrpcChannel does too).
void PinGrpcCallbackQueue();

// Sets the call's deadline to now + timeout.
void SetTimeout(grpc::ClientContext& context, absl::Duration timeout);

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_GRPC_CLIENT_H_
