#include "courtpiece/rules/game.h"

#include "absl/strings/string_view.h"
#include "courtpiece/common/check.h"

namespace courtpiece::rules {

Game::Game(const Rules& rules, int first_dealer)
    : rules_(rules), next_caller_((first_dealer + 1) % 4) {
  COURTPIECE_CHECK(first_dealer >= 0 && first_dealer < 4, "first_dealer is a seat 0..3");
}

absl::StatusOr<Round> Game::StartRound(const Round::Hands& hands) const {
  COURTPIECE_CHECK(!over_, "no round starts once the game is over");
  return Round::FromHands(rules_, next_dealer(), hands);
}

Round Game::StartRound(const Seed& seed) const {
  COURTPIECE_CHECK(!over_, "no round starts once the game is over");
  return Round::FromSeed(rules_, next_dealer(), seed);
}

void Game::FinishRound(const Round& round) {
  COURTPIECE_CHECK(round.over() && !over_, "only a finished round of a game not over");
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
