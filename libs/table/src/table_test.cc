#include "courtpiece/table/table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "courtpiece/table/testing.h"

namespace courtpiece::table {
namespace {

TableOptions Opts(std::string game = "target=1") {
  return {.table_id = "t1", .host_player = "host", .bet_coins = 100, .turn_time_ms = 10'000,
          .game_options = std::move(game)};
}

TEST(TableTest, SeatingOrder) {
  TableHarness h(Opts());
  ASSERT_TRUE(h.Join("a").ok());
  ASSERT_TRUE(h.Join("b").ok());
  ASSERT_TRUE(h.Join("c").ok());
  EXPECT_EQ(h.table().seat(0).player, "host");
  EXPECT_EQ(h.table().seat(2).player, "a");
  EXPECT_EQ(h.table().seat(1).player, "b");
  EXPECT_EQ(h.table().seat(3).player, "c");
}

}  // namespace
}  // namespace courtpiece::table
