#include "courtpiece/bots/sampler.h"

#include <algorithm>
#include <bit>

#include "courtpiece/common/check.h"

namespace courtpiece::bots {
namespace {

using rules::Card;
using rules::CardSet;
using rules::GameType;
using rules::Move;
using rules::Round;
using rules::SuitOf;

CardSet SuitsMask(uint8_t suits) {
  uint64_t bits = 0;
  for (int s = 0; s < 4; ++s) {
    if ((suits >> s) & 1) bits |= CardSet::Suit(s).bits();
  }
  return CardSet(bits);
}

}  // namespace

const rules::TrickRecord& DealSampler::TrickAt(int t) const {
  return t < view_.num_tricks ? view_.tricks[t] : view_.current;
}

DealSampler::DealSampler(const rules::Rules& rules, const rules::SeatView& view)
    : rules_(rules), view_(view), hidden_game_(rules.game == GameType::kHidden) {
  COURTPIECE_CHECK(view.phase == rules::Phase::kPlay, "samples are drawn in the play phase");
  const int me = view.seat;
  const int caller = view.caller;
  const int trump_known = view.trump;  // -1 when this seat does not know it
  const rules::TrumpEvent shown = view.trump_shown;
  std::array<uint8_t, 4> voids{};
  uint8_t caller_trump_void_before_show = 0;
  std::vector<Slot> face_down_slots;
  CardSet seen = view.hand;
  if (view.face_down_card >= 0) seen.Add(static_cast<Card>(view.face_down_card));
  for (int t = 0; t <= view.num_tricks; ++t) {
    const rules::TrickRecord& tr = TrickAt(t);
    const int n = t < view.num_tricks ? 4 : view.current_size;
    if (n == 0) continue;
    const int led = SuitOf(tr.cards[0]);
    const bool shown_before = shown.trick >= 0 && shown.trick <= t;  // shown in an earlier trick
    for (int i = 0; i < n; ++i) {
      const int seat = (tr.leader + i) % 4;
      const Card c = tr.cards[i];
      const bool shown_now = shown.trick == t + 1 && shown.seat == seat;
      if (c == rules::kHiddenCard) {
        // A hidden caller's face-down throw: it could not follow the led suit.
        face_down_.push_back({static_cast<int8_t>(t), static_cast<int8_t>(i)});
        if (led == trump_known) caller_trump_void_before_show = uint8_t(1u << led);
        voids[seat] |= uint8_t(1u << led);
        face_down_slots.push_back({static_cast<int8_t>(seat), uint8_t(0xF & ~voids[seat]),
                                   static_cast<int8_t>(face_down_.size() - 1), false});
        continue;
      }
      known_[seat].Add(c);
      seen.Add(c);
      if (i > 0 && SuitOf(c) != led) {
        if (hidden_game_ && seat == caller && !shown_before && !shown_now && trump_known >= 0 &&
            led == trump_known) {
          caller_trump_void_before_show = uint8_t(1u << led);
        }
        voids[seat] |= uint8_t(1u << led);
        // After an ask (or a caller's show) the player must trump if it can.
        if (hidden_game_ && shown_now && trump_known >= 0 && SuitOf(c) != trump_known) {
          voids[seat] |= uint8_t(1u << trump_known);
        }
      }
    }
  }
  known_[me] = known_[me] | view.hand;
  if (view.face_down_card >= 0) known_[me].Add(static_cast<Card>(view.face_down_card));
  pool_ = ~seen;
  // Before the show the caller's hand lacked the face-down card: a void then in the trump
  // suit says nothing about it, and it is back in the hand now.
  if (hidden_game_ && shown.trick >= 0) voids[caller] &= uint8_t(~caller_trump_void_before_show);
  for (int s = 0; s < 4; ++s) {
    if (s == me) continue;
    for (int k = 0; k < view.hand_size[s]; ++k) {
      slots_.push_back({static_cast<int8_t>(s), uint8_t(0xF & ~voids[s]), -1, false});
    }
  }
  for (const Slot& f : face_down_slots) {
    if (f.seat != me) slots_.push_back(f);
  }
  if (hidden_game_ && view.has_face_down && me != caller) {
    slots_.push_back({static_cast<int8_t>(caller), 0xF, -1, true});
  }
  for (const Slot& slot : slots_) ++open_by_suits_[slot.suits];
  model_call_ = rules.HasCall() && me != caller;
  std::stable_sort(slots_.begin(), slots_.end(), [](const Slot& a, const Slot& b) {
    return std::popcount(a.suits) < std::popcount(b.suits);
  });
  // The trump shown: the face-down card was one of the caller's trump-suit cards not played
  // face up before the show.
  if (hidden_game_ && shown.trick >= 0 && trump_known >= 0) {
    CardSet before;
    for (int t = 0; t < shown.trick && t <= view.num_tricks; ++t) {
      const rules::TrickRecord& tr = TrickAt(t);
      const int n = t < view.num_tricks ? 4 : view.current_size;
      for (int i = 0; i < n; ++i) {
        const int seat = (tr.leader + i) % 4;
        if (t + 1 == shown.trick && seat == shown.seat) break;
        if (seat == caller && tr.cards[i] != rules::kHiddenCard) before.Add(tr.cards[i]);
      }
    }
    show_candidates_ = CardSet::Suit(trump_known) & ~before;
  }
}

// Hall's condition: the open slots can take the pool's cards iff for every set of suits U
// the slots that may hold only suits in U number at most the pool's cards of U.
bool DealSampler::Feasible(CardSet pool, const std::array<int, 16>& open) {
  std::array<int, 4> per_suit{};
  for (int s = 0; s < 4; ++s) per_suit[s] = pool.InSuit(s).size();
  for (int u = 1; u < 16; ++u) {
    int need = 0, have = 0;
    for (int m = 1; m < 16; ++m) {
      if ((m & ~u) == 0) need += open[m];
    }
    for (int s = 0; s < 4; ++s) {
      if ((u >> s) & 1) have += per_suit[s];
    }
    if (need > have) return false;
  }
  return true;
}

bool DealSampler::Sample(SplitMix64& rng, Round* out, int max_tries) {
  for (int i = 0; i < max_tries; ++i) {
    ++draws_;
    // The call model is dropped for the last half of the tries: a consistent deal first.
    const bool model_call = model_call_ && i < max_tries / 2;
    if (Draw(rng, out, model_call)) return true;
    ++rejected_;
  }
  return false;
}

bool DealSampler::Draw(SplitMix64& rng, Round* out, bool model_call) {
  std::array<CardSet, 4> held = known_;
  std::vector<Card> face_down(face_down_.size(), 0);
  int hidden_card = view_.face_down_card;
  CardSet pool = pool_;
  std::array<int, 16> open = open_by_suits_;
  for (const Slot& slot : slots_) {
    CardSet allowed = pool & SuitsMask(slot.suits);
    --open[slot.suits];
    Card c = 0;
    for (;;) {
      if (allowed.empty()) return false;
      c = allowed.Nth(rng.Below(allowed.size()));
      pool.Remove(c);
      if (Feasible(pool, open)) break;
      // Whether the rest can be dealt depends only on the suit taken.
      pool.Add(c);
      allowed = allowed & ~CardSet::Suit(SuitOf(c));
    }
    if (slot.hidden) {
      hidden_card = c;
    } else if (slot.face_down >= 0) {
      face_down[static_cast<size_t>(slot.face_down)] = c;
    } else {
      held[static_cast<size_t>(slot.seat)].Add(c);
    }
  }
  const int caller = view_.caller;
  for (Card c : face_down) held[static_cast<size_t>(caller)].Add(c);
  if (hidden_game_ && hidden_card < 0) {
    // The trump is shown: pick the face-down card among the caller's possible ones.
    const CardSet candidates = held[static_cast<size_t>(caller)] & show_candidates_;
    if (candidates.empty()) return false;
    hidden_card = candidates.Nth(rng.Below(candidates.size()));
  } else if (hidden_game_) {
    held[static_cast<size_t>(caller)].Add(static_cast<Card>(hidden_card));
  }
  if (model_call && !CallPlausible(rng, held[static_cast<size_t>(caller)], hidden_card)) {
    return false;
  }
  return Replay(held, hidden_card, face_down, out);
}

// Callers name their strongest suit of their first five (the heuristic bot scores a suit
// 10 + rank per card; people do much the same). Five random cards of the sampled hand
// (with the face-down one in hidden) must make the trump such a suit: accepting with that
// probability weighs each deal by how likely the call was from it.
bool DealSampler::CallPlausible(SplitMix64& rng, CardSet caller_cards, int hidden_card) const {
  const int trump = hidden_game_ ? SuitOf(static_cast<Card>(hidden_card)) : view_.trump;
  std::array<int, 4> score{};
  CardSet rest = caller_cards;
  int picks = 5;
  if (hidden_game_) {
    rest.Remove(static_cast<Card>(hidden_card));
    score[trump] += 10 + rules::RankOf(static_cast<Card>(hidden_card));
    --picks;
  }
  for (int k = 0; k < picks && !rest.empty(); ++k) {
    const Card c = rest.Nth(rng.Below(rest.size()));
    rest.Remove(c);
    score[SuitOf(c)] += 10 + rules::RankOf(c);
  }
  for (int s = 0; s < 4; ++s) {
    if (score[s] > score[trump]) return false;
  }
  return true;
}

bool DealSampler::Replay(const std::array<CardSet, 4>& held, int hidden_card,
                         const std::vector<Card>& face_down, Round* out) const {
  Round::Hands hands{};
  const int caller = view_.caller;
  for (int s = 0; s < 4; ++s) {
    if (held[s].size() != 13) return false;
    int k = 0;
    if (s == caller && hidden_card >= 0) hands[s][k++] = static_cast<Card>(hidden_card);
    for (Card c : held[s]) {
      if (s == caller && c == hidden_card) continue;
      hands[s][k++] = c;
    }
  }
  absl::StatusOr<Round> dealt = Round::FromHands(rules_, view_.dealer, hands);
  if (!dealt.ok()) return false;
  Round& r = *out;
  r = *std::move(dealt);
  auto apply = [&r](const Move& m) {
    if (r.Check(m) != rules::ErrorCode::kOk) return false;
    r.ApplyChecked(m);
    return true;
  };
  if (hidden_game_) {
    if (!apply(Move::Hide(caller, static_cast<Card>(hidden_card)))) return false;
  } else if (rules_.HasCall()) {
    // Every seat knows the called trump in these games.
    if (!apply(Move::Call(caller, view_.trump))) return false;
  }
  const rules::TrumpEvent shown = view_.trump_shown;
  auto maybe_show = [&](int trick, int seat) {
    if (!hidden_game_ || r.trump_shown() || shown.trick != trick || shown.seat != seat) return;
    const Move m = seat == caller ? Move::Show(seat) : Move::Ask(seat);
    // A caller left with only the face-down card shows it by playing it.
    if (r.Check(m) == rules::ErrorCode::kOk) r.ApplyChecked(m);
  };
  size_t next_face_down = 0;
  for (int t = 0; t <= view_.num_tricks; ++t) {
    const rules::TrickRecord& tr = TrickAt(t);
    const int n = t < view_.num_tricks ? 4 : view_.current_size;
    for (int i = 0; i < n; ++i) {
      const int seat = (tr.leader + i) % 4;
      maybe_show(t + 1, seat);
      Card c = tr.cards[i];
      if (c == rules::kHiddenCard) c = face_down[next_face_down++];
      if (!apply(Move::Play(seat, c))) return false;
    }
  }
  if (r.over() || r.turn() != view_.turn) return false;
  maybe_show(view_.num_tricks + 1, r.turn());
  // The state must show this seat exactly what the view shows.
  if (r.hand(view_.seat) != view_.hand || r.trump_shown() != (shown.trick >= 0)) return false;
  if (view_.turn != view_.seat) return true;
  rules::MoveList legal;
  r.LegalMoves(&legal);
  if (legal.size != view_.legal.size) return false;
  for (int i = 0; i < legal.size; ++i) {
    if (!(legal[i] == view_.legal[i])) return false;
  }
  return true;
}

}  // namespace courtpiece::bots
