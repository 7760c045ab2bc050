// ModerationAdmin on the fake store, the fake lobby and a fake clock: paging, a report's
// context (with the listen_note audit and the lobby's best-effort part), the resolve flow
// with its validation edges, mutes and the audit log.
#include "services/moderation/admin.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/moderation/fake_moderation_store.h"
#include "services/moderation/fake_ports.h"
#include "services/moderation/moderation_test_util.h"

namespace courtpiece::moderation {
namespace {

using testing::AddNote;
using testing::AddReport;
using testing::ExpectRefused;

class AdminTest : public ::testing::Test {
 protected:
  AdminTest() : store_(clock_), admin_(store_, lobby_, clock_) {
    lobby_.AddPlayer({.player_id = "alice", .display_name = "Alice", .quits_total = 2},
                     {{.table_id = "t-0", .game_no = 4, .game = "classic", .recorded_at_ms = 5}});
    lobby_.AddPlayer({.player_id = "bob", .display_name = "Bob"});
    lobby_.AddPlayer({.player_id = "carol", .display_name = "Carol"});
  }
  absl::Time Deadline() const { return clock_.Now() + absl::Seconds(5); }
  std::string Id(const ReportRow& r) const { return absl::StrCat(r.report_id); }
  std::vector<AuditRow> Audit() {
    absl::StatusOr<AuditPage> page = admin_.ListAudit(AuditFilter{}, Deadline());
    EXPECT_TRUE(page.ok()) << page.status();
    return page.ok() ? page->entries : std::vector<AuditRow>{};
  }

  const AdminCaller caller_{.admin_id = "admin-1", .authorization = "Bearer admin-token"};
  FakeClock clock_;
  FakeModerationStore store_;
  FakeLobbyPort lobby_;
  ModerationAdmin admin_;
};

TEST_F(AdminTest, PageSizesAreClampedAndTokensPage) {
  EXPECT_EQ(ClampPageSize(0), 50);
  EXPECT_EQ(ClampPageSize(-3), 50);
  EXPECT_EQ(ClampPageSize(1), 1);
  EXPECT_EQ(ClampPageSize(200), 200);
  EXPECT_EQ(ClampPageSize(201), 200);
  for (int i = 0; i < 205; ++i) {
    NoteRow note = AddNote(store_, absl::StrCat(i), "alice", clock_.Now(), "t-1", i + 1);
    AddReport(store_, note, "bob", clock_.Now());
  }
  absl::StatusOr<ReportPage> first = admin_.ListReports(ReportFilter{.page_size = 0}, Deadline());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->reports.size(), 50u);
  EXPECT_EQ(first->open_total, 205);
  EXPECT_EQ(first->next_page_token, Id(first->reports.back()));
  absl::StatusOr<ReportPage> big = admin_.ListReports(ReportFilter{.page_size = 1000}, Deadline());
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->reports.size(), 200u);
  absl::StatusOr<ReportPage> rest = admin_.ListReports(
      ReportFilter{.page_size = 200, .page_token = big->next_page_token}, Deadline());
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->reports.size(), 5u);
  EXPECT_EQ(rest->next_page_token, "");
  EXPECT_LT(big->reports.back().report_id, rest->reports.front().report_id);  // oldest first

  for (const std::string bad : {"abc", "-1", "0", "12x", "99999999999999999999"}) {
    ExpectRefused(admin_.ListReports(ReportFilter{.page_token = bad}, Deadline()).status(),
                  absl::StatusCode::kInvalidArgument, "bad_request");
  }
  ExpectRefused(admin_.ListReports(ReportFilter{.author = "a b"}, Deadline()).status(),
                absl::StatusCode::kInvalidArgument, "bad_request");
  absl::StatusOr<ReportPage> none = admin_.ListReports(ReportFilter{.author = "carol"}, Deadline());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->reports.empty());
}

