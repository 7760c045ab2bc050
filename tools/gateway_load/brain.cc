#include "brain.h"

#include <algorithm>

#include "services/gateway/testing/scripted_player.h"

namespace courtpiece::gateway_load {

namespace cv1 = ::courtpiece::client::v1;

namespace {

std::string SuitOf(const std::string& card) {
  return card.empty() ? std::string() : card.substr(card.size() - 1);
}

}  // namespace

void SeatBrain::ClearRound() {
  hand_.clear();
  calling_ = false;
  led_suit_.clear();
  turn_seq_ = 0;
}

void SeatBrain::OnOpened(const cv1::Opened& opened) {
  if (opened.seat() >= 0) seat_ = opened.seat();
  if (opened.resumed()) return;
  ClearRound();  // a fresh view follows
  taken_ = {};
  for (const cv1::SeatInfo& s : opened.table().seats()) {
    if (s.seat() >= 0 && s.seat() < 4) taken_[s.seat()] = s.kind() != "empty";
  }
}

void SeatBrain::OnEvent(const cv1::TableEvent& e) {
  const std::string& type = e.type();
  const bool mine = seat_ >= 0 && e.seat() == seat_;
  if (type == "seated" && e.seat() >= 0 && e.seat() < 4) {
    taken_[e.seat()] = true;
    if (!player_id_.empty() && e.player() == player_id_) seat_ = e.seat();
  } else if (type == "unseated" && e.seat() >= 0 && e.seat() < 4) {
    taken_[e.seat()] = false;
    if (mine) {
      seat_ = -1;
      ClearRound();
    }
  } else if (type == "back" && mine) {
    ClearRound();  // a fresh view of the seat follows
  } else if ((type == "hand" || type == "cards") && mine) {
    hand_.assign(e.cards().begin(), e.cards().end());
    calling_ = e.detail() == "first_five";
  } else if (type == "round" || type == "trick") {
    led_suit_.clear();
  } else if (type == "played" && e.cards_size() == 1) {
    const std::string& card = e.cards(0);
    if (led_suit_.empty() && card != "??") led_suit_ = SuitOf(card);
    if (mine) hand_.erase(std::remove(hand_.begin(), hand_.end(), card), hand_.end());
  } else if (type == "turn") {
    turn_seq_ = mine ? e.seq() : 0;
  } else if (type == "round_result" || type == "game_over") {
    turn_seq_ = 0;
    led_suit_.clear();
  }
  if (mine && (type == "played" || type == "trump" || type == "hidden" || type == "asked" ||
               type == "shown")) {
    TurnDone(turn_seq_);
  }
}

void SeatBrain::TurnDone(uint64_t turn_seq) { done_turn_seq_ = std::max(done_turn_seq_, turn_seq); }

std::vector<cv1::TableCommand> SeatBrain::Candidates() const {
  return gateway::testing::ScriptedPlayer::Candidates(hand_, calling_, led_suit_);
}

int SeatBrain::seats_taken() const {
  return static_cast<int>(std::count(taken_.begin(), taken_.end(), true));
}

}  // namespace courtpiece::gateway_load
