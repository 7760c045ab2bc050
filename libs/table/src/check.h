// Programmer-error checks that crash in every build type (house rule 2).
#ifndef COURTPIECE_TABLE_SRC_CHECK_H_
#define COURTPIECE_TABLE_SRC_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define TABLE_CHECK(cond)                                                                 \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: TABLE_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

#endif  // COURTPIECE_TABLE_SRC_CHECK_H_
