#include "services/gateway/token_gate.h"

namespace courtpiece::gateway {

absl::StatusOr<auth::Claims> TokenGate::AuthenticateToken(std::string_view token) const {
  if (token.empty()) return absl::UnauthenticatedError("missing token");
  return verifier_.Verify(token);
}

absl::StatusOr<auth::Claims> TokenGate::Authenticate(std::string_view authorization) const {
  absl::StatusOr<std::string_view> token = auth::BearerToken(authorization);
  if (!token.ok()) return token.status();
  return AuthenticateToken(*token);
}

absl::StatusOr<auth::Claims> TokenGate::AuthenticateAdmin(std::string_view authorization) const {
  absl::StatusOr<auth::Claims> claims = Authenticate(authorization);
  if (!claims.ok()) return claims;
  if (claims->role != auth::Role::kAdmin) {
    return absl::PermissionDeniedError("not_admin: admin role required");
  }
  return claims;
}

}  // namespace courtpiece::gateway