TEST_F(AdminTest, GetReportGivesTheContextAndAuditsTheListen) {
  NoteRow old_note = AddNote(store_, "old", "alice", clock_.Now(), "t-0", 1);
  ReportRow old_report = AddReport(store_, old_note, "dave", clock_.Now());
  clock_.Advance(absl::Minutes(1));
  NoteRow note = AddNote(store_, "a", "alice", clock_.Now(), "t-1", 2, 321);
  ReportRow bob = AddReport(store_, note, "bob", clock_.Now());
  ReportRow carol = AddReport(store_, note, "carol", clock_.Now());

  absl::StatusOr<ReportContextResult> ctx = admin_.GetReport(caller_, Id(bob), Deadline());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_EQ(ctx->report.report_id, bob.report_id);
  EXPECT_EQ(ctx->note.note_id, "n-a");
  EXPECT_FALSE(ctx->note.purged);
  EXPECT_EQ(ctx->audio, std::string(321, 'a'));
  ASSERT_EQ(ctx->note_reports.size(), 2u);
  EXPECT_EQ(ctx->note_reports[0].report_id, bob.report_id);
  EXPECT_EQ(ctx->note_reports[1].report_id, carol.report_id);
  ASSERT_EQ(ctx->author_reports.size(), 1u);
  EXPECT_EQ(ctx->author_reports[0].report_id, old_report.report_id);
  EXPECT_EQ(ctx->author_name, "Alice");
  EXPECT_EQ(ctx->author_quits_total, 2);
  ASSERT_EQ(ctx->author_quits.size(), 1u);
  EXPECT_EQ(ctx->author_quits[0].game, "classic");
  EXPECT_EQ(ctx->lobby_error, "");
  EXPECT_FALSE(ctx->author_mute.has_value());
  EXPECT_EQ(lobby_.last_authorization(), "Bearer admin-token");

  std::vector<AuditRow> audit = Audit();
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].action, "listen_note");
  EXPECT_EQ(audit[0].admin_id, "admin-1");
  EXPECT_EQ(audit[0].target_player, "alice");
  EXPECT_EQ(audit[0].report_id, bob.report_id);
  EXPECT_EQ(audit[0].note_id, "n-a");
  EXPECT_EQ(audit[0].detail, "321 bytes");

  ExpectRefused(admin_.GetReport(caller_, "999", Deadline()).status(), absl::StatusCode::kNotFound,
                "no_report");
  for (const std::string bad : {"", "abc", "-1", "0", "012"}) {
    ExpectRefused(admin_.GetReport(caller_, bad, Deadline()).status(), absl::StatusCode::kNotFound,
                  "no_report");
  }
}

TEST_F(AdminTest, TheLobbysPartIsBestEffort) {
  NoteRow note = AddNote(store_, "a", "alice", clock_.Now());
  ReportRow r = AddReport(store_, note, "bob", clock_.Now());
  lobby_.SetFailure(absl::UnavailableError("lobby down"));
  absl::StatusOr<ReportContextResult> ctx = admin_.GetReport(caller_, Id(r), Deadline());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_THAT(ctx->lobby_error, ::testing::HasSubstr("lobby down"));
  EXPECT_EQ(ctx->author_name, "");
  EXPECT_FALSE(ctx->audio.empty());
}

TEST_F(AdminTest, APurgedNoteHasNoAudioAndNoListen) {
  NoteRow note = AddNote(store_, "a", "alice", clock_.Now());
  ReportRow r = AddReport(store_, note, "bob", clock_.Now());
  ASSERT_TRUE(
      admin_
          .ResolveReport(caller_,
                         {.report_id = Id(r), .action = AdminAction::kDismiss, .reason = "fine"},
                         Deadline())
          .ok());
  clock_.Advance(kNoteRetention);
  ASSERT_TRUE(store_.Purge(clock_.Now(), 10, Deadline()).ok());
  absl::StatusOr<ReportContextResult> ctx = admin_.GetReport(caller_, Id(r), Deadline());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_TRUE(ctx->note.purged);
  EXPECT_EQ(ctx->audio, "");
  for (const AuditRow& a : Audit()) EXPECT_NE(a.action, "listen_note");
}

