// The ModerationStore contract (moderation_store.h), one typed suite run against both
// implementations: built without COURTPIECE_MODERATION_STORE_PG it runs on
// FakeModerationStore (label unit, plus the fake's failure-injection tests); with it, on
// PgModerationStore over a real Postgres (COURTPIECE_TEST_PG_URL, label integration, a fresh
// database per test; pg_moderation_store_test.cc adds the Postgres-only tests).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/moderation/fake_moderation_store.h"
#include "services/moderation/moderation_store.h"
#ifdef COURTPIECE_MODERATION_STORE_PG
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/testing.h"
#include "services/moderation/pg_moderation_store.h"
#endif

namespace courtpiece::moderation {
namespace {

using C = absl::StatusCode;
using ::courtpiece::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Test times: whole milliseconds from here (both stores keep microseconds).
const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

class FakeHarness {
 public:
  // The gauges' clock is past every time the tests use and before the far-future ones, as
  // the real clock is for the Postgres store.
  FakeHarness() : clock_(absl::FromUnixSeconds(1'800'000'000)), store_(clock_) {}
  bool Ready() { return true; }
  ModerationStore& store() { return store_; }

  FakeClock clock_;
  FakeModerationStore store_;
};

#ifdef COURTPIECE_MODERATION_STORE_PG
class PgHarness {
 public:
  bool Ready() {
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db = storage::TestDatabase::Create(
        {.migrations = {{"moderation",
                         ::courtpiece::common::SourceDir() + "/services/moderation/migrations"}}});
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) return false;
    db_ = *std::move(db);
    storage::PgPoolOptions options = db_->PoolOptions();
    options.application_name = "moderation-contract-test";
    pool_ = std::make_unique<storage::PgPool>(options);
    store_ = std::make_unique<PgModerationStore>(*pool_);
    return true;
  }
  ModerationStore& store() { return *store_; }

  std::unique_ptr<storage::TestDatabase> db_;
  std::unique_ptr<storage::PgPool> pool_;
  std::unique_ptr<PgModerationStore> store_;
};
using Harnesses = ::testing::Types<PgHarness>;
#else
using Harnesses = ::testing::Types<FakeHarness>;
#endif

std::string NoteId(int i) { return absl::StrFormat("n-%032x", i); }

NoteRow MakeNote(int i, const std::string& table, uint64_t round, const std::string& author,
                 absl::Time created, int64_t size_bytes = 200) {
  NoteRow n;
  n.note_id = NoteId(i);
  n.table_id = table;
  n.round = round;
  n.author = author;
  n.duration_ms = 3500;
  n.format = "webm/opus";
  n.content_type = "audio/webm";
  n.size_bytes = size_bytes;
  n.created_at = created;
  return n;
}

std::string Audio(int64_t size, char seed = 'a') {
  std::string a(static_cast<size_t>(size), seed);
  a[0] = '\0';  // bytes, not text
  if (size > 1) a[1] = static_cast<char>(0xff);
  return a;
}

MuteRow MakeMute(const std::string& player, absl::Time created, std::optional<absl::Time> until,
                 const std::string& by = "admin-1") {
  MuteRow m;
  m.player_id = player;
  m.created_at = created;
  m.until = until;
  m.muted_by = by;
  m.reason = "abuse";
  return m;
}

AuditRow MakeAudit(const std::string& admin, const std::string& action, const std::string& target,
                   absl::Time at) {
  AuditRow a;
  a.admin_id = admin;
  a.action = action;
  a.target_player = target;
  a.reason = "why";
  a.detail = "d";
  a.at = at;
  return a;
}

std::vector<int64_t> ReportIds(const std::vector<ReportRow>& rows) {
  std::vector<int64_t> ids;
  for (const ReportRow& r : rows) ids.push_back(r.report_id);
  return ids;
}
std::vector<int64_t> MuteIds(const std::vector<MuteRow>& rows) {
  std::vector<int64_t> ids;
  for (const MuteRow& r : rows) ids.push_back(r.mute_id);
  return ids;
}
std::vector<int64_t> AuditIds(const std::vector<AuditRow>& rows) {
  std::vector<int64_t> ids;
  for (const AuditRow& r : rows) ids.push_back(r.audit_id);
  return ids;
}

template <typename H>
class ModerationStoreContract : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(h_.Ready()); }
  ModerationStore& store() { return h_.store(); }
  static absl::Time Deadline() { return absl::Now() + absl::Seconds(10); }

  NoteRow Insert(int i, const std::string& table, uint64_t round, const std::string& author,
                 absl::Time created, int64_t size_bytes = 200) {
    bool inserted = false;
    absl::StatusOr<NoteRow> n =
        store().InsertNote(MakeNote(i, table, round, author, created, size_bytes),
                           Audio(size_bytes), &inserted, Deadline());
    EXPECT_TRUE(n.ok()) << n.status();
    EXPECT_TRUE(inserted);
    return n.value_or(NoteRow{});
  }
  ReportRow Report(const std::string& key, const std::string& note_id, const std::string& reporter,
                   absl::Time now) {
    bool replayed = true;
    absl::StatusOr<ReportRow> r =
        store().FileReport(key, note_id, reporter, now, &replayed, Deadline());
    EXPECT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(replayed);
    return r.value_or(ReportRow{});
  }
  bool Exists(const std::string& note_id) { return store().GetNote(note_id, Deadline()).ok(); }
  bool HasAudio(const std::string& note_id) { return store().GetAudio(note_id, Deadline()).ok(); }
  PurgeResult Purge(absl::Time now, int batch_max) {
    absl::StatusOr<PurgeResult> p = store().Purge(now, batch_max, Deadline());
    EXPECT_TRUE(p.ok()) << p.status();
    return p.value_or(PurgeResult{-1, -1, -1});
  }
  std::vector<AuditRow> AllAudit() {
    absl::StatusOr<AuditPage> page = store().ListAudit(
        {.admin_id = "", .target_player = "", .page_size = 200, .page_token = ""}, Deadline());
    EXPECT_TRUE(page.ok()) << page.status();
    return page.ok() ? page->entries : std::vector<AuditRow>{};
  }

