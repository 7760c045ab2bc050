// The three gRPC services called directly (ServerContextTestSpouse for the metadata, the
// lobby's FakeCallerAuth), on the fake store, the fake ports and FakeAudioProbe: translation,
// authentication (UNAUTHENTICATED, PERMISSION_DENIED not_admin), client-safe messages, and
// the metrics.
#include "services/moderation/server.h"

#include <string>

#include "gmock/gmock.h"
#include "grpcpp/test/server_context_test_spouse.h"
#include "gtest/gtest.h"
#include "services/moderation/fake_audio_probe.h"
#include "services/moderation/fake_moderation_store.h"
#include "services/moderation/fake_ports.h"

namespace courtpiece::moderation {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Ctx {
  grpc::ServerContext context;
  grpc::testing::ServerContextTestSpouse spouse{&context};
};

class ServerTest : public ::testing::Test {
 protected:
  ServerTest()
      : store_(clock_),
        tables_(&clock_),
        random_(7),
        metrics_("moderation"),
        moderation_metrics_(metrics_),
        log_("moderation", common::LogLevel::kError),
        notes_(store_, tables_, probe_, clock_, random_),
        admin_(store_, lobby_, clock_),
        notes_service_(notes_, auth_, clock_, {}, moderation_metrics_, log_),
        admin_service_(admin_, auth_, clock_, {}, moderation_metrics_, log_),
        intake_service_(notes_, clock_, {}, moderation_metrics_, log_) {
    tables_.AddTable("t-1", 2);
    tables_.Seat("t-1", 0, "alice");
    tables_.Seat("t-1", 1, "bob");
    tables_.GiveLock("t-1", "alice");
    probe_.SetNote("mp4/aac", 6100);
    lobby_.AddPlayer({.player_id = "alice", .display_name = "Alice", .quits_total = 1});
  }
  static void As(Ctx& ctx, const std::string& player, bool admin = false) {
    if (!player.empty()) ctx.spouse.AddClientMetadata("courtpiece-test-player", player);
    if (admin) ctx.spouse.AddClientMetadata("courtpiece-test-admin", "1");
  }
  grpc::Status Upload(const std::string& player, const std::string& audio,
                      v1::UploadNoteResponse* out) {
    Ctx ctx;
    As(ctx, player);
    v1::UploadNoteRequest req;
    req.set_table_id("t-1");
    req.set_audio(audio);
    return notes_service_.UploadNote(&ctx.context, &req, out);
  }
  grpc::Status Report(const std::string& note_id, const std::string& reporter) {
    grpc::ServerContext ctx;
    v1::FileReportRequest req;
    req.set_key("t-1:report:" + note_id + ":" + reporter);
    req.set_table_id("t-1");
    req.set_note_id(note_id);
    req.set_author("alice");
    req.set_reporter(reporter);
    req.set_round(2);
    v1::FileReportReply reply;
    return intake_service_.FileReport(&ctx, &req, &reply);
  }
  std::string Metrics() const { return metrics_.Serialize(); }

