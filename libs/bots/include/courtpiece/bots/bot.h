// The heuristic Court Piece bot. It decides from one seat's view (rules::SeatView, the
// engine's only outward view of a round) and the table's public rules, so it cannot see a
// card its seat may not see. It plays every game type: names trump on its strongest suit
// (hidden: lays down a low card of it), wins tricks cheaply, does not overtake a winning
// partner, throws low, keeps aces the ace rule makes weak, and asks / shows in hidden when
// that should win the trick.
//
// Used by libs/table for bots, timeouts and absent players, and by
// `courtpiece-rules selfplay --policy bot` (call courtpiece::bots::ChooseMove).
// Thread-safety: pure functions.
#ifndef COURTPIECE_BOTS_BOT_H_
#define COURTPIECE_BOTS_BOT_H_

#include <cstdint>

#include "courtpiece/rules/round.h"
#include "courtpiece/rules/rules.h"

namespace courtpiece::bots {

// A legal move for view.seat. Precondition: it is that seat's turn (view.legal not empty).
rules::Move ChooseMove(const rules::Rules& rules, const rules::SeatView& view);

// A uniformly random legal move (the baseline "random player"); advances `rng_state`
// (splitmix64).
rules::Move RandomMove(const rules::SeatView& view, uint64_t& rng_state);

}  // namespace courtpiece::bots

#endif  // COURTPIECE_BOTS_BOT_H_
