// VoiceNotes on the fake store, the fake table port, FakeAudioProbe and a fake clock: every
// acceptance and refusal of UploadNote with its exact code and reason word, the retries and
// the crash-safety cases of docs/moderation.md, GetNote and FileReport.
#include "services/moderation/voice_notes.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/moderation/fake_audio_probe.h"
#include "services/moderation/fake_moderation_store.h"
#include "services/moderation/fake_ports.h"
#include "services/moderation/moderation_test_util.h"

namespace courtpiece::moderation {
namespace {

using ::testing::MatchesRegex;
using Method = FakeTablePort::Method;

using testing::ExpectRefused;

class VoiceNotesTest : public ::testing::Test {
 protected:
  VoiceNotesTest()
      : store_(clock_),
        tables_(&clock_),
        random_(42),
        notes_(store_, tables_, probe_, clock_, random_) {
    tables_.AddTable("t-1", /*round=*/3);
    tables_.Seat("t-1", 0, "alice");
    tables_.Seat("t-1", 1, "bob");
    tables_.Seat("t-1", 2, "bot-1", "bot");
    tables_.GiveLock("t-1", "alice");
    probe_.SetNote("webm/opus", 5000);
  }

  absl::Time Deadline() const { return clock_.Now() + absl::Seconds(5); }
  static UploadRequest Upload(std::string author = "alice", uint64_t round = 0,
                              size_t bytes = 1000) {
    return UploadRequest{
        .author = std::move(author), .table_id = "t-1", .round = round, .audio = Audio(bytes)};
  }
  static std::string Audio(size_t bytes) {
    std::string audio(bytes, 'a');
    if (!audio.empty()) audio[0] = 'x';
    return audio;
  }
  std::optional<NoteRow> Stored(const std::string& author = "alice", uint64_t round = 3) {
    absl::StatusOr<std::optional<NoteRow>> n = store_.FindNote("t-1", round, author, Deadline());
    EXPECT_TRUE(n.ok()) << n.status();
    return n.ok() ? *n : std::nullopt;
  }
  void Mute(const std::string& player, std::optional<absl::Duration> for_time) {
    MuteRow mute{
        .player_id = player, .created_at = clock_.Now(), .muted_by = "admin-1", .reason = "abuse"};
    if (for_time.has_value()) mute.until = clock_.Now() + *for_time;
    ASSERT_TRUE(store_
                    .AddMute(mute,
                             AuditRow{.admin_id = "admin-1",
                                      .action = "mute",
                                      .target_player = player,
                                      .at = clock_.Now()},
                             Deadline())
                    .ok());
  }

  FakeClock clock_;
  FakeModerationStore store_;
  FakeTablePort tables_;
  FakeAudioProbe probe_;
  SeededRandomSource random_;
  VoiceNotes notes_;
};

// --- acceptance ----------------------------------------------------------------------------

TEST_F(VoiceNotesTest, AcceptsStoresAndAnnouncesTheProbedNote) {
  absl::StatusOr<UploadResult> r = notes_.UploadNote(Upload(), Deadline());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->note.note_id, MatchesRegex("n-[0-9a-f]{32}"));
  EXPECT_EQ(r->note.round, 3u);
  EXPECT_EQ(r->note.author, "alice");
  EXPECT_EQ(r->note.duration_ms, 5000);
  EXPECT_EQ(r->note.format, "webm/opus");
  EXPECT_EQ(r->note.content_type, "audio/webm");
  EXPECT_EQ(r->note.size_bytes, 1000);
  EXPECT_FALSE(r->replayed);
  ASSERT_EQ(tables_.announced("t-1").size(), 1u);
  const Announcement a = tables_.announced("t-1")[0];
  EXPECT_EQ(a.note_id, r->note.note_id);
  EXPECT_EQ(a.player, "alice");
  EXPECT_EQ(a.round, 3u);
  EXPECT_EQ(a.duration_ms, 5000);
  absl::StatusOr<std::string> audio = store_.GetAudio(r->note.note_id, Deadline());
  ASSERT_TRUE(audio.ok());
  EXPECT_EQ(*audio, Audio(1000));
  // The round given explicitly is the same as 0 (the current one).
  tables_.GiveLock("t-1", "bob");
  absl::StatusOr<UploadResult> bob = notes_.UploadNote(Upload("bob", 3), Deadline());
  ASSERT_TRUE(bob.ok()) << bob.status();
  EXPECT_NE(bob->note.note_id, r->note.note_id);
}

TEST_F(VoiceNotesTest, NoteIdsComeFromTheInjectedRandomSource) {
  SeededRandomSource same(42);
  const std::string expected = "n-" + same.Hex32();
  absl::StatusOr<UploadResult> r = notes_.UploadNote(Upload(), Deadline());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->note.note_id, expected);
}

