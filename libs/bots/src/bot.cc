#include "courtpiece/bots/bot.h"

#include <array>

#include "courtpiece/common/check.h"

namespace courtpiece::bots {
namespace {

using rules::Card;
using rules::CardSet;
using rules::GameType;
using rules::Move;
using rules::MoveType;
using rules::RankOf;
using rules::SeatView;
using rules::SuitOf;

constexpr int kNoSuit = -1;

// Everything the bot derives from the view, once per decision.
struct Situation {
  const rules::Rules& rules;
  const SeatView& v;
  int me;
  int partner;
  int trump;          // the suit with trump power as this seat knows it, or -1
  int led = kNoSuit;  // suit led in the current trick
  int winner_seat = -1;
  int winner_strength = -1;
  bool last_to_play = false;
  CardSet unseen;  // cards neither in my hand nor played face up
};

int TrumpWithPower(const SeatView& v) {
  if (v.trump < 0) return -1;
  if (v.game == GameType::kHidden && v.trump_shown.trick < 0) return -1;
  if (v.game == GameType::kKaat && v.trump_set.trick < 0) return -1;
  return v.trump;
}

bool AceWeak(const Situation& s, int seat) {
  if (s.v.game == GameType::kStack) return s.v.marker == seat;
  return s.rules.IsPileGame() && s.rules.ace_cannot_win_pile;
}

// Trick strength of card `c` played by `seat`: trumps above the led suit, others -1.
int Strength(const Situation& s, Card c, int seat) {
  if (c == rules::kHiddenCard) return -1;
  int rank = RankOf(c);
  if (s.v.game == GameType::kStack && s.v.marker == seat && rank == rules::kAceRank) rank = -1;
  if (SuitOf(c) == s.trump) return 100 + rank;
  if (SuitOf(c) == s.led) return 20 + rank;
  return -1;
}

Situation Read(const rules::Rules& rules, const SeatView& v) {
  Situation s{rules, v, v.seat, (v.seat + 2) % 4, TrumpWithPower(v), kNoSuit, -1, -1, false, {}};
  CardSet seen = v.hand;
  for (int t = 0; t < v.num_tricks; ++t) {
    for (Card c : v.tricks[t].cards) {
      if (c != rules::kHiddenCard) seen.Add(c);
    }
  }
  for (int i = 0; i < v.current_size; ++i) {
    if (v.current.cards[i] != rules::kHiddenCard) seen.Add(v.current.cards[i]);
  }
  if (v.face_down_card >= 0) seen.Add(static_cast<Card>(v.face_down_card));
  s.unseen = ~seen;
  if (v.current_size > 0) {
    s.led = SuitOf(v.current.cards[0]);
    for (int i = 0; i < v.current_size; ++i) {
      int seat = (v.current.leader + i) % 4;
      int st = Strength(s, v.current.cards[i], seat);
      if (st > s.winner_strength) {
        s.winner_strength = st;
        s.winner_seat = seat;
      }
    }
  }
  s.last_to_play = v.current_size == 3;
  return s;
}

// True when no unseen card of the suit outranks `c` (and, for a side suit, trump is unknown
// or the opponents might still follow): a card that should hold the trick.
bool IsTopCard(const Situation& s, Card c) {
  for (Card u : s.unseen.InSuit(SuitOf(c))) {
    if (RankOf(u) > RankOf(c)) return false;
  }
  return true;
}

int Cost(const Situation& s, Card c) {
  // Lower is cheaper to give away: low ranks, side suits before trumps, weak aces kept.
  int cost = RankOf(c);
  if (SuitOf(c) == s.trump) cost += 20;
  if (RankOf(c) == rules::kAceRank && AceWeak(s, s.me) && s.v.game != GameType::kStack) {
    cost += 40;  // an ace that cannot pick up a pile is kept for when it matters less
  }
  return cost;
}

Move Cheapest(const Situation& s, const std::array<Move, 16>& ms, int n) {
  Move best = ms[0];
  for (int i = 1; i < n; ++i) {
    if (Cost(s, ms[i].value) < Cost(s, best.value)) best = ms[i];
  }
  return best;
}

Move ChooseCall(const SeatView& v) {
  std::array<int, 4> score{};
  for (Card c : v.hand) score[SuitOf(c)] += 10 + RankOf(c);
  int best = 0;
  for (int suit = 1; suit < 4; ++suit) {
    if (score[suit] > score[best]) best = suit;
  }
  Move fallback = v.legal[0];
  for (const Move& m : v.legal) {
    if (m.type == MoveType::kCall && m.value == best) return m;
  }
  // Hidden: lay down the lowest card of the strongest suit.
  Move hide = fallback;
  int low = 99;
  for (const Move& m : v.legal) {
    if (m.type == MoveType::kHide && SuitOf(m.value) == best && RankOf(m.value) < low) {
      low = RankOf(m.value);
      hide = m;
    }
  }
  return hide;
}

Move ChooseLead(const Situation& s, const std::array<Move, 16>& plays, int n) {
  // A top card that is not a trump and not a weak ace wins cheaply; else lead low.
  for (int i = 0; i < n; ++i) {
    Card c = plays[i].value;
    bool weak_ace = RankOf(c) == rules::kAceRank && AceWeak(s, s.me);
    if (SuitOf(c) != s.trump && !weak_ace && IsTopCard(s, c)) return plays[i];
  }
  return Cheapest(s, plays, n);
}

Move ChooseFollow(const Situation& s, const std::array<Move, 16>& plays, int n) {
  // Never overtake a partner who is winning the trick: throw low instead.
  if (s.winner_seat == s.partner) return Cheapest(s, plays, n);
  // The cheapest card that beats the trick so far; throw low when none does.
  int best = -1, best_cost = 1 << 20;
  for (int i = 0; i < n; ++i) {
    Card c = plays[i].value;
    if (Strength(s, c, s.me) <= s.winner_strength) continue;
    int cost = Cost(s, c);
    if (!s.last_to_play && SuitOf(c) != s.trump && !IsTopCard(s, c)) cost += 30;
    if (cost < best_cost) {
      best_cost = cost;
      best = i;
    }
  }
  if (best >= 0) return plays[best];
  return Cheapest(s, plays, n);
}

}  // namespace

Move ChooseMove(const rules::Rules& rules, const SeatView& v) {
  COURTPIECE_CHECK(v.legal.size > 0, "a move is chosen only by the seat to move");
  if (v.phase == rules::Phase::kCall) return ChooseCall(v);
  Situation s = Read(rules, v);
  std::array<Move, 16> plays{};
  int n = 0;
  const Move* ask = nullptr;
  const Move* show = nullptr;
  for (const Move& m : v.legal) {
    if (m.type == MoveType::kPlay) plays[n++] = m;
    if (m.type == MoveType::kAsk) ask = &m;
    if (m.type == MoveType::kShow) show = &m;
  }
  bool opponents_winning = s.winner_seat >= 0 && s.winner_seat != s.partner;
  bool cannot_follow = s.led != kNoSuit && !v.hand.HasSuit(s.led);
  // Hidden: asking (or, as caller, showing) lets a cut win a trick the opponents hold.
  if (ask != nullptr && cannot_follow && opponents_winning) return *ask;
  if (show != nullptr) {
    int trumps = v.hand.InSuit(v.trump).size();
    if ((cannot_follow && opponents_winning && trumps > 0) || (s.led == kNoSuit && trumps >= 3)) {
      return *show;
    }
  }
  if (n == 0) return v.legal[0];
  if (s.led == kNoSuit) return ChooseLead(s, plays, n);
  return ChooseFollow(s, plays, n);
}

Move RandomMove(const SeatView& v, uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return v.legal[static_cast<int>(z % static_cast<uint64_t>(v.legal.size))];
}

}  // namespace courtpiece::bots