  FakeClock clock_;
  FakeModerationStore store_;
  FakeTablePort tables_;
  FakeLobbyPort lobby_;
  FakeAudioProbe probe_;
  SeededRandomSource random_;
  auth::FakeCallerAuth auth_;
  common::Metrics metrics_;
  ModerationMetrics moderation_metrics_;
  common::Logger log_;
  VoiceNotes notes_;
  ModerationAdmin admin_;
  VoiceNotesService notes_service_;
  ModerationAdminService admin_service_;
  ReportIntakeService intake_service_;
};

TEST_F(ServerTest, UploadAndGetNoteTranslate) {
  v1::UploadNoteResponse up;
  ASSERT_TRUE(Upload("alice", "audio-bytes", &up).ok());
  EXPECT_THAT(up.note_id(), ::testing::MatchesRegex("n-[0-9a-f]{32}"));
  EXPECT_EQ(up.round(), 2u);
  EXPECT_EQ(up.duration_ms(), 6100);
  EXPECT_EQ(up.format(), "mp4/aac");
  EXPECT_FALSE(up.replayed());
  v1::UploadNoteResponse again;
  ASSERT_TRUE(Upload("alice", "audio-bytes", &again).ok());
  EXPECT_TRUE(again.replayed());
  EXPECT_EQ(again.note_id(), up.note_id());

  Ctx bob;
  As(bob, "bob");
  v1::GetNoteRequest get;
  get.set_note_id(up.note_id());
  v1::GetNoteResponse note;
  ASSERT_TRUE(notes_service_.GetNote(&bob.context, &get, &note).ok());
  EXPECT_EQ(note.audio(), "audio-bytes");
  EXPECT_EQ(note.author(), "alice");
  EXPECT_EQ(note.table_id(), "t-1");
  EXPECT_EQ(note.round(), 2u);
  EXPECT_EQ(note.content_type(), "audio/mp4");
  EXPECT_EQ(note.duration_ms(), 6100);
  EXPECT_EQ(note.created_at_ms(), absl::ToUnixMillis(clock_.Now()));

  Ctx carol;
  As(carol, "carol");
  grpc::Status s = notes_service_.GetNote(&carol.context, &get, &note);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), StartsWith("not_at_table: "));

  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_notes_total{result=\"accepted\"} 1"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_notes_total{result=\"replayed\"} 1"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_note_bytes_stored_total 11"));
}

TEST_F(ServerTest, RefusalsKeepTheirWordAndCountByIt) {
  v1::UploadNoteResponse up;
  grpc::Status s = Upload("", "x", &up);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  s = Upload("alice", std::string(kDefaultNoteBytesMax + 1, 'x'), &up);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_THAT(s.error_message(), StartsWith("too_big: "));
  s = Upload("bob", "x", &up);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), StartsWith("no_lock: "));
  // Infrastructure failures reach the client with the code and a fixed message.
  store_.FailNext(1, absl::UnavailableError("postgres at 10.0.0.5 said no"));
  s = Upload("alice", "x", &up);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(s.error_message(), ::testing::Not(HasSubstr("10.0.0.5")));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_notes_total{result=\"too_big\"} 1"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_notes_total{result=\"no_lock\"} 1"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_notes_total{result=\"unavailable\"} 1"));
}

TEST_F(ServerTest, AdminCallsNeedAnAdminToken) {
  for (bool player : {false, true}) {
    const grpc::StatusCode want =
        player ? grpc::StatusCode::PERMISSION_DENIED : grpc::StatusCode::UNAUTHENTICATED;
    std::vector<grpc::Status> got;
    {
      Ctx c;
      As(c, player ? "bob" : "");
      v1::ListReportsRequest req;
      v1::ListReportsResponse out;
      got.push_back(admin_service_.ListReports(&c.context, &req, &out));
    }
    {
      Ctx c;
      As(c, player ? "bob" : "");
      v1::GetReportRequest req;
      v1::ReportContext out;
      got.push_back(admin_service_.GetReport(&c.context, &req, &out));
    }
    {
      Ctx c;
      As(c, player ? "bob" : "");
      v1::ResolveReportRequest req;
      v1::ResolveReportResponse out;
      got.push_back(admin_service_.ResolveReport(&c.context, &req, &out));
    }
    {
      Ctx c;
      As(c, player ? "bob" : "");
      v1::MutePlayerRequest req;
      v1::Mute out;
      got.push_back(admin_service_.MutePlayer(&c.context, &req, &out));
    }
    {
      Ctx c;
      As(c, player ? "bob" : "");
      v1::ListMutesRequest req;
      v1::ListMutesResponse out;
      got.push_back(admin_service_.ListMutes(&c.context, &req, &out));
    }
    {
      Ctx c;
      As(c, player ? "bob" : "");
      v1::LiftMuteRequest req;
      v1::Mute out;
      got.push_back(admin_service_.LiftMute(&c.context, &req, &out));
    }
    {
      Ctx c;
      As(c, player ? "bob" : "");
      v1::ListAuditRequest req;
      v1::ListAuditResponse out;
      got.push_back(admin_service_.ListAudit(&c.context, &req, &out));
    }
    ASSERT_EQ(got.size(), 7u);
    for (const grpc::Status& s : got) {
      EXPECT_EQ(s.error_code(), want) << s.error_message();
      if (player) {
        EXPECT_THAT(s.error_message(), StartsWith("not_admin: "));
      }
    }
  }
  EXPECT_EQ(store_.Calls(), 0);
}