TEST_F(VoiceNotesTest, DurationToleranceEdgesAndTheClampSentToTheTable) {
  probe_.SetNote("ogg/opus", 7501);
  ExpectRefused(notes_.UploadNote(Upload(), Deadline()).status(), absl::StatusCode::kOutOfRange,
                "too_long");
  EXPECT_FALSE(Stored().has_value());
  probe_.SetNote("ogg/opus", 7500);  // 7000 + 500 ms of tolerance
  absl::StatusOr<UploadResult> r = notes_.UploadNote(Upload(), Deadline());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->note.duration_ms, 7500);                      // stored as probed
  EXPECT_EQ(tables_.announced("t-1")[0].duration_ms, 7500);  // its real length: a full window
  EXPECT_EQ(r->note.format, "ogg/opus");
}

TEST_F(VoiceNotesTest, SizeCapEdges) {
  ExpectRefused(
      notes_.UploadNote(Upload("alice", 0, kDefaultNoteBytesMax + 1), Deadline()).status(),
      absl::StatusCode::kOutOfRange, "too_big");
  EXPECT_EQ(probe_.calls(), 0);
  absl::StatusOr<UploadResult> r =
      notes_.UploadNote(Upload("alice", 0, kDefaultNoteBytesMax), Deadline());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->note.size_bytes, kDefaultNoteBytesMax);
}

// --- refusals, in the order of moderation.proto ----------------------------------------------

TEST_F(VoiceNotesTest, BadRequests) {
  UploadRequest bad = Upload();
  bad.table_id = "";
  ExpectRefused(notes_.UploadNote(bad, Deadline()).status(), absl::StatusCode::kInvalidArgument,
                "bad_request");
  bad.table_id = "t 1";
  ExpectRefused(notes_.UploadNote(bad, Deadline()).status(), absl::StatusCode::kInvalidArgument,
                "bad_request");
  bad.table_id = std::string(65, 't');
  ExpectRefused(notes_.UploadNote(bad, Deadline()).status(), absl::StatusCode::kInvalidArgument,
                "bad_request");
  ExpectRefused(notes_.UploadNote(Upload("alice", 0, 0), Deadline()).status(),
                absl::StatusCode::kInvalidArgument, "bad_request");
  EXPECT_EQ(store_.Calls(), 0);
  EXPECT_EQ(probe_.calls(), 0);
}

TEST_F(VoiceNotesTest, MutedBeforeTheProbeAndAfterTheSizeCap) {
  Mute("alice", absl::Hours(1));
  ExpectRefused(
      notes_.UploadNote(Upload("alice", 0, kDefaultNoteBytesMax + 1), Deadline()).status(),
      absl::StatusCode::kOutOfRange, "too_big");
  absl::Status s = notes_.UploadNote(Upload(), Deadline()).status();
  ExpectRefused(s, absl::StatusCode::kPermissionDenied, "muted");
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("until 2023-11-14T23:13:20Z"));
  EXPECT_EQ(probe_.calls(), 0);
  EXPECT_EQ(tables_.calls(Method::kCheckVoiceLock), 0);
}