  H h_;
};
TYPED_TEST_SUITE(ModerationStoreContract, Harnesses);

// ---- notes ----

TYPED_TEST(ModerationStoreContract, InsertNoteStoresTheNoteAndItsAudio) {
  const NoteRow want = MakeNote(1, "t-1", 7, "alice", kT0 + absl::Milliseconds(123), 300);
  bool inserted = false;
  absl::StatusOr<NoteRow> got =
      this->store().InsertNote(want, Audio(300), &inserted, this->Deadline());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(inserted);
  for (const NoteRow& n : {*got, *this->store().GetNote(NoteId(1), this->Deadline())}) {
    EXPECT_EQ(n.note_id, NoteId(1));
    EXPECT_EQ(n.table_id, "t-1");
    EXPECT_EQ(n.round, 7u);
    EXPECT_EQ(n.author, "alice");
    EXPECT_EQ(n.duration_ms, 3500);
    EXPECT_EQ(n.format, "webm/opus");
    EXPECT_EQ(n.content_type, "audio/webm");
    EXPECT_EQ(n.size_bytes, 300);
    EXPECT_EQ(n.created_at, kT0 + absl::Milliseconds(123));
    EXPECT_FALSE(n.purged);
  }
  absl::StatusOr<std::string> audio = this->store().GetAudio(NoteId(1), this->Deadline());
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(*audio, Audio(300));
}

TYPED_TEST(ModerationStoreContract, InsertNoteOfTheSameAuthorAndRoundReturnsTheStoredOne) {
  this->Insert(1, "t-1", 7, "alice", kT0);
  bool inserted = true;
  absl::StatusOr<NoteRow> again =
      this->store().InsertNote(MakeNote(2, "t-1", 7, "alice", kT0 + absl::Seconds(5), 400),
                               Audio(400, 'z'), &inserted, this->Deadline());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(inserted);
  EXPECT_EQ(again->note_id, NoteId(1));
  EXPECT_EQ(again->size_bytes, 200);
  EXPECT_EQ(again->created_at, kT0);
  EXPECT_THAT(this->store().GetNote(NoteId(2), this->Deadline()),
              StatusIs(C::kNotFound, StartsWith("no_note: ")));
  EXPECT_EQ(*this->store().GetAudio(NoteId(1), this->Deadline()), Audio(200));
  // Another round, another author: new notes.
  this->Insert(3, "t-1", 8, "alice", kT0);
  this->Insert(4, "t-1", 7, "bob", kT0);
}

TYPED_TEST(ModerationStoreContract, UnknownNotesAreNotFound) {
  EXPECT_THAT(this->store().GetNote(NoteId(9), this->Deadline()),
              StatusIs(C::kNotFound, StartsWith("no_note: ")));
  EXPECT_THAT(this->store().GetAudio(NoteId(9), this->Deadline()),
              StatusIs(C::kNotFound, StartsWith("no_note: ")));
  EXPECT_THAT(this->store().DeleteUnannouncedNote(NoteId(9), this->Deadline()),
              StatusIs(C::kNotFound, StartsWith("no_note: ")));
}

TYPED_TEST(ModerationStoreContract, FindNoteByTableRoundAndAuthor) {
  this->Insert(1, "t-1", 7, "alice", kT0);
  absl::StatusOr<std::optional<NoteRow>> found =
      this->store().FindNote("t-1", 7, "alice", this->Deadline());
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->note_id, NoteId(1));
  for (auto [table, round, author] :
       {std::tuple<std::string, uint64_t, std::string>{"t-1", 8, "alice"},
        {"t-2", 7, "alice"},
        {"t-1", 7, "bob"}}) {
    absl::StatusOr<std::optional<NoteRow>> none =
        this->store().FindNote(table, round, author, this->Deadline());
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_FALSE(none->has_value()) << table << " " << round << " " << author;
  }
}

TYPED_TEST(ModerationStoreContract, DeleteUnannouncedNoteRemovesItWhole) {
  this->Insert(1, "t-1", 7, "alice", kT0);
  EXPECT_TRUE(this->store().DeleteUnannouncedNote(NoteId(1), this->Deadline()).ok());
  EXPECT_FALSE(this->Exists(NoteId(1)));
  EXPECT_FALSE(this->HasAudio(NoteId(1)));
  EXPECT_FALSE(this->store().FindNote("t-1", 7, "alice", this->Deadline())->has_value());
  EXPECT_THAT(this->store().DeleteUnannouncedNote(NoteId(1), this->Deadline()),
              StatusIs(C::kNotFound, StartsWith("no_note: ")));
  // The retry of the upload can store it again.
  this->Insert(2, "t-1", 7, "alice", kT0);
}

TYPED_TEST(ModerationStoreContract, DeleteUnannouncedNoteRefusesAReportedNote) {
  this->Insert(1, "t-1", 7, "alice", kT0);
  this->Report("k1", NoteId(1), "bob", kT0 + absl::Seconds(2));
  EXPECT_THAT(this->store().DeleteUnannouncedNote(NoteId(1), this->Deadline()),
              StatusIs(C::kFailedPrecondition));
  EXPECT_TRUE(this->Exists(NoteId(1)));
  EXPECT_TRUE(this->HasAudio(NoteId(1)));
  EXPECT_THAT(ReportIds(*this->store().ReportsOfNote(NoteId(1), this->Deadline())), ElementsAre(1));
}

// ---- reports ----

TYPED_TEST(ModerationStoreContract, FileReportCopiesTheNoteAndHoldsIt) {
  this->Insert(1, "t-1", 7, "alice", kT0);
  const ReportRow r = this->Report("k1", NoteId(1), "bob", kT0 + absl::Seconds(2));
  EXPECT_GT(r.report_id, 0);
  EXPECT_EQ(r.key, "k1");
  EXPECT_EQ(r.note_id, NoteId(1));
  EXPECT_EQ(r.table_id, "t-1");
  EXPECT_EQ(r.round, 7u);
  EXPECT_EQ(r.author, "alice");
  EXPECT_EQ(r.reporter, "bob");
  EXPECT_EQ(r.status, ReportStatus::kOpen);
  EXPECT_EQ(r.reported_at, kT0 + absl::Seconds(2));
  EXPECT_FALSE(r.resolved_at.has_value());
  EXPECT_EQ(r.resolved_by, "");
  EXPECT_EQ(r.resolution_reason, "");
  absl::StatusOr<ReportRow> got = this->store().GetReport(r.report_id, this->Deadline());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->key, "k1");
  EXPECT_EQ(got->reported_at, r.reported_at);
  // Held: a purge long after the retention leaves it whole.
  EXPECT_EQ(this->Purge(kT0 + absl::Hours(24 * 30), 100).notes_deleted, 0);
  EXPECT_TRUE(this->HasAudio(NoteId(1)));
}

