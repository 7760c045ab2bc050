// A double-dummy solver for Court Piece: the minimax value of a round with all four hands
// known, every seat playing its team's best, under the game type's own scoring (the
// engine's rules::Round plays every move, so tricks to 7, piles and pickups, the ace rule,
// Courts, the hidden trump, the stack and marker are exactly the engine's).
//
// Values are from one team's side (higher is better for it): a finished round is worth
// kPointValue * its game points, signed (+ if the team won, - if it lost; stack: 1 for the
// game; a draw 0): what the game's score counts, nothing else. A search stopped at a trick
// horizon scores the position with HorizonValue (|value| < kPointValue) or, with
// rollout_at_horizon, RolloutValue (a greedy playout to the end). With count_at_end, a
// round that ends inside the search is worth EndValue (TerminalValue plus the final count
// difference, the scale RolloutValue uses), so that exact and rolled-out endings compare
// on one scale.
//
// Alpha-beta, move ordering (transposition-table move first, then high cards), a
// transposition table of 2^tt_entries_log2 entries (16 bytes each, allocated once, at trick
// boundaries only) and a node budget per call: a search that reaches it stops and reports
// complete = false (its value is then not exact). With horizon 13 and a complete search
// the value is exact (tested against brute-force minimax).
// Thread-safety: a Solver is not thread-safe (it owns its table); use one per thread.
#ifndef COURTPIECE_BOTS_SOLVER_H_
#define COURTPIECE_BOTS_SOLVER_H_

#include <cstdint>
#include <span>
#include <vector>

#include "courtpiece/rules/round.h"

namespace courtpiece::bots {

inline constexpr int kPointValue = 64;

struct SolverLimits {
  int64_t node_budget = 1'000'000;  // nodes per Solve / SolveMoves call
  int tt_entries_log2 = 16;         // table entries = 2^this (16 bytes each), 10..24
  bool rollout_at_horizon = false;  // score the horizon with RolloutValue, not HorizonValue
  bool count_at_end = false;        // score a finished round with EndValue, not TerminalValue
};

// The value of a finished round for `team` (see above).
int TerminalValue(const rules::Round& round, int team);
// TerminalValue plus the final count difference (|that| < kPointValue) of a finished round.
int EndValue(const rules::Round& round, int team);
// A static estimate at a trick boundary for `team`: the count difference, with the pile
// (or stack) leaning to the team of the seat one win from taking it.
int HorizonValue(const rules::Round& round, int team);
// The value of the round played out from a trick boundary by a fixed greedy policy with all
// hands known (win cheaply, let a winning partner be, lead cards nobody can beat), plus the
// final count difference (|that| < kPointValue) to tell close outcomes apart. Adds the
// moves played to *moves when not null (the solver counts them as nodes).
int RolloutValue(const rules::Round& round, int team, int64_t* moves = nullptr);

class Solver {
 public:
  struct Result {
    int value = 0;
    bool complete = true;  // false: the node budget stopped the search
    int64_t nodes = 0;
  };

  explicit Solver(const SolverLimits& limits);

  // The value of `round` for `team`, searching up to the end of trick `horizon_tricks`
  // (13: to the end of the round).
  Result Solve(const rules::Round& round, int team, int horizon_tricks = 13);

  // Values for `team` of each of `moves` (legal moves of the seat to move in `round`),
  // into values[i]. First a greedy rollout after each move (horizon 0: always done, at most
  // 52 nodes a move), then iterative deepening by tricks from the current one up to 13
  // within `node_budget` (capped by the limits): the values are those of the deepest
  // horizon completed for every move. Returns the horizon reached (13 = exact) and the
  // nodes spent (rollout moves count as nodes).
  struct MovesResult {
    int horizon = 0;
    int64_t nodes = 0;
  };
  MovesResult SolveMoves(const rules::Round& round, int team, std::span<const rules::Move> moves,
                         std::span<int> values, int64_t node_budget);

  int64_t tt_entries() const { return static_cast<int64_t>(table_.size()); }
  static constexpr int kEntryBytes = 16;

 private:
  struct Entry {
    uint64_t key = 0;
    int16_t value = 0;
    uint8_t bound = 0;    // 0 empty, 1 exact, 2 lower, 3 upper
    uint8_t horizon = 0;  // the horizon the value was searched to
    uint8_t move = 0xFF;  // index of the best move in LegalMoves order
    uint8_t generation = 0;
    uint16_t unused = 0;
  };
  static_assert(sizeof(Entry) == kEntryBytes);

  int Search(const rules::Round& r, int alpha, int beta);
  void NewGeneration();

  SolverLimits limits_;
  std::vector<Entry> table_;
  uint64_t mask_ = 0;
  uint8_t generation_ = 1;
  int team_ = 0;
  int horizon_ = 13;
  int64_t nodes_ = 0;
  int64_t budget_ = 0;
  bool aborted_ = false;
  bool hit_horizon_ = false;
};

// Plain minimax without pruning, table or budget (for tests on small endings); a finished
// round is worth EndValue with count_at_end, else TerminalValue.
int BruteForceValue(const rules::Round& round, int team, bool count_at_end = false);

}  // namespace courtpiece::bots

#endif  // COURTPIECE_BOTS_SOLVER_H_
