// The real UnaryRouter (unary_router.h): one relay with a method table per front. Each method
// names its upstream service (the lobby or moderation); the call goes there as raw bytes over
// grpc::GenericStub (the client messages mirror the upstream's field for field, client.proto).
// docs/gateway.md "Design".
//
// Contract (beyond unary_router.h): the token is checked with the TokenGate before any
// upstream call (UNAUTHENTICATED; admin methods: PERMISSION_DENIED for a player's token);
// `authorization` is forwarded as metadata; the call's deadline is min(ctx.deadline, now +
// deadline_max) (DEADLINE_EXCEEDED at once when it already passed); the upstream's status is
// answered as it is (code and message); the reply is parsed into the method's response type
// with unknown (internal) fields dropped; a reply that does not parse is INTERNAL. Each
// upstream call is reported to GatewayMetrics::UpstreamCall. CancelAndWait (and the
// destructor, with finish_wait) cancels the upstream calls still running and returns once
// each has answered its caller (CANCELLED) and let go of its `done`; main calls it before
// destroying the fronts whose connections those hold (live_calls.h).
// Thread-safety: safe from many threads; the channels, gate, clock and metrics must outlive
// it.
#ifndef COURTPIECE_SERVICES_GATEWAY_UNARY_RELAY_H_
#define COURTPIECE_SERVICES_GATEWAY_UNARY_RELAY_H_

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "courtpiece/common/clock.h"
#include "grpcpp/channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "services/gateway/gateway_metrics.h"
#include "services/gateway/live_calls.h"
#include "services/gateway/token_gate.h"
#include "services/gateway/unary_router.h"

namespace courtpiece::gateway {

struct UnaryRelayOptions {
  absl::Duration deadline_max = absl::Seconds(10);  // COURTPIECE_GATEWAY_RPC_DEADLINE_MAX
  absl::Duration finish_wait = absl::Seconds(5);    // the destructor's CancelAndWait
};

// The services the unary calls go to. A method whose upstream channel is null answers
// UNAVAILABLE.
struct UnaryUpstreams {
  std::shared_ptr<grpc::Channel> lobby;
  std::shared_ptr<grpc::Channel> moderation;
};

// A voice note's recording: at most 512 KiB (docs/moderation.md), plus room for the
// request's other fields. The gRPC front's limit for UploadNote and the channels' to moderation.
inline constexpr size_t kVoiceNoteBytesMax = 512 * 1024;
inline constexpr size_t kVoiceMessageBytesMax = kVoiceNoteBytesMax + 16 * 1024;

class UnaryRelay final : public UnaryRouter {
 public:
  // The client API's unary methods (CourtPiece minus Play): the lobby's Accounts, Directory
  // and Stats; moderation's VoiceNotes (UploadNote, GetNote).
  static std::unique_ptr<UnaryRelay> ForClients(UnaryUpstreams upstreams, const TokenGate& gate,
                                                const Clock& clock, GatewayMetrics& metrics,
                                                UnaryRelayOptions options = {});
  // The admin API (/admin/v1/<Method>): LobbyAdmin's and ModerationAdmin's methods with the
  // services' own types.
  static std::unique_ptr<UnaryRelay> ForAdmins(UnaryUpstreams upstreams, const TokenGate& gate,
                                               const Clock& clock, GatewayMetrics& metrics,
                                               UnaryRelayOptions options = {});

  UnaryRelay(std::vector<UnaryMethod> methods, UnaryUpstreams upstreams, const TokenGate& gate,
             const Clock& clock, GatewayMetrics& metrics, UnaryRelayOptions options);
  ~UnaryRelay() override;

  const UnaryMethod* Find(std::string_view name) const override;
  void Call(const UnaryMethod& method, std::unique_ptr<google::protobuf::Message> request,
            const UnaryContext& ctx, UnaryDone done) override;

  // Cancels every upstream call still running and waits until each has called its `done`
  // and let go of it, or `timeout` passed; how many were still running then.
  int CancelAndWait(absl::Duration timeout);

  // Every method, in a stable order (tests, docs).
  const std::vector<UnaryMethod>& methods() const { return methods_; }

 private:
  grpc::GenericStub* StubFor(UnaryUpstream backend);

  std::vector<UnaryMethod> methods_;
  std::map<std::string, size_t, std::less<>> by_name_;
  UnaryUpstreams upstreams_;
  std::unique_ptr<grpc::GenericStub> lobby_stub_;       // null without a lobby channel
  std::unique_ptr<grpc::GenericStub> moderation_stub_;  // null without a moderation channel
  const TokenGate& gate_;
  const Clock& clock_;
  GatewayMetrics& metrics_;
  UnaryRelayOptions options_;
  const std::shared_ptr<LiveCalls> live_ = std::make_shared<LiveCalls>();  // calls in flight
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_UNARY_RELAY_H_
