// Authentication at the gateway: session tokens (libs/auth, Ed25519) verified with the
// public keys alone, no lobby call.
//
// Contract: Authenticate takes an `authorization` header value; it must be "Bearer <token>"
// (scheme case-insensitive, one space); AuthenticateToken takes the bare token (a WebSocket's
// open.access_token). Both answer the claims or UNAUTHENTICATED with the verifier's reason
// ("missing token", "malformed authorization header", "expired token", "bad signature",
// ...). AuthenticateAdmin also answers PERMISSION_DENIED "not_admin: admin role required" (the
// reason word of moderation.proto) for a valid token of the player role.
// Thread-safety: immutable after construction; the verifier must outlive the gate.
#ifndef COURTPIECE_SERVICES_GATEWAY_TOKEN_GATE_H_
#define COURTPIECE_SERVICES_GATEWAY_TOKEN_GATE_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "courtpiece/auth/token.h"

namespace courtpiece::gateway {

class TokenGate {
 public:
  explicit TokenGate(const auth::TokenVerifier& verifier) : verifier_(verifier) {}

  absl::StatusOr<auth::Claims> Authenticate(std::string_view authorization) const;
  absl::StatusOr<auth::Claims> AuthenticateToken(std::string_view token) const;
  absl::StatusOr<auth::Claims> AuthenticateAdmin(std::string_view authorization) const;
  // AuthenticateAdmin when `admin_only`, else Authenticate: the check a method's flags ask for.
  absl::StatusOr<auth::Claims> AuthenticateFor(std::string_view authorization,
                                               bool admin_only) const {
    return admin_only ? AuthenticateAdmin(authorization) : Authenticate(authorization);
  }

 private:
  const auth::TokenVerifier& verifier_;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_TOKEN_GATE_H_