TEST_F(ServerTest, TheEverydayResultsAreThereAtZeroFromTheStart) {
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_notes_total{result=\"accepted\"} 0"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_notes_total{result=\"replayed\"} 0"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_reports_total{result=\"filed\"} 0"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_reports_total{result=\"replayed\"} 0"));
}

TEST_F(ServerTest, AReportStatusFilterOutsideTheEnumIsRefused) {
  for (int status : {-1, 4, 9}) {
    Ctx c;
    As(c, "admin-1", true);
    v1::ListReportsRequest req;
    req.set_status(static_cast<v1::ReportStatus>(status));
    v1::ListReportsResponse out;
    grpc::Status s = admin_service_.ListReports(&c.context, &req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(
        s.error_message(),
        absl::StrCat("bad_request: status ", status,
                     " is none of REPORT_STATUS_OPEN, _DISMISSED, _ACTIONED (or unset: any)"));
  }
  EXPECT_EQ(store_.Calls(), 0);
  Ctx c;
  As(c, "admin-1", true);
  v1::ListReportsRequest req;
  req.set_status(v1::REPORT_STATUS_ACTIONED);
  v1::ListReportsResponse out;
  EXPECT_TRUE(admin_service_.ListReports(&c.context, &req, &out).ok());
}

TEST_F(ServerTest, ReportResolveMuteAndAudit) {
  v1::UploadNoteResponse up;
  ASSERT_TRUE(Upload("alice", "abc", &up).ok());
  ASSERT_TRUE(Report(up.note_id(), "bob").ok());
  grpc::Status own = Report(up.note_id(), "alice");
  EXPECT_EQ(own.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(own.error_message(), StartsWith("own_note: "));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_reports_total{result=\"filed\"} 1"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_reports_total{result=\"own_note\"} 1"));

  Ctx list;
  As(list, "admin-1", true);
  v1::ListReportsRequest lreq;
  lreq.set_status(v1::REPORT_STATUS_OPEN);
  v1::ListReportsResponse reports;
  ASSERT_TRUE(admin_service_.ListReports(&list.context, &lreq, &reports).ok());
  ASSERT_EQ(reports.reports_size(), 1);
  const v1::Report& r = reports.reports(0);
  EXPECT_EQ(r.report_id(), "1");
  EXPECT_EQ(r.note_id(), up.note_id());
  EXPECT_EQ(r.reporter(), "bob");
  EXPECT_EQ(r.status(), v1::REPORT_STATUS_OPEN);
  EXPECT_EQ(r.resolved_at_ms(), 0);
  EXPECT_EQ(reports.open_total(), 1);

  Ctx get;
  As(get, "admin-1", true);
  get.spouse.AddClientMetadata("authorization", "Bearer the-admins-token");
  v1::GetReportRequest greq;
  greq.set_report_id("1");
  v1::ReportContext ctx;
  ASSERT_TRUE(admin_service_.GetReport(&get.context, &greq, &ctx).ok());
  EXPECT_EQ(ctx.audio(), "abc");
  EXPECT_EQ(ctx.note().size_bytes(), 3);
  EXPECT_EQ(ctx.note().format(), "mp4/aac");
  EXPECT_EQ(ctx.author_name(), "Alice");
  EXPECT_EQ(ctx.author_quits_total(), 1);
  EXPECT_EQ(ctx.note_reports_size(), 1);
  EXPECT_FALSE(ctx.has_author_mute());
  EXPECT_EQ(lobby_.last_authorization(), "Bearer the-admins-token");

  Ctx resolve;
  As(resolve, "admin-1", true);
  v1::ResolveReportRequest rreq;
  rreq.set_report_id("1");
  rreq.set_action(v1::ACTION_MUTE_FOR);
  rreq.set_mute_for_ms(3'600'000);
  rreq.set_reason("abusive");
  v1::ResolveReportResponse resolved;
  ASSERT_TRUE(admin_service_.ResolveReport(&resolve.context, &rreq, &resolved).ok());
  ASSERT_EQ(resolved.resolved_size(), 1);
  EXPECT_EQ(resolved.resolved(0).status(), v1::REPORT_STATUS_ACTIONED);
  EXPECT_EQ(resolved.resolved(0).resolved_by(), "admin-1");
  EXPECT_EQ(resolved.mute().player_id(), "alice");
  EXPECT_EQ(resolved.mute().until_ms(), absl::ToUnixMillis(clock_.Now() + absl::Hours(1)));
  EXPECT_EQ(resolved.mute().report_id(), "1");

  Ctx lift;
  As(lift, "admin-2", true);
  v1::LiftMuteRequest lreq2;
  lreq2.set_player_id("alice");
  lreq2.set_reason("appeal");
  v1::Mute lifted;
  ASSERT_TRUE(admin_service_.LiftMute(&lift.context, &lreq2, &lifted).ok());
  EXPECT_EQ(lifted.lifted_by(), "admin-2");
  EXPECT_EQ(lifted.lifted_at_ms(), absl::ToUnixMillis(clock_.Now()));

  Ctx audit;
  As(audit, "admin-1", true);
  v1::ListAuditRequest areq;
  v1::ListAuditResponse entries;
  ASSERT_TRUE(admin_service_.ListAudit(&audit.context, &areq, &entries).ok());
  ASSERT_EQ(entries.entries_size(), 3);
  EXPECT_EQ(entries.entries(0).action(), "lift_mute");
  EXPECT_EQ(entries.entries(0).admin_id(), "admin-2");
  EXPECT_EQ(entries.entries(1).action(), "resolve_report");
  EXPECT_EQ(entries.entries(1).report_id(), "1");
  EXPECT_EQ(entries.entries(1).detail(), "mute_for 3600000 ms");
  EXPECT_EQ(entries.entries(2).action(), "listen_note");
  EXPECT_EQ(entries.entries(2).note_id(), up.note_id());

  EXPECT_THAT(Metrics(),
              HasSubstr("courtpiece_moderation_admin_actions_total{action=\"listen_note\"} 1"));
  EXPECT_THAT(
      Metrics(),
      HasSubstr("courtpiece_moderation_admin_actions_total{action=\"resolve_mute_for\"} 1"));
  EXPECT_THAT(Metrics(),
              HasSubstr("courtpiece_moderation_admin_actions_total{action=\"lift_mute\"} 1"));
}

TEST_F(ServerTest, GaugesAndPurgeMetrics) {
  moderation_metrics_.Gauges(StoreGauges{.notes = 3,
                                         .audio_bytes = 900,
                                         .open_reports = 2,
                                         .oldest_open_report_at = clock_.Now() - absl::Seconds(30),
                                         .active_mutes = 1},
                             clock_.Now());
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_open_reports 2"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_oldest_open_report_age_seconds 30"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_notes_stored 3"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_audio_bytes 900"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_active_mutes 1"));
  moderation_metrics_.Gauges(StoreGauges{}, clock_.Now());
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_oldest_open_report_age_seconds 0"));

  moderation_metrics_.Purge(PurgeRun{
      .result = {.notes_deleted = 4, .audio_deleted = 1, .bytes_freed = 5000}, .drained = true});
  moderation_metrics_.Purge(absl::UnavailableError("down"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_purge_runs_total{result=\"ok\"} 1"));
  EXPECT_THAT(Metrics(),
              HasSubstr("courtpiece_moderation_purge_runs_total{result=\"unavailable\"} 1"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_purged_notes_total{kind=\"whole\"} 4"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_purged_notes_total{kind=\"audio\"} 1"));
  EXPECT_THAT(Metrics(), HasSubstr("courtpiece_moderation_purged_bytes_total 5000"));
}

}  // namespace
}  // namespace courtpiece::moderation
