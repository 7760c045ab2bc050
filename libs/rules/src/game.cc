#include "courtpiece/rules/game.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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
  const std::vector<absl::string_view> f = absl::StrSplit(text, ' ');
  std::array<int, 6> v{};
  bool parsed = f.size() == 7 && f[0] == "game1";
  for (size_t i = 1; parsed && i < 7; ++i) parsed = absl::SimpleAtoi(f[i], &v[i - 1]);
  Game g;
  g.rules_ = rules;
  g.score_ = {v[0], v[1]};
  g.over_ = v[2] == 1;
  g.winner_ = v[3];
  g.next_caller_ = v[4];
  g.rounds_ = v[5];
  // Only the canonical text (no "+1", "01", overflow wrapped by a parser, ...).
  if (!parsed || g.Serialize() != text) {
    return MakeError(ErrorCode::kBadInput, "game state: not \"game1\" and six integers");
  }
  if (!g.Reachable(v[2], kMaxRounds)) {
    return MakeError(ErrorCode::kBadInput, "game state: out of range for these rules");
  }
  return g;
}

bool Game::Reachable(int over_field, int max_rounds) const {
  const bool stack = rules_.game == GameType::kStack;
  if (over_field != 0 && over_field != 1) return false;
  if (winner_ < -1 || winner_ > 1 || next_caller_ < 0 || next_caller_ > 3) return false;
  if (rounds_ < 0 || rounds_ > max_rounds) return false;
  for (int s : score_) {
    if (s < 0) return false;
  }
  if (rounds_ == 0) return !over_ && score_[0] == 0 && score_[1] == 0 && winner_ == -1;
  if (stack) {  // one round, then over; the winner has more stack points, or a draw
    if (!over_ || rounds_ != 1 || score_[0] + score_[1] > 13) return false;
    const int want = score_[0] > score_[1] ? 0 : score_[1] > score_[0] ? 1 : -1;
    return winner_ == want;
  }
  const int loser_max = rules_.target - 1;
  if (!over_) return winner_ == -1 && score_[0] <= loser_max && score_[1] <= loser_max;
  // Over: the winner reached the target with the last round (at most 10 points, kot), the
  // other team did not.
  return winner_ >= 0 && score_[winner_] >= rules_.target && score_[winner_] <= loser_max + 10 &&
         score_[1 - winner_] <= loser_max;
}

}  // namespace courtpiece::rules
