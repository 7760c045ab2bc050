// The tablesim's scenario: read and validated at the input boundary (ReadScenario), then run
// (RunScenario). Every bad input is an InvalidArgument naming the field; nothing in here
// asserts on input, and a scenario that reads OK runs without aborting (docs/tablesim.md).
// Thread-safety: none needed (pure functions over their arguments).
#ifndef COURTPIECE_TOOLS_TABLESIM_SCENARIO_H_
#define COURTPIECE_TOOLS_TABLESIM_SCENARIO_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "courtpiece/table/table.h"
#include "courtpiece/table/testing.h"

namespace courtpiece::tablesim {

// Limits of a scenario (virtual time, sizes): beyond them a scenario is refused.
inline constexpr int64_t kMaxScenarioMs = 86'400'000;  // 24 h of virtual time
inline constexpr int64_t kMaxCoins = 1'000'000'000'000;
inline constexpr int64_t kMaxDurationMs = 1'000'000;  // voice_sent's duration_ms field
inline constexpr size_t kMaxCommands = 100'000;
inline constexpr size_t kMaxWalletReplies = 10'000;
inline constexpr size_t kMaxStringBytes = 256;

struct Step {
  int64_t at_ms = 0;
  bool auto_move = false;      // "auto": the bot's move for whoever is to act
  table::Command command;      // the command (not for "auto")
  int64_t join_balance_coins;  // "join": the player's starting balance
  nlohmann::json echo;         // the command as written, printed with its status
};

struct Scenario {
  table::TableOptions options;
  bool fake_engine = false;
  std::string master_seed = "seed";
  int64_t host_balance_coins = 100'000;
  std::map<std::string, int64_t> balances_coins;  // by player
  std::vector<table::TableHarness::Reply> wallet;
  std::vector<Step> steps;
  int64_t run_until_ms = 0;
};

// Parses and checks everything (types, ranges, time order, the game options against the
// engine). Errors are InvalidArgument with a message naming the field and the bad value.
absl::StatusOr<Scenario> ReadScenario(std::string_view text);

// Runs a scenario that ReadScenario accepted, printing JSON lines to `out`.
void RunScenario(const Scenario& scenario, std::ostream& out);

// The whole tool: reads `text`, runs it to `out`; a bad scenario prints
// "courtpiece-tablesim: <message>" to `err`. Returns the exit status (0 ran, 2 bad scenario).
int RunTablesim(std::string_view text, std::ostream& out, std::ostream& err);

}  // namespace courtpiece::tablesim

#endif  // COURTPIECE_TOOLS_TABLESIM_SCENARIO_H_
