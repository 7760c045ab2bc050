// Test helpers: the rule variants every bots test covers and seeded positions in them.
#ifndef COURTPIECE_BOTS_TEST_POSITIONS_H_
#define COURTPIECE_BOTS_TEST_POSITIONS_H_

#include <ostream>
#include <string>
#include <vector>

#include "courtpiece/common/splitmix64.h"
#include "courtpiece/rules/round.h"
#include "courtpiece/rules/rules.h"

namespace courtpiece::bots::testing {

struct Variant {
  std::string name;
  rules::Rules rules;
};

inline void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

inline std::vector<Variant> AllVariants() {
  using rules::DefaultRules;
  using rules::GameType;
  std::vector<Variant> v;
  v.push_back({"classic", DefaultRules(GameType::kClassic)});
  rules::Rules kot = DefaultRules(GameType::kClassic);
  kot.court_bonus = rules::CourtBonus::kKot;
  v.push_back({"classic_kot", kot});
  rules::Rules none = DefaultRules(GameType::kClassic);
  none.court_bonus = rules::CourtBonus::kNone;
  v.push_back({"classic_none", none});
  v.push_back({"piles", DefaultRules(GameType::kPiles)});
  rules::Rules ace = DefaultRules(GameType::kPiles);
  ace.ace_cannot_win_pile = true;
  ace.pile = rules::PileSizes::k533;
  v.push_back({"piles_ace_533", ace});
  rules::Rules six = DefaultRules(GameType::kPiles);
  six.last_card = rules::MakeCard(0, 5);  // 7C
  six.six_point = true;
  v.push_back({"piles_six_point", six});
  v.push_back({"hidden", DefaultRules(GameType::kHidden)});
  rules::Rules hidden_ace = DefaultRules(GameType::kHidden);
  hidden_ace.ace_cannot_win_pile = true;
  v.push_back({"hidden_ace", hidden_ace});
  v.push_back({"kaat", DefaultRules(GameType::kKaat)});
  v.push_back({"stack", DefaultRules(GameType::kStack)});
  return v;
}

inline rules::Seed SeedOf(uint64_t n) {
  rules::Seed s{};
  SplitMix64 g{n * 0x9E3779B97F4A7C15ULL + 17};
  for (auto& b : s) b = static_cast<uint8_t>(g.Next() >> 56);
  return s;
}

// A seeded round played with uniformly random legal moves until `cards_left` cards or
// fewer are left in the hands (or it is over), never stopping in the call.
inline rules::Round RandomPosition(const rules::Rules& r, uint64_t n, int cards_left) {
  rules::Round rd = rules::Round::FromSeed(r, static_cast<int>(n % 4), SeedOf(n));
  SplitMix64 rng{n + 99};
  rules::MoveList legal;
  while (!rd.over()) {
    int in_hands = 0;
    for (int s = 0; s < 4; ++s) in_hands += rd.hand(s).size();
    if (rd.phase() == rules::Phase::kPlay && in_hands <= cards_left) break;
    rd.LegalMoves(&legal);
    rd.ApplyChecked(legal[rng.Below(legal.size)]);
  }
  return rd;
}

}  // namespace courtpiece::bots::testing

#endif  // COURTPIECE_BOTS_TEST_POSITIONS_H_
