// courtpiece-lobby-bench --mode=login|resolve|create|record --clients=N --seconds=S
//     --addr=HOST:PORT
// Closed-loop load against a running lobby (bench.h); prints one summary line:
//   mode=login clients=32 seconds=10.0 calls=12345 calls_per_s=1234.5 p50_ms=.. p99_ms=..
// plus errors by code. Exit 0 when every call succeeded, 1 when any failed, 2 bad flags.
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/synchronization/mutex.h"
#include "tools/lobby_bench/bench.h"

ABSL_FLAG(std::string, mode, "login", "what to call: login, resolve, create or record (bench.h)");
ABSL_FLAG(std::string, addr, "127.0.0.1:7001", "lobby gRPC address");
ABSL_FLAG(int, clients, 16, "concurrent clients (threads), each calling back to back");
ABSL_FLAG(int, seconds, 10, "run time");
ABSL_FLAG(int, channels, 4, "gRPC connections the clients share");
ABSL_FLAG(int, deadline_ms, 5000, "deadline of each call");
ABSL_FLAG(bool, login_new_devices, true,
          "login: a new device per call (sign-up); false: known devices (sign-in again)");
ABSL_FLAG(int, resolve_tables, 1000, "resolve: tables created first, whose codes are resolved");
ABSL_FLAG(bool, async, false,
          "the same closed loop on gRPC's callback API, one call in flight per client and no "
          "thread per client (resolve only)");

int main(int argc, char** argv) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);  // docs/services.md
  absl::ParseCommandLine(argc, argv);
  courtpiece::lobby_bench::BenchOptions options{
      .mode = absl::GetFlag(FLAGS_mode),
      .addr = absl::GetFlag(FLAGS_addr),
      .clients = absl::GetFlag(FLAGS_clients),
      .duration = absl::Seconds(absl::GetFlag(FLAGS_seconds)),
      .call_deadline = absl::Milliseconds(absl::GetFlag(FLAGS_deadline_ms)),
      .channels = absl::GetFlag(FLAGS_channels),
      .login_new_devices = absl::GetFlag(FLAGS_login_new_devices),
      .resolve_tables = absl::GetFlag(FLAGS_resolve_tables),
      .async = absl::GetFlag(FLAGS_async)};
  if (options.clients < 1 || options.clients > 4096 || absl::GetFlag(FLAGS_seconds) < 1 ||
      options.channels < 1 || options.channels > 64 || absl::GetFlag(FLAGS_deadline_ms) < 1 ||
      options.resolve_tables < 1 || options.resolve_tables > 100'000) {
    std::fprintf(stderr,
                 "courtpiece-lobby-bench: bad flags (clients 1..4096, seconds >= 1, "
                 "channels 1..64, deadline_ms >= 1, resolve_tables 1..100000)\n");
    return 2;
  }
  absl::StatusOr<courtpiece::lobby_bench::BenchReport> report =
      courtpiece::lobby_bench::RunBench(options);
  if (!report.ok()) {
    std::fprintf(stderr, "courtpiece-lobby-bench: %s\n", report.status().ToString().c_str());
    return report.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::printf(
      "mode=%s clients=%d seconds=%.1f calls=%lld calls_per_s=%.1f p50_ms=%.2f p99_ms=%.2f "
      "max_ms=%.2f\n",
      options.mode.c_str(), options.clients, report->seconds,
      static_cast<long long>(report->calls_ok), report->calls_ok / report->seconds, report->p50_ms,
      report->p99_ms, report->max_ms);
  int64_t errors = 0;
  for (const auto& [code, n] : report->errors) {
    std::printf("errors code=%s count=%lld\n", code.c_str(), static_cast<long long>(n));
    errors += n;
  }
  if (errors > 0) std::printf("first_error=%s\n", report->first_error.c_str());
  return errors > 0 ? 1 : 0;
}
