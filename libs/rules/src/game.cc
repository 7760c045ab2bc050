#include "courtpiece/rules/game.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "courtpiece/common/check.h"
#include "courtpiece/rules/errors.h"

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

std::string Game::Serialize() const {
  return absl::StrCat("game1 ", score_[0], " ", score_[1], " ", over_ ? 1 : 0, " ", winner_, " ",
                      next_caller_, " ", rounds_);
}

absl::StatusOr<Game> Game::Restore(const Rules& rules, absl::string_view text) {
  constexpr int kMaxRounds = 1'000'000;  // far beyond any game: 100 points at 1 a round
  Game g;
  g.rules_ = rules;
  int over = 0, consumed = 0;
  const std::string line(text);
  if (std::sscanf(line.c_str(), "game1 %d %d %d %d %d %d%n", &g.score_[0], &g.score_[1], &over,
                  &g.winner_, &g.next_caller_, &g.rounds_, &consumed) != 6 ||
      consumed != static_cast<int>(line.size())) {
    return MakeError(ErrorCode::kBadInput, "game state: not \"game1\" and six integers");
  }
  g.over_ = over == 1;
  const bool stack = rules.game == GameType::kStack;
  // Highest score a running game can have: under the target. Once over, the last round
  // added at most 10 (kot_points) or, in stack, a score is at most 13 stack points.
  const int max_score = stack ? 13 : rules.target - 1 + (g.over_ ? 10 : 0);
  bool ok = (over == 0 || over == 1) && g.winner_ >= -1 && g.winner_ <= 1 && g.next_caller_ >= 0 &&
            g.next_caller_ <= 3 && g.rounds_ >= 0 && g.rounds_ <= kMaxRounds;
  for (int s : g.score_) ok = ok && s >= 0 && s <= max_score;
  if (ok && !g.over_) ok = g.winner_ == -1 && (!stack || g.rounds_ == 0);
  if (ok && g.over_ && !stack) {
    ok = g.winner_ >= 0 && g.score_[g.winner_] >= rules.target && g.rounds_ >= 1;
  }
  if (ok && g.over_ && stack) ok = g.rounds_ == 1;
  if (!ok) return MakeError(ErrorCode::kBadInput, "game state: out of range for these rules");
  return g;
}

}  // namespace courtpiece::rules
