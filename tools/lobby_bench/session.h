// What the modes share: a guest sign-in, a classic CreateTable, a call context with the
// deadline and the token, and a per-client table of tokens signed in once in Prepare().
// Thread-safety: SignInGuest and NewContext are thread-safe; ClientTokens is filled in
// Prepare() and only read afterwards (from many threads).
#ifndef COURTPIECE_TOOLS_LOBBY_BENCH_SESSION_H_
#define COURTPIECE_TOOLS_LOBBY_BENCH_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "courtpiece/lobby/v1/lobby.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "tools/lobby_bench/bench.h"

namespace courtpiece::lobby_bench {

// A context whose deadline is now + options.call_deadline; with `authorization: Bearer
// <access_token>` when the token is not empty.
std::unique_ptr<grpc::ClientContext> NewContext(const BenchOptions& options,
                                                const std::string& access_token = "");

// GuestLogin with `device` (32..128 chars of [A-Za-z0-9_-]); the session, or the call's status.
absl::StatusOr<lobby::v1::Session> SignInGuest(lobby::v1::Accounts::Stub& accounts,
                                               const BenchOptions& options,
                                               const std::string& device,
                                               const std::string& display_name);

// Directory.CreateTable of a private classic table (bet 100, 15 s turns) as the token's
// player, with `request_id` (1..64 chars of [A-Za-z0-9_-]).
absl::StatusOr<lobby::v1::TableRef> CreateClassicTable(lobby::v1::Directory::Stub& directory,
                                                       const BenchOptions& options,
                                                       const std::string& access_token,
                                                       const std::string& request_id);

// A device secret for the run `run` (unique per run, client and n).
std::string BenchDevice(const std::string& run, int client, int64_t n, char fill);

// One new guest per client, signed in once; the modes that call as a player use these.
class ClientTokens {
 public:
  // Signs options.clients new guests in (sequentially); the first failure stops it.
  absl::Status SignIn(const BenchOptions& options,
                      const std::vector<std::shared_ptr<grpc::Channel>>& channels,
                      const std::string& run);
  const std::string& of(int client) const { return tokens_[static_cast<size_t>(client)]; }

 private:
  std::vector<std::string> tokens_;
};

// A well-mixed 64-bit hash of (client, iteration): a per-call random choice with no shared
// state between threads.
uint64_t MixCall(int client, int64_t iteration);

}  // namespace courtpiece::lobby_bench

#endif  // COURTPIECE_TOOLS_LOBBY_BENCH_SESSION_H_
