// TokenCallerAuth: the real CallerAuth (caller_auth.h). Reads the metadata
// `authorization: Bearer <token>` and verifies the token with TokenVerifier (public
// keys only, no store, no network). UNAUTHENTICATED when the header is missing, not
// "Bearer <token>", or the token is malformed, forged, signed by an unknown key or expired
// (the message says which); admin = the token's role is admin.
// Thread-safety: thread-safe (the verifier is immutable).
#ifndef COURTPIECE_AUTH_TOKEN_CALLER_AUTH_H_
#define COURTPIECE_AUTH_TOKEN_CALLER_AUTH_H_

#include "courtpiece/auth/caller_auth.h"
#include "courtpiece/auth/token.h"

namespace courtpiece::auth {

class TokenCallerAuth final : public CallerAuth {
 public:
  // `verifier` must outlive this object.
  explicit TokenCallerAuth(const TokenVerifier& verifier) : verifier_(verifier) {}

  absl::StatusOr<Caller> Authenticate(const grpc::ServerContextBase& context) const override;
  // The same from the header's value (for callers without a ServerContext, and tests).
  absl::StatusOr<Caller> AuthenticateHeader(std::string_view authorization) const;

 private:
  const TokenVerifier& verifier_;
};

}  // namespace courtpiece::auth

#endif  // COURTPIECE_AUTH_TOKEN_CALLER_AUTH_H_
