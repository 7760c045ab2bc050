// Who is calling an RPC. The lobby's services (but Accounts.GuestLogin/Refresh) and the
// moderation service's VoiceNotes and ModerationAdmin ask this first; the real
// implementation (token_caller_auth.h) verifies the session token in the metadata
// `authorization: Bearer <token>` with the public keys alone.
//
// Contract: Authenticate returns the caller, or UNAUTHENTICATED (no token, a malformed,
// forged or expired one) with a message saying which. RequireAdmin adds PERMISSION_DENIED
// "not_admin: ..." (moderation.proto's reason word) for a valid token without the admin
// role.
// Thread-safety: implementations are thread-safe.
#ifndef COURTPIECE_AUTH_CALLER_AUTH_H_
#define COURTPIECE_AUTH_CALLER_AUTH_H_

#include <grpcpp/server_context.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace courtpiece::auth {

struct Caller {
  std::string player_id;
  bool admin = false;
};

class CallerAuth {
 public:
  virtual ~CallerAuth() = default;
  virtual absl::StatusOr<Caller> Authenticate(const grpc::ServerContextBase& context) const = 0;

  absl::StatusOr<Caller> RequireAdmin(const grpc::ServerContextBase& context) const {
    absl::StatusOr<Caller> caller = Authenticate(context);
    if (caller.ok() && !caller->admin) {
      return absl::PermissionDeniedError("not_admin: this call needs the admin role");
    }
    return caller;
  }
};

// For unit tests of the servers above: trusts the metadata `courtpiece-test-player` (and
// `courtpiece-test-admin: 1`). Never wired into a binary.
class FakeCallerAuth final : public CallerAuth {
 public:
  absl::StatusOr<Caller> Authenticate(const grpc::ServerContextBase& context) const override {
    const auto& md = context.client_metadata();
    auto it = md.find("courtpiece-test-player");
    if (it == md.end() || it->second.empty()) {
      return absl::UnauthenticatedError("no session token");
    }
    Caller caller{.player_id = std::string(it->second.data(), it->second.size())};
    auto admin = md.find("courtpiece-test-admin");
    caller.admin = admin != md.end() && admin->second == "1";
    return caller;
  }
};

}  // namespace courtpiece::auth

#endif  // COURTPIECE_AUTH_CALLER_AUTH_H_
