// Deals consistent with one seat's view (rules::SeatView, all a bot gets), for Perfect
// Information Monte Carlo: each sample is a rules::Round in exactly the view's state.
//
// What a sample respects: the seat's own cards; every card played face up, by its player;
// the voids revealed by not following suit (and by not trumping after an ask or a show);
// each seat's hand size; in hidden, the caller's face-down throws (unseen cards of another
// suit than the one led) and, for the other seats, the face-down trump card (any unseen
// card of the caller until the trump is shown, so the trump suit is drawn with it); the
// call. The sample is then replayed from the deal through the view's history (call, every
// card, the ask or show where the view puts it) with the engine's own checks, so pickups,
// piles, stack and marker are the engine's, and a deal that breaks any rule is rejected
// and drawn again. Cards are dealt to the tightest seats first, uniformly among the cards
// they may hold (never into a dead end: each card keeps the rest dealable, by Hall's
// condition on the suits), and, when another seat called, weighed by how likely the call
// was from the deal (CallPlausible, in the first half of the tries): consistent, close
// to but not exactly the posterior (docs/bots.md).
// Thread-safety: a DealSampler is a value (Sample() updates its counters); one per thread.
#ifndef COURTPIECE_BOTS_SAMPLER_H_
#define COURTPIECE_BOTS_SAMPLER_H_

#include <array>
#include <cstdint>
#include <vector>

#include "courtpiece/common/splitmix64.h"
#include "courtpiece/rules/round.h"
#include "courtpiece/rules/rules.h"

namespace courtpiece::bots {

class DealSampler {
 public:
  // Precondition: view.phase is kPlay (the call or hide is made; kaat: always).
  DealSampler(const rules::Rules& rules, const rules::SeatView& view);

  // Draws a deal into *out in the view's state; false when `max_tries` draws were all
  // rejected (the caller then falls back to a heuristic).
  bool Sample(SplitMix64& rng, rules::Round* out, int max_tries = 64);

  int64_t draws() const { return draws_; }
  int64_t rejected() const { return rejected_; }

 private:
  struct Slot {
    int8_t seat = 0;
    uint8_t suits = 0xF;    // suits the card may be of (bit per suit)
    int8_t face_down = -1;  // index into face_down_ positions, or -1
    bool hidden = false;    // the caller's face-down trump card
  };
  struct Position {
    int8_t trick = 0;  // 0-based; num_tricks = the trick in progress
    int8_t index = 0;
  };

  bool Draw(SplitMix64& rng, rules::Round* out, bool model_call);
  bool CallPlausible(SplitMix64& rng, rules::CardSet caller_cards, int hidden_card) const;
  static bool Feasible(rules::CardSet pool, const std::array<int, 16>& open);
  bool Replay(const std::array<rules::CardSet, 4>& held, int hidden_card,
              const std::vector<rules::Card>& face_down, rules::Round* out) const;
  const rules::TrickRecord& TrickAt(int t) const;

  rules::Rules rules_;
  rules::SeatView view_;
  bool hidden_game_ = false;
  std::array<rules::CardSet, 4> known_{};  // cards each seat is known to have held
  rules::CardSet pool_;                    // unseen cards
  std::vector<Slot> slots_;                // one per unseen card, tightest first
  std::array<int, 16> open_by_suits_{};    // slots per suit mask
  std::vector<Position> face_down_;        // unseen face-down throws, in play order
  rules::CardSet show_candidates_;         // hidden, trump shown: cards the face-down one may be
  bool model_call_ = false;  // another seat called: weigh deals by the call (CallPlausible)
  int64_t draws_ = 0;
  int64_t rejected_ = 0;
};

}  // namespace courtpiece::bots

#endif  // COURTPIECE_BOTS_SAMPLER_H_