TEST_F(VoiceNotesTest, MuteEdges) {
  Mute("alice", absl::Minutes(1));
  clock_.Advance(absl::Minutes(1) - absl::Milliseconds(1));
  ExpectRefused(notes_.UploadNote(Upload(), Deadline()).status(),
                absl::StatusCode::kPermissionDenied, "muted");
  clock_.Advance(absl::Milliseconds(1));  // until == now: over
  ASSERT_TRUE(notes_.UploadNote(Upload(), Deadline()).ok());

  Mute("bob", std::nullopt);  // until lifted
  clock_.Advance(absl::Hours(24 * 365));
  tables_.GiveLock("t-1", "bob");
  absl::Status s = notes_.UploadNote(Upload("bob"), Deadline()).status();
  ExpectRefused(s, absl::StatusCode::kPermissionDenied, "muted");
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("lift"));
  ASSERT_TRUE(store_
                  .LiftMute("bob", "admin-1", clock_.Now(),
                            AuditRow{.admin_id = "admin-1",
                                     .action = "lift_mute",
                                     .target_player = "bob",
                                     .at = clock_.Now()},
                            Deadline())
                  .ok());
  EXPECT_TRUE(notes_.UploadNote(Upload("bob"), Deadline()).ok());
}

// CheckVoice (the table asks before voice_start) answers exactly as UploadNote's mute check:
// the same refusal, the same edges, and nothing else looked at.
TEST_F(VoiceNotesTest, CheckVoiceAnswersTheMuteAsUploadWould) {
  EXPECT_TRUE(notes_.CheckVoice("alice", Deadline()).ok());
  Mute("alice", absl::Minutes(1));
  const absl::Status muted = notes_.CheckVoice("alice", Deadline());
  ExpectRefused(muted, absl::StatusCode::kPermissionDenied, "muted");
  EXPECT_EQ(muted, notes_.UploadNote(Upload(), Deadline()).status());
  EXPECT_TRUE(notes_.CheckVoice("bob", Deadline()).ok());  // only alice
  clock_.Advance(absl::Minutes(1));                        // until == now: over
  EXPECT_TRUE(notes_.CheckVoice("alice", Deadline()).ok());
  Mute("bob", std::nullopt);
  const absl::Status until_lifted = notes_.CheckVoice("bob", Deadline());
  ExpectRefused(until_lifted, absl::StatusCode::kPermissionDenied, "muted");
  EXPECT_THAT(std::string(until_lifted.message()), ::testing::HasSubstr("lift"));
  ExpectRefused(notes_.CheckVoice("", Deadline()), absl::StatusCode::kInvalidArgument,
                "bad_request");
  EXPECT_EQ(probe_.calls(), 0);
  EXPECT_EQ(tables_.calls(Method::kCheckVoiceLock), 0);
}

TEST_F(VoiceNotesTest, UnsupportedFormatAndTooLongBeforeTheTable) {
  probe_.SetError(absl::InvalidArgumentError("unsupported_format: not WebM, Ogg or MP4 audio"));
  ExpectRefused(notes_.UploadNote(Upload(), Deadline()).status(),
                absl::StatusCode::kInvalidArgument, "unsupported_format");
  probe_.SetNote("mp4/aac", 9000);
  ExpectRefused(notes_.UploadNote(Upload(), Deadline()).status(), absl::StatusCode::kOutOfRange,
                "too_long");
  EXPECT_EQ(tables_.calls(Method::kCheckVoiceLock), 0);
  EXPECT_FALSE(Stored().has_value());
}

TEST_F(VoiceNotesTest, TheTablesRefusals) {
  UploadRequest other = Upload();
  other.table_id = "t-9";
  ExpectRefused(notes_.UploadNote(other, Deadline()).status(), absl::StatusCode::kNotFound,
                "no_table");
  ExpectRefused(notes_.UploadNote(Upload("alice", 2), Deadline()).status(),
                absl::StatusCode::kNotFound, "no_round");
  ExpectRefused(notes_.UploadNote(Upload("carol"), Deadline()).status(),
                absl::StatusCode::kPermissionDenied, "not_seated");
  ExpectRefused(notes_.UploadNote(Upload("bob"), Deadline()).status(),
                absl::StatusCode::kFailedPrecondition, "no_lock");
  tables_.DropLock("t-1", /*use_allowance=*/true);  // alice discarded
  ExpectRefused(notes_.UploadNote(Upload(), Deadline()).status(), absl::StatusCode::kAlreadyExists,
                "allowance_used");

  tables_.AddTable("t-2", 1);
  tables_.Seat("t-2", 0, "alice");
  tables_.Seat("t-2", 1, "bot-1", "bot");
  tables_.Seat("t-2", 2, "bot-2", "bot");
  tables_.GiveLock("t-2", "alice");
  UploadRequest alone = Upload();
  alone.table_id = "t-2";
  ExpectRefused(notes_.UploadNote(alone, Deadline()).status(),
                absl::StatusCode::kFailedPrecondition, "alone");

  EXPECT_FALSE(Stored("alice").has_value());
  EXPECT_FALSE(Stored("bob").has_value());
  EXPECT_TRUE(tables_.announced("t-1").empty());
}

