// The searching Court Piece bot: Perfect Information Monte Carlo. For a decision it draws
// deals of the unseen cards consistent with its seat's view (sampler.h), solves each with
// the double-dummy solver (solver.h) under the game type's scoring, and plays the move
// with the best average value. It sees only rules::SeatView, as the heuristic bot does:
// the full state is not reachable from this API.
//
// Levels: easy is the heuristic bot of bot.h, unchanged; normal and strong search with a
// node budget per decision (deterministic: the same view, options and seed give the same
// move on any machine, whatever its load). The call / hide (the seat knows five cards) is
// chosen by greedy rollouts of each candidate over random deals of the other 47 cards.
// The heuristic decides a single legal move, or when no consistent deal is drawn. Ties
// between moves go to the heuristic's choice.
// kTimeoutLevel is the fixed, fast level for a player whose turn timed out.
// Thread-safety: a SearchBot is not thread-safe (it owns its solver's table); use one per
// thread or per decision. ChooseMove(rules, view, options) is a pure function.
#ifndef COURTPIECE_BOTS_SEARCH_BOT_H_
#define COURTPIECE_BOTS_SEARCH_BOT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "courtpiece/bots/solver.h"
#include "courtpiece/rules/round.h"
#include "courtpiece/rules/rules.h"

namespace courtpiece::bots {

enum class Level : uint8_t { kEasy = 0, kNormal, kStrong };
inline constexpr Level kTimeoutLevel = Level::kNormal;

absl::string_view LevelName(Level level);
// "easy", "normal" or "strong"; InvalidArgument otherwise.
absl::StatusOr<Level> ParseLevel(absl::string_view name);

struct SearchOptions {
  Level level = Level::kNormal;
  uint64_t seed = 0;               // mixed with the decision's position in the round
  int samples = 12;                // deals drawn per decision
  int64_t node_budget = 48'000;    // solver nodes per decision, split evenly over the samples
  int tt_entries_log2 = 12;        // the solver's table: 2^this entries of 16 bytes
  int sample_tries_max = 16;       // draws per sample before it is given up
  bool rollout_at_horizon = true;  // SolverLimits::rollout_at_horizon
  bool count_at_end = false;       // SolverLimits::count_at_end
  int call_samples = 16;           // deals for the call / hide (0: the heuristic calls)
};
// The presets of each level (easy: search fields unused).
SearchOptions LevelOptions(Level level, uint64_t seed = 0);

struct DecisionStats {
  bool searched = false;  // false: the heuristic decided
  int samples = 0;        // deals solved
  int64_t nodes = 0;
  int min_horizon = 0;  // the shallowest trick horizon reached over the samples
};

class SearchBot {
 public:
  explicit SearchBot(const SearchOptions& options);
  // A legal move for view.seat. Precondition: it is that seat's turn (view.legal not empty).
  rules::Move ChooseMove(const rules::Rules& rules, const rules::SeatView& view);
  const DecisionStats& last_decision() const { return last_; }
  // The memory a deciding bot holds beyond its fixed fields (the solver's table).
  int64_t table_bytes() const { return solver_.tt_entries() * Solver::kEntryBytes; }

 private:
  rules::Move ChooseCall(const rules::Rules& rules, const rules::SeatView& view,
                         const rules::Move& heuristic);

  SearchOptions options_;
  Solver solver_;
  DecisionStats last_;
};

// One decision with a bot of its own (allocates the solver's table for the call).
rules::Move ChooseMove(const rules::Rules& rules, const rules::SeatView& view,
                       const SearchOptions& options);

}  // namespace courtpiece::bots

#endif  // COURTPIECE_BOTS_SEARCH_BOT_H_
