// A GameEngine whose rounds are four plays (seats 0,1,2,3) ending with a scripted outcome:
// lets scenario tests force courts, draws and game ends.
#ifndef COURTPIECE_TABLE_SCRIPTED_ENGINE_FOR_TEST_H_
#define COURTPIECE_TABLE_SCRIPTED_ENGINE_FOR_TEST_H_

#include <deque>
#include <sstream>

#include "courtpiece/table/engine.h"

namespace courtpiece::table {

class ScriptedEngine final : public GameEngine {
 public:
  ScriptedEngine(std::deque<RoundOutcome>* script, int target, const int* seed_only_for)
      : script_(script), target_(target), seed_only_for_(seed_only_for) {}
  int SeedOnlyFor() const override { return *seed_only_for_; }
  absl::Status StartRound(const Seed&) override {
    in_round_ = true;
    plays_ = 0;
    for (int s = 0; s < 4; ++s) ev_[s].push_back({"hand", s, {hand_[s]}, ""});
    return absl::OkStatus();
  }
  bool InRound() const override { return in_round_; }
  int ToAct() const override { return in_round_ && plays_ < 4 ? plays_ : -1; }
  absl::Status Apply(int seat, const Move& m) override {
    if (seat != ToAct()) return absl::FailedPreconditionError("not your turn");
    if (m.kind != MoveKind::kPlay || m.card != hand_[seat]) {
      return absl::InvalidArgumentError("illegal");
    }
    for (int s = 0; s < 4; ++s) ev_[s].push_back({"played", seat, {m.card}, ""});
    ++plays_;
    return absl::OkStatus();
  }
  Move AutoMove(int seat) const override { return {MoveKind::kPlay, hand_[seat]}; }
  std::array<std::vector<EngineEvent>, 4> TakeEvents() override {
    std::array<std::vector<EngineEvent>, 4> out;
    std::swap(out, ev_);
    return out;
  }
  std::vector<EngineEvent> ViewOf(int seat) const override {
    if (!in_round_) return {};
    return {{"hand", seat, {hand_[seat]}, "view"}};
  }
  bool RoundOver() const override { return in_round_ && plays_ == 4; }
  RoundOutcome Outcome() const override {
    return script_->empty() ? RoundOutcome{0, "normal", 1} : script_->front();
  }
  void FinishRound() override {
    RoundOutcome o = Outcome();
    if (!script_->empty()) script_->pop_front();
    if (o.winning_team >= 0) scores_[o.winning_team] += o.points;
    in_round_ = false;
  }
  bool GameOver() const override {
    return !in_round_ && (scores_[0] >= target_ || scores_[1] >= target_);
  }
  std::array<int, 2> Scores() const override { return scores_; }
  std::string Serialize() const override {
    std::ostringstream o;
    o << in_round_ << ' ' << plays_ << ' ' << scores_[0] << ' ' << scores_[1];
    return o.str();
  }
  absl::Status Restore(std::string_view b) override {
    std::istringstream in{std::string(b)};
    in >> in_round_ >> plays_ >> scores_[0] >> scores_[1];
    return absl::OkStatus();
  }

 private:
  const std::array<std::string, 4> hand_ = {"2C", "3C", "4C", "5C"};
  std::deque<RoundOutcome>* script_;
  int target_;
  const int* seed_only_for_;
  bool in_round_ = false;
  int plays_ = 0;
  std::array<int, 2> scores_{0, 0};
  std::array<std::vector<EngineEvent>, 4> ev_;
};

class ScriptedFactory final : public EngineFactory {
 public:
  std::deque<RoundOutcome> script;
  int target = 3;
  int seed_only_for = -1;  // what every engine's SeedOnlyFor() answers
  absl::StatusOr<std::unique_ptr<GameEngine>> NewGame(std::string_view, const Seed&) override {
    return std::unique_ptr<GameEngine>(
        std::make_unique<ScriptedEngine>(&script, target, &seed_only_for));
  }
  absl::Status Validate(std::string_view) override { return absl::OkStatus(); }
};

}  // namespace courtpiece::table

#endif  // COURTPIECE_TABLE_SCRIPTED_ENGINE_FOR_TEST_H_
