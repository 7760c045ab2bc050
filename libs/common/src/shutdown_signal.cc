#include "courtpiece/common/shutdown_signal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "absl/time/clock.h"
#include "courtpiece/common/check.h"

namespace courtpiece::common {
namespace {

// Written by the handler: a plain int is fine, it is set once before handlers exist.
int g_write_fd = -1;

void OnSignal(int signo) {
  const int saved_errno = errno;
  const uint8_t byte = static_cast<uint8_t>(signo);
  // Non-blocking: if the pipe is full, enough wake-ups are already queued.
  [[maybe_unused]] ssize_t n = write(g_write_fd, &byte, 1);
  errno = saved_errno;
}

}  // namespace

ShutdownSignal::ShutdownSignal() {
  int fds[2];
  // Both ends non-blocking: the handler must never block, and a waiter that loses the race
  // for a byte goes back to poll().
  COURTPIECE_CHECK(pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0, "pipe2 failed");
  read_fd_ = fds[0];
  g_write_fd = fds[1];
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  COURTPIECE_CHECK(sigaction(SIGTERM, &action, nullptr) == 0, "sigaction(SIGTERM) failed");
  COURTPIECE_CHECK(sigaction(SIGINT, &action, nullptr) == 0, "sigaction(SIGINT) failed");
}

ShutdownSignal& ShutdownSignal::Install() {
  static ShutdownSignal* instance = new ShutdownSignal();  // never destroyed: handlers use it
  return *instance;
}

std::optional<int> ShutdownSignal::WaitFor(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    int timeout_ms = -1;
    if (timeout != absl::InfiniteDuration()) {
      timeout_ms = static_cast<int>(
          absl::ToInt64Milliseconds(left < absl::ZeroDuration() ? absl::ZeroDuration() : left));
    }
    pollfd pfd = {read_fd_, POLLIN, 0};
    const int ready = poll(&pfd, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    COURTPIECE_CHECK(ready >= 0, "poll on the shutdown pipe failed");
    if (ready == 0) return std::nullopt;
    uint8_t byte = 0;
    const ssize_t n = read(read_fd_, &byte, 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;  // another waiter took it
    COURTPIECE_CHECK(n == 1, "read on the shutdown pipe failed");
    return static_cast<int>(byte);
  }
}

int ShutdownSignal::Wait() { return *WaitFor(absl::InfiniteDuration()); }

void ShutdownSignal::Notify() { OnSignal(0); }

int WaitForShutdownSignal() { return ShutdownSignal::Install().Wait(); }

}  // namespace courtpiece::common
