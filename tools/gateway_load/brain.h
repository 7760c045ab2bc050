// The play mode's event -> command "brain" of one seat, without I/O or clocks: it follows
// the seat's events as ScriptedPlayer does (services/gateway/testing/scripted_player.h) and
// offers ScriptedPlayer::Candidates for a due turn, so the load plays the same way the tests'
// players do without knowing the rules (the table refuses what is illegal).
//   * the hand: replaced by `hand` / `cards` events of its seat, a card dropped when `played`
//     shows it; the call phase while the hand's detail is "first_five";
//   * the led suit: the first `played` card after `round` / `trick` / `round_result`;
//   * a `turn` naming its seat makes that turn due (by the event's seq) until TurnDone(seq)
//     or one of its moves shows (`played`, `trump`, `hidden`, `asked`, `shown`);
//   * a fresh view (opened, not resumed; `back` of its own seat) clears the round state;
//   * the seats taken (`seated` / `unseated`), for a host waiting for a full table.
// Thread-safety: none; one thread (the player's strand) at a time.
#ifndef COURTPIECE_TOOLS_GATEWAY_LOAD_BRAIN_H_
#define COURTPIECE_TOOLS_GATEWAY_LOAD_BRAIN_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "courtpiece/client/v1/client.pb.h"

namespace courtpiece::gateway_load {

class SeatBrain {
 public:
  // Its own `seated` event (after a join) names the seat.
  void set_player_id(std::string id) { player_id_ = std::move(id); }
  void OnOpened(const client::v1::Opened& opened);
  void OnEvent(const client::v1::TableEvent& e);

  int seat() const { return seat_; }
  // The seq of the due turn, 0 for none.
  uint64_t due_turn() const { return turn_seq_ > done_turn_seq_ ? turn_seq_ : 0; }
  void TurnDone(uint64_t turn_seq);
  std::vector<client::v1::TableCommand> Candidates() const;
  int seats_taken() const;
  const std::vector<std::string>& hand() const { return hand_; }

 private:
  void ClearRound();

  std::string player_id_;
  int seat_ = -1;
  std::vector<std::string> hand_;
  bool calling_ = false;
  std::string led_suit_;
  uint64_t turn_seq_ = 0;
  uint64_t done_turn_seq_ = 0;
  std::array<bool, 4> taken_{};
};

}  // namespace courtpiece::gateway_load

#endif  // COURTPIECE_TOOLS_GATEWAY_LOAD_BRAIN_H_
