// Helpers shared by the table's scenario tests: the standard options and views of the
// effects a TableHarness collected. Test-only.
#ifndef COURTPIECE_TABLE_SRC_TABLE_TEST_HELPERS_H_
#define COURTPIECE_TABLE_SRC_TABLE_TEST_HELPERS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "courtpiece/table/table.h"
#include "courtpiece/table/testing.h"
#include "gtest/gtest.h"
#include "scripted_engine_for_test.h"

namespace courtpiece::table::test {

using Legs = std::map<std::string, int64_t>;

// Table "t1" hosted by "host", 100 coins a seat, 10 s turns, the scripted engine's game.
inline TableOptions Opts() {
  return {.table_id = "t1",
          .host_player = "host",
          .bet_coins = 100,
          .turn_time_ms = 10'000,
          .game_options = ""};
}

// A transfer's legs summed per account.
inline Legs LegsOf(const Transfer& t) {
  Legs m;
  for (const TransferLeg& l : t.legs) m[l.account] += l.amount_coins;
  return m;
}

// Every transfer effect of one step, in order.
inline std::vector<Transfer> Transfers(const TableHarness& h, TransferStep step) {
  std::vector<Transfer> out;
  for (const Effect& f : h.effects) {
    if (f.type == EffectType::kTransfer && f.transfer.step == step) out.push_back(f.transfer);
  }
  return out;
}

// A table of Opts() with the scripted engine: FourPeopleFirstRound() seats host (0), a (2),
// b (1) and c (3); the game auto-starts and its first round is dealt.
class FourPeopleTable : public ::testing::Test {
 protected:
  FourPeopleTable() : h(Opts(), "seed", &engines) {}
  void FourPeopleFirstRound() {
    ASSERT_TRUE(h.Join("a").ok());
    ASSERT_TRUE(h.Join("b").ok());
    ASSERT_TRUE(h.Join("c").ok());
    h.Run(kAutoStartMs);
    h.Run(kCountInMs);
    ASSERT_EQ(h.table().phase(), Phase::kPlaying);
  }
  ScriptedFactory engines;
  TableHarness h;
};

}  // namespace courtpiece::table::test

#endif  // COURTPIECE_TABLE_SRC_TABLE_TEST_HELPERS_H_