TEST_F(VoiceNotesTest, DeadlinePassedAndStoreDown) {
  EXPECT_EQ(notes_.UploadNote(Upload(), clock_.Now()).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(store_.Calls(), 0);
  store_.FailNext(1, absl::UnavailableError("postgres down"));
  EXPECT_EQ(notes_.UploadNote(Upload(), Deadline()).status().code(),
            absl::StatusCode::kUnavailable);
  tables_.FailNext(Method::kCheckVoiceLock, absl::DeadlineExceededError("slow"));
  EXPECT_EQ(notes_.UploadNote(Upload(), Deadline()).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_FALSE(Stored().has_value());
  EXPECT_TRUE(notes_.UploadNote(Upload(), Deadline()).ok());
}

// --- idempotency and crash safety ---------------------------------------------------------

TEST_F(VoiceNotesTest, ARetryAfterALostReplyAnswersTheSameNoteReplayed) {
  absl::StatusOr<UploadResult> first = notes_.UploadNote(Upload(), Deadline());
  ASSERT_TRUE(first.ok());
  // The table now says allowance_used (the note was sent); the stored note is found again.
  absl::StatusOr<UploadResult> again = notes_.UploadNote(Upload(), Deadline());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->note.note_id, first->note.note_id);
  EXPECT_EQ(again->note.duration_ms, 5000);
  EXPECT_EQ(tables_.announced("t-1").size(), 1u);
}

TEST_F(VoiceNotesTest, TableUnavailableKeepsTheNoteAndTheRetryAnnouncesIt) {
  tables_.FailNext(Method::kAnnounceVoiceNote, absl::UnavailableError("owner not live"));
  EXPECT_EQ(notes_.UploadNote(Upload(), Deadline()).status().code(),
            absl::StatusCode::kUnavailable);
  std::optional<NoteRow> kept = Stored();
  ASSERT_TRUE(kept.has_value());
  EXPECT_TRUE(tables_.announced("t-1").empty());

  absl::StatusOr<UploadResult> retry = notes_.UploadNote(Upload(), Deadline());
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_EQ(retry->note.note_id, kept->note_id);
  EXPECT_TRUE(retry->replayed);
  ASSERT_EQ(tables_.announced("t-1").size(), 1u);
  EXPECT_EQ(tables_.announced("t-1")[0].note_id, kept->note_id);
}

TEST_F(VoiceNotesTest, NoLockAtTheAnnouncementDeletesTheStoredNote) {
  tables_.FailNext(Method::kAnnounceVoiceNote,
                   absl::FailedPreconditionError("no_lock: the lock expired"));
  ExpectRefused(notes_.UploadNote(Upload(), Deadline()).status(),
                absl::StatusCode::kFailedPrecondition, "no_lock");
  EXPECT_FALSE(Stored().has_value());
}

TEST_F(VoiceNotesTest, ALockThatExpiredBeforeTheRetryDeletesTheKeptNote) {
  tables_.FailNext(Method::kAnnounceVoiceNote, absl::UnavailableError("owner not live"));
  EXPECT_EQ(notes_.UploadNote(Upload(), Deadline()).status().code(),
            absl::StatusCode::kUnavailable);
  ASSERT_TRUE(Stored().has_value());
  tables_.DropLock("t-1");  // 7 s + 3 s of grace passed
  ExpectRefused(notes_.UploadNote(Upload(), Deadline()).status(),
                absl::StatusCode::kFailedPrecondition, "no_lock");
  EXPECT_FALSE(Stored().has_value());
  EXPECT_TRUE(tables_.announced("t-1").empty());
}

TEST_F(VoiceNotesTest, AnAnnouncedNoteTheTableForgotIsKeptOnALateRetry) {
  absl::StatusOr<UploadResult> first = notes_.UploadNote(Upload(), Deadline());
  ASSERT_TRUE(first.ok());
  tables_.ForgetAnnounced("t-1");  // its report window closed, a later note pruned it
  ExpectRefused(notes_.UploadNote(Upload(), Deadline()).status(), absl::StatusCode::kAlreadyExists,
                "allowance_used");
  std::optional<NoteRow> kept = Stored();
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->note_id, first->note.note_id);
  EXPECT_EQ(tables_.announced("t-1").size(), 1u);
}

