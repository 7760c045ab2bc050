// A game (match): rounds until a team reaches the target (RULES.md sections 2.1-2.5).
//
//   Game g(rules, first_dealer);
//   Round r = g.StartRound(seed);  ... play ...;  g.FinishRound(r);
// Stack games are one round; the game ends there (or the moment the target is reached).
// Serialize()/Restore() carry the bookkeeping between rounds (scores, game end, next
// caller), e.g. in the table's snapshot.
// Thread-safety: a value type.
#ifndef COURTPIECE_RULES_GAME_H_
#define COURTPIECE_RULES_GAME_H_

#include <array>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "courtpiece/rules/round.h"

namespace courtpiece::rules {

class Game {
 public:
  Game(const Rules& rules, int first_dealer);

  const Rules& rules() const { return rules_; }
  std::array<int, 2> score() const { return score_; }
  bool over() const { return over_; }
  int winner() const { return winner_; }  // team, -1 while not over or after a draw
  int next_caller() const { return over_ ? -1 : next_caller_; }
  int next_dealer() const { return over_ ? -1 : (next_caller_ + 3) % 4; }
  int rounds_played() const { return rounds_; }

  // Starts the next round (the game must not be over).
  absl::StatusOr<Round> StartRound(const Round::Hands& hands) const;
  Round StartRound(const Seed& seed) const;
  // Books a finished round: scores, next caller, game end.
  void FinishRound(const Round& round);

  // "game1 <score0> <score1> <over> <winner> <next_caller> <rounds>" (text, one line).
  std::string Serialize() const;
  // The inverse, checked against the rules: bad_input for text that is not of that form or
  // not a state the rules can reach (a score past the target in a game still running, ...).
  static absl::StatusOr<Game> Restore(const Rules& rules, absl::string_view text);

 private:
  Game() = default;
  // Whether the restored fields are a state these rules can reach.
  bool Reachable(int over_field, int max_rounds) const;
  Rules rules_;
  std::array<int, 2> score_{};
  bool over_ = false;
  int winner_ = -1;
  int next_caller_ = 0;
  int rounds_ = 0;
};

}  // namespace courtpiece::rules

#endif  // COURTPIECE_RULES_GAME_H_
