// COURTPIECE_CHECK(cond, "why"): a programmer-error assertion that stays on in release builds.
// On failure it prints file:line, the condition and the reason to stderr, then aborts.
// Never use it on input (house rule 2): input errors are absl::Status values.
// Thread-safety: no state.
#ifndef COURTPIECE_COMMON_CHECK_H_
#define COURTPIECE_COMMON_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define COURTPIECE_CHECK(cond, reason)                                                           \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s (%s)\n", __FILE__, __LINE__, #cond, reason); \
      std::abort();                                                                              \
    }                                                                                            \
  } while (0)

#endif  // COURTPIECE_COMMON_CHECK_H_
