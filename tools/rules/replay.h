// The JSON side of `courtpiece-rules` (REPLAY.md): replay, per-seat view, deal, selfplay.
// Pure functions from input text to output JSON + exit status, so tests and the fuzz
// target call them without a process.
// Thread-safety: no shared state.
#ifndef COURTPIECE_TOOLS_RULES_REPLAY_H_
#define COURTPIECE_TOOLS_RULES_REPLAY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "courtpiece/rules/round.h"
#include "nlohmann/json.hpp"

namespace courtpiece::rules_cli {

using Json = nlohmann::ordered_json;

struct CliOutput {
  Json json;
  int exit_code = 0;  // 0 ok, 1 illegal move, 2 bad input / rules / deal or usage
};

// `replay` (view_seat empty) or `replay --view SEAT`.
CliOutput Replay(const std::string& input, std::optional<int> view_seat);
// `replay [--view SEAT]` from its arguments: bad arguments are a JSON bad_input error
// (exit 2) like any other refused input, so stdout is always one JSON document. The input
// is read (read_input) only once the arguments are good.
CliOutput ReplayCommand(const std::vector<std::string>& args,
                        const std::function<std::string()>& read_input);

// Options map from a JSON object (for --rules); nullopt if `j` is not an object.
std::optional<rules::OptionMap> OptionsFromJson(const Json& j);
Json OptionsToJson(const rules::OptionMap& options);
Json MoveToJson(const rules::Move& m);
// The hands of a round as replay strings, first packet first.
Json HandsToJson(const rules::Round& round);

// The text of `courtpiece-rules --help` (stdout, exit 0): the commands, their flags, and
// the decisions a caller of the tool must know (options of another game type are refused).
std::string HelpText();

// `deal --seed HEX [--trump S | --hide 7S] [--caller N] [--rules JSON]`.
CliOutput DealCommand(const std::vector<std::string>& args);
// selfplay's "deal_stats" (--deal-stats on) from a histogram: hist[k] = checked rounds
// (the fairness check applied) with k reshuffles. checked_rounds, reshuffled_rounds,
// reshuffles (total), mean, nearest-rank p50/p90/p99, max and capped (at kMaxReshuffles).
Json DealStatsJson(const std::vector<long long>& hist);
// `selfplay --rules JSON --rounds N --seed HEX [--policy random|bot] [--jsonl FILE]
// [--threads N] [--deal-stats on]`.
CliOutput SelfplayCommand(const std::vector<std::string>& args);

}  // namespace courtpiece::rules_cli

#endif  // COURTPIECE_TOOLS_RULES_REPLAY_H_
