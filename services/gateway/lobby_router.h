// The real UnaryRouters (unary_router.h): the client methods of client.proto and the admin
// methods, relayed to the lobby as raw bytes over grpc::GenericStub (the client messages
// mirror the lobby's field for field, client.proto). docs/gateway.md "Design".
//
// Contract (beyond unary_router.h): the token is checked with the TokenGate before any
// upstream call (UNAUTHENTICATED; admin methods: PERMISSION_DENIED for a player's token);
// `authorization` is forwarded as metadata; the call's deadline is min(ctx.deadline, now +
// deadline_max) (DEADLINE_EXCEEDED at once when it already passed); the lobby's status is
// answered as it is; the reply is parsed into the method's response type with unknown
// (internal) fields dropped; a reply that does not parse is INTERNAL. Each upstream call is
// reported to GatewayMetrics::UpstreamCall.
// Thread-safety: safe from many threads; the channel, gate, clock and metrics must outlive it.
#ifndef COURTPIECE_SERVICES_GATEWAY_LOBBY_ROUTER_H_
#define COURTPIECE_SERVICES_GATEWAY_LOBBY_ROUTER_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "courtpiece/common/clock.h"
#include "grpcpp/channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "services/gateway/gateway_metrics.h"
#include "services/gateway/token_gate.h"
#include "services/gateway/unary_router.h"

namespace courtpiece::gateway {

struct LobbyRouterOptions {
  absl::Duration deadline_max = absl::Seconds(10);  // COURTPIECE_GATEWAY_RPC_DEADLINE_MAX
};

class LobbyRouter final : public UnaryRouter {
 public:
  // The client API's unary methods (CourtPiece minus Play).
  static std::unique_ptr<LobbyRouter> ForClients(std::shared_ptr<grpc::Channel> lobby,
                                                 const TokenGate& gate, const Clock& clock,
                                                 GatewayMetrics& metrics,
                                                 LobbyRouterOptions options = {});
  // The admin API (/admin/v1/<Method>): LobbyAdmin's methods with the lobby's own types.
  static std::unique_ptr<LobbyRouter> ForAdmins(std::shared_ptr<grpc::Channel> lobby,
                                                const TokenGate& gate, const Clock& clock,
                                                GatewayMetrics& metrics,
                                                LobbyRouterOptions options = {});

  LobbyRouter(std::vector<UnaryMethod> methods, std::shared_ptr<grpc::Channel> lobby,
              const TokenGate& gate, const Clock& clock, GatewayMetrics& metrics,
              LobbyRouterOptions options);

  const UnaryMethod* Find(std::string_view name) const override;
  void Call(const UnaryMethod& method, std::unique_ptr<google::protobuf::Message> request,
            const UnaryContext& ctx, UnaryDone done) override;

  // Every method, in a stable order (tests, docs).
  const std::vector<UnaryMethod>& methods() const { return methods_; }

 private:
  std::vector<UnaryMethod> methods_;
  std::map<std::string, size_t, std::less<>> by_name_;
  std::shared_ptr<grpc::Channel> channel_;
  grpc::GenericStub stub_;
  const TokenGate& gate_;
  const Clock& clock_;
  GatewayMetrics& metrics_;
  LobbyRouterOptions options_;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_LOBBY_ROUTER_H_
