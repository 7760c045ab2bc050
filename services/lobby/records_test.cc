// Unit tests of the records domain on the in-memory store (fake clock, no I/O).
#include "services/lobby/records.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "courtpiece/common/status_matchers.h"
#include "services/lobby/fake_records_store.h"
#include "services/lobby/records_test_util.h"

namespace courtpiece::lobby {
namespace {

using common::IsOk;
using common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using C = absl::StatusCode;
namespace t = testing;

class RecordsTest : public ::testing::Test {
 protected:
  absl::Time Deadline() const { return clock_.Now() + absl::Seconds(5); }
  GameTypeStats StatsOf(const std::string& player, const std::string& game) {
    absl::StatusOr<StatsView> v = records_.Stats(player, Deadline());
    EXPECT_THAT(v, IsOk());
    if (!v.ok()) return {};
    if (game.empty()) return v->total;
    for (const GameTypeStats& g : v->by_game) {
      if (g.game == game) return g;
    }
    return {};
  }

  FakeClock clock_;
  FakeRecordsStore store_;
  std::vector<std::string> closed_;
  Records records_{store_, clock_, RecordsOptions{},
                   [this](std::string_view id) { closed_.emplace_back(id); }};
};

TEST_F(RecordsTest, ACountingGameAddsPlayedWonLostAndTheTeamsCourts) {
  absl::StatusOr<ApplyResult> r = records_.RecordGame(t::Game("t1", 1), Deadline());
  ASSERT_THAT(r, IsOk());
  EXPECT_FALSE(r->replayed);
  GameTypeStats a = StatsOf("alice", "classic");
  EXPECT_EQ(a.played, 1);
  EXPECT_EQ(a.won, 1);
  EXPECT_EQ(a.lost, 0);
  EXPECT_EQ(a.courts, 2);
  EXPECT_EQ(a.goon_courts, 1);
  GameTypeStats b = StatsOf("bob", "classic");
  EXPECT_EQ(b.played, 1);
  EXPECT_EQ(b.won, 0);
  EXPECT_EQ(b.lost, 1);
  EXPECT_EQ(b.courts, 1);
  EXPECT_EQ(b.goon_courts, 0);
}

TEST_F(RecordsTest, AReplayChangesNothingAndOtherContentIsRefused) {
  ASSERT_THAT(records_.RecordGame(t::Game("t1", 1), Deadline()), IsOk());
  absl::StatusOr<ApplyResult> again = records_.RecordGame(t::Game("t1", 1), Deadline());
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(again->replayed);
  GameRecordData other = t::Game("t1", 1);
  other.scores = {5, 3};
  EXPECT_THAT(records_.RecordGame(other, Deadline()), StatusIs(C::kAlreadyExists));
  EXPECT_EQ(StatsOf("alice", "classic").played, 1);
  EXPECT_EQ(StatsOf("bob", "").played, 1);
  absl::StatusOr<std::vector<PlayerGameResult>> recent =
      records_.RecentResults("alice", 0, Deadline());
  ASSERT_THAT(recent, IsOk());
  EXPECT_EQ(recent->size(), 1u);
}

TEST_F(RecordsTest, PlayersInAnotherOrderAreTheSameContent) {
  GameRecordData g = t::Game("t1", 1);
  ASSERT_THAT(records_.RecordGame(g, Deadline()), IsOk());
  std::swap(g.players[0], g.players[1]);
  absl::StatusOr<ApplyResult> again = records_.RecordGame(g, Deadline());
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(again->replayed);
}

TEST_F(RecordsTest, BotOnlyAndEndedEarlyGamesAreRecordedButDoNotCount) {
  GameRecordData solo = t::Game("t1", 1);
  solo.counts_for_stats = false;
  solo.players = {{"alice", 0, true}};
  ASSERT_THAT(records_.RecordGame(solo, Deadline()), IsOk());
  GameRecordData early = t::Game("t1", 2);
  early.counts_for_stats = false;
  early.ended_early = true;
  early.winning_team = -1;
  early.players = {{"alice", 0, false}, {"bob", 1, false}};
  ASSERT_THAT(records_.RecordGame(early, Deadline()), IsOk());
  EXPECT_EQ(StatsOf("alice", "").played, 0);
  EXPECT_EQ(StatsOf("bob", "").played, 0);
  absl::StatusOr<std::vector<PlayerGameResult>> recent =
      records_.RecentResults("alice", 0, Deadline());
  ASSERT_THAT(recent, IsOk());
  ASSERT_EQ(recent->size(), 2u);
  EXPECT_EQ((*recent)[0].game_no, 2u);  // newest first
  EXPECT_EQ((*recent)[0].winning_team, -1);
  EXPECT_FALSE((*recent)[0].counts_for_stats);
  EXPECT_EQ((*recent)[1].game_no, 1u);
}

TEST_F(RecordsTest, QuitsCountPerGameTypeAndList) {
  ASSERT_THAT(records_.RecordQuit(t::Quit("t1", 1, "bob"), Deadline()), IsOk());
  clock_.Advance(absl::Seconds(1));
  ASSERT_THAT(records_.RecordQuit(t::Quit("t2", 3, "bob", "piles"), Deadline()), IsOk());
  absl::StatusOr<ApplyResult> again =
      records_.RecordQuit(t::Quit("t2", 3, "bob", "piles"), Deadline());
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(StatsOf("bob", "classic").quits, 1);
  EXPECT_EQ(StatsOf("bob", "piles").quits, 1);
  EXPECT_EQ(StatsOf("bob", "").quits, 2);
  EXPECT_EQ(StatsOf("bob", "").played, 0);
  absl::StatusOr<std::vector<QuitRow>> quits = records_.Quits("bob", 0, Deadline());
  ASSERT_THAT(quits, IsOk());
  ASSERT_EQ(quits->size(), 2u);
  EXPECT_EQ((*quits)[0].table_id, "t2");
  EXPECT_EQ((*quits)[0].game, "piles");
  EXPECT_EQ((*quits)[1].table_id, "t1");
  EXPECT_EQ(*records_.QuitsTotal("bob", Deadline()), 2);
  EXPECT_EQ(*records_.QuitsTotal("alice", Deadline()), 0);
}

TEST_F(RecordsTest, StatsAreSortedByGameWithATotal) {
  GameRecordData piles = t::Game("t2", 1);
  piles.game = "piles";
  ASSERT_THAT(records_.RecordGame(piles, Deadline()), IsOk());
  ASSERT_THAT(records_.RecordGame(t::Game("t1", 1), Deadline()), IsOk());
  absl::StatusOr<StatsView> v = records_.Stats("alice", Deadline());
  ASSERT_THAT(v, IsOk());
  ASSERT_EQ(v->by_game.size(), 2u);
  EXPECT_EQ(v->by_game[0].game, "classic");
  EXPECT_EQ(v->by_game[1].game, "piles");
  EXPECT_EQ(v->total.game, "");
  EXPECT_EQ(v->total.played, 2);
  EXPECT_EQ(v->total.won, 2);
  EXPECT_EQ(v->total.courts, 4);
  EXPECT_EQ(v->total.goon_courts, 2);
}

TEST_F(RecordsTest, RoundsPageOldestFirst) {
  for (uint64_t r = 1; r <= 5; ++r) {
    ASSERT_THAT(records_.RecordRound(t::Round("t1", r), Deadline()), IsOk());
  }
  ASSERT_THAT(records_.RecordRound(t::Round("t2", 1), Deadline()), IsOk());
  absl::StatusOr<std::vector<RoundRow>> page = records_.Rounds("t1", 2, 2, Deadline());
  ASSERT_THAT(page, IsOk());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].round, 3u);
  EXPECT_EQ((*page)[1].round, 4u);
  EXPECT_THAT(records_.Rounds("t1", 0, 1001, Deadline()),
              StatusIs(C::kInvalidArgument, HasSubstr("limit")));
  RoundRecordData other = t::Round("t1", 1);
  other.result = "court 2-0";
  EXPECT_THAT(records_.RecordRound(other, Deadline()), StatusIs(C::kAlreadyExists));
}

