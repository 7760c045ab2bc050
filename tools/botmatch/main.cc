// courtpiece-botmatch: duplicate matches between two bot levels (docs/bots.md).
//   courtpiece-botmatch --rules '{"game":"piles"}' --a strong --b easy --deals 1000
//       [--games 0|1] [--seed N] [--threads N] [--a-samples N] [--a-nodes N] [--b-samples N]
//       [--b-nodes N]
//       [--a-count-at-end 0|1] [--b-count-at-end 0|1]
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "match.h"
#include "replay.h"

namespace {

using courtpiece::botmatch::MatchConfig;

int Usage(const std::string& why) {
  std::fprintf(
      stderr,
      "%s\nusage: courtpiece-botmatch --rules JSON --a LEVEL --b LEVEL --deals N "
      "[--games 0|1] [--seed N] [--threads N] [--a-samples N] [--a-nodes N] [--b-samples N] "
      "[--b-nodes N] [--a-count-at-end 0|1] [--b-count-at-end 0|1]\n"
      "  LEVEL: easy, normal or strong\n"
      "  --games 1: each of the N deals is a whole game to the target, played twice\n",
      why.c_str());
  return 2;
}

bool Number(const std::string& text, int64_t lo, int64_t hi, int64_t* out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 18) {
    return false;
  }
  *out = std::stoll(text);
  return *out >= lo && *out <= hi;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 1; i < argc; i += 2) {
    const std::string name = argv[i];
    if (name.rfind("--", 0) != 0 || i + 1 >= argc) return Usage("bad argument " + name);
    flags[name.substr(2)] = argv[i + 1];
  }
  for (const auto& [k, v] : flags) {
    static const char* kKnown[] = {
        "rules",     "a",       "b",         "deals",   "seed",           "threads",       "games",
        "a-samples", "a-nodes", "b-samples", "b-nodes", "a-count-at-end", "b-count-at-end"};
    bool known = false;
    for (const char* n : kKnown) known |= k == n;
    if (!known) return Usage("unknown flag --" + k);
  }
  MatchConfig c;
  auto j = courtpiece::rules_cli::Json::parse(flags.count("rules") ? flags["rules"] : "", nullptr,
                                              false);
  auto options = courtpiece::rules_cli::OptionsFromJson(j);
  if (!options) return Usage("--rules must be a JSON object such as {\"game\":\"piles\"}");
  auto rules = courtpiece::rules::ParseRules(*options);
  if (!rules.ok()) return Usage(std::string(rules.status().message()));
  c.rules = *rules;
  for (const char* side : {"a", "b"}) {
    auto level = courtpiece::bots::ParseLevel(flags[side]);
    if (!level.ok())
      return Usage(std::string("--") + side + ": " + std::string(level.status().message()));
    courtpiece::bots::SearchOptions o = courtpiece::bots::LevelOptions(*level);
    int64_t v = 0;
    const std::string s = side;
    if (flags.count(s + "-samples")) {
      if (!Number(flags[s + "-samples"], 1, 10'000, &v)) return Usage("bad --" + s + "-samples");
      o.samples = static_cast<int>(v);
    }
    if (flags.count(s + "-nodes")) {
      if (!Number(flags[s + "-nodes"], 1, 1'000'000'000, &v)) return Usage("bad --" + s + "-nodes");
      o.node_budget = v;
    }
    if (flags.count(s + "-count-at-end")) {
      if (!Number(flags[s + "-count-at-end"], 0, 1, &v)) {
        return Usage("bad --" + s + "-count-at-end (0 or 1)");
      }
      o.count_at_end = v == 1;
    }
    (s == "a" ? c.a : c.b) = o;
  }
  int64_t v = 0;
  if (!Number(flags["deals"], 1, 10'000'000, &v)) return Usage("--deals takes 1..10000000");
  c.deals = static_cast<int>(v);
  if (flags.count("seed")) {
    if (!Number(flags["seed"], 0, INT64_MAX, &v)) return Usage("--seed takes digits");
    c.seed = static_cast<uint64_t>(v);
  }
  if (flags.count("games")) {
    if (!Number(flags["games"], 0, 1, &v)) return Usage("--games takes 0 or 1");
    c.games = v == 1;
  }
  c.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (flags.count("threads")) {
    if (!Number(flags["threads"], 1, 256, &v)) return Usage("--threads takes 1..256");
    c.threads = static_cast<int>(v);
  }
  const auto result = courtpiece::botmatch::RunMatch(c);
  std::fputs(courtpiece::botmatch::Report(c, result).c_str(), stdout);
  return 0;
}
