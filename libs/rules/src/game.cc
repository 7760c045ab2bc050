#include "courtpiece/rules/game.h"

#include <cassert>

#include "absl/strings/string_view.h"

namespace courtpiece::rules {

Game::Game(const Rules& rules, int first_dealer)
    : rules_(rules), next_caller_((first_dealer + 1) % 4) {
  assert(first_dealer >= 0 && first_dealer < 4);
}

absl::StatusOr<Round> Game::StartRound(const Round::Hands& hands) const {
  assert(!over_);
  return Round::FromHands(rules_, next_dealer(), hands);
}

Round Game::StartRound(const Seed& seed) const {
  assert(!over_);
  return Round::FromSeed(rules_, next_dealer(), seed);
}

void Game::FinishRound(const Round& round) {
  assert(round.over() && !over_);
  const RoundResult& r = round.result();
  ++rounds_;
  if (rules_.game == GameType::kStack) {
    score_ = r.count;
    over_ = true;
    winner_ = r.winner;
    return;
  }
  score_[r.winner] += r.points;
  next_caller_ = round.NextCaller();
  if (score_[r.winner] >= rules_.target) {
    over_ = true;
    winner_ = r.winner;
  }
}

}  // namespace courtpiece::rules
