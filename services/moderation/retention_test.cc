// Retention on the fake store and a fake clock: unreported notes go whole after 7 days, a
// note with an open report is held, a resolved one loses its audio 7 days after the
// resolution and keeps its metadata; the batch bound; a failing store.
#include "services/moderation/retention.h"

#include "gtest/gtest.h"
#include "services/moderation/fake_moderation_store.h"
#include "services/moderation/moderation_test_util.h"

namespace courtpiece::moderation {
namespace {

using testing::AddNote;
using testing::AddReport;

class RetentionTest : public ::testing::Test {
 protected:
  RetentionTest() : store_(clock_), retention_(store_, clock_, {.purge_batch_max = 2}) {}
  absl::Time Deadline() const { return clock_.Now() + absl::Seconds(5); }
  absl::StatusOr<PurgeRun> Run() { return retention_.RunOnce(Deadline()); }

  FakeClock clock_;
  FakeModerationStore store_;
  Retention retention_;
};

TEST_F(RetentionTest, SevenDaysUnlessReportedThenSevenDaysFromTheResolution) {
  const absl::Time t0 = clock_.Now();
  AddNote(store_, "plain", "alice", t0, "t-1", 1, 100);
  NoteRow held = AddNote(store_, "held", "alice", t0, "t-1", 2, 200);
  NoteRow resolved = AddNote(store_, "resolved", "alice", t0, "t-1", 3, 300);
  ReportRow open = AddReport(store_, held, "bob", t0);
  ReportRow done = AddReport(store_, resolved, "bob", t0);
  (void)open;
  clock_.Advance(absl::Hours(24));
  ASSERT_TRUE(store_
                  .ResolveReport(Resolution{.report_id = done.report_id,
                                            .status = ReportStatus::kDismissed,
                                            .admin_id = "admin-1",
                                            .reason = "fine",
                                            .audit = AuditRow{.admin_id = "admin-1",
                                                              .action = "resolve_report",
                                                              .at = clock_.Now()},
                                            .now = clock_.Now()},
                                 Deadline())
                  .ok());

  clock_.Set(t0 + kNoteRetention - absl::Milliseconds(1));
  absl::StatusOr<PurgeRun> early = Run();
  ASSERT_TRUE(early.ok()) << early.status();
  EXPECT_EQ(early->result.notes_deleted, 0);
  EXPECT_TRUE(early->drained);

  clock_.Set(t0 + kNoteRetention);  // keep_until <= now
  absl::StatusOr<PurgeRun> week = Run();
  ASSERT_TRUE(week.ok());
  EXPECT_EQ(week->result.notes_deleted, 1);
  EXPECT_EQ(week->result.audio_deleted, 0);
  EXPECT_EQ(week->result.bytes_freed, 100);
  EXPECT_EQ(store_.GetNote("n-plain", Deadline()).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_.HasAudio("n-held"));
  EXPECT_TRUE(store_.HasAudio("n-resolved"));

  clock_.Set(t0 + absl::Hours(24) + kNoteRetention);
  absl::StatusOr<PurgeRun> later = Run();
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->result.notes_deleted, 0);
  EXPECT_EQ(later->result.audio_deleted, 1);
  EXPECT_EQ(later->result.bytes_freed, 300);
  absl::StatusOr<NoteRow> kept = store_.GetNote("n-resolved", Deadline());
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(kept->purged);
  EXPECT_FALSE(store_.HasAudio("n-resolved"));

  clock_.Advance(absl::Hours(24 * 365));  // an open report holds the note for ever
  absl::StatusOr<PurgeRun> year = Run();
  ASSERT_TRUE(year.ok());
  EXPECT_EQ(year->result.notes_deleted + year->result.audio_deleted, 0);
  EXPECT_TRUE(store_.HasAudio("n-held"));
}

TEST_F(RetentionTest, EachRunIsBoundedByTheBatch) {
  for (int i = 0; i < 5; ++i) AddNote(store_, absl::StrCat(i), "alice", clock_.Now(), "t-1", i + 1);
  clock_.Advance(kNoteRetention);
  std::vector<int64_t> deleted;
  std::vector<bool> drained;
  for (int run = 0; run < 4; ++run) {
    absl::StatusOr<PurgeRun> r = Run();
    ASSERT_TRUE(r.ok()) << r.status();
    deleted.push_back(r->result.notes_deleted);
    drained.push_back(r->drained);
  }
  EXPECT_EQ(deleted, (std::vector<int64_t>{2, 2, 1, 0}));
  EXPECT_EQ(drained, (std::vector<bool>{false, false, true, true}));
}

TEST_F(RetentionTest, AFailingStoreFailsTheRunAndChangesNothing) {
  AddNote(store_, "a", "alice", clock_.Now());
  clock_.Advance(kNoteRetention);
  store_.FailNext(1, absl::UnavailableError("postgres down"));
  EXPECT_EQ(Run().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(store_.HasAudio("n-a"));
  EXPECT_EQ(retention_.RunOnce(clock_.Now()).status().code(), absl::StatusCode::kDeadlineExceeded);
  absl::StatusOr<PurgeRun> r = Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->result.notes_deleted, 1);
}

}  // namespace
}  // namespace courtpiece::moderation