TEST_F(RecordsTest, TableClosedCallsTheCallbackOnEveryOk) {
  ASSERT_THAT(records_.RecordTableClosed(t::Closed("t1"), Deadline()), IsOk());
  absl::StatusOr<ApplyResult> again = records_.RecordTableClosed(t::Closed("t1"), Deadline());
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(again->replayed);
  EXPECT_THAT(closed_, ElementsAre("t1", "t1"));
  EXPECT_THAT(records_.RecordTableClosed({.key = "t1:close", .table_id = "t1"}, Deadline()),
              StatusIs(C::kInvalidArgument, HasSubstr("key")));
  EXPECT_EQ(closed_.size(), 2u);
  EXPECT_TRUE(*store_.TableClosed("t1", Deadline()));
}

TEST_F(RecordsTest, AKeyOfAnotherKindIsRefused) {
  // A round record whose key text equals a game key cannot pass validation, so forge it at
  // the store: the kind is part of the stored identity.
  ASSERT_THAT(records_.RecordGame(t::Game("t1", 1), Deadline()), IsOk());
  EXPECT_THAT(store_
                  .ApplyQuit(t::Quit("t1", 1, "x"), CanonicalHash(t::Game("t1", 1)), clock_.Now(),
                             Deadline())
                  .status(),
              IsOk());  // a different key: fine
  QuitRecordData forged = t::Quit("t1", 1, "x");
  forged.key = "t1:game:1";
  EXPECT_THAT(store_.ApplyQuit(forged, CanonicalHash(t::Game("t1", 1)), clock_.Now(), Deadline()),
              StatusIs(C::kAlreadyExists));
}