TYPED_TEST(ModerationStoreContract, FileReportReplaysByKeyAndByNoteAndReporter) {
  this->Insert(1, "t-1", 7, "alice", kT0);
  this->Insert(2, "t-1", 8, "alice", kT0);
  const ReportRow first = this->Report("k1", NoteId(1), "bob", kT0 + absl::Seconds(2));
  bool replayed = false;
  // The same key (even with other fields): the stored report.
  absl::StatusOr<ReportRow> by_key = this->store().FileReport(
      "k1", NoteId(2), "carol", kT0 + absl::Seconds(9), &replayed, this->Deadline());
  ASSERT_TRUE(by_key.ok()) << by_key.status();
  EXPECT_TRUE(replayed);
  EXPECT_EQ(by_key->report_id, first.report_id);
  EXPECT_EQ(by_key->note_id, NoteId(1));
  EXPECT_EQ(by_key->reported_at, kT0 + absl::Seconds(2));
  // The same (note, reporter) with another key (a resend after a failover).
  replayed = false;
  absl::StatusOr<ReportRow> by_pair = this->store().FileReport(
      "k2", NoteId(1), "bob", kT0 + absl::Seconds(9), &replayed, this->Deadline());
  ASSERT_TRUE(by_pair.ok()) << by_pair.status();
  EXPECT_TRUE(replayed);
  EXPECT_EQ(by_pair->report_id, first.report_id);
  EXPECT_EQ(by_pair->key, "k1");
  EXPECT_THAT(ReportIds(*this->store().ReportsOfNote(NoteId(1), this->Deadline())),
              ElementsAre(first.report_id));
  EXPECT_THAT(*this->store().ReportsOfNote(NoteId(2), this->Deadline()), IsEmpty());
}

TYPED_TEST(ModerationStoreContract, FileReportOnAnUnknownNoteIsNotFound) {
  bool replayed = true;
  EXPECT_THAT(this->store().FileReport("k1", NoteId(5), "bob", kT0, &replayed, this->Deadline()),
              StatusIs(C::kNotFound, StartsWith("no_note: ")));
  absl::StatusOr<ReportPage> page = this->store().ListReports({}, this->Deadline());
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(page->reports, IsEmpty());
  EXPECT_EQ(page->open_total, 0);
}

TYPED_TEST(ModerationStoreContract, GetReportUnknownIsNotFound) {
  EXPECT_THAT(this->store().GetReport(42, this->Deadline()),
              StatusIs(C::kNotFound, StartsWith("no_report: ")));
}

TYPED_TEST(ModerationStoreContract, ReportsOfNoteOldestFirstAndOfAuthorNewestFirst) {
  this->Insert(1, "t-1", 7, "alice", kT0);
  this->Insert(2, "t-1", 8, "alice", kT0);
  this->Insert(3, "t-1", 8, "bob", kT0);
  const int64_t r1 = this->Report("k1", NoteId(1), "bob", kT0).report_id;
  const int64_t r2 = this->Report("k2", NoteId(2), "bob", kT0).report_id;
  const int64_t r3 = this->Report("k3", NoteId(1), "carol", kT0).report_id;
  const int64_t r4 = this->Report("k4", NoteId(3), "alice", kT0).report_id;
  EXPECT_LT(r1, r2);
  EXPECT_LT(r2, r3);
  EXPECT_THAT(ReportIds(*this->store().ReportsOfNote(NoteId(1), this->Deadline())),
              ElementsAre(r1, r3));
  EXPECT_THAT(ReportIds(*this->store().ReportsOfAuthor("alice", 10, this->Deadline())),
              ElementsAre(r3, r2, r1));
  EXPECT_THAT(ReportIds(*this->store().ReportsOfAuthor("alice", 2, this->Deadline())),
              ElementsAre(r3, r2));
  EXPECT_THAT(ReportIds(*this->store().ReportsOfAuthor("bob", 10, this->Deadline())),
              ElementsAre(r4));
  EXPECT_THAT(*this->store().ReportsOfAuthor("carol", 10, this->Deadline()), IsEmpty());
}

