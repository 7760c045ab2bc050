#include "brain.h"

#include <gtest/gtest.h>

namespace courtpiece::gateway_load {
namespace {

namespace cv1 = ::courtpiece::client::v1;

cv1::TableEvent Event(uint64_t seq, const std::string& type, int seat,
                      std::vector<std::string> cards = {}, const std::string& detail = "",
                      const std::string& player = "") {
  cv1::TableEvent e;
  e.set_seq(seq);
  e.set_type(type);
  e.set_seat(seat);
  for (const std::string& c : cards) e.add_cards(c);
  e.set_detail(detail);
  e.set_player(player);
  return e;
}

cv1::Opened OpenedAt(int seat, bool resumed = false) {
  cv1::Opened o;
  o.set_seat(seat);
  o.set_resumed(resumed);
  for (int s = 0; s < 4; ++s) {
    cv1::SeatInfo* info = o.mutable_table()->add_seats();
    info->set_seat(s);
    info->set_kind(s == 0 ? "person" : "empty");
  }
  return o;
}

TEST(SeatBrainTest, JoinSeatsByPlayerIdAndCountsSeats) {
  SeatBrain b;
  b.set_player_id("p-me");
  b.OnOpened(OpenedAt(-1));
  EXPECT_EQ(b.seat(), -1);
  EXPECT_EQ(b.seats_taken(), 1);
  b.OnEvent(Event(2, "seated", 1, {}, "person", "p-other"));
  b.OnEvent(Event(3, "seated", 2, {}, "person", "p-me"));
  EXPECT_EQ(b.seat(), 2);
  EXPECT_EQ(b.seats_taken(), 3);
  b.OnEvent(Event(4, "unseated", 1, {}, "left", "p-other"));
  EXPECT_EQ(b.seats_taken(), 2);
}

TEST(SeatBrainTest, CallPhaseThenFollowsTheLedSuit) {
  SeatBrain b;
  b.OnOpened(OpenedAt(0));
  b.OnEvent(Event(5, "hand", 0, {"TC", "AC", "KH", "AH", "7S"}, "first_five"));
  EXPECT_EQ(b.due_turn(), 0u);
  b.OnEvent(Event(6, "turn", 0));
  ASSERT_EQ(b.due_turn(), 6u);
  std::vector<cv1::TableCommand> c = b.Candidates();
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c[0].move(), "call");
  EXPECT_EQ(c[0].card(), "S");
  b.OnEvent(Event(7, "trump", 0, {}, "S"));
  EXPECT_EQ(b.due_turn(), 0u);  // its call ended the turn
  b.OnEvent(Event(8, "hand", 0, {"TC", "AC", "KH", "AH", "7S", "2D"}, "full"));
  b.OnEvent(Event(9, "played", 3, {"5H"}));  // seat 3 led hearts
  b.OnEvent(Event(10, "turn", 0));
  c = b.Candidates();
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c[0].move(), "play");
  EXPECT_EQ(c[0].card(), "KH");  // the led suit first, in hand order
  EXPECT_EQ(c[1].card(), "AH");
  b.OnEvent(Event(11, "played", 0, {"KH"}));
  EXPECT_EQ(b.due_turn(), 0u);
  EXPECT_EQ(b.hand().size(), 5u);
}

TEST(SeatBrainTest, TurnDoneAndAnotherSeatsTurnEndTheDueTurn) {
  SeatBrain b;
  b.OnOpened(OpenedAt(0));
  b.OnEvent(Event(3, "turn", 0));
  EXPECT_EQ(b.due_turn(), 3u);
  b.TurnDone(3);
  EXPECT_EQ(b.due_turn(), 0u);
  b.OnEvent(Event(5, "turn", 0));
  EXPECT_EQ(b.due_turn(), 5u);
  b.OnEvent(Event(6, "turn", 1));
  EXPECT_EQ(b.due_turn(), 0u);
}

TEST(SeatBrainTest, AFreshViewClearsTheRoundButAResumeKeepsIt) {
  SeatBrain b;
  b.OnOpened(OpenedAt(0));
  b.OnEvent(Event(4, "hand", 0, {"AS", "KS"}, "full"));
  b.OnOpened(OpenedAt(0, /*resumed=*/true));
  EXPECT_EQ(b.hand().size(), 2u);
  b.OnEvent(Event(9, "back", 0));
  EXPECT_TRUE(b.hand().empty());
  b.OnEvent(Event(10, "hand", 0, {"AS"}, "full"));
  b.OnOpened(OpenedAt(0));
  EXPECT_TRUE(b.hand().empty());
}

}  // namespace
}  // namespace courtpiece::gateway_load
