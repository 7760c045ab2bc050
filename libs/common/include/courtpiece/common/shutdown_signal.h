// Waiting for SIGTERM / SIGINT (docker stop, Kubernetes, Ctrl-C) without races.
//
//   int main() {
//     ShutdownSignal& signal = ShutdownSignal::Install();   // first thing in main
//     ... start servers ...
//     int signo = signal.Wait();                            // blocks the main thread
//     server->Shutdown(absl::Now() + absl::Seconds(10));
//   }
//
// Install() sets SIGTERM and SIGINT handlers that write the signal number to a self-pipe
// (async-signal-safe); Wait() reads it. Any thread may receive the signal, so no signal mask
// is needed. Each signal (or Notify()) wakes exactly one Wait(). Tests raise the signal with
// raise(SIGTERM) or kill(getpid(), SIGTERM) after Install().
// Thread-safety: all methods are safe from any thread; the instance lives for the process.
#ifndef COURTPIECE_COMMON_SHUTDOWN_SIGNAL_H_
#define COURTPIECE_COMMON_SHUTDOWN_SIGNAL_H_

#include <optional>

#include "absl/time/time.h"

namespace courtpiece::common {

class ShutdownSignal {
 public:
  // Installs the handlers once (later calls return the same instance).
  static ShutdownSignal& Install();

  // Blocks until a signal or a Notify(); returns the signal number (0 for Notify()).
  int Wait();
  // Like Wait(), but gives up after `timeout` and returns nullopt.
  std::optional<int> WaitFor(absl::Duration timeout);
  // Wakes one Wait() as if a signal had come, with number 0 (e.g. a shutdown RPC).
  void Notify();

  ShutdownSignal(const ShutdownSignal&) = delete;
  ShutdownSignal& operator=(const ShutdownSignal&) = delete;

 private:
  ShutdownSignal();
  int read_fd_ = -1;
};

// ShutdownSignal::Install().Wait().
int WaitForShutdownSignal();

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_SHUTDOWN_SIGNAL_H_
