// The unary calls of the client API (client.proto's CourtPiece) and of the admin HTTP API,
// routed to the service each method names (the lobby or moderation). The fronts (JSON over HTTP in
// http_server, gRPC in grpc_front) find a method by name, parse the request into its prototype's
// type and call it.
//
// Contract: Find returns nullptr for an unknown name. Call checks the caller's
// `authorization` header value ("Bearer <token>", "" when absent) with the TokenGate when
// the method needs a token (UNAUTHENTICATED; PERMISSION_DENIED for a player's token on an
// admin method) before any upstream call, forwards it to the upstream, bounds the call by
// min(ctx.deadline, now + the router's deadline cap), and answers `done` exactly once, on
// any thread (possibly before Call returns), with a response of the method's response type
// (internal fields stripped) or a non-OK status with the exact code of client.proto.
// Thread-safety: safe from many threads.
#ifndef COURTPIECE_SERVICES_GATEWAY_UNARY_ROUTER_H_
#define COURTPIECE_SERVICES_GATEWAY_UNARY_ROUTER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"

namespace courtpiece::gateway {

// The services behind the gateway that unary calls go to.
enum class UnaryUpstream { kLobby, kModeration };

struct UnaryMethod {
  std::string name;                                               // "GuestLogin"
  const google::protobuf::Message* request_prototype = nullptr;   // its request type
  const google::protobuf::Message* response_prototype = nullptr;  // its response type
  std::string upstream;  // the upstream's full method, "/courtpiece.lobby.v1.Accounts/GuestLogin"
  bool needs_token = true;
  bool admin_only = false;
  UnaryUpstream backend = UnaryUpstream::kLobby;  // which service `upstream` is on
  // The largest request the fronts take for it (gRPC; HTTP has its own body limits).
  size_t request_bytes_max = 64 * 1024;
};

struct UnaryContext {
  std::string authorization;                     // the header's value, "" when absent
  std::string peer;                              // the client's address, for logs
  absl::Time deadline = absl::InfiniteFuture();  // the client's, if it set one
};

using UnaryDone =
    std::function<void(absl::Status status, std::unique_ptr<google::protobuf::Message> response)>;

class UnaryRouter {
 public:
  virtual ~UnaryRouter() = default;
  virtual const UnaryMethod* Find(std::string_view name) const = 0;
  virtual void Call(const UnaryMethod& method, std::unique_ptr<google::protobuf::Message> request,
                    const UnaryContext& ctx, UnaryDone done) = 0;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_UNARY_ROUTER_H_
