// Integration tests of the records domain on real Postgres (COURTPIECE_TEST_PG_URL), a fresh
// database per test: replays, other content, concurrent duplicates, a backend killed
// mid-record.
#include "services/lobby/pg_records_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/common/status_macros.h"
#include "courtpiece/common/status_matchers.h"
#include "courtpiece/storage/testing.h"
#include "services/lobby/records.h"
#include "services/lobby/records_test_util.h"

namespace courtpiece::lobby {
namespace {

using common::IsOk;
using common::StatusIs;
using C = absl::StatusCode;
namespace t = testing;

absl::StatusOr<int64_t> QueryInt(storage::PgPool& pool, const std::string& sql,
                                 const std::vector<storage::PgParam>& params = {}) {
  int64_t out = 0;
  absl::Status s = pool.Run([&](storage::PgTransaction& tx) -> absl::Status {
    ASSIGN_OR_RETURN(storage::PgRow row, tx.ExecOneRow(sql, params));
    ASSIGN_OR_RETURN(out, row.Int64(0));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

class PgRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db = storage::TestDatabase::Create(
        {.migrations = {
             {"lobby", ::courtpiece::common::SourceDir() + "/services/lobby/migrations"}}});
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
    storage::PgPoolOptions options = db_->PoolOptions();
    options.size_max = 8;
    pool_ = std::make_unique<storage::PgPool>(options);
    store_ = std::make_unique<PgRecordsStore>(*pool_);
    records_ = std::make_unique<Records>(*store_, RealClock::Instance(), RecordsOptions{}, nullptr);
  }
  absl::Time Deadline() const { return absl::Now() + absl::Seconds(10); }
  GameTypeStats StatsOf(const std::string& player, const std::string& game) {
    absl::StatusOr<StatsView> v = records_->Stats(player, Deadline());
    EXPECT_THAT(v, IsOk());
    if (!v.ok()) return {};
    for (const GameTypeStats& g : v->by_game) {
      if (g.game == game) return g;
    }
    return {};
  }
  int64_t Count(const std::string& table) {
    absl::StatusOr<int64_t> n = QueryInt(*pool_, "SELECT count(*) FROM lobby." + table);
    EXPECT_THAT(n, IsOk());
    return n.value_or(-1);
  }

  std::unique_ptr<storage::TestDatabase> db_;
  std::unique_ptr<storage::PgPool> pool_;
  std::unique_ptr<PgRecordsStore> store_;
  std::unique_ptr<Records> records_;
};

TEST_F(PgRecordsTest, AGameIsAppliedOnceAndOtherContentIsRefused) {
  absl::StatusOr<ApplyResult> r = records_->RecordGame(t::Game("t1", 1), Deadline());
  ASSERT_THAT(r, IsOk());
  EXPECT_FALSE(r->replayed);
  r = records_->RecordGame(t::Game("t1", 1), Deadline());
  ASSERT_THAT(r, IsOk());
  EXPECT_TRUE(r->replayed);
  GameRecordData other = t::Game("t1", 1);
  other.courts = {3, 1};
  EXPECT_THAT(records_->RecordGame(other, Deadline()), StatusIs(C::kAlreadyExists));

  GameTypeStats a = StatsOf("alice", "classic");
  EXPECT_EQ(a.played, 1);
  EXPECT_EQ(a.won, 1);
  EXPECT_EQ(a.lost, 0);
  EXPECT_EQ(a.courts, 2);
  EXPECT_EQ(a.goon_courts, 1);
  GameTypeStats b = StatsOf("bob", "classic");
  EXPECT_EQ(b.played, 1);
  EXPECT_EQ(b.lost, 1);
  EXPECT_EQ(b.courts, 1);
  EXPECT_EQ(b.goon_courts, 0);
  EXPECT_EQ(Count("record_keys"), 1);
  EXPECT_EQ(Count("record_games"), 1);
  EXPECT_EQ(Count("record_game_players"), 2);

  absl::StatusOr<std::vector<PlayerGameResult>> recent =
      records_->RecentResults("bob", 0, Deadline());
  ASSERT_THAT(recent, IsOk());
  ASSERT_EQ(recent->size(), 1u);
  EXPECT_EQ((*recent)[0].table_id, "t1");
  EXPECT_EQ((*recent)[0].game, "classic");
  EXPECT_EQ((*recent)[0].scores, (std::vector<int>{5, 2}));
  EXPECT_EQ((*recent)[0].winning_team, 0);
  EXPECT_FALSE((*recent)[0].won);
  EXPECT_TRUE((*recent)[0].counts_for_stats);
}

TEST_F(PgRecordsTest, GamesThatDoNotCountAreKeptOutOfTheStats) {
  GameRecordData early = t::Game("t1", 1);
  early.counts_for_stats = false;
  early.ended_early = true;
  early.winning_team = -1;
  for (auto& p : early.players) p.won = false;
  ASSERT_THAT(records_->RecordGame(early, Deadline()), IsOk());
  GameRecordData solo = t::Game("t2", 1);
  solo.counts_for_stats = false;
  solo.players.resize(1);
  ASSERT_THAT(records_->RecordGame(solo, Deadline()), IsOk());
  EXPECT_EQ(Count("player_stats"), 0);
  absl::StatusOr<std::vector<PlayerGameResult>> recent =
      records_->RecentResults("alice", 0, Deadline());
  ASSERT_THAT(recent, IsOk());
  ASSERT_EQ(recent->size(), 2u);
  EXPECT_EQ((*recent)[0].table_id, "t2");
  EXPECT_EQ((*recent)[1].winning_team, -1);
}

TEST_F(PgRecordsTest, QuitsRoundsAndCloses) {
  ASSERT_THAT(records_->RecordQuit(t::Quit("t1", 1, "bob"), Deadline()), IsOk());
  ASSERT_THAT(records_->RecordQuit(t::Quit("t2", 4, "bob", "stack"), Deadline()), IsOk());
  absl::StatusOr<ApplyResult> again =
      records_->RecordQuit(t::Quit("t2", 4, "bob", "stack"), Deadline());
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(again->replayed);
  EXPECT_THAT(records_->RecordQuit(t::Quit("t2", 4, "bob", "kaat"), Deadline()),
              StatusIs(C::kAlreadyExists));
  EXPECT_EQ(StatsOf("bob", "classic").quits, 1);
  EXPECT_EQ(StatsOf("bob", "stack").quits, 1);
  EXPECT_EQ(StatsOf("bob", "stack").played, 0);
  EXPECT_EQ(*records_->QuitsTotal("bob", Deadline()), 2);
  absl::StatusOr<std::vector<QuitRow>> quits = records_->Quits("bob", 1, Deadline());
  ASSERT_THAT(quits, IsOk());
  ASSERT_EQ(quits->size(), 1u);
  EXPECT_EQ((*quits)[0].table_id, "t2");
  EXPECT_EQ((*quits)[0].game_no, 4u);

  for (uint64_t r = 1; r <= 4; ++r) {
    ASSERT_THAT(records_->RecordRound(t::Round("t1", r), Deadline()), IsOk());
  }
  absl::StatusOr<std::vector<RoundRow>> rounds = records_->Rounds("t1", 1, 2, Deadline());
  ASSERT_THAT(rounds, IsOk());
  ASSERT_EQ(rounds->size(), 2u);
  EXPECT_EQ((*rounds)[0].round, 2u);
  EXPECT_EQ((*rounds)[1].round, 3u);
  EXPECT_EQ((*rounds)[0].seed_hex, std::string(64, 'a'));
  EXPECT_EQ((*rounds)[0].result, "normal 1-0");

  ASSERT_THAT(records_->RecordTableClosed(t::Closed("t1"), Deadline()), IsOk());
  again = records_->RecordTableClosed(t::Closed("t1"), Deadline());
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(again->replayed);
  EXPECT_TRUE(*store_->TableClosed("t1", Deadline()));
  EXPECT_FALSE(*store_->TableClosed("t2", Deadline()));
}

// 8 threads send the same RecordGame at once: applied once, the stats move by exactly one.
TEST_F(PgRecordsTest, ConcurrentDuplicatesApplyOnce) {
  constexpr int kThreads = 8;
  for (int round = 0; round < 5; ++round) {
    std::atomic<int> fresh{0}, replayed{0}, failed{0};
    std::vector<std::thread> threads;
    std::atomic<bool> go{false};
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, round] {
        while (!go.load()) std::this_thread::yield();
        absl::StatusOr<ApplyResult> r =
            records_->RecordGame(t::Game("t1", static_cast<uint64_t>(round + 1)), Deadline());
        if (!r.ok()) {
          ++failed;
        } else if (r->replayed) {
          ++replayed;
        } else {
          ++fresh;
        }
      });
    }
    go = true;
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(fresh.load(), 1) << round;
    EXPECT_EQ(replayed.load(), kThreads - 1) << round;
    EXPECT_EQ(failed.load(), 0) << round;
    EXPECT_EQ(StatsOf("alice", "classic").played, round + 1);
    EXPECT_EQ(StatsOf("bob", "classic").lost, round + 1);
  }
  EXPECT_EQ(Count("record_games"), 5);
  EXPECT_EQ(Count("record_game_players"), 10);
}

