#include "services/gateway/token_gate.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "courtpiece/common/absl_compat.h"

namespace courtpiece::gateway {

absl::StatusOr<auth::Claims> TokenGate::AuthenticateToken(std::string_view token) const {
  if (token.empty()) return absl::UnauthenticatedError("missing token");
  return verifier_.Verify(token);
}

absl::StatusOr<auth::Claims> TokenGate::Authenticate(std::string_view authorization) const {
  if (authorization.empty()) return absl::UnauthenticatedError("missing token");
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      !absl::StartsWithIgnoreCase(common::ToAbsl(authorization), common::ToAbsl(kScheme))) {
    return absl::UnauthenticatedError("malformed authorization header: want \"Bearer <token>\"");
  }
  return AuthenticateToken(authorization.substr(kScheme.size()));
}

absl::StatusOr<auth::Claims> TokenGate::AuthenticateAdmin(std::string_view authorization) const {
  absl::StatusOr<auth::Claims> claims = Authenticate(authorization);
  if (!claims.ok()) return claims;
  if (claims->role != auth::Role::kAdmin) {
    return absl::PermissionDeniedError("admin role required");
  }
  return claims;
}

}  // namespace courtpiece::gateway
