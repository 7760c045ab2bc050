// Test-only: a tiny scripted "table" for one seat (seat 1), the canned behaviour the stand-in
// servers and the in-memory transport of this directory's tests answer with. It keeps every
// event with its seq, so an open with last_seq resumes (opened.resumed, the events after it)
// like the table does, or, with `double_on_resume`, wrongly repeats the last one.
//
// The game: open -> opened{seat 1}, `hand` first_five [AS KS 2H 3D 4C] (seq 1), `turn` seat 1
// (seq 2). Call S: FAILED_PRECONDITION "call another suit"; call H: OK -> `trump` H, `hand`
// full [AS KS 2H 3D 4C 9D], `turn` seat 2, `played` seat 2 [5D], `turn` seat 1. Play a card
// not of suit D: FAILED_PRECONDITION "follow suit"; play a D: OK -> `played` seat 1,
// `trick`, `round_result`, `game_over`. Other commands: "join" OK, else INVALID_ARGUMENT.
// Thread-safety: none; one connection's handler at a time.
#ifndef COURTPIECE_SERVICES_GATEWAY_TESTING_FAKE_GAME_FOR_TEST_H_
#define COURTPIECE_SERVICES_GATEWAY_TESTING_FAKE_GAME_FOR_TEST_H_

#include <string>
#include <vector>

#include "courtpiece/client/v1/client.pb.h"

namespace courtpiece::gateway::testing {

class FakeGame {
 public:
  std::vector<client::v1::PlayResponse> Open(const client::v1::OpenTable& open) {
    opens.push_back(open);
    std::vector<client::v1::PlayResponse> out;
    client::v1::PlayResponse opened;
    opened.mutable_opened()->mutable_table()->set_table_id(open.table_id());
    opened.mutable_opened()->set_seat(1);
    const bool resumed = open.last_seq() > 0 && open.last_seq() <= seq_;
    opened.mutable_opened()->set_resumed(resumed);
    out.push_back(opened);
    if (resumed) {
      for (const client::v1::PlayResponse& e : history_) {
        if (e.event().seq() > open.last_seq() ||
            (double_on_resume && e.event().seq() == open.last_seq())) {
          out.push_back(e);
        }
      }
      return out;
    }
    if (seq_ == 0) {
      Event(out, "hand", 1, {"AS", "KS", "2H", "3D", "4C"}, "first_five");
      Event(out, "turn", 1, {}, "");
    } else {  // a fresh view: the hand and the turn again, as new events
      Event(out, "hand", 1, hand_, called_ ? "full" : "first_five");
      Event(out, "turn", 1, {}, "");
    }
    return out;
  }

  std::vector<client::v1::PlayResponse> Command(const client::v1::TableCommand& c) {
    commands.push_back(c);
    std::vector<client::v1::PlayResponse> out;
    auto result = [&](int code, const std::string& message) {
      client::v1::PlayResponse r;
      r.mutable_result()->set_command_id(c.command_id());
      r.mutable_result()->set_code(code);
      r.mutable_result()->set_message(message);
      out.push_back(r);
    };
    if (c.type() == "join") {
      result(0, "");
    } else if (c.type() == "move" && c.move() == "call" && !called_) {
      if (c.card() != "H") {
        result(9, "call another suit");
      } else {
        called_ = true;
        hand_ = {"AS", "KS", "2H", "3D", "4C", "9D"};
        Event(out, "trump", 1, {}, "H");
        Event(out, "hand", 1, hand_, "full");
        Event(out, "turn", 2, {}, "");
        Event(out, "played", 2, {"5D"}, "");
        Event(out, "turn", 1, {}, "");
        result(0, "");
      }
    } else if (c.type() == "move" && c.move() == "play" && called_ && !over_) {
      if (c.card().empty() || c.card().back() != 'D') {
        result(9, "follow suit");
      } else {
        over_ = true;
        Event(out, "played", 1, {c.card()}, "");
        Event(out, "trick", 2, {}, "");
        Event(out, "round_result", -1, {}, "");
        Event(out, "game_over", -1, {}, "");
        result(0, "");
      }
    } else {
      result(3, "unknown move");
    }
    return out;
  }

  bool double_on_resume = false;
  std::vector<client::v1::OpenTable> opens;
  std::vector<client::v1::TableCommand> commands;

 private:
  void Event(std::vector<client::v1::PlayResponse>& out, const std::string& type, int seat,
             const std::vector<std::string>& cards, const std::string& detail) {
    client::v1::PlayResponse m;
    client::v1::TableEvent* e = m.mutable_event();
    e->set_seq(++seq_);
    e->set_type(type);
    e->set_seat(seat);
    for (const std::string& card : cards) e->add_cards(card);
    e->set_detail(detail);
    history_.push_back(m);
    out.push_back(m);
  }

  uint64_t seq_ = 0;
  bool called_ = false;
  bool over_ = false;
  std::vector<std::string> hand_ = {"AS", "KS", "2H", "3D", "4C"};
  std::vector<client::v1::PlayResponse> history_;
};

}  // namespace courtpiece::gateway::testing

#endif  // COURTPIECE_SERVICES_GATEWAY_TESTING_FAKE_GAME_FOR_TEST_H_