TEST_F(VoiceNotesTest, ANoteStoredBeforeADiscardIsKeptAndRefused) {
  tables_.FailNext(Method::kAnnounceVoiceNote, absl::UnavailableError("owner not live"));
  EXPECT_EQ(notes_.UploadNote(Upload(), Deadline()).status().code(),
            absl::StatusCode::kUnavailable);
  tables_.DropLock("t-1", /*use_allowance=*/true);  // the author discarded meanwhile
  ExpectRefused(notes_.UploadNote(Upload(), Deadline()).status(), absl::StatusCode::kAlreadyExists,
                "allowance_used");
  EXPECT_TRUE(Stored().has_value());  // never served (nobody knows its id); purged in 7 days
  EXPECT_TRUE(tables_.announced("t-1").empty());
}

TEST_F(VoiceNotesTest, ATableGoneAtTheAnnouncementDeletesTheNote) {
  tables_.FailNext(Method::kAnnounceVoiceNote, absl::NotFoundError("unknown table t-1"));
  ExpectRefused(notes_.UploadNote(Upload(), Deadline()).status(), absl::StatusCode::kNotFound,
                "no_table");
  EXPECT_FALSE(Stored().has_value());
}

// --- GetNote ------------------------------------------------------------------------------------

TEST_F(VoiceNotesTest, GetNoteForListenersSeatedNow) {
  absl::StatusOr<UploadResult> up = notes_.UploadNote(Upload(), Deadline());
  ASSERT_TRUE(up.ok());
  const std::string id = up->note.note_id;
  for (const std::string listener : {"bob", "alice"}) {
    absl::StatusOr<NoteWithAudio> n = notes_.GetNote(listener, id, Deadline());
    ASSERT_TRUE(n.ok()) << listener << " " << n.status();
    EXPECT_EQ(n->audio, Audio(1000));
    EXPECT_EQ(n->note.table_id, "t-1");
    EXPECT_EQ(n->note.content_type, "audio/webm");
  }
  ExpectRefused(notes_.GetNote("carol", id, Deadline()).status(),
                absl::StatusCode::kPermissionDenied, "not_at_table");
  ExpectRefused(notes_.GetNote("bot-1", id, Deadline()).status(),
                absl::StatusCode::kPermissionDenied, "not_at_table");
  ExpectRefused(notes_.GetNote("bob", "n-unknown", Deadline()).status(),
                absl::StatusCode::kNotFound, "no_note");
  ExpectRefused(notes_.GetNote("bob", "", Deadline()).status(), absl::StatusCode::kNotFound,
                "no_note");
  tables_.Unseat("t-1", "bob");
  ExpectRefused(notes_.GetNote("bob", id, Deadline()).status(), absl::StatusCode::kPermissionDenied,
                "not_at_table");
  tables_.FailNext(Method::kGetTable, absl::UnavailableError("owner not live"));
  EXPECT_EQ(notes_.GetNote("alice", id, Deadline()).status().code(),
            absl::StatusCode::kUnavailable);
  tables_.RemoveTable("t-1");
  ExpectRefused(notes_.GetNote("alice", id, Deadline()).status(),
                absl::StatusCode::kPermissionDenied, "not_at_table");
}

TEST_F(VoiceNotesTest, GetNoteOfAPurgedNoteIsNoNote) {
  absl::StatusOr<UploadResult> up = notes_.UploadNote(Upload(), Deadline());
  ASSERT_TRUE(up.ok());
  clock_.Advance(kNoteRetention);
  ASSERT_TRUE(store_.Purge(clock_.Now(), 10, Deadline()).ok());
  ExpectRefused(notes_.GetNote("bob", up->note.note_id, Deadline()).status(),
                absl::StatusCode::kNotFound, "no_note");
}