TYPED_TEST(ModerationStoreContract, ListReportsFiltersPagesOldestFirstAndCountsOpen) {
  // Notes 1..3 by alice, 4..5 by bob; a report on each; those on 1 and 4 resolved.
  for (int i = 1; i <= 5; ++i)
    this->Insert(i, "t-1", static_cast<uint64_t>(i), i <= 3 ? "alice" : "bob", kT0);
  std::vector<int64_t> ids;
  for (int i = 1; i <= 5; ++i) {
    ids.push_back(this->Report(absl::StrFormat("k%d", i), NoteId(i), "carol", kT0).report_id);
  }
  for (int64_t id : {ids[0], ids[3]}) {
    Resolution res;
    res.report_id = id;
    res.status = ReportStatus::kDismissed;
    res.admin_id = "admin-1";
    res.reason = "fine";
    res.audit = MakeAudit("admin-1", "resolve_report", "", kT0);
    res.now = kT0 + absl::Minutes(1);
    ASSERT_TRUE(this->store().ResolveReport(res, this->Deadline()).ok());
  }
  auto list = [&](ReportFilter f) {
    absl::StatusOr<ReportPage> p = this->store().ListReports(f, this->Deadline());
    EXPECT_TRUE(p.ok()) << p.status();
    return p.value_or(ReportPage{});
  };
  ReportPage all = list({.status = std::nullopt, .author = "", .page_size = 50, .page_token = ""});
  EXPECT_THAT(ReportIds(all.reports), ElementsAre(ids[0], ids[1], ids[2], ids[3], ids[4]));
  EXPECT_EQ(all.next_page_token, "");
  EXPECT_EQ(all.open_total, 3);
  ReportPage open =
      list({.status = ReportStatus::kOpen, .author = "", .page_size = 50, .page_token = ""});
  EXPECT_THAT(ReportIds(open.reports), ElementsAre(ids[1], ids[2], ids[4]));
  EXPECT_EQ(open.open_total, 3);
  EXPECT_THAT(
      ReportIds(
          list(
              {.status = ReportStatus::kDismissed, .author = "", .page_size = 50, .page_token = ""})
              .reports),
      ElementsAre(ids[0], ids[3]));
  EXPECT_THAT(
      list({.status = ReportStatus::kActioned, .author = "", .page_size = 50, .page_token = ""})
          .reports,
      IsEmpty());
  ReportPage bobs =
      list({.status = std::nullopt, .author = "bob", .page_size = 50, .page_token = ""});
  EXPECT_THAT(ReportIds(bobs.reports), ElementsAre(ids[3], ids[4]));
  EXPECT_EQ(bobs.open_total, 3);  // the whole queue
  EXPECT_THAT(
      ReportIds(
          list(
              {.status = ReportStatus::kOpen, .author = "alice", .page_size = 50, .page_token = ""})
              .reports),
      ElementsAre(ids[1], ids[2]));
  // Pages of 2: tokens until the last page; a full last page has no token either.
  ReportPage p1 = list({.status = std::nullopt, .author = "", .page_size = 2, .page_token = ""});
  EXPECT_THAT(ReportIds(p1.reports), ElementsAre(ids[0], ids[1]));
  ASSERT_NE(p1.next_page_token, "");
  ReportPage p2 = list(
      {.status = std::nullopt, .author = "", .page_size = 2, .page_token = p1.next_page_token});
  EXPECT_THAT(ReportIds(p2.reports), ElementsAre(ids[2], ids[3]));
  ASSERT_NE(p2.next_page_token, "");
  ReportPage p3 = list(
      {.status = std::nullopt, .author = "", .page_size = 2, .page_token = p2.next_page_token});
  EXPECT_THAT(ReportIds(p3.reports), ElementsAre(ids[4]));
  EXPECT_EQ(p3.next_page_token, "");
  ReportPage o1 =
      list({.status = ReportStatus::kOpen, .author = "", .page_size = 3, .page_token = ""});
  EXPECT_THAT(ReportIds(o1.reports), ElementsAre(ids[1], ids[2], ids[4]));
  EXPECT_EQ(o1.next_page_token, "");
  EXPECT_THAT(this->store().ListReports(
                  {.status = std::nullopt, .author = "", .page_size = 2, .page_token = "x"},
                  this->Deadline()),
              StatusIs(C::kInvalidArgument));
  // A size outside 1..200 (the caller's to clamp) is clamped, never an empty page.
  ReportPage one = list({.status = std::nullopt, .author = "", .page_size = 0, .page_token = ""});
  EXPECT_THAT(ReportIds(one.reports), ElementsAre(ids[0]));
  EXPECT_EQ(one.next_page_token, std::to_string(ids[0]));
  EXPECT_THAT(
      list({.status = std::nullopt, .author = "", .page_size = 50, .page_token = "5000000000"})
          .reports,
      IsEmpty());
}

Resolution MakeResolution(int64_t report_id, ReportStatus status, absl::Time now) {
  Resolution res;
  res.report_id = report_id;
  res.status = status;
  res.admin_id = "admin-1";
  res.reason = "abusive";
  res.now = now;
  res.audit = MakeAudit("admin-1", "resolve_report", "alice", now);
  res.audit.report_id = report_id;
  return res;
}

TYPED_TEST(ModerationStoreContract, ResolveClosesEveryOpenReportOfTheNoteAndMutes) {
  this->Insert(1, "t-1", 7, "alice", kT0);
  this->Insert(2, "t-1", 8, "alice", kT0);
  const int64_t r1 = this->Report("k1", NoteId(1), "bob", kT0 + absl::Seconds(1)).report_id;
  const int64_t r2 = this->Report("k2", NoteId(2), "bob", kT0 + absl::Seconds(2)).report_id;
  const int64_t r3 = this->Report("k3", NoteId(1), "carol", kT0 + absl::Seconds(3)).report_id;
  const absl::Time now = kT0 + absl::Hours(1);
  Resolution res = MakeResolution(r3, ReportStatus::kActioned, now);
  MuteRow mute = MakeMute("alice", now, now + absl::Hours(24));
  mute.report_id = r3;
  res.mute = mute;
  absl::StatusOr<Resolved> done = this->store().ResolveReport(res, this->Deadline());
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_THAT(ReportIds(done->reports), ElementsAre(r1, r3));
  for (const ReportRow& r : done->reports) {
    EXPECT_EQ(r.status, ReportStatus::kActioned);
    EXPECT_EQ(r.resolved_at, now);
    EXPECT_EQ(r.resolved_by, "admin-1");
    EXPECT_EQ(r.resolution_reason, "abusive");
  }
  ASSERT_TRUE(done->mute.has_value());
  EXPECT_GT(done->mute->mute_id, 0);
  EXPECT_EQ(done->mute->player_id, "alice");
  EXPECT_EQ(done->mute->created_at, now);
  EXPECT_EQ(done->mute->until, now + absl::Hours(24));
  EXPECT_EQ(done->mute->report_id, r3);
  EXPECT_FALSE(done->mute->lifted_at.has_value());
  EXPECT_EQ(this->store().GetReport(r1, this->Deadline())->status, ReportStatus::kActioned);
  EXPECT_EQ(this->store().GetReport(r2, this->Deadline())->status, ReportStatus::kOpen);
  absl::StatusOr<std::optional<MuteRow>> active =
      this->store().ActiveMute("alice", now + absl::Minutes(1), this->Deadline());
  ASSERT_TRUE(active.ok() && active->has_value());
  EXPECT_EQ((*active)->mute_id, done->mute->mute_id);
  std::vector<AuditRow> audit = this->AllAudit();
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].action, "resolve_report");
  EXPECT_EQ(audit[0].report_id, r3);
  EXPECT_EQ(audit[0].target_player, "alice");
  EXPECT_EQ(audit[0].at, now);
  // keep_until = resolution + 7 days: kept one microsecond before, audio gone at it.
  EXPECT_EQ(this->Purge(now + kNoteRetention - absl::Microseconds(1), 100).audio_deleted, 0);
  EXPECT_TRUE(this->HasAudio(NoteId(1)));
  PurgeResult p = this->Purge(now + kNoteRetention, 100);
  EXPECT_EQ(p.audio_deleted, 1);
  EXPECT_EQ(p.notes_deleted, 0);
  EXPECT_EQ(p.bytes_freed, 200);
  EXPECT_FALSE(this->HasAudio(NoteId(1)));
  absl::StatusOr<NoteRow> kept = this->store().GetNote(NoteId(1), this->Deadline());
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_TRUE(kept->purged);
  // Note 2's report is still open: held.
  EXPECT_TRUE(this->HasAudio(NoteId(2)));
}