// Different games with the same people in opposite seat orders, at once: no deadlock
// reaches the caller and every game counts once.
TEST_F(PgRecordsTest, ConcurrentGamesOfTheSamePlayersAllCount) {
  constexpr int kGames = 16;
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int i = 0; i < kGames; ++i) {
    threads.emplace_back([&, i] {
      GameRecordData g = i % 2 == 0 ? t::Game("t" + std::to_string(i), 1, "alice", "bob")
                                    : t::Game("t" + std::to_string(i), 1, "bob", "alice");
      if (!records_->RecordGame(g, Deadline()).ok()) ++failed;
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  GameTypeStats a = StatsOf("alice", "classic");
  EXPECT_EQ(a.played, kGames);
  EXPECT_EQ(a.won, kGames / 2);
  EXPECT_EQ(a.lost, kGames / 2);
  EXPECT_EQ(a.courts, kGames / 2 * 2 + kGames / 2 * 1);
}

// Waits (bounded) until a backend of `application_name` waits for a lock; its pid or 0.
int64_t WaitForLockWaiter(storage::PgPool& admin, const std::string& dbname,
                          const std::string& application_name) {
  for (int i = 0; i < 2000; ++i) {
    absl::StatusOr<int64_t> pid =
        QueryInt(admin,
                 "SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE datname = $1 AND "
                 "application_name = $2 AND wait_event_type = 'Lock'",
                 {dbname, application_name});
    if (!pid.ok()) return 0;
    if (*pid != 0) return *pid;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return 0;
}

// The record's backend is killed while it waits for a stats row (after it claimed the key
// and wrote the game): nothing of it stays; the retry with the key applies it once.
TEST_F(PgRecordsTest, ABackendKilledMidRecordLeavesNothingHalfDone) {
  ASSERT_THAT(records_->RecordGame(t::Game("t1", 1), Deadline()), IsOk());  // alice's row

  constexpr char kVictim[] = "lobby-records-victim";
  storage::PgPoolOptions options = db_->PoolOptions();
  options.application_name = kVictim;
  storage::PgPool victim_pool(options);
  PgRecordsStore victim_store(victim_pool);
  RecordsOptions once;
  once.store_attempts_max = 1;  // the caller sees the failure
  Records victim(victim_store, RealClock::Instance(), once, nullptr);

  absl::Notification locked, release;
  std::thread holder([&] {
    absl::Status s = pool_->Run([&](storage::PgTransaction& tx) -> absl::Status {
      RETURN_IF_ERROR(tx.Exec("SELECT 1 FROM lobby.player_stats WHERE player_id = 'alice' "
                              "FOR UPDATE")
                          .status());
      locked.Notify();
      release.WaitForNotification();
      return absl::OkStatus();
    });
    EXPECT_THAT(s, IsOk());
  });
  locked.WaitForNotification();
  absl::Status victim_status;
  std::thread client(
      [&] { victim_status = victim.RecordGame(t::Game("t1", 2), Deadline()).status(); });
  const int64_t pid = WaitForLockWaiter(*pool_, db_->name(), kVictim);
  ASSERT_NE(pid, 0) << "the record never waited for alice's stats row";
  // Mid-record: the key is claimed and the game written in the victim's transaction.
  storage::PgPoolOptions admin_options = db_->PoolOptions();
  storage::PgPool admin(admin_options);
  EXPECT_EQ(*QueryInt(admin, "SELECT count(*) FROM pg_terminate_backend($1) t WHERE t", {pid}), 1);
  client.join();
  release.Notify();
  holder.join();
  EXPECT_THAT(victim_status, StatusIs(C::kUnavailable));
  EXPECT_EQ(*QueryInt(*pool_, "SELECT count(*) FROM lobby.record_keys WHERE key = 't1:game:2'"), 0);
  EXPECT_EQ(Count("record_games"), 1);
  EXPECT_EQ(Count("record_game_players"), 2);
  EXPECT_EQ(StatsOf("alice", "classic").played, 1);

  absl::StatusOr<ApplyResult> retry = records_->RecordGame(t::Game("t1", 2), Deadline());
  ASSERT_THAT(retry, IsOk());
  EXPECT_FALSE(retry->replayed);
  EXPECT_EQ(StatsOf("alice", "classic").played, 2);
  EXPECT_EQ(StatsOf("bob", "classic").played, 2);
}

}  // namespace
}  // namespace courtpiece::lobby
