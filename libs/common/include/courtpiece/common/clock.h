// The time source. Everything that reads the time takes a Clock& in its constructor, so
// tests drive time with FakeClock and never sleep.
//
// Thread-safety: RealClock is stateless and safe; FakeClock is safe (guarded by a mutex).
#ifndef COURTPIECE_COMMON_CLOCK_H_
#define COURTPIECE_COMMON_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
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
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration by) {
    absl::MutexLock lock(&mu_);
    now_ += by;
  }
  void Set(absl::Time to) {
    absl::MutexLock lock(&mu_);
    now_ = to;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace courtpiece

#endif  // COURTPIECE_COMMON_CLOCK_H_
