#include "courtpiece/auth/token_caller_auth.h"

#include <string_view>

namespace courtpiece::auth {

absl::StatusOr<Caller> TokenCallerAuth::Authenticate(const grpc::ServerContextBase& context) const {
  const auto& md = context.client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) return absl::UnauthenticatedError("no session token (authorization header)");
  if (md.count("authorization") > 1) {
    return absl::UnauthenticatedError("more than one authorization header");
  }
  return AuthenticateHeader(std::string_view(it->second.data(), it->second.size()));
}

absl::StatusOr<Caller> TokenCallerAuth::AuthenticateHeader(std::string_view authorization) const {
  absl::StatusOr<std::string_view> token = BearerToken(authorization);
  if (!token.ok()) return token.status();
  absl::StatusOr<Claims> claims = verifier_.Verify(*token);
  if (!claims.ok()) return claims.status();
  return Caller{.player_id = claims->player_id, .admin = claims->role == Role::kAdmin};
}

}  // namespace courtpiece::auth
