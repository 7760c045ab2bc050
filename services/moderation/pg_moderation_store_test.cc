// Postgres-only tests of PgModerationStore (COURTPIECE_TEST_PG_URL, a fresh database per
// test; the contract suite runs in the same binary): a backend killed mid-transaction
// leaves nothing half stored, the audit table refuses UPDATE and DELETE, two purges never
// take the same note, UNAVAILABLE while Postgres is unreachable, deadlines.
#include "services/moderation/pg_moderation_store.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/common/status_macros.h"
#include "courtpiece/common/status_matchers.h"
#include "courtpiece/storage/testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::moderation {
namespace {

using C = absl::StatusCode;
using ::courtpiece::common::StatusIs;
using ::testing::HasSubstr;

constexpr char kAppName[] = "moderation-store-test";
constexpr char kVictim[] = "moderation-store-victim";
const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

std::string NoteId(int i) { return absl::StrFormat("n-%032x", i); }

NoteRow MakeNote(int i, const std::string& author, uint64_t round = 1) {
  NoteRow n;
  n.note_id = NoteId(i);
  n.table_id = "t-1";
  n.round = round;
  n.author = author;
  n.duration_ms = 3000;
  n.format = "webm/opus";
  n.content_type = "audio/webm";
  n.size_bytes = 200;
  n.created_at = kT0;
  return n;
}

absl::Status Exec(storage::PgPool& pool, const std::string& sql,
                  std::vector<storage::PgParam> params = {}) {
  return pool.Run([&](storage::PgTransaction& tx) { return tx.Exec(sql, params).status(); });
}

absl::StatusOr<int64_t> QueryInt(storage::PgPool& pool, const std::string& sql,
                                 std::vector<storage::PgParam> params = {}) {
  int64_t value = 0;
  absl::Status s = pool.Run([&](storage::PgTransaction& tx) -> absl::Status {
    ASSIGN_OR_RETURN(storage::PgRow row, tx.ExecOneRow(sql, params));
    ASSIGN_OR_RETURN(value, row.Int64(0));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return value;
}

class PgModerationStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db = storage::TestDatabase::Create(
        {.migrations = {{"moderation",
                         ::courtpiece::common::SourceDir() + "/services/moderation/migrations"}}});
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    storage::PgPoolOptions options = db_->PoolOptions();
    options.application_name = kAppName;
    pool_ = std::make_unique<storage::PgPool>(options);
    store_ = std::make_unique<PgModerationStore>(*pool_);
    options.application_name = kVictim;
    victim_pool_ = std::make_unique<storage::PgPool>(options);
    victim_ = std::make_unique<PgModerationStore>(*victim_pool_);
    admin_ = std::make_unique<storage::PgPool>(
        storage::PgPoolOptions{.url = db_->admin_url(), .size_max = 1});
  }

  static absl::Time Deadline() { return absl::Now() + absl::Seconds(10); }

  int64_t Count(const std::string& sql) {
    absl::StatusOr<int64_t> n = QueryInt(*pool_, sql);
    EXPECT_TRUE(n.ok()) << n.status();
    return n.value_or(-1);
  }

  // Waits (bounded, 10 s) until a backend of the victim pool waits for a lock; returns its
  // pid, or 0.
  int64_t WaitForVictimLockWait() {
    for (int i = 0; i < 2000; ++i) {
      absl::StatusOr<int64_t> pid =
          QueryInt(*admin_,
                   "SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE datname = $1 AND "
                   "application_name = $2 AND wait_event_type = 'Lock'",
                   {db_->name(), kVictim});
      if (!pid.ok()) return 0;
      if (*pid != 0) return *pid;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return 0;
  }
  void Terminate(int64_t pid) {
    absl::StatusOr<int64_t> n =
        QueryInt(*admin_, "SELECT count(*) FROM pg_terminate_backend($1) t WHERE t", {pid});
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 1);
  }

  // Runs `hold` (statements taking locks) in a transaction on another connection, calls
  // `victim` on a thread, kills the victim's backend once it waits for a lock, then rolls
  // the holder back. Returns the victim's status.
  absl::Status KillWhileWaiting(const std::string& hold, std::vector<storage::PgParam> params,
                                const std::function<absl::Status()>& victim) {
    absl::Notification locked, release;
    std::thread holder([&] {
      absl::Status held = pool_->Run([&](storage::PgTransaction& tx) -> absl::Status {
        RETURN_IF_ERROR(tx.Exec(hold, params).status());
        locked.Notify();
        release.WaitForNotification();
        return absl::AbortedError("roll back the holder");
      });
      EXPECT_THAT(held, StatusIs(C::kAborted));
    });
    locked.WaitForNotification();
    absl::Status status;
    std::thread client([&] { status = victim(); });
    const int64_t pid = WaitForVictimLockWait();
    EXPECT_NE(pid, 0) << "the victim never waited for the lock";
    if (pid != 0) Terminate(pid);
    client.join();
    release.Notify();
    holder.join();
    return status;
  }

  std::unique_ptr<storage::TestDatabase> db_;
  std::unique_ptr<storage::PgPool> pool_;
  std::unique_ptr<PgModerationStore> store_;
  std::unique_ptr<storage::PgPool> victim_pool_;
  std::unique_ptr<PgModerationStore> victim_;
  std::unique_ptr<storage::PgPool> admin_;
};

TEST_F(PgModerationStoreTest, AuditTableRefusesUpdateAndDelete) {
  AuditRow a;
  a.admin_id = "admin-1";
  a.action = "mute";
  a.target_player = "alice";
  a.at = kT0;
  ASSERT_TRUE(store_->AppendAudit(a, Deadline()).ok());
  EXPECT_THAT(Exec(*pool_, "UPDATE moderation.audit SET reason = 'changed'"),
              StatusIs(C::kFailedPrecondition, HasSubstr("append-only")));
  EXPECT_THAT(Exec(*pool_, "DELETE FROM moderation.audit"),
              StatusIs(C::kFailedPrecondition, HasSubstr("append-only")));
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.audit WHERE reason = ''"), 1);
}

TEST_F(PgModerationStoreTest, ConstraintsRefuseNonsense) {
  EXPECT_THAT(Exec(*pool_,
                   "INSERT INTO moderation.notes (note_id, table_id, round, author, "
                   "duration_ms, format, content_type, size_bytes, created_at) VALUES "
                   "('n-1', 't', 1, 'a', 1, 'f', 'c', 1, now())"),
              StatusIs(C::kFailedPrecondition));  // bad note id
  EXPECT_THAT(Exec(*pool_,
                   "INSERT INTO moderation.notes (note_id, table_id, round, author, "
                   "duration_ms, format, content_type, size_bytes, created_at) VALUES "
                   "($1, 't', 1, 'a', 1, 'f', 'c', 524289, now())",
                   {NoteId(1)}),
              StatusIs(C::kFailedPrecondition));  // over 512 KiB
  // A bad row through the store is Internal (no database text for a client).
  NoteRow bad = MakeNote(1, "alice");
  bad.note_id = "x";
  bool inserted = true;
  EXPECT_THAT(store_->InsertNote(bad, std::string(200, 'a'), &inserted, Deadline()),
              StatusIs(C::kInternal));
  EXPECT_FALSE(inserted);
}

// InsertNote waits for a concurrent insert of the same (table, round, author) and is
// killed there: nothing of it stays (no note, no audio), and its retry stores the note.
TEST_F(PgModerationStoreTest, KilledInsertLeavesNoNoteAndNoAudio) {
  absl::Status s = KillWhileWaiting(
      "INSERT INTO moderation.notes (note_id, table_id, round, author, duration_ms, format, "
      "content_type, size_bytes, created_at) VALUES ($1, 't-1', 1, 'alice', 1, 'f', 'c', 1, "
      "now())",
      {NoteId(99)}, [&] {
        bool inserted = false;
        return victim_
            ->InsertNote(MakeNote(1, "alice"), std::string(200, 'a'), &inserted, Deadline())
            .status();
      });
  EXPECT_THAT(s, StatusIs(C::kUnavailable));
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.notes"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.note_audio"), 0);
  bool inserted = false;
  ASSERT_TRUE(
      victim_->InsertNote(MakeNote(1, "alice"), std::string(200, 'a'), &inserted, Deadline()).ok());
  EXPECT_TRUE(inserted);
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.note_audio"), 1);
}

