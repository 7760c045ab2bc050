// The time source. Everything that reads the time takes a Clock& in its constructor, so
// tests drive time with FakeClock and never sleep.
//
// Thread-safety: RealClock is stateless and safe; FakeClock is safe (guarded by a mutex).
#ifndef COURTPIECE_COMMON_CLOCK_H_
#define COURTPIECE_COMMON_CLOCK_H_

#include <mutex>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace courtpiece {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

// Wall-clock time.
class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  // The process-wide instance, for main.cc wiring.
  static RealClock& Instance() {
    static RealClock clock;
    return clock;
  }
};

// Time that moves only when told to.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}
  absl::Time Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  void Advance(absl::Duration by) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += by;
  }
  void Set(absl::Time to) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ = to;
  }

 private:
  // std::mutex, not absl::Mutex: Debian's Abseil is not TSan-instrumented.
  mutable std::mutex mu_;
  absl::Time now_;  // guarded by mu_
};

}  // namespace courtpiece

#endif  // COURTPIECE_COMMON_CLOCK_H_
