#include "services/table/seed_source.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace courtpiece::table_service {
namespace {

TEST(CsprngSeedSourceTest, DrawsAreThirtyTwoFreshBytes) {
  CsprngSeedSource source;
  const table::Seed first = source.Draw(0);
  const table::Seed second = source.Draw(0);  // the same index: still a fresh draw
  static_assert(std::tuple_size_v<table::Seed> == 32);
  EXPECT_NE(first, second);
  EXPECT_FALSE(std::all_of(first.begin(), first.end(), [](uint8_t b) { return b == 0; }));
  EXPECT_FALSE(std::all_of(second.begin(), second.end(), [](uint8_t b) { return b == 0; }));
  CsprngSeedSource another;  // sodium_init only once; a second source draws on
  EXPECT_NE(another.Draw(1), first);
}

}  // namespace
}  // namespace courtpiece::table_service
