// Round seeds for live tables: 32 bytes from libsodium's CSPRNG (randombytes_buf), which
// reads the kernel's generator (getrandom). The draw index is ignored: every draw is fresh,
// unpredictable and never repeated (tests and the tablesim use DeterministicSeedSource).
// sodium_init runs once per process, on the first construction; a failure there aborts
// (no safe seed can be made).
// Thread-safety: Draw is safe from any thread.
#ifndef COURTPIECE_SERVICES_TABLE_SEED_SOURCE_H_
#define COURTPIECE_SERVICES_TABLE_SEED_SOURCE_H_

#include <cstdint>

#include "courtpiece/table/table.h"

namespace courtpiece::table_service {

class CsprngSeedSource final : public table::SeedSource {
 public:
  CsprngSeedSource();
  table::Seed Draw(uint64_t draw_index) override;
};

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_SEED_SOURCE_H_