TYPED_TEST(ModerationStoreContract, ResolveOfAClosedReportChangesNothing) {
  this->Insert(1, "t-1", 7, "alice", kT0);
  const int64_t r1 = this->Report("k1", NoteId(1), "bob", kT0).report_id;
  const int64_t r2 = this->Report("k2", NoteId(1), "carol", kT0).report_id;
  const absl::Time now = kT0 + absl::Hours(1);
  ASSERT_TRUE(
      this->store()
          .ResolveReport(MakeResolution(r1, ReportStatus::kDismissed, now), this->Deadline())
          .ok());
  // r2 was closed with r1: resolving it again (with a mute) is refused, nothing changes.
  Resolution again = MakeResolution(r2, ReportStatus::kActioned, now + absl::Hours(2));
  again.mute = MakeMute("alice", now + absl::Hours(2), std::nullopt);
  EXPECT_THAT(this->store().ResolveReport(again, this->Deadline()),
              StatusIs(C::kFailedPrecondition, StartsWith("already_resolved: ")));
  absl::StatusOr<ReportRow> r = this->store().GetReport(r2, this->Deadline());
  EXPECT_EQ(r->status, ReportStatus::kDismissed);
  EXPECT_EQ(r->resolved_at, now);
  EXPECT_FALSE(
      this->store().ActiveMute("alice", now + absl::Hours(3), this->Deadline())->has_value());
  EXPECT_EQ(this->AllAudit().size(), 1u);
  // keep_until still from the first resolution.
  EXPECT_EQ(this->Purge(now + kNoteRetention, 100).audio_deleted, 1);
  EXPECT_THAT(this->store().ResolveReport(MakeResolution(999, ReportStatus::kDismissed, now),
                                          this->Deadline()),
              StatusIs(C::kNotFound, StartsWith("no_report: ")));
}

TYPED_TEST(ModerationStoreContract, ResolveMuteReplacesTheActiveMute) {
  this->Insert(1, "t-1", 7, "alice", kT0);
  const int64_t r1 = this->Report("k1", NoteId(1), "bob", kT0).report_id;
  absl::StatusOr<MuteRow> old =
      this->store().AddMute(MakeMute("alice", kT0, std::nullopt, "admin-2"),
                            MakeAudit("admin-2", "mute", "alice", kT0), this->Deadline());
  ASSERT_TRUE(old.ok()) << old.status();
  const absl::Time now = kT0 + absl::Hours(1);
  Resolution res = MakeResolution(r1, ReportStatus::kActioned, now);
  res.mute = MakeMute("alice", now, now + absl::Hours(2));
  absl::StatusOr<Resolved> done = this->store().ResolveReport(res, this->Deadline());
  ASSERT_TRUE(done.ok()) << done.status();
  absl::StatusOr<MutePage> all = this->store().ListMutes(
      {.include_inactive = true, .player_id = "", .page_size = 50, .page_token = ""}, now,
      this->Deadline());
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_THAT(MuteIds(all->mutes), ElementsAre(done->mute->mute_id, old->mute_id));
  EXPECT_EQ(all->mutes[1].lifted_at, now);
  EXPECT_EQ(all->mutes[1].lifted_by, "admin-1");
  EXPECT_EQ((*this->store().ActiveMute("alice", now, this->Deadline()))->mute_id,
            done->mute->mute_id);
}

// ---- mutes ----

TYPED_TEST(ModerationStoreContract, ActiveMuteEdges) {
  const absl::Time until = kT0 + absl::Hours(1);
  absl::StatusOr<MuteRow> m = this->store().AddMute(
      MakeMute("alice", kT0, until), MakeAudit("admin-1", "mute", "alice", kT0), this->Deadline());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_GT(m->mute_id, 0);
  EXPECT_EQ(m->player_id, "alice");
  EXPECT_EQ(m->muted_by, "admin-1");
  EXPECT_EQ(m->reason, "abuse");
  EXPECT_EQ(m->report_id, 0);
  auto active_at = [&](const std::string& p, absl::Time t) {
    absl::StatusOr<std::optional<MuteRow>> a = this->store().ActiveMute(p, t, this->Deadline());
    EXPECT_TRUE(a.ok()) << a.status();
    return a.ok() && a->has_value();
  };
  EXPECT_TRUE(active_at("alice", kT0));
  EXPECT_TRUE(active_at("alice", until - absl::Microseconds(1)));
  EXPECT_FALSE(active_at("alice", until));  // until == now is over
  EXPECT_FALSE(active_at("bob", kT0));
  // An expired mute cannot be lifted.
  EXPECT_THAT(
      this->store().LiftMute("alice", "admin-1", until,
                             MakeAudit("admin-1", "lift_mute", "alice", until), this->Deadline()),
      StatusIs(C::kNotFound, StartsWith("not_muted: ")));
  EXPECT_EQ(this->AllAudit().size(), 1u);
}

