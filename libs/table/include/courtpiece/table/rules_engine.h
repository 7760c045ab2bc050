// RulesEngine: the GameEngine over libs/rules (the real Court Piece engine). Every event it
// renders for a seat is read from rules::Round::View(seat), so a seat's stream carries only
// what that seat may see. AutoMove is the heuristic bot (bots::ChooseMove) on the same view;
// NewBotJob the searching bot (bots/search_bot.h) on a copy of it.
//
// The game bookkeeping (score, next caller, game end) mirrors rules::Game, which has no
// serialisation yet, so that the whole game round-trips through Serialize()/Restore().
// Options: a JSON object as the rules engine takes them, e.g. {"game":"piles","target":10}.
// Thread-safety: none.
#ifndef COURTPIECE_TABLE_RULES_ENGINE_H_
#define COURTPIECE_TABLE_RULES_ENGINE_H_

#include <optional>

#include "courtpiece/rules/game.h"
#include "courtpiece/rules/round.h"
#include "courtpiece/rules/rules.h"
#include "courtpiece/table/engine.h"

namespace courtpiece::table {

class RulesEngine final : public GameEngine {
 public:
  RulesEngine(const rules::Rules& rules, int first_dealer);

  absl::Status StartRound(const Seed& seed) override;
  bool InRound() const override { return round_.has_value(); }
  int ToAct() const override { return round_ ? round_->turn() : -1; }
  absl::Status Apply(int seat, const Move& move) override;
  Move AutoMove(int seat) const override;
  bool Searches() const override { return true; }
  std::unique_ptr<BotJob> NewBotJob(int seat, bots::Level level, uint64_t seed) const override;
  std::array<std::vector<EngineEvent>, 4> TakeEvents() override;
  std::vector<EngineEvent> ViewOf(int seat) const override;
  bool RoundOver() const override { return round_ && round_->over(); }
  RoundOutcome Outcome() const override;
  int SeedOnlyFor() const override;
  void FinishRound() override;
  bool GameOver() const override { return game_.over(); }
  std::array<int, 2> Scores() const override { return game_.score(); }
  std::string Serialize() const override;
  absl::Status Restore(std::string_view bytes) override;

  const rules::Rules& rules() const { return rules_; }
  // The round in play, for tests (leak checks); nullptr between rounds.
  const rules::Round* round() const { return round_ ? &*round_ : nullptr; }

 private:
  void Emit(int to, EngineEvent ev) { pending_[to].push_back(std::move(ev)); }
  void RenderMove(int seat, const rules::Move& m, int tricks_before, bool shown_before,
                  int set_before, int pickups_before, int payouts_before,
                  rules::Phase phase_before);

  rules::Rules rules_;
  rules::Game game_;  // scores, next caller, game end
  std::optional<rules::Round> round_;
  std::array<std::vector<EngineEvent>, 4> pending_;
};

class RulesEngineFactory final : public EngineFactory {
 public:
  absl::StatusOr<std::unique_ptr<GameEngine>> NewGame(std::string_view options,
                                                      const Seed& first_dealer_seed) override;
  absl::Status Validate(std::string_view options) override;
};

// Parses the JSON options object into rules::Rules (errors name the option).
absl::StatusOr<rules::Rules> ParseRulesJson(std::string_view json);
// Table move <-> engine move.
absl::StatusOr<rules::Move> ToRulesMove(int seat, const Move& move);
Move FromRulesMove(const rules::Move& move);

}  // namespace courtpiece::table

#endif  // COURTPIECE_TABLE_RULES_ENGINE_H_
