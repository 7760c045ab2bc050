// KeptHistory: what a resuming client gets is exactly its own events after its last seq,
// in order, whatever was trimmed and compacted in between; memory stays bounded.
#include "services/table/kept_history.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::table_service {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

std::vector<std::pair<uint64_t, std::string>> After(const KeptHistory& h, uint64_t seq,
                                                    const std::string& player) {
  std::vector<std::pair<uint64_t, std::string>> out;
  EXPECT_TRUE(h.ForEachAfter(seq, player, [&](uint64_t s, std::string_view bytes) {
    out.emplace_back(s, std::string(bytes));
    return true;
  }));
  return out;
}

TEST(KeptHistoryTest, GivesAPlayerItsOwnEventsAfterItsSeqInOrder) {
  KeptHistory h;
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.front_seq(), 0u);
  EXPECT_EQ(h.back_seq(), 0u);
  h.Push(1, "alice", "a1");
  h.Push(2, "bob", "b2");
  h.Push(3, "alice",
         std::string("a\0"
                     "3",
                     3));  // bytes, not C strings
  h.Push(5, "p-3f2a9c0d11e24b5a6f7081c2", "long id");
  EXPECT_EQ(h.size(), 4u);
  EXPECT_EQ(h.front_seq(), 1u);
  EXPECT_EQ(h.back_seq(), 5u);
  EXPECT_THAT(After(h, 0, "alice"), ElementsAre(Pair(1, "a1"), Pair(3, std::string("a\0"
                                                                                   "3",
                                                                                   3))));
  EXPECT_THAT(After(h, 1, "alice"), ElementsAre(Pair(3, std::string("a\0"
                                                                    "3",
                                                                    3))));
  EXPECT_THAT(After(h, 3, "alice"), IsEmpty());
  EXPECT_THAT(After(h, 0, "bob"), ElementsAre(Pair(2, "b2")));
  EXPECT_THAT(After(h, 4, "p-3f2a9c0d11e24b5a6f7081c2"), ElementsAre(Pair(5, "long id")));
  EXPECT_THAT(After(h, 0, "carol"), IsEmpty());
  EXPECT_THAT(After(h, 0, ""), IsEmpty());
}

TEST(KeptHistoryTest, StopsWhenTheCallbackSaysSo) {
  KeptHistory h;
  for (uint64_t s = 1; s <= 5; ++s) h.Push(s, "alice", absl::StrCat("e", s));
  int calls = 0;
  EXPECT_FALSE(h.ForEachAfter(0, "alice", [&](uint64_t, std::string_view) { return ++calls < 2; }));
  EXPECT_EQ(calls, 2);
}

TEST(KeptHistoryTest, TrimKeepsTheNewestAcrossManyCompactions) {
  KeptHistory h;
  const std::vector<std::string> players = {"p-north", "p-east", "p-south", "p-west"};
  for (uint64_t s = 1; s <= 10'000; ++s) {
    h.Push(s, players[s % 4], absl::StrCat("event-", s, std::string(s % 37, 'x')));
    h.TrimTo(256);
    ASSERT_EQ(h.size(), std::min<size_t>(s, 256));
  }
  EXPECT_EQ(h.front_seq(), 10'000u - 255);
  EXPECT_EQ(h.back_seq(), 10'000u);
  const auto east = After(h, 9'990, "p-east");  // seqs 9993, 9997 (s % 4 == 1)
  ASSERT_THAT(east, ElementsAre(Pair(9'993, ::testing::_), Pair(9'997, ::testing::_)));
  EXPECT_EQ(east[0].second, absl::StrCat("event-9993", std::string(9'993 % 37, 'x')));
  EXPECT_EQ(east[1].second, absl::StrCat("event-9997", std::string(9'997 % 37, 'x')));
  EXPECT_EQ(After(h, 0, "p-north").size(), 64u);
  // Bounded: the buffer holds the kept bytes plus at most a quarter more of dropped ones,
  // in a capacity that grew by doubling (so under 2.5x), the index 16 bytes per event.
  size_t kept_bytes = 0;
  for (const std::string& p : players) {
    for (const auto& [seq, bytes] : After(h, 0, p)) kept_bytes += bytes.size();
  }
  EXPECT_LE(h.HeapBytesForTest(), kept_bytes * 5 / 2 + 256 * 16 + 1024);
  h.TrimTo(0);
  EXPECT_TRUE(h.empty());
  EXPECT_THAT(After(h, 0, "p-north"), IsEmpty());
}

// Players come and go over a long-lived table: ids no kept event goes to are dropped, and
// the kept ones still find their events.
TEST(KeptHistoryTest, ManyPlayersOverTimeKeepTheirOwnEvents) {
  KeptHistory h;
  for (uint64_t s = 1; s <= 5'000; ++s) {
    h.Push(s, absl::StrCat("player-", s / 10), absl::StrCat("e", s));
    h.TrimTo(30);
  }
  EXPECT_EQ(h.size(), 30u);
  EXPECT_THAT(After(h, 0, "player-499"),
              ElementsAre(Pair(4'990, "e4990"), Pair(4'991, "e4991"), Pair(4'992, "e4992"),
                          Pair(4'993, "e4993"), Pair(4'994, "e4994"), Pair(4'995, "e4995"),
                          Pair(4'996, "e4996"), Pair(4'997, "e4997"), Pair(4'998, "e4998"),
                          Pair(4'999, "e4999")));
  EXPECT_THAT(After(h, 0, "player-500"), ElementsAre(Pair(5'000, "e5000")));
  EXPECT_THAT(After(h, 0, "player-400"), IsEmpty());
  EXPECT_LE(h.HeapBytesForTest(), 16'384u);
}

TEST(KeptHistoryDeathTest, OutOfOrderSeqIsAProgrammerError) {
  KeptHistory h;
  h.Push(7, "alice", "x");
  EXPECT_DEATH(h.Push(7, "alice", "y"), "seq order");
}

}  // namespace
}  // namespace courtpiece::table_service
