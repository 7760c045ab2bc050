#include "courtpiece/rules/rules.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "courtpiece/rules/errors.h"

namespace courtpiece::rules {
namespace {

absl::Status Bad(absl::string_view option, absl::string_view allowed) {
  return MakeError(ErrorCode::kBadRules, absl::StrCat("option '", option, "' must be ", allowed));
}

bool AppliesTo(absl::string_view option, const Rules& r) {
  if (option == "game" || option == "target" || option == "deal_fairness") return true;
  if (option == "court_bonus") return r.game == GameType::kClassic;
  if (option == "kot_points") return r.game == GameType::kClassic;
  return r.IsPileGame();  // pile, ace_cannot_win_pile, last_card, six_point
}

absl::Status ParseGame(const OptionMap& options, Rules* r) {
  constexpr absl::string_view kAllowed =
      "one of \"classic\", \"piles\", \"hidden\", \"kaat\", \"stack\"";
  auto it = options.find("game");
  if (it == options.end()) return Bad("game", kAllowed);
  const auto* s = std::get_if<std::string>(&it->second);
  if (s == nullptr) return Bad("game", kAllowed);
  for (GameType g : {GameType::kClassic, GameType::kPiles, GameType::kHidden, GameType::kKaat,
                     GameType::kStack}) {
    if (GameTypeName(g) == *s) {
      *r = DefaultRules(g);
      return absl::OkStatus();
    }
  }
  return Bad("game", kAllowed);
}

absl::Status ParseBool(const OptionValue& v, absl::string_view name, bool* out) {
  const bool* b = std::get_if<bool>(&v);
  if (b == nullptr) return Bad(name, "true or false");
  *out = *b;
  return absl::OkStatus();
}

absl::Status ParseInt(const OptionValue& v, absl::string_view name, int lo, int hi,
                      absl::string_view allowed, int* out) {
  const int64_t* i = std::get_if<int64_t>(&v);
  if (i == nullptr || *i < lo || *i > hi) return Bad(name, allowed);
  *out = static_cast<int>(*i);
  return absl::OkStatus();
}

absl::Status ParseOne(absl::string_view name, const OptionValue& v, Rules* r) {
  const auto* s = std::get_if<std::string>(&v);
  if (name == "court_bonus") {
    constexpr absl::string_view kAllowed = "one of \"none\", \"court\", \"kot\"";
    if (s == nullptr) return Bad(name, kAllowed);
    if (*s == "none")
      r->court_bonus = CourtBonus::kNone;
    else if (*s == "court")
      r->court_bonus = CourtBonus::kCourt;
    else if (*s == "kot")
      r->court_bonus = CourtBonus::kKot;
    else
      return Bad(name, kAllowed);
    return absl::OkStatus();
  }
  if (name == "kot_points") {
    return ParseInt(v, name, 2, 10, "an integer from 2 to 10", &r->kot_points);
  }
  if (name == "pile") {
    constexpr absl::string_view kAllowed = "one of \"3-2-2\", \"5-3-3\"";
    if (s == nullptr) return Bad(name, kAllowed);
    if (*s == "3-2-2")
      r->pile = PileSizes::k322;
    else if (*s == "5-3-3")
      r->pile = PileSizes::k533;
    else
      return Bad(name, kAllowed);
    return absl::OkStatus();
  }
  if (name == "ace_cannot_win_pile") return ParseBool(v, name, &r->ace_cannot_win_pile);
  if (name == "six_point") return ParseBool(v, name, &r->six_point);
  if (name == "deal_fairness") return ParseBool(v, name, &r->deal_fairness);
  if (name == "last_card") {
    constexpr absl::string_view kAllowed = "a card such as \"AS\", or null or \"none\"";
    if (std::holds_alternative<std::nullptr_t>(v)) {
      r->last_card = -1;
      return absl::OkStatus();
    }
    if (s == nullptr) return Bad(name, kAllowed);
    if (*s == "none") {
      r->last_card = -1;
      return absl::OkStatus();
    }
    auto c = ParseCard(*s);
    if (!c) return Bad(name, kAllowed);
    r->last_card = *c;
    return absl::OkStatus();
  }
  if (name == "target") {
    switch (r->game) {
      case GameType::kClassic:
        return ParseInt(v, name, 1, 100, "an integer from 1 to 100 for classic", &r->target);
      case GameType::kStack: {
        constexpr absl::string_view kAllowed = "5, 7 or 9 for stack";
        const int64_t* i = std::get_if<int64_t>(&v);
        if (i == nullptr || (*i != 5 && *i != 7 && *i != 9)) return Bad(name, kAllowed);
        r->target = static_cast<int>(*i);
        return absl::OkStatus();
      }
      default:
        return ParseInt(v, name, 10, 100,
                        absl::StrCat("an integer from 10 to 100 for ", GameTypeName(r->game)),
                        &r->target);
    }
  }
  return MakeError(ErrorCode::kBadRules, absl::StrCat("unknown option '", name, "'"));
}

}  // namespace

absl::string_view GameTypeName(GameType game) {
  switch (game) {
    case GameType::kClassic:
      return "classic";
    case GameType::kPiles:
      return "piles";
    case GameType::kHidden:
      return "hidden";
    case GameType::kKaat:
      return "kaat";
    case GameType::kStack:
      return "stack";
  }
  return "?";
}

absl::string_view CourtBonusName(CourtBonus b) {
  switch (b) {
    case CourtBonus::kNone:
      return "none";
    case CourtBonus::kCourt:
      return "court";
    case CourtBonus::kKot:
      return "kot";
  }
  return "?";
}

absl::string_view PileSizesName(PileSizes p) { return p == PileSizes::k322 ? "3-2-2" : "5-3-3"; }

Rules DefaultRules(GameType game) {
  Rules r;
  r.game = game;
  r.target = game == GameType::kClassic ? 5 : game == GameType::kStack ? 7 : 10;
  return r;
}

absl::StatusOr<Rules> ParseRules(const OptionMap& options) {
  Rules r;
  absl::Status st = ParseGame(options, &r);
  if (!st.ok()) return st;
  for (const auto& [name, value] : options) {
    if (name == "game") continue;
    static constexpr absl::string_view kKnown[] = {
        "court_bonus", "kot_points", "pile",   "ace_cannot_win_pile",
        "last_card",   "six_point",  "target", "deal_fairness"};
    bool known = false;
    for (auto k : kKnown) known |= (k == name);
    if (!known) {
      return MakeError(ErrorCode::kBadRules,
                       absl::StrCat("unknown option '", name,
                                    "'; options are game, court_bonus, kot_points, pile, "
                                    "ace_cannot_win_pile, last_card, six_point, target, "
                                    "deal_fairness"));
    }
    if (!AppliesTo(name, r)) {
      return MakeError(
          ErrorCode::kBadRules,
          absl::StrCat("option '", name, "' does not apply to game '", GameTypeName(r.game), "'"));
    }
    st = ParseOne(name, value, &r);
    if (!st.ok()) return st;
  }
  if (options.count("kot_points") && r.court_bonus != CourtBonus::kKot) {
    return MakeError(ErrorCode::kBadRules,
                     "option 'kot_points' applies only with court_bonus \"kot\"");
  }
  if (r.six_point && r.last_card < 0) {
    return MakeError(ErrorCode::kBadRules,
                     "option 'six_point' may be true only with 'last_card' set to a card");
  }
  return r;
}

OptionMap RulesToOptions(const Rules& r) {
  OptionMap m;
  m["game"] = std::string(GameTypeName(r.game));
  m["target"] = int64_t{r.target};
  m["deal_fairness"] = r.deal_fairness;
  if (r.game == GameType::kClassic) {
    m["court_bonus"] = std::string(CourtBonusName(r.court_bonus));
    if (r.court_bonus == CourtBonus::kKot) m["kot_points"] = int64_t{r.kot_points};
  }
  if (r.IsPileGame()) {
    m["pile"] = std::string(PileSizesName(r.pile));
    m["ace_cannot_win_pile"] = r.ace_cannot_win_pile;
    if (r.last_card >= 0) {
      m["last_card"] = CardName(static_cast<Card>(r.last_card));
    } else {
      m["last_card"] = nullptr;
    }
    m["six_point"] = r.six_point;
  }
  return m;
}

}  // namespace courtpiece::rules
