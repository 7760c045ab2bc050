// Iteration counts of heavy randomized tests (property tests, bot-vs-random games).
//
// A test asks for its full count; when COURTPIECE_TEST_SCALE_DIVISOR is set to an integer
// d >= 1, it runs full / d iterations (at least 1). tests/run.sh sets it for the sanitizer
// pass only, where instrumentation makes every iteration many times slower; the normal
// build always runs the full counts the issues ask for. Bad values are ignored (full count).
// Thread-safety: reads the environment; call from the test's main thread.
#ifndef COURTPIECE_COMMON_TEST_SCALE_H_
#define COURTPIECE_COMMON_TEST_SCALE_H_

#include <cstdlib>

namespace courtpiece {

inline int ScaledIterations(int full) {
  const char* text = std::getenv("COURTPIECE_TEST_SCALE_DIVISOR");
  if (text == nullptr) return full;
  char* end = nullptr;
  const long divisor = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || divisor < 1 || divisor > 1'000'000) return full;
  const int scaled = static_cast<int>(full / divisor);
  return scaled < 1 ? 1 : scaled;
}

}  // namespace courtpiece

#endif  // COURTPIECE_COMMON_TEST_SCALE_H_