// FileReport, killed after it locked the note and while its report waits for a conflicting
// key: no report and the note not held; the retry files it and holds the note.
TEST_F(PgModerationStoreTest, KilledReportLeavesNoReportAndTheNoteUnheld) {
  bool inserted = false;
  ASSERT_TRUE(
      store_->InsertNote(MakeNote(1, "alice"), std::string(200, 'a'), &inserted, Deadline()).ok());
  ASSERT_TRUE(
      store_->InsertNote(MakeNote(2, "alice", 2), std::string(200, 'a'), &inserted, Deadline())
          .ok());
  absl::Status s = KillWhileWaiting(
      "INSERT INTO moderation.reports (key, note_id, table_id, round, author, reporter, "
      "reported_at) VALUES ('k1', $1, 't-1', 2, 'alice', 'zed', now())",
      {NoteId(2)}, [&] {
        bool replayed = false;
        return victim_->FileReport("k1", NoteId(1), "bob", kT0, &replayed, Deadline()).status();
      });
  EXPECT_THAT(s, StatusIs(C::kUnavailable));
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.reports"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.notes WHERE keep_until IS NULL"), 0);
  bool replayed = true;
  absl::StatusOr<ReportRow> r =
      victim_->FileReport("k1", NoteId(1), "bob", kT0, &replayed, Deadline());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(replayed);
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.notes WHERE keep_until IS NULL"), 1);
}

