// Duplicate bot matches (courtpiece-botmatch): every deal is played twice from the same
// round seed and dealer, side A on team 0 then on team 1, so the cards' luck cancels.
// A deal half is one round (a stack round is a whole game), or with `games` a whole game to
// the target: game i starts with dealer i mod 4 and its round k is dealt from the same seed
// in both halves (docs/bots.md).
// Thread-safety: RunMatch starts its own threads and shares nothing with the caller.
#ifndef COURTPIECE_TOOLS_BOTMATCH_MATCH_H_
#define COURTPIECE_TOOLS_BOTMATCH_MATCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "courtpiece/bots/search_bot.h"
#include "courtpiece/rules/rules.h"

namespace courtpiece::botmatch {

struct MatchConfig {
  rules::Rules rules;
  bots::SearchOptions a;  // seeds are derived per deal from `seed`
  bots::SearchOptions b;
  int deals = 100;  // rounds, or games with `games`
  uint64_t seed = 1;
  int threads = 1;
  bool games = false;  // each half a whole game to rules.target, not one round
};

// A game that runs this many rounds is a programmer error (a classic game to 100 takes at
// most 199 rounds).
inline constexpr int kGameRoundsMax = 1000;

struct DealResult {
  // Per half (0: A is team 0; 1: A is team 1): 1 A won, 0 B won, 0.5 a draw.
  double score_a[2] = {0, 0};
  // A's points minus B's: one round's game points signed (+ when A won); with `games`,
  // the final score's difference.
  int points_a[2] = {0, 0};
  int rounds[2] = {1, 1};  // rounds played in the half
};

struct SideTimes {
  std::vector<float> decision_ms;  // every decision of the side: its thread's CPU time
  std::vector<float> wall_ms;      // the same decisions' wall-clock time
  int64_t searched = 0;
  int64_t nodes = 0;
  double search_ms = 0;  // CPU time of the searched decisions
};

struct MatchResult {
  std::vector<DealResult> deals;
  SideTimes a, b;
};

MatchResult RunMatch(const MatchConfig& config);

struct Interval {
  double mean = 0, low = 0, high = 0;
};
// Mean of per-deal values with a 95% normal-approximation interval (1.96 standard errors
// of the mean of the per-deal values: the two halves of a deal are paired).
Interval MeanInterval(const std::vector<double>& per_deal);
// Nearest-rank percentile (p in 0..100) of the values; 0 for none.
double Percentile(std::vector<float> values, double p);

std::string Report(const MatchConfig& config, const MatchResult& result);

}  // namespace courtpiece::botmatch

#endif  // COURTPIECE_TOOLS_BOTMATCH_MATCH_H_