TYPED_TEST(ModerationStoreContract, LiftMuteAndAddMuteReplacing) {
  EXPECT_THAT(
      this->store().LiftMute("alice", "admin-1", kT0,
                             MakeAudit("admin-1", "lift_mute", "alice", kT0), this->Deadline()),
      StatusIs(C::kNotFound, StartsWith("not_muted: ")));
  absl::StatusOr<MuteRow> first =
      this->store().AddMute(MakeMute("alice", kT0, std::nullopt, "admin-1"),
                            MakeAudit("admin-1", "mute", "alice", kT0), this->Deadline());
  ASSERT_TRUE(first.ok()) << first.status();
  const absl::Time t1 = kT0 + absl::Minutes(5);
  absl::StatusOr<MuteRow> second =
      this->store().AddMute(MakeMute("alice", t1, t1 + absl::Hours(1), "admin-2"),
                            MakeAudit("admin-2", "mute", "alice", t1), this->Deadline());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_GT(second->mute_id, first->mute_id);
  absl::StatusOr<MutePage> all = this->store().ListMutes(
      {.include_inactive = true, .player_id = "", .page_size = 50, .page_token = ""}, t1,
      this->Deadline());
  ASSERT_THAT(MuteIds(all->mutes), ElementsAre(second->mute_id, first->mute_id));
  EXPECT_EQ(all->mutes[1].lifted_at, t1);
  EXPECT_EQ(all->mutes[1].lifted_by, "admin-2");
  const absl::Time t2 = t1 + absl::Minutes(1);
  absl::StatusOr<MuteRow> lifted = this->store().LiftMute(
      "alice", "admin-3", t2, MakeAudit("admin-3", "lift_mute", "alice", t2), this->Deadline());
  ASSERT_TRUE(lifted.ok()) << lifted.status();
  EXPECT_EQ(lifted->mute_id, second->mute_id);
  EXPECT_EQ(lifted->lifted_at, t2);
  EXPECT_EQ(lifted->lifted_by, "admin-3");
  EXPECT_EQ(lifted->until, t1 + absl::Hours(1));
  EXPECT_FALSE(this->store().ActiveMute("alice", t2, this->Deadline())->has_value());
  std::vector<AuditRow> audit = this->AllAudit();
  ASSERT_EQ(audit.size(), 3u);
  EXPECT_EQ(audit[0].action, "lift_mute");
  EXPECT_EQ(audit[0].admin_id, "admin-3");
  EXPECT_EQ(audit[2].admin_id, "admin-1");
}

TYPED_TEST(ModerationStoreContract, ListMutesFiltersAndPagesNewestFirst) {
  const absl::Time now = kT0 + absl::Hours(10);
  auto add = [&](const std::string& p, absl::Time created, std::optional<absl::Time> until) {
    absl::StatusOr<MuteRow> m = this->store().AddMute(
        MakeMute(p, created, until), MakeAudit("admin-1", "mute", p, created), this->Deadline());
    EXPECT_TRUE(m.ok()) << m.status();
    return m.value_or(MuteRow{}).mute_id;
  };
  const int64_t expired = add("alice", kT0, kT0 + absl::Hours(1));
  const int64_t a = add("bob", kT0, std::nullopt);
  const int64_t at_edge = add("carol", kT0, now);  // until == now: inactive
  const int64_t b = add("dave", kT0, now + absl::Hours(1));
  const int64_t lifted = add("erin", kT0, std::nullopt);
  ASSERT_TRUE(this->store()
                  .LiftMute("erin", "admin-1", kT0 + absl::Hours(2),
                            MakeAudit("admin-1", "lift_mute", "erin", kT0), this->Deadline())
                  .ok());
  const int64_t c = add("alice", now - absl::Minutes(1), std::nullopt);
  auto list = [&](MuteFilter f) {
    absl::StatusOr<MutePage> p = this->store().ListMutes(f, now, this->Deadline());
    EXPECT_TRUE(p.ok()) << p.status();
    return p.value_or(MutePage{});
  };
  EXPECT_THAT(
      MuteIds(list({.include_inactive = false, .player_id = "", .page_size = 50, .page_token = ""})
                  .mutes),
      ElementsAre(c, b, a));
  EXPECT_THAT(
      MuteIds(list({.include_inactive = true, .player_id = "", .page_size = 50, .page_token = ""})
                  .mutes),
      ElementsAre(c, lifted, b, at_edge, a, expired));
  EXPECT_THAT(
      MuteIds(
          list({.include_inactive = false, .player_id = "alice", .page_size = 50, .page_token = ""})
              .mutes),
      ElementsAre(c));
  EXPECT_THAT(
      MuteIds(
          list({.include_inactive = true, .player_id = "alice", .page_size = 50, .page_token = ""})
              .mutes),
      ElementsAre(c, expired));
  MutePage p1 = list({.include_inactive = true, .player_id = "", .page_size = 4, .page_token = ""});
  EXPECT_THAT(MuteIds(p1.mutes), ElementsAre(c, lifted, b, at_edge));
  ASSERT_NE(p1.next_page_token, "");
  MutePage p2 = list({.include_inactive = true,
                      .player_id = "",
                      .page_size = 4,
                      .page_token = p1.next_page_token});
  EXPECT_THAT(MuteIds(p2.mutes), ElementsAre(a, expired));
  EXPECT_EQ(p2.next_page_token, "");
  MutePage q1 =
      list({.include_inactive = false, .player_id = "", .page_size = 2, .page_token = ""});
  EXPECT_THAT(MuteIds(q1.mutes), ElementsAre(c, b));
  MutePage q2 = list({.include_inactive = false,
                      .player_id = "",
                      .page_size = 2,
                      .page_token = q1.next_page_token});
  EXPECT_THAT(MuteIds(q2.mutes), ElementsAre(a));
  EXPECT_EQ(q2.next_page_token, "");
  // Tokens are 64-bit ids.
  EXPECT_THAT(MuteIds(list({.include_inactive = true,
                            .player_id = "",
                            .page_size = 50,
                            .page_token = "5000000000"})
                          .mutes),
              ElementsAre(c, lifted, b, at_edge, a, expired));
}

// ---- audit ----

