// courtpiece-lobby-bench: closed-loop load against a running lobby. Each of --clients
// threads calls its mode's Call() back to back for --seconds; the tool prints calls/s, the
// p50/p99/max latency of a call and the errors by code. With --async (modes that have
// StartCall), the same closed loop without a thread per client: each client has one call in
// flight on gRPC's callback API and starts its next when the answer comes, so the load
// generator costs the machine less of the CPU it shares with the lobby.
//
// Modes: a mode is one kind of call: login (GuestLogin), resolve (Directory.ResolveCode),
// create (Directory.CreateTable), record (LobbyRecords.RecordGame). To add one: implement BenchMode
// in <name>_mode.cc and register its factory in Modes() (bench.cc). A mode's Prepare() runs once
// before the clock starts (sign players in, create tables to resolve, ...); Call() must be safe
// from many threads at once for different `client` indexes. Thread-safety: see above; the runner
// owns the threads.
#ifndef COURTPIECE_TOOLS_LOBBY_BENCH_BENCH_H_
#define COURTPIECE_TOOLS_LOBBY_BENCH_BENCH_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"

namespace courtpiece::lobby_bench {

struct BenchOptions {
  std::string mode;
  std::string addr;
  int clients = 16;
  absl::Duration duration = absl::Seconds(10);
  absl::Duration call_deadline = absl::Seconds(5);
  int channels = 4;               // gRPC connections shared round-robin by the clients
  bool login_new_devices = true;  // login: every call a new device (sign-up) or a known one
  int resolve_tables = 1000;      // resolve: tables created in Prepare(), codes resolved at random
  bool async = false;             // closed loop on the callback API (modes with StartCall)
};

class BenchMode {
 public:
  virtual ~BenchMode() = default;
  // Once, before the clock starts. Any error stops the run.
  virtual absl::Status Prepare() { return absl::OkStatus(); }
  // One call by client `client` (0..clients-1); its status is counted by code.
  virtual absl::Status Call(int client, int64_t iteration) = 0;
  // Whether StartCall is implemented (--async).
  virtual bool HasStartCall() const { return false; }
  // Starts the same call as Call() and returns; `done` runs once with its status, on a gRPC
  // thread (or on this one, for a call that fails at once). For one client, the runner
  // starts a call only after the last one's done. Only for modes whose HasStartCall is true.
  virtual void StartCall(int /*client*/, int64_t /*iteration*/,
                         absl::AnyInvocable<void(absl::Status) &&> done) {
    std::move(done)(absl::UnimplementedError("this mode has no --async"));
  }
};

using ModeFactory = std::function<std::unique_ptr<BenchMode>(
    const BenchOptions&, const std::vector<std::shared_ptr<grpc::Channel>>&)>;

// name -> factory.
const std::map<std::string, ModeFactory>& Modes();

// The modes.
std::unique_ptr<BenchMode> MakeLoginMode(
    const BenchOptions& options, const std::vector<std::shared_ptr<grpc::Channel>>& channels);
std::unique_ptr<BenchMode> MakeResolveMode(
    const BenchOptions& options, const std::vector<std::shared_ptr<grpc::Channel>>& channels);
std::unique_ptr<BenchMode> MakeCreateMode(
    const BenchOptions& options, const std::vector<std::shared_ptr<grpc::Channel>>& channels);
std::unique_ptr<BenchMode> MakeRecordMode(
    const BenchOptions& options, const std::vector<std::shared_ptr<grpc::Channel>>& channels);

struct BenchReport {
  int64_t calls_ok = 0;
  std::map<std::string, int64_t> errors;  // by status code name
  std::string first_error;
  double seconds = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
};

// Runs the mode: Prepare, then the closed loop. Returns the report, or Prepare's error.
absl::StatusOr<BenchReport> RunBench(const BenchOptions& options);

}  // namespace courtpiece::lobby_bench

#endif  // COURTPIECE_TOOLS_LOBBY_BENCH_BENCH_H_
