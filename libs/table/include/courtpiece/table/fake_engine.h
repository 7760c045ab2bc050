// FakeEngine: a small, deterministic classic-only Court Piece engine (RULES.md §1, §2.1 with
// court_bonus=court) behind the GameEngine interface, for table tests, the tablesim and the
// benchmark when the real rules engine is not wired. Options string: "target=<n>" (default
// 5), optionally ",search=1". Its AutoMove plays the lowest legal card and calls its longest
// suit among the five; with search=1 it has a "searching" bot (NewBotJob) that plays the
// highest legal card (and calls as AutoMove), so a test tells a searched move from the
// heuristic's; without it, NewBotJob gives nullptr (every bot move is AutoMove, at once).
//
// Thread-safety: none.
#ifndef COURTPIECE_TABLE_FAKE_ENGINE_H_
#define COURTPIECE_TABLE_FAKE_ENGINE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "courtpiece/table/engine.h"

namespace courtpiece::table {

std::string CardName(int card);        // 0..51 -> "2C".."AS"
int ParseCard(std::string_view name);  // -1 when malformed

class FakeEngine final : public GameEngine {
 public:
  FakeEngine(int target_points, int first_dealer, bool search = false);

  absl::Status StartRound(const Seed& seed) override;
  bool InRound() const override { return phase_ != Phase::kNone; }
  int ToAct() const override;
  absl::Status Apply(int seat, const Move& move) override;
  Move AutoMove(int seat) const override;
  bool Searches() const override { return search_; }
  std::unique_ptr<BotJob> NewBotJob(int seat, bots::Level level, uint64_t seed) const override;
  std::array<std::vector<EngineEvent>, 4> TakeEvents() override;
  std::vector<EngineEvent> ViewOf(int seat) const override;
  bool RoundOver() const override { return phase_ == Phase::kOver; }
  RoundOutcome Outcome() const override { return outcome_; }
  void FinishRound() override;
  bool GameOver() const override;
  std::array<int, 2> Scores() const override { return scores_; }
  std::string Serialize() const override;
  absl::Status Restore(std::string_view bytes) override;

  // For tests only: the cards dealt to `seat` this round (all 13).
  const std::vector<int>& DealtForTest(int seat) const { return dealt_[seat]; }
  std::vector<int> LegalCards(int seat) const;

 private:
  enum class Phase : int { kNone = 0, kCalling = 1, kPlaying = 2, kOver = 3 };
  void Emit(int to, EngineEvent ev);
  void EmitAll(const EngineEvent& ev);
  void ResolveTrick();

  int target_ = 5;
  bool search_ = false;
  int dealer_ = 0;
  std::array<int, 2> scores_{0, 0};
  Phase phase_ = Phase::kNone;
  int caller_ = 1;
  int trump_ = -1;  // suit 0..3
  int to_act_ = -1;
  int leader_ = -1;
  std::array<std::vector<int>, 4> dealt_;
  std::array<std::vector<int>, 4> hand_;
  std::vector<std::pair<int, int>> trick_;  // (seat, card)
  std::array<int, 2> tricks_{0, 0};
  int tricks_played_ = 0;
  bool any_lost_by_leader_team_ = false;
  RoundOutcome outcome_;
  std::array<std::vector<EngineEvent>, 4> pending_;
};

class FakeEngineFactory final : public EngineFactory {
 public:
  absl::StatusOr<std::unique_ptr<GameEngine>> NewGame(std::string_view options,
                                                      const Seed& first_dealer_seed) override;
  absl::Status Validate(std::string_view options) override;
};

}  // namespace courtpiece::table

#endif  // COURTPIECE_TABLE_FAKE_ENGINE_H_