TEST_F(RecordsTest, ValidationNamesTheField) {
  struct Case {
    std::string name;
    std::function<void(GameRecordData&)> edit;
    std::string field;
  };
  std::vector<Case> cases = {
      {"key", [](GameRecordData& g) { g.key = "t1:game:2"; }, "key"},
      {"table", [](GameRecordData& g) { g.table_id = "t 1"; }, "table_id"},
      {"game_no", [](GameRecordData& g) { g.game_no = 0; }, "game_no"},
      {"game", [](GameRecordData& g) { g.game = "poker"; }, "game"},
      {"scores", [](GameRecordData& g) { g.scores = {1}; }, "scores"},
      {"negative",
       [](GameRecordData& g) {
         g.scores = {-1, 2};
       },
       "scores"},
      {"courts",
       [](GameRecordData& g) {
         g.courts = {1, 1, 1};
       },
       "courts"},
      {"goon",
       [](GameRecordData& g) {
         g.goon_courts = {3, 0};
       },
       "goon_courts"},
      {"team", [](GameRecordData& g) { g.winning_team = 2; }, "winning_team"},
      {"early team", [](GameRecordData& g) { g.ended_early = true; }, "winning_team"},
      {"early counts",
       [](GameRecordData& g) {
         g.ended_early = true;
         g.winning_team = -1;
         for (auto& p : g.players) p.won = false;
       },
       "counts_for_stats"},
      {"seat", [](GameRecordData& g) { g.players[1].seat = 4; }, "players.seat"},
      {"seat twice", [](GameRecordData& g) { g.players[1].seat = 0; }, "players.seat"},
      {"player twice", [](GameRecordData& g) { g.players[1].player = "alice"; }, "players.player"},
      {"won", [](GameRecordData& g) { g.players[1].won = true; }, "players.won"},
      {"five",
       [](GameRecordData& g) {
         g.players = {
             {"a", 0, true}, {"b", 1, false}, {"c", 2, true}, {"d", 3, false}, {"e", 0, true}};
       },
       "players"},
  };
  for (const Case& c : cases) {
    GameRecordData g = t::Game("t1", 1);
    c.edit(g);
    EXPECT_THAT(records_.RecordGame(g, Deadline()),
                StatusIs(C::kInvalidArgument, HasSubstr(c.field + ":")))
        << c.name;
  }
  EXPECT_EQ(store_.keys(), 0u);
  RoundRecordData r = t::Round("t1", 1);
  r.seed_hex = std::string(64, 'G');
  EXPECT_THAT(records_.RecordRound(r, Deadline()),
              StatusIs(C::kInvalidArgument, HasSubstr("seed_hex")));
  r = t::Round("t1", 1);
  r.seed_only_to = 4;
  EXPECT_THAT(records_.RecordRound(r, Deadline()),
              StatusIs(C::kInvalidArgument, HasSubstr("seed_only_to")));
  QuitRecordData q = t::Quit("t1", 1, "bob");
  q.key = "t1:quit:1:alice";
  EXPECT_THAT(records_.RecordQuit(q, Deadline()), StatusIs(C::kInvalidArgument, HasSubstr("key")));
  EXPECT_THAT(records_.Stats("", Deadline()),
              StatusIs(C::kInvalidArgument, HasSubstr("player_id")));
}