TYPED_TEST(ModerationStoreContract, AuditAppendsAndListsNewestFirst) {
  AuditRow a = MakeAudit("admin-1", "listen_note", "alice", kT0);
  a.note_id = NoteId(3);
  a.report_id = 17;
  a.reason = "checking";
  a.detail = "from the queue";
  ASSERT_TRUE(this->store().AppendAudit(a, this->Deadline()).ok());
  ASSERT_TRUE(this->store()
                  .AppendAudit(MakeAudit("admin-2", "mute", "bob", kT0 + absl::Seconds(1)),
                               this->Deadline())
                  .ok());
  ASSERT_TRUE(this->store()
                  .AppendAudit(MakeAudit("admin-1", "mute", "bob", kT0 + absl::Seconds(2)),
                               this->Deadline())
                  .ok());
  std::vector<AuditRow> all = this->AllAudit();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_GT(all[0].audit_id, all[1].audit_id);
  EXPECT_GT(all[1].audit_id, all[2].audit_id);
  const AuditRow& first = all[2];
  EXPECT_EQ(first.admin_id, "admin-1");
  EXPECT_EQ(first.action, "listen_note");
  EXPECT_EQ(first.target_player, "alice");
  EXPECT_EQ(first.report_id, 17);
  EXPECT_EQ(first.note_id, NoteId(3));
  EXPECT_EQ(first.reason, "checking");
  EXPECT_EQ(first.detail, "from the queue");
  EXPECT_EQ(first.at, kT0);
  auto list = [&](AuditFilter f) {
    absl::StatusOr<AuditPage> p = this->store().ListAudit(f, this->Deadline());
    EXPECT_TRUE(p.ok()) << p.status();
    return p.value_or(AuditPage{});
  };
  EXPECT_THAT(
      AuditIds(list({.admin_id = "admin-1", .target_player = "", .page_size = 50, .page_token = ""})
                   .entries),
      ElementsAre(all[0].audit_id, all[2].audit_id));
  EXPECT_THAT(
      AuditIds(list({.admin_id = "", .target_player = "bob", .page_size = 50, .page_token = ""})
                   .entries),
      ElementsAre(all[0].audit_id, all[1].audit_id));
  EXPECT_THAT(
      AuditIds(
          list({.admin_id = "admin-2", .target_player = "bob", .page_size = 50, .page_token = ""})
              .entries),
      ElementsAre(all[1].audit_id));
  AuditPage p1 = list({.admin_id = "", .target_player = "", .page_size = 2, .page_token = ""});
  EXPECT_THAT(AuditIds(p1.entries), ElementsAre(all[0].audit_id, all[1].audit_id));
  ASSERT_NE(p1.next_page_token, "");
  AuditPage p2 =
      list({.admin_id = "", .target_player = "", .page_size = 2, .page_token = p1.next_page_token});
  EXPECT_THAT(AuditIds(p2.entries), ElementsAre(all[2].audit_id));
  EXPECT_EQ(p2.next_page_token, "");
  EXPECT_EQ(list({.admin_id = "", .target_player = "", .page_size = 50, .page_token = "5000000000"})
                .entries.size(),
            3u);
}

// ---- retention ----

TYPED_TEST(ModerationStoreContract, PurgeTakesDueNotesOnly) {
  // Note 1: created at kT0, due at kT0 + 7 d (the edge: purged at exactly that time).
  // Note 2: one microsecond younger. Note 3: reported, open: held.
  this->Insert(1, "t-1", 1, "alice", kT0, 100);
  this->Insert(2, "t-1", 2, "alice", kT0 + absl::Microseconds(1), 150);
  this->Insert(3, "t-1", 3, "alice", kT0 - absl::Hours(1), 170);
  this->Report("k3", NoteId(3), "bob", kT0);
  const absl::Time due = kT0 + kNoteRetention;
  PurgeResult early = this->Purge(due - absl::Microseconds(1), 100);
  EXPECT_EQ(early.notes_deleted, 0);
  EXPECT_EQ(early.audio_deleted, 0);
  EXPECT_EQ(early.bytes_freed, 0);
  PurgeResult at = this->Purge(due, 100);
  EXPECT_EQ(at.notes_deleted, 1);
  EXPECT_EQ(at.audio_deleted, 0);
  EXPECT_EQ(at.bytes_freed, 100);
  EXPECT_FALSE(this->Exists(NoteId(1)));
  EXPECT_FALSE(this->HasAudio(NoteId(1)));
  EXPECT_TRUE(this->HasAudio(NoteId(2)));
  PurgeResult later = this->Purge(due + absl::Hours(24 * 60), 100);
  EXPECT_EQ(later.notes_deleted, 1);
  EXPECT_EQ(later.bytes_freed, 150);
  EXPECT_FALSE(this->Exists(NoteId(2)));
  EXPECT_TRUE(this->HasAudio(NoteId(3)));  // held while its report is open
  EXPECT_FALSE(this->store().GetNote(NoteId(3), this->Deadline())->purged);
}

TYPED_TEST(ModerationStoreContract, PurgeHonorsTheBatchOldestFirst) {
  for (int i = 1; i <= 5; ++i) {
    this->Insert(i, "t-1", static_cast<uint64_t>(i), "alice", kT0 + absl::Seconds(10 - i));
  }
  // Note 5 is the oldest, then 4, ...; note 4 is reported and resolved (due 7 d after).
  const int64_t r = this->Report("k4", NoteId(4), "bob", kT0).report_id;
  ASSERT_TRUE(this->store()
                  .ResolveReport(MakeResolution(r, ReportStatus::kDismissed, kT0 + absl::Hours(1)),
                                 this->Deadline())
                  .ok());
  const absl::Time now = kT0 + kNoteRetention + absl::Minutes(1);
  PurgeResult b1 = this->Purge(now, 2);
  EXPECT_EQ(b1.notes_deleted, 2);
  EXPECT_EQ(b1.audio_deleted, 0);
  EXPECT_FALSE(this->Exists(NoteId(5)));
  EXPECT_FALSE(this->Exists(NoteId(3)));
  EXPECT_TRUE(this->Exists(NoteId(2)));
  PurgeResult b2 = this->Purge(now, 2);
  EXPECT_EQ(b2.notes_deleted, 2);
  EXPECT_FALSE(this->Exists(NoteId(1)));
  PurgeResult b3 = this->Purge(now, 2);
  EXPECT_EQ(b3.notes_deleted + b3.audio_deleted, 0);
  // Note 4 at its resolution + 7 d.
  PurgeResult b4 = this->Purge(kT0 + absl::Hours(1) + kNoteRetention, 2);
  EXPECT_EQ(b4.notes_deleted, 0);
  EXPECT_EQ(b4.audio_deleted, 1);
  EXPECT_EQ(b4.bytes_freed, 200);
  EXPECT_TRUE(this->Exists(NoteId(4)));
  EXPECT_FALSE(this->HasAudio(NoteId(4)));
  EXPECT_THAT(this->store().GetAudio(NoteId(4), this->Deadline()),
              StatusIs(C::kNotFound, StartsWith("no_note: ")));
  // Purged notes are never taken again.
  EXPECT_EQ(this->Purge(kT0 + absl::Hours(24 * 365), 2).audio_deleted, 0);
  EXPECT_THAT(this->store().Purge(now, 0, this->Deadline()), StatusIs(C::kInvalidArgument));
}