// --- FileReport ---------------------------------------------------------------------------------

class FileReportTest : public VoiceNotesTest {
 protected:
  void SetUp() override {
    absl::StatusOr<UploadResult> up = notes_.UploadNote(Upload(), Deadline());
    ASSERT_TRUE(up.ok());
    note_id_ = up->note.note_id;
  }
  ReportRequest Report(const std::string& reporter = "bob") const {
    return ReportRequest{.key = "t-1:report:" + note_id_ + ":" + reporter,
                         .table_id = "t-1",
                         .note_id = note_id_,
                         .author = "alice",
                         .reporter = reporter,
                         .round = 3};
  }
  std::string note_id_;
};

TEST_F(FileReportTest, FiledOnceAndReplayedByKeyAndByReporter) {
  absl::StatusOr<bool> first = notes_.FileReport(Report(), Deadline());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(*first);
  absl::StatusOr<bool> resent = notes_.FileReport(Report(), Deadline());
  ASSERT_TRUE(resent.ok());
  EXPECT_TRUE(*resent);
  ReportRequest other_key = Report();
  other_key.key = "t-1:report:again";
  absl::StatusOr<bool> same_reporter = notes_.FileReport(other_key, Deadline());
  ASSERT_TRUE(same_reporter.ok());
  EXPECT_TRUE(*same_reporter);
  absl::StatusOr<ReportPage> page = store_.ListReports(ReportFilter{}, Deadline());
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->reports.size(), 1u);
  EXPECT_EQ(page->reports[0].reporter, "bob");
  EXPECT_EQ(page->reports[0].author, "alice");
  EXPECT_EQ(page->reports[0].status, ReportStatus::kOpen);
  EXPECT_EQ(page->open_total, 1);
  EXPECT_FALSE(store_.KeepUntil(note_id_).has_value());  // held while open
}

TEST_F(FileReportTest, Refusals) {
  ExpectRefused(notes_.FileReport(Report("alice"), Deadline()).status(),
                absl::StatusCode::kInvalidArgument, "own_note");
  ReportRequest bad = Report();
  bad.key = "";
  ExpectRefused(notes_.FileReport(bad, Deadline()).status(), absl::StatusCode::kInvalidArgument,
                "bad_request");
  bad = Report();
  bad.reporter = "";
  ExpectRefused(notes_.FileReport(bad, Deadline()).status(), absl::StatusCode::kInvalidArgument,
                "bad_request");
  bad = Report();
  bad.note_id = "n-unknown";
  ExpectRefused(notes_.FileReport(bad, Deadline()).status(), absl::StatusCode::kNotFound,
                "no_note");
  bad = Report();
  bad.author = "carol";
  ExpectRefused(notes_.FileReport(bad, Deadline()).status(), absl::StatusCode::kNotFound,
                "no_note");
  bad = Report();
  bad.table_id = "t-2";
  ExpectRefused(notes_.FileReport(bad, Deadline()).status(), absl::StatusCode::kNotFound,
                "no_note");
  bad = Report();
  bad.round = 2;
  ExpectRefused(notes_.FileReport(bad, Deadline()).status(), absl::StatusCode::kNotFound,
                "no_note");
  store_.FailNext(1, absl::UnavailableError("postgres down"));
  EXPECT_EQ(notes_.FileReport(Report(), Deadline()).status().code(),
            absl::StatusCode::kUnavailable);
  absl::StatusOr<ReportPage> page = store_.ListReports(ReportFilter{}, Deadline());
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->reports.empty());
}

TEST(ReasonWordTest, OnlyALowerCaseWordBeforeTheColon) {
  EXPECT_EQ(ReasonWord("no_lock: x"), "no_lock");
  EXPECT_EQ(ReasonWord("no lock: x"), "");
  EXPECT_EQ(ReasonWord("NoLock: x"), "");
  EXPECT_EQ(ReasonWord(": x"), "");
  EXPECT_EQ(ReasonWord("plain"), "");
}

}  // namespace
}  // namespace courtpiece::moderation
