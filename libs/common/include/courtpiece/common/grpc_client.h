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

// Sets the call's deadline to now + timeout.
void SetTimeout(grpc::ClientContext& context, absl::Duration timeout);

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_GRPC_CLIENT_H_