TYPED_TEST(ModerationStoreContract, Gauges) {
  absl::StatusOr<StoreGauges> empty = this->store().Gauges(this->Deadline());
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->notes, 0);
  EXPECT_EQ(empty->audio_bytes, 0);
  EXPECT_EQ(empty->open_reports, 0);
  EXPECT_FALSE(empty->oldest_open_report_at.has_value());
  EXPECT_EQ(empty->active_mutes, 0);
  this->Insert(1, "t-1", 1, "alice", kT0, 100);
  this->Insert(2, "t-1", 2, "alice", kT0, 300);
  this->Insert(3, "t-1", 3, "alice", kT0, 500);
  this->Report("k1", NoteId(1), "bob", kT0 + absl::Seconds(5));
  this->Report("k2", NoteId(1), "carol", kT0 + absl::Seconds(3));
  const int64_t r3 = this->Report("k3", NoteId(2), "bob", kT0 + absl::Seconds(1)).report_id;
  ASSERT_TRUE(
      this->store()
          .ResolveReport(MakeResolution(r3, ReportStatus::kDismissed, kT0), this->Deadline())
          .ok());
  // Purge: note 3 (unreported) gone, note 2 (resolved) loses its audio.
  EXPECT_EQ(this->Purge(kT0 + kNoteRetention, 10).notes_deleted, 1);
  // Mutes, judged at the store's clock (the test's fake clock or the server's now(), both
  // past kT0 + a year and before kT0 + 50 years): one active, one expired, one lifted.
  const absl::Time far = kT0 + absl::Hours(24 * 365 * 50);
  for (auto [p, until] : {std::pair<std::string, std::optional<absl::Time>>{"p1", far},
                          {"p2", kT0 + absl::Hours(1)},
                          {"p3", std::nullopt}}) {
    ASSERT_TRUE(this->store()
                    .AddMute(MakeMute(p, kT0, until), MakeAudit("admin-1", "mute", p, kT0),
                             this->Deadline())
                    .ok());
  }
  ASSERT_TRUE(this->store()
                  .LiftMute("p3", "admin-1", kT0, MakeAudit("admin-1", "lift_mute", "p3", kT0),
                            this->Deadline())
                  .ok());
  absl::StatusOr<StoreGauges> g = this->store().Gauges(this->Deadline());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->notes, 1);  // note 1 (held)
  EXPECT_EQ(g->audio_bytes, 100);
  EXPECT_EQ(g->open_reports, 2);
  EXPECT_EQ(g->oldest_open_report_at, kT0 + absl::Seconds(3));
  EXPECT_EQ(g->active_mutes, 1);
}

// ---- the fake's own failure injection (not part of the Postgres run) ----

#ifndef COURTPIECE_MODERATION_STORE_PG
TEST(FakeModerationStoreTest, FailNextFailsBeforeDoingAnything) {
  FakeModerationStore store;
  const absl::Time deadline = absl::InfiniteFuture();
  store.FailNext(2, absl::UnavailableError("down"));
  bool inserted = true;
  EXPECT_THAT(store.InsertNote(MakeNote(1, "t", 1, "a", kT0), Audio(200), &inserted, deadline),
              StatusIs(C::kUnavailable, "down"));
  EXPECT_THAT(store.Gauges(deadline), StatusIs(C::kUnavailable));
  EXPECT_FALSE(store.GetNote(NoteId(1), deadline).ok());
  absl::StatusOr<NoteRow> n =
      store.InsertNote(MakeNote(1, "t", 1, "a", kT0), Audio(200), &inserted, deadline);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_TRUE(inserted);
  EXPECT_EQ(store.Calls(), 4);
}

TEST(FakeModerationStoreTest, LostRepliesCommitThenFail) {
  FakeModerationStore store;
  const absl::Time deadline = absl::InfiniteFuture();
  bool inserted = false;
  ASSERT_TRUE(
      store.InsertNote(MakeNote(1, "t", 1, "a", kT0), Audio(200), &inserted, deadline).ok());
  store.LoseNextReplies(1);
  bool replayed = true;
  EXPECT_THAT(store.FileReport("k1", NoteId(1), "b", kT0, &replayed, deadline),
              StatusIs(C::kUnavailable));
  EXPECT_FALSE(store.KeepUntil(NoteId(1)).has_value());  // held: it committed
  absl::StatusOr<ReportRow> retry =
      store.FileReport("k1", NoteId(1), "b", kT0, &replayed, deadline);
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_TRUE(replayed);
  EXPECT_EQ(retry->report_id, 1);
}

TEST(FakeModerationStoreTest, TimesAreKeptToTheMicrosecond) {
  FakeModerationStore store;
  bool inserted = false;
  absl::StatusOr<NoteRow> n =
      store.InsertNote(MakeNote(1, "t", 1, "a", kT0 + absl::Nanoseconds(1500)), Audio(200),
                       &inserted, absl::InfiniteFuture());
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->created_at, kT0 + absl::Microseconds(1));
  EXPECT_EQ(store.KeepUntil(NoteId(1)), kT0 + absl::Microseconds(1) + kNoteRetention);
  EXPECT_TRUE(store.HasAudio(NoteId(1)));
}
#endif

}  // namespace
}  // namespace courtpiece::moderation
