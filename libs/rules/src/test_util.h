// Test helpers: build a round from a script of tricks.
//
// A script trick is "L: c c c c" (L the leader seat); "ask" or "show" before a card is a
// move of that card's player. Hands are the cards each seat plays, in order (a hidden
// caller's face-down card first), then filler cards that break no must-follow.
#ifndef COURTPIECE_RULES_TEST_UTIL_H_
#define COURTPIECE_RULES_TEST_UTIL_H_

#include <sstream>
#include <string>
#include <vector>

#include "courtpiece/rules/round.h"
#include "gtest/gtest.h"

namespace courtpiece::rules::testing {

inline Card C(const std::string& s) {
  auto c = ParseCard(s);
  EXPECT_TRUE(c.has_value()) << s;
  return c.value_or(0);
}

inline Rules R(OptionMap m) {
  auto r = ParseRules(m);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.value_or(Rules{});
}

struct ScriptMove {
  Move move;
};

// Parses tricks into moves (seat known from the leader) and the cards each seat plays.
inline std::vector<Move> ScriptMoves(const std::vector<std::string>& tricks,
                                     std::array<std::vector<Card>, 4>* played) {
  std::vector<Move> out;
  for (const auto& t : tricks) {
    std::istringstream in(t);
    std::string tok;
    in >> tok;
    int leader = tok[0] - '0';
    int i = 0;
    while (in >> tok) {
      int seat = (leader + i) % 4;
      if (tok == "ask") {
        out.push_back(Move::Ask(seat));
      } else if (tok == "show") {
        out.push_back(Move::Show(seat));
      } else {
        Card c = C(tok);
        out.push_back(Move::Play(seat, c));
        if (played) (*played)[seat].push_back(c);
        ++i;
      }
    }
  }
  return out;
}

// Builds hands: played cards (front: `front` cards per seat), then filler.
inline Round::Hands ScriptHands(const std::vector<std::string>& tricks,
                                const std::array<std::vector<Card>, 4>& front = {}) {
  std::array<std::vector<Card>, 4> played;
  std::vector<Move> moves = ScriptMoves(tricks, &played);
  std::array<std::vector<Card>, 4> hand = front;
  CardSet used;
  for (int s = 0; s < 4; ++s) {
    for (Card c : hand[s]) used.Add(c);
  }
  for (int s = 0; s < 4; ++s) {
    for (Card c : played[s]) {
      if (!used.Has(c)) hand[s].push_back(c);
      used.Add(c);
    }
  }
  // Voids: a seat that did not follow a led suit holds none of it (while the script runs).
  std::array<CardSet, 4> voids;
  for (const auto& t : tricks) {
    std::istringstream in(t);
    std::string tok;
    in >> tok;
    int leader = tok[0] - '0';
    int i = 0, led = -1;
    while (in >> tok) {
      if (tok == "ask" || tok == "show") continue;
      Card c = C(tok);
      int seat = (leader + i) % 4;
      if (i == 0)
        led = SuitOf(c);
      else if (SuitOf(c) != led)
        voids[seat] = voids[seat] | CardSet::Suit(led);
      ++i;
    }
  }
  for (Card c : ~used) {
    int best = -1;
    for (int s = 0; s < 4; ++s) {
      if (hand[s].size() < 13 && !voids[s].Has(c)) {
        best = s;
        break;
      }
    }
    if (best < 0) {
      for (int s = 0; s < 4; ++s) {
        if (hand[s].size() < 13) {
          best = s;
          break;
        }
      }
      ADD_FAILURE() << "filler " << CardName(c) << " breaks a void";
    }
    hand[best].push_back(c);
  }
  Round::Hands h{};
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(hand[s].size(), 13u) << "seat " << s;
    for (size_t i = 0; i < 13 && i < hand[s].size(); ++i) h[s][i] = hand[s][i];
  }
  return h;
}

// Runs a script: first `opening` moves (call / hide), then the tricks. Every move must be
// legal, and Check() must agree with LegalMoves().
inline Round RunScript(const Rules& rules, int dealer, const std::vector<Move>& opening,
                       const std::vector<std::string>& tricks,
                       const std::array<std::vector<Card>, 4>& front = {}) {
  auto r = Round::FromHands(rules, dealer, ScriptHands(tricks, front));
  EXPECT_TRUE(r.ok()) << r.status();
  Round round = *r;
  std::vector<Move> moves = opening;
  for (const Move& m : ScriptMoves(tricks, nullptr)) moves.push_back(m);
  for (size_t i = 0; i < moves.size(); ++i) {
    absl::Status st = round.Apply(moves[i]);
    EXPECT_TRUE(st.ok()) << "move " << i << ": " << st;
    if (!st.ok()) break;
  }
  return round;
}

// Runs tricks over explicit hands (replay strings, first packet first).
inline Round RunHands(const Rules& rules, int dealer, const std::array<std::string, 4>& text,
                      const std::vector<Move>& opening, const std::vector<std::string>& tricks,
                      size_t* applied = nullptr) {
  Round::Hands h{};
  for (int s = 0; s < 4; ++s) {
    std::istringstream in(text[s]);
    std::string tok;
    int i = 0;
    while (in >> tok && i < 13) h[s][i++] = C(tok);
    EXPECT_EQ(i, 13) << "seat " << s;
  }
  auto r = Round::FromHands(rules, dealer, h);
  EXPECT_TRUE(r.ok()) << r.status();
  Round round = *r;
  std::vector<Move> moves = opening;
  for (const Move& m : ScriptMoves(tricks, nullptr)) moves.push_back(m);
  size_t i = 0;
  for (; i < moves.size(); ++i) {
    absl::Status st = round.Apply(moves[i]);
    EXPECT_TRUE(st.ok()) << "move " << i << ": " << st;
    if (!st.ok()) break;
  }
  if (applied) *applied = i;
  return round;
}

inline std::string Hand(const std::vector<std::string>& cards) {
  std::string s;
  for (const auto& c : cards) s += c + " ";
  return s;
}

// 13 tricks: `leader` holds all of `suit` and leads it high to low; the others hold one
// suit each and throw low to high.
inline std::vector<std::string> RunOfSuit(int leader, int suit) {
  std::vector<std::string> tricks;
  for (int i = 0; i < 13; ++i) {
    std::string t = std::to_string(leader) + ":";
    for (int k = 0; k < 4; ++k) {
      int seat = (leader + k) % 4;
      int s = (suit + (seat - leader + 4)) % 4;
      int rank = k == 0 ? 12 - i : i;
      t += " " + CardName(MakeCard(s, rank));
    }
    tricks.push_back(t);
  }
  return tricks;
}

}  // namespace courtpiece::rules::testing

#endif  // COURTPIECE_RULES_TEST_UTIL_H_
