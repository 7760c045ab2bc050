#include "services/table/seed_source.h"

#include <sodium.h>

#include <cstdio>
#include <cstdlib>

namespace courtpiece::table_service {
namespace {

void InitSodiumOnce() {
  static const bool initialized = [] {
    if (sodium_init() < 0) {
      std::fputs("sodium_init failed: no CSPRNG for round seeds\n", stderr);
      std::abort();
    }
    return true;
  }();
  (void)initialized;
}

}  // namespace

CsprngSeedSource::CsprngSeedSource() { InitSodiumOnce(); }

table::Seed CsprngSeedSource::Draw(uint64_t /*draw_index*/) {
  table::Seed seed{};
  randombytes_buf(seed.data(), seed.size());
  return seed;
}

}  // namespace courtpiece::table_service
