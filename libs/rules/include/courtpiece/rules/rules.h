// Game types and their validated options (RULES.md section 2).
//
// ParseRules takes a JSON-like map of option name -> value and returns validated Rules or
// a bad_rules error naming the option and its allowed values. Options that do not belong
// to the chosen game type are rejected too (docs/rules-decisions.md).
// Thread-safety: value types and pure functions.
#ifndef COURTPIECE_RULES_RULES_H_
#define COURTPIECE_RULES_RULES_H_

#include <cstdint>
#include <map>
#include <string>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "courtpiece/rules/cards.h"

namespace courtpiece::rules {

enum class GameType : uint8_t { kClassic = 0, kPiles, kHidden, kKaat, kStack };
enum class CourtBonus : uint8_t { kNone = 0, kCourt, kKot };
enum class PileSizes : uint8_t { k322 = 0, k533 };

struct Rules {
  GameType game = GameType::kClassic;
  CourtBonus court_bonus = CourtBonus::kCourt;  // classic
  int kot_points = 3;                           // classic with kot: 2..10
  PileSizes pile = PileSizes::k322;             // pile games
  bool ace_cannot_win_pile = false;             // pile games
  int last_card = -1;                           // pile games: a Card, or -1 for none
  bool six_point = false;                       // pile games, needs last_card
  int target = 5;                               // classic 1..100, piles 10..100, stack 5/7/9
  bool deal_fairness = true;

  bool IsPileGame() const {
    return game == GameType::kPiles || game == GameType::kHidden || game == GameType::kKaat;
  }
  bool HasCall() const { return game != GameType::kKaat; }
  int FirstPileMin() const { return pile == PileSizes::k322 ? 3 : 5; }
  int LaterPileMin() const { return pile == PileSizes::k322 ? 2 : 3; }
  bool operator==(const Rules&) const = default;
};

// A JSON-ish option value: null, bool, integer, non-integral number or string.
using OptionValue = std::variant<std::nullptr_t, bool, int64_t, double, std::string>;
using OptionMap = std::map<std::string, OptionValue, std::less<>>;

// Validates options ("game" is required). Errors carry ErrorCode::kBadRules.
absl::StatusOr<Rules> ParseRules(const OptionMap& options);
// Defaults of a game type (always valid).
Rules DefaultRules(GameType game);

absl::string_view GameTypeName(GameType game);
absl::string_view CourtBonusName(CourtBonus b);
absl::string_view PileSizesName(PileSizes p);
// The options as a map that ParseRules accepts (only the options of the game type).
OptionMap RulesToOptions(const Rules& rules);

}  // namespace courtpiece::rules

#endif  // COURTPIECE_RULES_RULES_H_