// ResolveReport, killed while its mute waits for the author's mute lock (after it closed
// the reports and set keep_until): everything is as before.
TEST_F(PgModerationStoreTest, KilledResolutionChangesNothing) {
  bool inserted = false, replayed = false;
  ASSERT_TRUE(
      store_->InsertNote(MakeNote(1, "alice"), std::string(200, 'a'), &inserted, Deadline()).ok());
  absl::StatusOr<ReportRow> r =
      store_->FileReport("k1", NoteId(1), "bob", kT0, &replayed, Deadline());
  ASSERT_TRUE(r.ok()) << r.status();
  Resolution res;
  res.report_id = r->report_id;
  res.status = ReportStatus::kActioned;
  res.admin_id = "admin-1";
  res.reason = "abusive";
  res.now = kT0 + absl::Hours(1);
  MuteRow mute;
  mute.player_id = "alice";
  mute.created_at = res.now;
  mute.muted_by = "admin-1";
  mute.reason = "abusive";
  res.mute = mute;
  res.audit.admin_id = "admin-1";
  res.audit.action = "resolve_report";
  res.audit.at = res.now;
  absl::Status s = KillWhileWaiting(
      "SELECT pg_advisory_xact_lock(hashtextextended('moderation.mutes:' || $1, 0))", {"alice"},
      [&] { return victim_->ResolveReport(res, Deadline()).status(); });
  EXPECT_THAT(s, StatusIs(C::kUnavailable));
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.reports WHERE status = 1"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.notes WHERE keep_until IS NULL"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.mutes"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.audit"), 0);
  absl::StatusOr<Resolved> done = victim_->ResolveReport(res, Deadline());
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.mutes"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.audit"), 1);
}

// A note another transaction holds (a concurrent purge, a report being filed) is skipped,
// not waited for and not taken twice.
TEST_F(PgModerationStoreTest, PurgeSkipsLockedNotes) {
  bool inserted = false;
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(store_
                    ->InsertNote(MakeNote(i, "alice", static_cast<uint64_t>(i)),
                                 std::string(200, 'a'), &inserted, Deadline())
                    .ok());
  }
  absl::Notification locked, release;
  std::thread holder([&] {
    absl::Status held = pool_->Run([&](storage::PgTransaction& tx) -> absl::Status {
      RETURN_IF_ERROR(tx.Exec("SELECT 1 FROM moderation.notes WHERE note_id IN ($1, $2) "
                              "FOR UPDATE",
                              {NoteId(1), NoteId(2)})
                          .status());
      locked.Notify();
      release.WaitForNotification();
      return absl::OkStatus();
    });
    EXPECT_TRUE(held.ok()) << held;
  });
  locked.WaitForNotification();
  const absl::Time now = kT0 + kNoteRetention;
  absl::StatusOr<PurgeResult> first = store_->Purge(now, 100, Deadline());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->notes_deleted, 3);
  release.Notify();
  holder.join();
  absl::StatusOr<PurgeResult> second = store_->Purge(now, 100, Deadline());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->notes_deleted, 2);
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.notes"), 0);
}