TEST_F(RecordsTest, UnavailableIsRetriedWithTheKeyAndALostReplyIsAReplay) {
  store_.FailNext(2, absl::UnavailableError("down"));
  absl::StatusOr<ApplyResult> r = records_.RecordGame(t::Game("t1", 1), Deadline());
  ASSERT_THAT(r, IsOk());
  EXPECT_FALSE(r->replayed);
  EXPECT_EQ(store_.calls(), 3);

  store_.LoseNextReplies(1);  // committed, reply lost: the retry answers "replayed"
  r = records_.RecordGame(t::Game("t1", 2), Deadline());
  ASSERT_THAT(r, IsOk());
  EXPECT_TRUE(r->replayed);
  EXPECT_EQ(StatsOf("alice", "classic").played, 2);

  store_.FailNext(3, absl::UnavailableError("down"));
  EXPECT_THAT(records_.RecordGame(t::Game("t1", 3), Deadline()), StatusIs(C::kUnavailable));
  store_.FailNext(1, absl::InternalError("bug"));
  EXPECT_THAT(records_.RecordGame(t::Game("t1", 3), Deadline()), StatusIs(C::kInternal));
  EXPECT_EQ(StatsOf("alice", "classic").played, 2);
}

TEST_F(RecordsTest, APassedDeadlineCallsNoStore) {
  const int before = store_.calls();
  EXPECT_THAT(records_.RecordGame(t::Game("t1", 1), clock_.Now()), StatusIs(C::kDeadlineExceeded));
  EXPECT_EQ(store_.calls(), before);
}

TEST_F(RecordsTest, LimitsHaveDefaultsAndMaxima) {
  for (uint64_t g = 1; g <= 25; ++g) {
    ASSERT_THAT(records_.RecordGame(t::Game("t1", g), Deadline()), IsOk());
  }
  EXPECT_EQ(records_.RecentResults("alice", 0, Deadline())->size(), 20u);
  EXPECT_EQ(records_.RecentResults("alice", 3, Deadline())->size(), 3u);
  EXPECT_EQ(records_.RecentResults("alice", 100, Deadline())->size(), 25u);
  EXPECT_THAT(records_.RecentResults("alice", 101, Deadline()), StatusIs(C::kInvalidArgument));
  EXPECT_THAT(records_.RecentResults("alice", -1, Deadline()), StatusIs(C::kInvalidArgument));
  EXPECT_THAT(records_.Quits("alice", 501, Deadline()), StatusIs(C::kInvalidArgument));
}

}  // namespace
}  // namespace courtpiece::lobby
