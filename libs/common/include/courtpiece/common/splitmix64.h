// SplitMix64: a tiny, fast, seedable generator for policies, benchmarks and tests.
// NOT for anything a player could exploit: the rules' randomness (deals) comes only from
// the round seed's ChaCha20 stream (libs/rules/deal.h).
// Thread-safety: none; one instance per thread.
#ifndef COURTPIECE_COMMON_SPLITMIX64_H_
#define COURTPIECE_COMMON_SPLITMIX64_H_

#include <cstdint>

namespace courtpiece {

struct SplitMix64 {
  uint64_t state;

  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // A value in [0, n), n >= 1, by multiply-shift of the high 32 bits (no division).
  int Below(int n) { return static_cast<int>(((Next() >> 32) * uint64_t(n)) >> 32); }
};

}  // namespace courtpiece

#endif  // COURTPIECE_COMMON_SPLITMIX64_H_