// The gauges' counters (note_counters, kept by triggers) match a scan of the notes after
// inserts (one a replay), a deletion, reports, a resolution and purges, from several
// connections (several counter slots).
TEST_F(PgModerationStoreTest, NoteCountersMatchTheNotes) {
  bool inserted = false, replayed = false;
  for (int i = 1; i <= 12; ++i) {
    PgModerationStore& store = i % 2 == 0 ? *store_ : *victim_;
    NoteRow n = MakeNote(i, "alice", static_cast<uint64_t>(i));
    n.size_bytes = 100 + i;
    ASSERT_TRUE(store.InsertNote(n, std::string(100 + i, 'a'), &inserted, Deadline()).ok());
  }
  ASSERT_TRUE(
      store_->InsertNote(MakeNote(50, "alice", 1), std::string(200, 'a'), &inserted, Deadline())
          .ok());
  EXPECT_FALSE(inserted);
  ASSERT_TRUE(store_->DeleteUnannouncedNote(NoteId(12), Deadline()).ok());
  absl::StatusOr<ReportRow> r =
      store_->FileReport("k1", NoteId(1), "bob", kT0, &replayed, Deadline());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(store_->FileReport("k2", NoteId(2), "bob", kT0, &replayed, Deadline()).ok());
  Resolution res;
  res.report_id = r->report_id;
  res.status = ReportStatus::kDismissed;
  res.admin_id = "admin-1";
  res.reason = "fine";
  res.now = kT0;
  res.audit.admin_id = "admin-1";
  res.audit.action = "resolve_report";
  res.audit.at = kT0;
  ASSERT_TRUE(store_->ResolveReport(res, Deadline()).ok());
  ASSERT_TRUE(victim_->Purge(kT0 + kNoteRetention, 4, Deadline()).ok());
  ASSERT_TRUE(store_->Purge(kT0 + kNoteRetention, 100, Deadline()).ok());
  absl::StatusOr<StoreGauges> g = store_->Gauges(Deadline());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->notes, 1);  // note 2, held
  EXPECT_EQ(g->audio_bytes, 102);
  EXPECT_EQ(g->notes, Count("SELECT count(*) FROM moderation.notes WHERE NOT purged"));
  EXPECT_EQ(g->notes, Count("SELECT count(*) FROM moderation.note_audio"));
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.notes WHERE purged"), 1);  // note 1
}

TEST_F(PgModerationStoreTest, PastDeadlineIsDeadlineExceededWithoutARoundTrip) {
  bool inserted = true;
  const absl::Time past = absl::Now() - absl::Milliseconds(1);
  EXPECT_THAT(store_->InsertNote(MakeNote(1, "alice"), std::string(200, 'a'), &inserted, past),
              StatusIs(C::kDeadlineExceeded));
  EXPECT_FALSE(inserted);
  EXPECT_THAT(store_->GetNote(NoteId(1), past), StatusIs(C::kDeadlineExceeded));
  EXPECT_THAT(store_->Gauges(past), StatusIs(C::kDeadlineExceeded));
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.notes"), 0);
}

// A statement that waits past the deadline is cut at the deadline (statement_timeout) and
// nothing is stored.
TEST_F(PgModerationStoreTest, StatementWaitingPastTheDeadlineIsDeadlineExceeded) {
  bool inserted = false;
  ASSERT_TRUE(
      store_->InsertNote(MakeNote(1, "alice"), std::string(200, 'a'), &inserted, Deadline()).ok());
  absl::Notification locked, release;
  std::thread holder([&] {
    absl::Status held = pool_->Run([&](storage::PgTransaction& tx) -> absl::Status {
      RETURN_IF_ERROR(
          tx.Exec("SELECT 1 FROM moderation.notes WHERE note_id = $1 FOR UPDATE", {NoteId(1)})
              .status());
      locked.Notify();
      release.WaitForNotification();
      return absl::OkStatus();
    });
    EXPECT_TRUE(held.ok()) << held;
  });
  locked.WaitForNotification();
  bool replayed = false;
  const absl::Time start = absl::Now();
  absl::Status s =
      store_->FileReport("k1", NoteId(1), "bob", kT0, &replayed, start + absl::Milliseconds(300))
          .status();
  const absl::Duration took = absl::Now() - start;
  release.Notify();
  holder.join();
  EXPECT_THAT(s, StatusIs(C::kDeadlineExceeded));
  EXPECT_GE(took, absl::Milliseconds(250));
  EXPECT_LT(took, absl::Seconds(3));
  EXPECT_EQ(Count("SELECT count(*) FROM moderation.reports"), 0);
}

TEST(PgModerationStoreUnreachableTest, UnreachablePostgresIsUnavailable) {
  // Nothing listens on port 1: every connect is refused at once.
  storage::PgPool pool({.url = "postgresql://postgres@127.0.0.1:1/none", .size_max = 2});
  PgModerationStore store(pool);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  bool flag = false;
  EXPECT_THAT(store.InsertNote(MakeNote(1, "alice"), std::string(200, 'a'), &flag, deadline),
              StatusIs(C::kUnavailable));
  EXPECT_THAT(store.GetNote(NoteId(1), deadline), StatusIs(C::kUnavailable));
  EXPECT_THAT(store.FileReport("k", NoteId(1), "bob", kT0, &flag, deadline),
              StatusIs(C::kUnavailable));
  EXPECT_THAT(store.Purge(kT0, 10, deadline), StatusIs(C::kUnavailable));
  EXPECT_THAT(store.Gauges(deadline), StatusIs(C::kUnavailable));
}

}  // namespace
}  // namespace courtpiece::moderation