TEST_F(AdminTest, ResolveValidationEdges) {
  NoteRow note = AddNote(store_, "a", "alice", clock_.Now());
  ReportRow r = AddReport(store_, note, "bob", clock_.Now());
  auto resolve = [&](AdminAction action, int64_t mute_for_ms, std::string reason) {
    return admin_
        .ResolveReport(caller_,
                       {.report_id = Id(r),
                        .action = action,
                        .mute_for_ms = mute_for_ms,
                        .reason = std::move(reason)},
                       Deadline())
        .status();
  };
  ExpectRefused(resolve(AdminAction::kUnspecified, 0, "x"), absl::StatusCode::kInvalidArgument,
                "bad_request");
  ExpectRefused(resolve(AdminAction::kDismiss, 0, ""), absl::StatusCode::kInvalidArgument,
                "bad_request");
  ExpectRefused(resolve(AdminAction::kDismiss, 0, std::string(501, 'x')),
                absl::StatusCode::kInvalidArgument, "bad_request");
  ExpectRefused(resolve(AdminAction::kMuteFor, 59'999, "x"), absl::StatusCode::kInvalidArgument,
                "bad_request");
  ExpectRefused(resolve(AdminAction::kMuteFor, 31'536'000'001, "x"),
                absl::StatusCode::kInvalidArgument, "bad_request");
  ExpectRefused(resolve(AdminAction::kMuteFor, 0, "x"), absl::StatusCode::kInvalidArgument,
                "bad_request");
  ExpectRefused(
      admin_
          .ResolveReport(caller_,
                         {.report_id = "404", .action = AdminAction::kDismiss, .reason = "x"},
                         Deadline())
          .status(),
      absl::StatusCode::kNotFound, "no_report");
  EXPECT_TRUE(Audit().empty());  // nothing changed
  // 500 characters of two bytes each is 500 characters.
  std::string accents;
  for (int i = 0; i < 500; ++i) accents += "\xc3\xa9";
  EXPECT_EQ(Utf8Chars(accents), 500);
  EXPECT_TRUE(resolve(AdminAction::kMuteFor, 60'000, accents).ok());
}

TEST_F(AdminTest, MuteForLimitsAreInclusive) {
  NoteRow a = AddNote(store_, "a", "alice", clock_.Now());
  NoteRow b = AddNote(store_, "b", "alice", clock_.Now(), "t-1", 2);
  ReportRow ra = AddReport(store_, a, "bob", clock_.Now());
  ReportRow rb = AddReport(store_, b, "bob", clock_.Now());
  absl::StatusOr<Resolved> year = admin_.ResolveReport(caller_,
                                                       {.report_id = Id(ra),
                                                        .action = AdminAction::kMuteFor,
                                                        .mute_for_ms = 31'536'000'000,
                                                        .reason = "a year"},
                                                       Deadline());
  ASSERT_TRUE(year.ok()) << year.status();
  ASSERT_TRUE(year->mute.has_value());
  EXPECT_EQ(year->mute->until, clock_.Now() + absl::Milliseconds(31'536'000'000));
  absl::StatusOr<Resolved> minute = admin_.ResolveReport(caller_,
                                                         {.report_id = Id(rb),
                                                          .action = AdminAction::kMuteFor,
                                                          .mute_for_ms = 60'000,
                                                          .reason = "a minute"},
                                                         Deadline());
  ASSERT_TRUE(minute.ok()) << minute.status();
  EXPECT_EQ(minute->mute->until, clock_.Now() + absl::Minutes(1));  // replaces the year
}

TEST_F(AdminTest, ResolveWithAMuteClosesEveryOpenReportOfTheNoteAndAudits) {
  NoteRow note = AddNote(store_, "a", "alice", clock_.Now());
  ReportRow bob = AddReport(store_, note, "bob", clock_.Now());
  ReportRow carol = AddReport(store_, note, "carol", clock_.Now());
  clock_.Advance(absl::Hours(2));
  absl::StatusOr<Resolved> r = admin_.ResolveReport(caller_,
                                                    {.report_id = Id(carol),
                                                     .action = AdminAction::kMuteFor,
                                                     .mute_for_ms = 86'400'000,
                                                     .reason = "slurs"},
                                                    Deadline());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->reports.size(), 2u);
  for (const ReportRow& x : r->reports) {
    EXPECT_EQ(x.status, ReportStatus::kActioned);
    EXPECT_EQ(x.resolved_by, "admin-1");
    EXPECT_EQ(x.resolution_reason, "slurs");
    EXPECT_EQ(x.resolved_at, clock_.Now());
  }
  ASSERT_TRUE(r->mute.has_value());
  EXPECT_EQ(r->mute->player_id, "alice");
  EXPECT_EQ(r->mute->until, clock_.Now() + absl::Hours(24));
  EXPECT_EQ(r->mute->report_id, carol.report_id);
  EXPECT_EQ(store_.KeepUntil("n-a"), clock_.Now() + kNoteRetention);

  ExpectRefused(
      admin_
          .ResolveReport(caller_,
                         {.report_id = Id(bob), .action = AdminAction::kDismiss, .reason = "again"},
                         Deadline())
          .status(),
      absl::StatusCode::kFailedPrecondition, "already_resolved");

  std::vector<AuditRow> audit = Audit();
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].action, "resolve_report");
  EXPECT_EQ(audit[0].detail, "mute_for 86400000 ms");
  EXPECT_EQ(audit[0].target_player, "alice");
  EXPECT_EQ(audit[0].report_id, carol.report_id);
  EXPECT_EQ(audit[0].reason, "slurs");

  absl::StatusOr<std::optional<MuteRow>> active =
      store_.ActiveMute("alice", clock_.Now(), Deadline());
  ASSERT_TRUE(active.ok());
  EXPECT_TRUE(active->has_value());
  clock_.Advance(absl::Hours(24));
  active = store_.ActiveMute("alice", clock_.Now(), Deadline());
  ASSERT_TRUE(active.ok());
  EXPECT_FALSE(active->has_value());
}

TEST_F(AdminTest, DismissMutesNobody) {
  NoteRow note = AddNote(store_, "a", "alice", clock_.Now());
  ReportRow r = AddReport(store_, note, "bob", clock_.Now());
  absl::StatusOr<Resolved> out = admin_.ResolveReport(
      caller_, {.report_id = Id(r), .action = AdminAction::kDismiss, .reason = "banter"},
      Deadline());
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->reports.size(), 1u);
  EXPECT_EQ(out->reports[0].status, ReportStatus::kDismissed);
  EXPECT_FALSE(out->mute.has_value());
  EXPECT_EQ(Audit().at(0).detail, "dismiss");
  absl::StatusOr<ReportPage> open =
      admin_.ListReports(ReportFilter{.status = ReportStatus::kOpen}, Deadline());
  ASSERT_TRUE(open.ok());
  EXPECT_TRUE(open->reports.empty());
  EXPECT_EQ(open->open_total, 0);
}

TEST_F(AdminTest, MuteListAndLift) {
  ExpectRefused(admin_.MutePlayer(caller_, {.player_id = "", .reason = "x"}, Deadline()).status(),
                absl::StatusCode::kInvalidArgument, "bad_request");
  ExpectRefused(
      admin_.MutePlayer(caller_, {.player_id = "bob", .mute_for_ms = 1, .reason = "x"}, Deadline())
          .status(),
      absl::StatusCode::kInvalidArgument, "bad_request");
  ExpectRefused(admin_.MutePlayer(caller_, {.player_id = "bob", .reason = ""}, Deadline()).status(),
                absl::StatusCode::kInvalidArgument, "bad_request");
  absl::StatusOr<MuteRow> forever =
      admin_.MutePlayer(caller_, {.player_id = "bob", .reason = "spam"}, Deadline());
  ASSERT_TRUE(forever.ok()) << forever.status();
  EXPECT_FALSE(forever->until.has_value());
  EXPECT_EQ(forever->muted_by, "admin-1");
  absl::StatusOr<MuteRow> timed = admin_.MutePlayer(
      caller_, {.player_id = "carol", .mute_for_ms = 600'000, .reason = "noise"}, Deadline());
  ASSERT_TRUE(timed.ok());
  EXPECT_EQ(timed->until, clock_.Now() + absl::Minutes(10));

  absl::StatusOr<MutePage> active = admin_.ListMutes(MuteFilter{}, Deadline());
  ASSERT_TRUE(active.ok());
  EXPECT_EQ(active->mutes.size(), 2u);
  clock_.Advance(absl::Minutes(10));
  active = admin_.ListMutes(MuteFilter{}, Deadline());
  ASSERT_TRUE(active.ok());
  ASSERT_EQ(active->mutes.size(), 1u);
  EXPECT_EQ(active->mutes[0].player_id, "bob");
  absl::StatusOr<MutePage> all = admin_.ListMutes(MuteFilter{.include_inactive = true}, Deadline());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->mutes.size(), 2u);

  ExpectRefused(admin_.LiftMute(caller_, "bob", "", Deadline()).status(),
                absl::StatusCode::kInvalidArgument, "bad_request");
  absl::StatusOr<MuteRow> lifted = admin_.LiftMute(caller_, "bob", "appeal", Deadline());
  ASSERT_TRUE(lifted.ok()) << lifted.status();
  EXPECT_EQ(lifted->lifted_by, "admin-1");
  EXPECT_EQ(lifted->lifted_at, clock_.Now());
  ExpectRefused(admin_.LiftMute(caller_, "bob", "again", Deadline()).status(),
                absl::StatusCode::kNotFound, "not_muted");
  ExpectRefused(admin_.LiftMute(caller_, "carol", "expired", Deadline()).status(),
                absl::StatusCode::kNotFound, "not_muted");

  std::vector<AuditRow> audit = Audit();  // newest first
  ASSERT_EQ(audit.size(), 3u);
  EXPECT_EQ(audit[0].action, "lift_mute");
  EXPECT_EQ(audit[0].target_player, "bob");
  EXPECT_EQ(audit[0].reason, "appeal");
  EXPECT_EQ(audit[1].action, "mute");
  EXPECT_EQ(audit[1].detail, "mute_for 600000 ms");
  EXPECT_EQ(audit[2].action, "mute");
  EXPECT_EQ(audit[2].detail, "mute_until_lifted");
  absl::StatusOr<AuditPage> bobs =
      admin_.ListAudit(AuditFilter{.target_player = "bob"}, Deadline());
  ASSERT_TRUE(bobs.ok());
  EXPECT_EQ(bobs->entries.size(), 2u);
}

// The status has `code` and exactly `message`.
void ExpectStatus(const absl::Status& status, absl::StatusCode code, const std::string& message) {
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_EQ(status.message(), message) << status;
}

TEST_F(AdminTest, OnlyAPlayerTheLobbyKnowsCanBeMuted) {
  // A mistyped id, or a bot's, must not look like a done mute: nothing is written.
  for (const std::string id : {"p-4c800e39aff9a55ec663fc17", "bot-3"}) {
    ExpectStatus(
        admin_.MutePlayer(caller_, {.player_id = id, .reason = "typo"}, Deadline()).status(),
        absl::StatusCode::kNotFound, absl::StrCat("no_player: no player ", id));
  }
  EXPECT_EQ(lobby_.last_authorization(), "Bearer admin-token");
  // The lobby unreachable: retry later, nothing written; its own refusal of the admin as is.
  lobby_.SetFailure(absl::UnavailableError("connection refused"));
  ExpectStatus(
      admin_.MutePlayer(caller_, {.player_id = "bob", .reason = "spam"}, Deadline()).status(),
      absl::StatusCode::kUnavailable,
      "the lobby could not confirm the player: retry (connection refused)");
  lobby_.SetFailure(absl::PermissionDeniedError("not_admin: admin role required"));
  ExpectStatus(
      admin_.MutePlayer(caller_, {.player_id = "bob", .reason = "spam"}, Deadline()).status(),
      absl::StatusCode::kPermissionDenied, "not_admin: admin role required");
  EXPECT_EQ(store_.Calls(), 0);
  lobby_.SetFailure(absl::OkStatus());
  ASSERT_TRUE(admin_.MutePlayer(caller_, {.player_id = "bob", .reason = "spam"}, Deadline()).ok());
  ASSERT_EQ(Audit().size(), 1u);
  EXPECT_EQ(Audit()[0].target_player, "bob");
}

TEST_F(AdminTest, ABlankReasonOrAMalformedFilterIsRefused) {
  NoteRow note = AddNote(store_, "a", "alice", clock_.Now());
  ReportRow r = AddReport(store_, note, "bob", clock_.Now());
  const int calls_before = store_.Calls();
  const std::string refused = "bad_request: reason must say why (it is only blanks)";
  for (const std::string blank : {" ", "   ", "\n", " \t\r\n"}) {
    SCOPED_TRACE(absl::CEscape(blank));
    ExpectStatus(
        admin_.MutePlayer(caller_, {.player_id = "bob", .reason = blank}, Deadline()).status(),
        absl::StatusCode::kInvalidArgument, refused);
    ExpectStatus(admin_.LiftMute(caller_, "bob", blank, Deadline()).status(),
                 absl::StatusCode::kInvalidArgument, refused);
    ExpectStatus(
        admin_
            .ResolveReport(caller_,
                           {.report_id = Id(r), .action = AdminAction::kDismiss, .reason = blank},
                           Deadline())
            .status(),
        absl::StatusCode::kInvalidArgument, refused);
  }
  ExpectStatus(admin_.ListAudit(AuditFilter{.admin_id = "x y"}, Deadline()).status(),
               absl::StatusCode::kInvalidArgument, "bad_request: admin_id is not a player id");
  ExpectStatus(admin_.ListAudit(AuditFilter{.target_player = "x y"}, Deadline()).status(),
               absl::StatusCode::kInvalidArgument, "bad_request: target_player is not a player id");
  ExpectStatus(admin_.ListReports(ReportFilter{.author = "x y"}, Deadline()).status(),
               absl::StatusCode::kInvalidArgument, "bad_request: author is not a player id");
  EXPECT_EQ(store_.Calls(), calls_before);
  EXPECT_TRUE(Audit().empty());
  // Words around blanks make a reason.
  EXPECT_TRUE(
      admin_.MutePlayer(caller_, {.player_id = "bob", .reason = " spam "}, Deadline()).ok());
}

TEST_F(AdminTest, DeadlinePassedTouchesNothing) {
  EXPECT_EQ(admin_.ListReports(ReportFilter{}, clock_.Now()).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(
      admin_.MutePlayer(caller_, {.player_id = "bob", .reason = "x"}, clock_.Now()).status().code(),
      absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(store_.Calls(), 0);
}

}  // namespace
}  // namespace courtpiece::moderation
