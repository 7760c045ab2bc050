// The host on fakes (store, wallet, records), a fake clock and no threads: Poll() runs
// every queued input and due timer, WatchOnce() one heartbeat/failover pass.
#include "services/table/table_host.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "courtpiece/table/rules_engine.h"
#include "courtpiece/table/v1/hosted_table.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/table/fake_ports.h"
#include "services/table/fake_table_store.h"

namespace courtpiece::table_service {
namespace {

namespace pb = ::courtpiece::table::v1;
using ::testing::ElementsAre;

// A stream as a client sees it.
class TestSink final : public StreamSink {
 public:
  explicit TestSink(size_t capacity = 1 << 20) : capacity_(capacity) {}
  bool Send(const pb::PlayResponse& m) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_.has_value()) return true;
    if (messages_.size() - taken_ >= capacity_) return false;
    messages_.push_back(m);
    return true;
  }
  void Finish(const absl::Status& s) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!finished_.has_value()) finished_ = s;
  }
  // Messages not yet taken (a client reading them frees room).
  std::vector<pb::PlayResponse> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<pb::PlayResponse> out(messages_.begin() + static_cast<long>(taken_),
                                      messages_.end());
    taken_ = messages_.size();
    return out;
  }
  std::vector<pb::PlayResponse> All() {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_;
  }
  std::optional<absl::Status> finished() {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_;
  }

 private:
  std::mutex mu_;
  size_t capacity_;
  size_t taken_ = 0;
  std::vector<pb::PlayResponse> messages_;
  std::optional<absl::Status> finished_;
};

std::vector<pb::TableEvent> EventsIn(const std::vector<pb::PlayResponse>& ms) {
  std::vector<pb::TableEvent> out;
  for (const auto& m : ms) {
    if (m.has_event()) out.push_back(m.event());
  }
  return out;
}
std::vector<pb::CommandResult> ResultsIn(const std::vector<pb::PlayResponse>& ms) {
  std::vector<pb::CommandResult> out;
  for (const auto& m : ms) {
    if (m.has_result()) out.push_back(m.result());
  }
  return out;
}
bool HasEvent(const std::vector<pb::PlayResponse>& ms, std::string_view type) {
  for (const auto& e : EventsIn(ms)) {
    if (e.type() == type) return true;
  }
  return false;
}

pb::CreateTableRequest Create(std::string id = "t1", std::string host = "host", int64_t bet = 100) {
  pb::CreateTableRequest r;
  r.set_table_id(std::move(id));
  r.set_host_player(std::move(host));
  r.set_bet_coins(bet);
  r.set_turn_time_ms(5'000);
  r.set_game_options(R"({"game":"classic","target":1})");
  r.set_code("123456");
  return r;
}

pb::TableCommand Cmd(uint64_t id, std::string type) {
  pb::TableCommand c;
  c.set_command_id(id);
  c.set_type(std::move(type));
  return c;
}

// One instance: a host with its own fakes' view of the shared store and wallet.
struct Instance {
  Instance(std::string id, FakeClock& clock, FakeTableStore& store, FakeWalletPort& wallet,
           FakeRecordsPort& records, int worker_queue_max = 100'000)
      : seeds("master", id) {
    HostOptions o;
    o.instance_id = id;
    o.instance_addr = id + ":7002";
    o.workers = 2;
    o.start_threads = false;
    o.events_max = 64;
    o.worker_queue_max = worker_queue_max;
    host = std::make_unique<TableHost>(o, clock, store, wallet, records, engines, seeds);
  }
  table::RulesEngineFactory engines;
  table::DeterministicSeedSource seeds;
  std::unique_ptr<TableHost> host;
};

class HostTest : public ::testing::Test {
 protected:
  HostTest() : store(clock), wallet(clock), records(clock) {
    for (const char* p : {"host", "a", "b", "c", "poor"}) {
      wallet.SetBalance(std::string("player:") + p, std::string(p) == "poor" ? 150 : 1000);
    }
    wallet.SetBalance("house", 0);
    a = std::make_unique<Instance>("inst-a", clock, store, wallet, records);
    EXPECT_TRUE(a->host->Start().ok());
  }

  absl::StatusOr<pb::CreateTableResponse> CreateOn(TableHost& h, const pb::CreateTableRequest& r) {
    std::optional<absl::StatusOr<pb::CreateTableResponse>> out;
    h.CreateTable(r, [&out](absl::StatusOr<pb::CreateTableResponse> v) { out = std::move(v); });
    h.Poll();
    EXPECT_TRUE(out.has_value());
    return out.value_or(absl::InternalError("no answer"));
  }

  struct Client {
    std::shared_ptr<TestSink> sink;
    uint64_t id = 0;
  };
  Client OpenOn(TableHost& h, std::string player, uint64_t last_seq = 0, std::string table = "t1",
                size_t capacity = 1 << 20) {
    Client c{std::make_shared<TestSink>(capacity), 0};
    pb::OpenTable open;
    open.set_table_id(std::move(table));
    open.set_last_seq(last_seq);
    c.id = h.Open(player, open, c.sink);
    h.Poll();
    return c;
  }
  // Sends a command and returns its result code.
  int Do(TableHost& h, Client& c, pb::TableCommand cmd) {
    const uint64_t id = cmd.command_id();
    h.Command(c.id, cmd);
    h.Poll();
    for (const auto& r : ResultsIn(c.sink->All())) {
      if (r.command_id() == id) return r.code();
    }
    return -1;
  }
  void Run(TableHost& h, int64_t ms, int64_t step_ms = 500) {
    for (int64_t t = 0; t < ms; t += step_ms) {
      clock.Advance(absl::Milliseconds(step_ms));
      h.Poll();
    }
  }
  int64_t Coins(const std::string& account) { return wallet.Balance(account).value_or(0); }

  FakeClock clock{absl::FromUnixSeconds(1'800'000'000)};
  FakeTableStore store;
  FakeWalletPort wallet;
  FakeRecordsPort records;
  std::unique_ptr<Instance> a;
};

// After Shutdown the workers take nothing more: a read that arrives then (the lobby's
// GetTable, moderation's CheckVoiceLock) is answered UNAVAILABLE at once, never queued for a
// worker that will not run it (its gRPC call would hold the server's shutdown forever).
TEST_F(HostTest, CallsAfterShutdownAreAnsweredUnavailableAtOnce) {
  ASSERT_TRUE(CreateOn(*a->host, Create()).ok());
  a->host->Shutdown();
  std::optional<absl::StatusOr<pb::TableInfo>> info;
  a->host->GetTable("t1", [&info](absl::StatusOr<pb::TableInfo> v) { info = std::move(v); });
  ASSERT_TRUE(info.has_value());  // no Poll: answered inside the call
  EXPECT_EQ(info->status(), absl::UnavailableError("this instance is shutting down"));
  std::optional<absl::StatusOr<pb::CheckVoiceLockResponse>> lock;
  a->host->CheckVoiceLock(
      "t1", "host", [&lock](absl::StatusOr<pb::CheckVoiceLockResponse> v) { lock = std::move(v); });
  ASSERT_TRUE(lock.has_value());
  EXPECT_EQ(lock->status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(a->host->ListTables().empty());  // returns: no worker is waited for
  std::optional<absl::StatusOr<pb::CreateTableResponse>> created;
  a->host->CreateTable(Create("t2"), [&created](absl::StatusOr<pb::CreateTableResponse> v) {
    created = std::move(v);
  });
  ASSERT_TRUE(created.has_value());
  EXPECT_EQ(created->status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(HostTest, CreateTableIsIdempotentByIdAndChecksItsInput) {
  absl::StatusOr<pb::CreateTableResponse> first = CreateOn(*a->host, Create());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->created());
  EXPECT_EQ(first->table().seats(0).player(), "host");
  EXPECT_EQ(first->table().owner_instance(), "inst-a");
  EXPECT_EQ(first->table().phase(), "waiting");
  absl::StatusOr<pb::CreateTableResponse> again = CreateOn(*a->host, Create());
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created());
  EXPECT_EQ(CreateOn(*a->host, Create("t1", "host", 200)).status().code(),
            absl::StatusCode::kAlreadyExists);
  pb::CreateTableRequest bad_code = Create("t2");
  bad_code.set_code("12a456");
  EXPECT_EQ(CreateOn(*a->host, bad_code).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateOn(*a->host, Create("t3", "host", 24)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateOn(*a->host, Create("bad id")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a->host->ListTables().size(), 1u);
  EXPECT_EQ(store.GetOwner("t1")->instance, "inst-a");
}

TEST_F(HostTest, ListedIsKeptShownAndPartOfTheSameOptions) {
  pb::CreateTableRequest listed = Create();
  listed.set_listed(true);
  absl::StatusOr<pb::CreateTableResponse> first = CreateOn(*a->host, listed);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->table().listed());
  EXPECT_EQ(CreateOn(*a->host, Create()).status().code(), absl::StatusCode::kAlreadyExists);
  absl::StatusOr<pb::CreateTableResponse> again = CreateOn(*a->host, listed);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created());
  EXPECT_TRUE(again->table().listed());
  pb::HostedTable saved;  // in the hosted snapshot, so it survives a failover
  ASSERT_TRUE(saved.ParseFromString(store.Load("t1")->state));
  EXPECT_TRUE(saved.create().listed());
}

absl::StatusOr<pb::JoinTableResponse> JoinOn(TableHost& h, std::string table, std::string p) {
  std::optional<absl::StatusOr<pb::JoinTableResponse>> out;
  h.JoinTable(table, p, [&out](absl::StatusOr<pb::JoinTableResponse> v) { out = std::move(v); });
  h.Poll();
  if (!out.has_value()) return absl::InternalError("no answer");
  return *out;
}

TEST_F(HostTest, JoinTableSeatsAPlayerWithoutAStreamAsNotConnected) {
  ASSERT_TRUE(CreateOn(*a->host, Create("t1", "host", 100)).ok());
  absl::StatusOr<pb::JoinTableResponse> joined = JoinOn(*a->host, "t1", "a");
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_EQ(joined->seat(), 2);  // the join order: 2, 1, 3
  EXPECT_EQ(joined->table().seats(2).player(), "a");
  EXPECT_EQ(joined->table().seats(2).kind(), "person");
  EXPECT_FALSE(joined->table().seats(2).connected());
  EXPECT_TRUE(joined->table().seats(2).away());
  // Saved before the answer.
  pb::HostedTable saved;
  ASSERT_TRUE(saved.ParseFromString(store.Load("t1")->state));
  // Idempotent: the same seat, nothing else changes.
  absl::StatusOr<pb::JoinTableResponse> again = JoinOn(*a->host, "t1", "a");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->seat(), 2);
  // Too few coins (150 < twice the bet), no account, unknown table, bad id.
  EXPECT_EQ(JoinOn(*a->host, "t1", "poor").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(JoinOn(*a->host, "t1", "nobody").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(JoinOn(*a->host, "nope", "a").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(JoinOn(*a->host, "t1", "bad id").status().code(), absl::StatusCode::kInvalidArgument);
  // The seat is kept for a minute (RULES.md §4.10); a Play stream reconnects the player.
  Client c = OpenOn(*a->host, "a");
  std::vector<pb::PlayResponse> got = c.sink->Take();
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got[0].opened().seat(), 2);
  EXPECT_TRUE(HasEvent(got, "back"));
  std::optional<absl::StatusOr<pb::TableInfo>> info;
  a->host->GetTable("t1", [&info](absl::StatusOr<pb::TableInfo> v) { info = std::move(v); });
  a->host->Poll();
  ASSERT_TRUE(info.has_value() && info->ok());
  EXPECT_TRUE((*info)->seats(2).connected());
}

// Three present and a fourth seated by the lobby (no stream yet): the others see "seated" and
// "away", no automatic start begun and cancelled; the start comes when the fourth opens.
TEST_F(HostTest, JoinTableOfAFourthWithoutAStreamBeginsNoStartUntilItOpens) {
  ASSERT_TRUE(CreateOn(*a->host, Create()).ok());
  Client host = OpenOn(*a->host, "host");
  Client ann = OpenOn(*a->host, "a");
  Client ben = OpenOn(*a->host, "b");
  ASSERT_EQ(Do(*a->host, ann, Cmd(1, "join")), 0);
  ASSERT_EQ(Do(*a->host, ben, Cmd(1, "join")), 0);
  host.sink->Take();
  ASSERT_TRUE(JoinOn(*a->host, "t1", "c").ok());
  std::vector<std::string> types;
  for (const pb::TableEvent& e : EventsIn(host.sink->Take())) types.push_back(e.type());
  EXPECT_THAT(types, ElementsAre("seated", "away"));
  Client cid = OpenOn(*a->host, "c");
  types.clear();
  for (const pb::TableEvent& e : EventsIn(host.sink->Take())) types.push_back(e.type());
  EXPECT_THAT(types, ElementsAre("back", "auto_start"));
}

// RULES.md §4.3/§4.10: the host is seated by CreateTable but has no stream yet: away, so a
// full table does not start a game and stakes nobody; their Play stream brings them back;
// a host who never comes is freed after the minute without a quit.
TEST_F(HostTest, AHostWithoutAStreamIsAwayUntilItOpensAndFreedAfterAMinute) {
  absl::StatusOr<pb::CreateTableResponse> created = CreateOn(*a->host, Create("t1", "host", 100));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_FALSE(created->table().seats(0).connected());
  EXPECT_TRUE(created->table().seats(0).away());
  std::map<std::string, Client> people;
  for (const char* p : {"a", "b", "c"}) {
    people[p] = OpenOn(*a->host, p);
    ASSERT_EQ(Do(*a->host, people[p], Cmd(1, "join")), 0) << p;
  }
  Run(*a->host, 30'000);  // past the 7 s auto start and a count-in: nothing starts
  for (const char* p : {"a", "b", "c"}) {
    EXPECT_EQ(Coins(std::string("player:") + p), 1000) << p;
    EXPECT_FALSE(HasEvent(people[p].sink->All(), "hand")) << p;
  }
  EXPECT_EQ(Coins("player:host"), 1000);
  Run(*a->host, 31'000);  // 61 s: the kept minute is over
  std::optional<absl::StatusOr<pb::TableInfo>> info;
  a->host->GetTable("t1", [&info](absl::StatusOr<pb::TableInfo> v) { info = std::move(v); });
  a->host->Poll();
  ASSERT_TRUE(info.has_value() && info->ok());
  EXPECT_EQ((*info)->seats(0).kind(), "empty");
  EXPECT_EQ(records.quits().size(), 0u);
  EXPECT_EQ(Coins("player:host"), 1000);

  // A host who opens their stream is back at once.
  ASSERT_TRUE(CreateOn(*a->host, Create("t2", "host", 100)).ok());
  Client host = OpenOn(*a->host, "host", 0, "t2");
  EXPECT_TRUE(HasEvent(host.sink->Take(), "back"));
  std::optional<absl::StatusOr<pb::TableInfo>> t2;
  a->host->GetTable("t2", [&t2](absl::StatusOr<pb::TableInfo> v) { t2 = std::move(v); });
  a->host->Poll();
  ASSERT_TRUE(t2.has_value() && t2->ok());
  EXPECT_TRUE((*t2)->seats(0).connected());
}

TEST_F(HostTest, JoinTableOnAFullTableIsResourceExhausted) {
  wallet.SetBalance("player:d", 1000);
  wallet.SetBalance("player:e", 1000);
  ASSERT_TRUE(CreateOn(*a->host, Create("t1", "host", 100)).ok());
  for (const char* p : {"a", "b", "c"}) ASSERT_TRUE(JoinOn(*a->host, "t1", p).ok()) << p;
  // Before a stream, the seat is an away person's: outside a round a newcomer may take it
  // (RULES.md §4.9), as for anyone disconnected.
  absl::StatusOr<pb::JoinTableResponse> took = JoinOn(*a->host, "t1", "d");
  ASSERT_TRUE(took.ok()) << took.status();
  EXPECT_EQ(took->seat(), 2);  // a's seat, the first of the join order
  std::vector<Client> streams;
  for (const char* p : {"b", "c", "d"}) streams.push_back(OpenOn(*a->host, p));
  Client host = OpenOn(*a->host, "host");
  EXPECT_EQ(JoinOn(*a->host, "t1", "e").status().code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(HostTest, JoinTableOfATableOwnedElsewhereNamesTheOwner) {
  auto b = std::make_unique<Instance>("inst-b", clock, store, wallet, records);
  ASSERT_TRUE(b->host->Start().ok());
  ASSERT_TRUE(CreateOn(*a->host, Create()).ok());
  absl::StatusOr<pb::JoinTableResponse> r = JoinOn(*b->host, "t1", "a");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("inst-a"));
}

TEST_F(HostTest, ListTablesFiltersByPlayerAndOpenSeats) {
  pb::CreateTableRequest open = Create("t-open");
  open.set_listed(true);
  pb::CreateTableRequest full = Create("t-full");
  full.set_listed(true);
  ASSERT_TRUE(CreateOn(*a->host, open).ok());
  ASSERT_TRUE(CreateOn(*a->host, full).ok());
  ASSERT_TRUE(CreateOn(*a->host, Create("t-private", "b")).ok());
  for (const char* p : {"a", "b", "c"}) ASSERT_TRUE(JoinOn(*a->host, "t-full", p).ok()) << p;
  auto ids = [](const std::vector<pb::TableInfo>& v) {
    std::vector<std::string> out;
    for (const auto& t : v) out.push_back(t.table_id());
    return out;
  };
  EXPECT_THAT(ids(a->host->ListTables()), ElementsAre("t-full", "t-open", "t-private"));
  EXPECT_THAT(ids(a->host->ListTables({.open_only = true})), ElementsAre("t-open"));
  EXPECT_THAT(ids(a->host->ListTables({.player = "b"})), ElementsAre("t-full", "t-private"));
  EXPECT_THAT(ids(a->host->ListTables({.player = "host"})), ElementsAre("t-full", "t-open"));
  EXPECT_THAT(ids(a->host->ListTables({.player = "b", .open_only = true})), ElementsAre());
}

TEST_F(HostTest, OpenAnswersNotFoundForAnUnknownTableAndSeatsTheHost) {
  Client nobody = OpenOn(*a->host, "host", 0, "nope");
  ASSERT_TRUE(nobody.sink->finished().has_value());
  EXPECT_EQ(nobody.sink->finished()->code(), absl::StatusCode::kNotFound);

  ASSERT_TRUE(CreateOn(*a->host, Create()).ok());
  Client host = OpenOn(*a->host, "host");
  std::vector<pb::PlayResponse> got = host.sink->Take();
  ASSERT_FALSE(got.empty());
  ASSERT_TRUE(got[0].has_opened());
  EXPECT_EQ(got[0].opened().seat(), 0);
  EXPECT_FALSE(got[0].opened().resumed());
  EXPECT_TRUE(HasEvent(got, "table_phase"));  // a fresh view of the seat
}

TEST_F(HostTest, CommandsGetExactErrorsAndChangeNothing) {
  ASSERT_TRUE(CreateOn(*a->host, Create()).ok());
  Client stranger = OpenOn(*a->host, "a");
  EXPECT_EQ(stranger.sink->Take()[0].opened().seat(), -1);
  pb::TableCommand move = Cmd(1, "move");
  move.set_move("play");
  move.set_card("AS");
  EXPECT_EQ(Do(*a->host, stranger, move), static_cast<int>(absl::StatusCode::kPermissionDenied));
  EXPECT_EQ(Do(*a->host, stranger, Cmd(2, "fly")),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(Do(*a->host, stranger, Cmd(3, "disconnect")),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  pb::TableCommand bad_move = Cmd(4, "move");
  bad_move.set_move("jump");
  EXPECT_EQ(Do(*a->host, stranger, bad_move), static_cast<int>(absl::StatusCode::kInvalidArgument));
  Client poor = OpenOn(*a->host, "poor");
  EXPECT_EQ(Do(*a->host, poor, Cmd(5, "join")),
            static_cast<int>(absl::StatusCode::kFailedPrecondition));  // 150 < 2 x 100
  EXPECT_EQ(Do(*a->host, stranger, Cmd(6, "join")), 0);
  EXPECT_EQ(Do(*a->host, stranger, Cmd(7, "join")),
            static_cast<int>(absl::StatusCode::kAlreadyExists));
  absl::StatusOr<pb::CreateTableResponse> info = CreateOn(*a->host, Create());
  EXPECT_EQ(info->table().seats(2).player(), "a");
  EXPECT_EQ(info->table().seats(1).kind(), "empty");
}

// A worker's queue full (worker_queue_max): a command it has no room for ends its stream with
// RESOURCE_EXHAUSTED, which the table takes as a disconnect (no command is left unanswered,
// no player counted present on a dead stream); a stream's end is never dropped.
TEST_F(HostTest, AnOverloadedWorkerEndsTheStreamInsteadOfDroppingItsCommands) {
  Instance one("inst-q", clock, store, wallet, records, /*worker_queue_max=*/1);
  ASSERT_TRUE(one.host->Start().ok());
  ASSERT_TRUE(CreateOn(*one.host, Create()).ok());
  Client host = OpenOn(*one.host, "host");
  Client ann = OpenOn(*one.host, "a");
  ASSERT_EQ(Do(*one.host, ann, Cmd(1, "join")), 0);
  host.sink->Take();
  one.host->Command(ann.id, Cmd(2, "voice_discard"));  // queued: the queue is full
  one.host->Command(ann.id, Cmd(3, "voice_discard"));  // no room: the stream is given up
  one.host->Command(ann.id, Cmd(4, "voice_discard"));  // after that: dropped with the stream
  one.host->Poll();
  ASSERT_TRUE(ann.sink->finished().has_value());
  EXPECT_EQ(ann.sink->finished()->code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ann.sink->finished()->message(),
            "the instance is overloaded: a command was not taken; reconnect");
  // Those taken were answered (the join; the first discard if the queue had room for it);
  // the rest went with the stream.
  std::vector<uint64_t> answered;
  for (const pb::CommandResult& r : ResultsIn(ann.sink->All())) answered.push_back(r.command_id());
  ASSERT_FALSE(answered.empty());
  EXPECT_EQ(answered.front(), 1u);
  EXPECT_LE(answered.size(), 2u);
  EXPECT_THAT(answered, ::testing::Not(::testing::Contains(3u)));
  EXPECT_THAT(answered, ::testing::Not(::testing::Contains(4u)));
  // Everyone else sees a's connection gone.
  bool away = false;
  for (const pb::TableEvent& e : EventsIn(host.sink->Take())) {
    away = away || (e.type() == "away" && e.player() == "a" && e.detail() == "disconnected");
  }
  EXPECT_TRUE(away);
  // A stream's end with the queue full still reaches the table.
  Client ann2 = OpenOn(*one.host, "a");
  host.sink->Take();
  one.host->Command(ann2.id, Cmd(5, "voice_discard"));  // fills the queue
  one.host->StreamEnded(ann2.id);
  one.host->Poll();
  away = false;
  for (const pb::TableEvent& e : EventsIn(host.sink->Take())) {
    away = away || (e.type() == "away" && e.player() == "a" && e.detail() == "disconnected");
  }
  EXPECT_TRUE(away);
}

// Voice notes through the host: moderation's CheckVoiceLock and AnnounceVoiceNote, the
// refused stream voice_sent, and reports of an announced note at the window's exact edges.
// "host" (seat 0), "a" (seat 2) and "b" (seat 1) are seated; no game (voice round 0).
class Voice : public HostTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(CreateOn(*a->host, Create()).ok());
    host = OpenOn(*a->host, "host");
    ann = OpenOn(*a->host, "a");
    ben = OpenOn(*a->host, "b");
    ASSERT_EQ(Do(*a->host, ann, Cmd(1, "join")), 0);
    ASSERT_EQ(Do(*a->host, ben, Cmd(1, "join")), 0);
    for (Client* c : {&host, &ann, &ben}) c->sink->Take();
  }
  static pb::AnnounceVoiceNoteRequest Req(std::string player, std::string note_id,
                                          int64_t duration_ms = 3'000, uint64_t round = 0,
                                          std::string table = "t1") {
    pb::AnnounceVoiceNoteRequest r;
    r.set_table_id(std::move(table));
    r.set_player(std::move(player));
    r.set_round(round);
    r.set_note_id(std::move(note_id));
    r.set_duration_ms(duration_ms);
    return r;
  }
  // nullopt: no answer after one Poll.
  std::optional<absl::StatusOr<pb::AnnounceVoiceNoteResponse>> AnnounceOn(
      TableHost& h, const pb::AnnounceVoiceNoteRequest& r) {
    auto out = std::make_shared<std::optional<absl::StatusOr<pb::AnnounceVoiceNoteResponse>>>();
    h.AnnounceVoiceNote(
        r, [out](absl::StatusOr<pb::AnnounceVoiceNoteResponse> v) { *out = std::move(v); });
    h.Poll();
    return *out;
  }
  absl::StatusOr<pb::AnnounceVoiceNoteResponse> Announce(const pb::AnnounceVoiceNoteRequest& r) {
    auto out = AnnounceOn(*a->host, r);
    if (!out.has_value()) return absl::InternalError("no answer");
    return *out;
  }
  absl::StatusOr<pb::CheckVoiceLockResponse> Check(std::string player, std::string table = "t1") {
    std::optional<absl::StatusOr<pb::CheckVoiceLockResponse>> out;
    a->host->CheckVoiceLock(table, player, [&out](absl::StatusOr<pb::CheckVoiceLockResponse> v) {
      out = std::move(v);
    });
    a->host->Poll();
    if (!out.has_value()) return absl::InternalError("no answer");
    return *out;
  }
  std::string Reason(std::string player) {
    absl::StatusOr<pb::CheckVoiceLockResponse> r = Check(player);
    if (!r.ok()) return std::string(r.status().ToString());
    return r->may_send() ? "may_send" : r->reason();
  }
  // The result of a command: code and message.
  std::pair<int, std::string> Result(Client& c, pb::TableCommand cmd) {
    const uint64_t id = cmd.command_id();
    a->host->Command(c.id, cmd);
    a->host->Poll();
    for (const auto& r : ResultsIn(c.sink->All())) {
      if (r.command_id() == id) return {r.code(), r.message()};
    }
    return {-1, ""};
  }
  static pb::TableCommand Report(uint64_t id, std::string note_id) {
    pb::TableCommand c = Cmd(id, "report");
    c.set_note_id(std::move(note_id));
    return c;
  }
  int64_t NowMs() const { return absl::ToUnixMillis(clock.Now()); }
  static std::vector<pb::TableEvent> Notes(const std::vector<pb::PlayResponse>& ms) {
    std::vector<pb::TableEvent> out;
    for (const pb::TableEvent& e : EventsIn(ms)) {
      if (e.type() == "voice_note") out.push_back(e);
    }
    return out;
  }
  Client host, ann, ben;
};

// RULES §5.6: a muted player may not record. Moderation refuses the voice_start with its
// own message; no lock is taken, nobody is shown a recording, and the others may record.
TEST_F(Voice, AMutedPlayerMayNotTakeTheRecordingLock) {
  const std::string muted = "muted: an admin stopped your voice notes until 2027-01-01T00:00:00Z";
  records.Mute("a", muted);
  for (Client* c : {&host, &ann, &ben}) c->sink->Take();
  EXPECT_EQ(
      Result(ann, Cmd(2, "voice_start")),
      (std::pair<int, std::string>{static_cast<int>(absl::StatusCode::kPermissionDenied), muted}));
  EXPECT_EQ(Reason("a"), "no_lock");
  for (Client* c : {&host, &ann, &ben}) {
    for (const pb::TableEvent& e : EventsIn(c->sink->Take())) {
      EXPECT_NE(e.type(), "voice_recording");
    }
  }
  EXPECT_EQ(Do(*a->host, ben, Cmd(3, "voice_start")), 0);  // the lock is free for others
  EXPECT_EQ(Reason("b"), "may_send");
  EXPECT_EQ(Do(*a->host, ben, Cmd(4, "voice_discard")), 0);
  // The refusal used nothing: lifted, the same player records this round.
  records.Unmute("a");
  EXPECT_EQ(Do(*a->host, ann, Cmd(5, "voice_start")), 0);
  EXPECT_EQ(Reason("a"), "may_send");
  EXPECT_EQ(records.voice_checks(), 3);
}

// Moderation slow to answer: the stream's next commands wait behind the voice_start, so a
// discard sent right after it is applied after it (and releases the lock), never before.
TEST_F(Voice, CommandsAfterAVoiceStartWaitForItsCheck) {
  records.HoldVoiceChecks(true);
  ann.sink->Take();
  a->host->Command(ann.id, Cmd(2, "voice_start"));
  a->host->Command(ann.id, Cmd(3, "voice_discard"));
  a->host->Poll();
  // Results of these two commands only (the fixture's join may still be in the sink).
  auto ours = [&] {
    std::vector<pb::CommandResult> out;
    for (const auto& r : ResultsIn(ann.sink->All())) {
      if (r.command_id() == 2 || r.command_id() == 3) out.push_back(r);
    }
    return out;
  };
  EXPECT_TRUE(ours().empty());  // both wait for moderation
  records.ReleaseVoiceChecks();
  a->host->Poll();
  const std::vector<pb::CommandResult> results = ours();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].command_id(), 2u);
  EXPECT_EQ(results[0].code(), 0);
  EXPECT_EQ(results[1].command_id(), 3u);
  EXPECT_EQ(results[1].code(), 0) << results[1].message();  // not "you are not recording"
  EXPECT_EQ(Reason("a"), "allowance_used");                 // discarded: the note is used
  records.HoldVoiceChecks(false);
  EXPECT_EQ(Do(*a->host, ben, Cmd(4, "voice_start")), 0);  // and the lock is free
}

// Moderation not answering does not stop the game's voice notes (the upload checks the mute
// again): the player records.
TEST_F(Voice, WithModerationDownAPlayerStillRecords) {
  records.SetDown(true);
  EXPECT_EQ(Do(*a->host, ann, Cmd(2, "voice_start")), 0);
  EXPECT_EQ(Reason("a"), "may_send");
  EXPECT_EQ(records.voice_checks(), 1);
}

TEST_F(Voice, AnnounceFeedsTheMachineAndEverySeatGetsTheNoteAfterTheSave) {
  ASSERT_EQ(Do(*a->host, ann, Cmd(2, "voice_start")), 0);
  absl::StatusOr<pb::CheckVoiceLockResponse> lock = Check("a");
  ASSERT_TRUE(lock.ok());
  EXPECT_TRUE(lock->may_send());
  EXPECT_EQ(lock->round(), 0u);
  EXPECT_EQ(lock->seat(), 2);
  for (Client* c : {&host, &ann, &ben}) c->sink->Take();
  const int64_t now = NowMs();
  store.FailNext(1);  // the first save fails: no answer and no event before it is saved
  std::optional<absl::StatusOr<pb::AnnounceVoiceNoteResponse>> first, second;
  a->host->AnnounceVoiceNote(
      Req("a", "n1", 3'000),
      [&first](absl::StatusOr<pb::AnnounceVoiceNoteResponse> v) { first = std::move(v); });
  a->host->Poll();
  EXPECT_FALSE(first.has_value());
  EXPECT_TRUE(Notes(ann.sink->All()).empty());
  // Meanwhile the table waits for its storage: a retry is told so.
  a->host->AnnounceVoiceNote(
      Req("a", "n1", 3'000),
      [&second](absl::StatusOr<pb::AnnounceVoiceNoteResponse> v) { second = std::move(v); });
  a->host->Poll();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->status().code(), absl::StatusCode::kUnavailable);
  Run(*a->host, 1'000, 100);  // the save is retried and succeeds: the first call answers
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->ok()) << first->status();
  EXPECT_EQ((*first)->play_at_ms(), now + 1'000);
  EXPECT_FALSE((*first)->replayed());
  // Every seat gets the note: plays 1 s after the announce.
  for (Client* c : {&host, &ann, &ben}) {
    std::vector<pb::TableEvent> notes = Notes(c->sink->Take());
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0].seat(), 2);
    EXPECT_EQ(notes[0].player(), "a");
    EXPECT_EQ(notes[0].detail(), "n1");
    EXPECT_EQ(notes[0].value(), now + 1'000);
  }
  // The lock is released and the allowance used.
  EXPECT_EQ(Reason("a"), "allowance_used");
  EXPECT_EQ(Reason("host"), "no_lock");
}

TEST_F(Voice, AnnounceAnswersPlayAtAndReplaysByNoteId) {
  ASSERT_EQ(Do(*a->host, ann, Cmd(2, "voice_start")), 0);
  const int64_t now = NowMs();
  absl::StatusOr<pb::AnnounceVoiceNoteResponse> r = Announce(Req("a", "n1", 3'000));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->play_at_ms(), now + 1'000);
  EXPECT_FALSE(r->replayed());
  // A retry (a lost reply), later, even with another duration: the same note, once.
  clock.Advance(absl::Milliseconds(2'500));
  absl::StatusOr<pb::AnnounceVoiceNoteResponse> again = Announce(Req("a", "n1", 5'000));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->play_at_ms(), now + 1'000);
  EXPECT_TRUE(again->replayed());
  EXPECT_EQ(Notes(ben.sink->All()).size(), 1u);
  // The same note id for another player is not a replay.
  EXPECT_EQ(Announce(Req("b", "n1")).status().code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(Voice, AnnounceRefusesAnotherRoundAndChangesNothing) {
  ASSERT_EQ(Do(*a->host, ann, Cmd(2, "voice_start")), 0);
  absl::StatusOr<pb::AnnounceVoiceNoteResponse> r = Announce(Req("a", "n1", 3'000, /*round=*/1));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(),
            "round_over: the note is of round 1, the recording is of round 0");
  EXPECT_EQ(Reason("a"), "may_send");  // the lock stays
  EXPECT_TRUE(Notes(ben.sink->All()).empty());
  // Without the lock, the table's round is named.
  r = Announce(Req("b", "n2", 3'000, /*round=*/1));
  EXPECT_EQ(r.status().message(), "round_over: the note is of round 1, the table is in round 0");
}

// A recording that outlasts its round (here: started before the game, the count-in of round
// 1 begun meanwhile) is still that round's note (§5.1): CheckVoiceLock names its round, the
// announce of that round is accepted and plays 1 s later; the new round's allowance is
// untouched for everyone else.
TEST_F(Voice, ARecordingThatOutlastsItsRoundIsStillAnnounced) {
  ASSERT_EQ(Do(*a->host, ann, Cmd(2, "voice_start")), 0);
  ASSERT_EQ(Do(*a->host, host, Cmd(3, "start_now")), 0);  // a bot sits; round 1 counts in
  absl::StatusOr<pb::CheckVoiceLockResponse> ben_lock = Check("b");
  ASSERT_TRUE(ben_lock.ok()) << ben_lock.status();
  EXPECT_EQ(ben_lock->round(), 1u);
  absl::StatusOr<pb::CheckVoiceLockResponse> lock = Check("a");
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_TRUE(lock->may_send());
  EXPECT_EQ(lock->round(), 0u);
  const int64_t now = NowMs();
  absl::StatusOr<pb::AnnounceVoiceNoteResponse> r = Announce(Req("a", "n1", 3'000, /*round=*/0));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->play_at_ms(), now + 1'000);
  EXPECT_FALSE(r->replayed());
  std::vector<pb::TableEvent> notes = Notes(ben.sink->All());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].detail(), "n1");
  EXPECT_EQ(notes[0].value(), now + 1'000);
  EXPECT_EQ(Reason("b"), "no_lock");  // b's note of round 1 is still to come
  EXPECT_EQ(Reason("host"), "no_lock");
}

TEST_F(Voice, AnnounceWithoutTheLockIsNoLock) {
  absl::StatusOr<pb::AnnounceVoiceNoteResponse> r = Announce(Req("a", "n1"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(), "no_lock: you are not recording");
  // Another seat holds it.
  ASSERT_EQ(Do(*a->host, ben, Cmd(2, "voice_start")), 0);
  EXPECT_EQ(Announce(Req("a", "n1")).status().message(), "no_lock: you are not recording");
  // After a discard.
  ASSERT_EQ(Do(*a->host, ben, Cmd(3, "voice_discard")), 0);
  EXPECT_EQ(Announce(Req("b", "n2")).status().message(), "no_lock: you are not recording");
  // After the lock timed out (7 s + 3 s of upload grace).
  ASSERT_EQ(Do(*a->host, ann, Cmd(4, "voice_start")), 0);
  Run(*a->host, 10'000);
  EXPECT_EQ(Announce(Req("a", "n3")).status().message(), "no_lock: you are not recording");
  // Not seated.
  r = Announce(Req("zed", "n4"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(), "no_lock: zed is not seated");
  EXPECT_TRUE(Notes(ben.sink->All()).empty());
}

TEST_F(Voice, AnnounceChecksItsInputTheTableAndItsOwner) {
  ASSERT_EQ(Do(*a->host, ann, Cmd(2, "voice_start")), 0);
  const auto bad = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(Announce(Req("a", "")).status().code(), bad);
  EXPECT_EQ(Announce(Req("a", "n 1")).status().code(), bad);
  EXPECT_EQ(Announce(Req("a", std::string(65, 'n'))).status().code(), bad);
  EXPECT_EQ(Announce(Req("a", "n1", 0)).status().code(), bad);
  EXPECT_EQ(Announce(Req("a", "n1", 7'501)).status().code(), bad);
  EXPECT_EQ(Announce(Req("", "n1")).status().code(), bad);
  EXPECT_EQ(Announce(Req("a", "n1", 3'000, 0, "t/1")).status().code(), bad);
  EXPECT_EQ(Announce(Req("a", "n1", 3'000, 0, "nope")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(Reason("a"), "may_send");  // nothing changed
  // The edges are accepted.
  absl::StatusOr<pb::AnnounceVoiceNoteResponse> longest =
      Announce(Req("a", std::string(64, 'n'), 7'000));
  EXPECT_TRUE(longest.ok()) << longest.status();
  // Owned elsewhere: the same redirect as the other calls.
  auto b = std::make_unique<Instance>("inst-b", clock, store, wallet, records);
  ASSERT_TRUE(b->host->Start().ok());
  auto elsewhere = AnnounceOn(*b->host, Req("a", "n2"));
  ASSERT_TRUE(elsewhere.has_value());
  EXPECT_EQ(elsewhere->status().code(), absl::StatusCode::kFailedPrecondition);
  absl::optional<absl::Cord> addr = elsewhere->status().GetPayload("courtpiece-owner-addr");
  ASSERT_TRUE(addr.has_value());
  EXPECT_EQ(std::string(*addr), "inst-a:7002");
}

TEST_F(Voice, CheckVoiceLockGivesTheFirstReasonThatHolds) {
  EXPECT_EQ(Reason("zed"), "not_seated");
  EXPECT_EQ(Reason("a"), "no_lock");
  ASSERT_EQ(Do(*a->host, ann, Cmd(2, "voice_start")), 0);
  EXPECT_EQ(Reason("a"), "may_send");
  EXPECT_EQ(Reason("b"), "no_lock");
  ASSERT_EQ(Do(*a->host, ann, Cmd(3, "voice_discard")), 0);
  EXPECT_EQ(Reason("a"), "allowance_used");  // a discard uses it
  EXPECT_EQ(Reason("b"), "no_lock");
  // So does a lock taken and left to run out (10 s): the upload is then allowance_used, not
  // no_lock, which is kept for a player who never took the lock this round.
  ASSERT_EQ(Do(*a->host, ben, Cmd(2, "voice_start")), 0);
  EXPECT_EQ(Reason("b"), "may_send");
  Run(*a->host, 9'500);
  EXPECT_EQ(Reason("b"), "may_send");
  Run(*a->host, 1'000);
  EXPECT_EQ(Reason("b"), "allowance_used");
  // Fewer than two people: alone, whatever else holds (bots do not count).
  ASSERT_EQ(Do(*a->host, ben, Cmd(4, "leave")), 0);
  ASSERT_EQ(Do(*a->host, host, Cmd(5, "leave")), 0);
  EXPECT_EQ(Reason("a"), "alone");
  EXPECT_EQ(Reason("b"), "not_seated");
  absl::StatusOr<pb::CheckVoiceLockResponse> r = Check("a");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->may_send());
  EXPECT_EQ(r->seat(), 2);
  EXPECT_EQ(Check("a", "nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Check("a b").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(Voice, AStreamVoiceSentIsRefusedAndChangesNothing) {
  ASSERT_EQ(Do(*a->host, ann, Cmd(2, "voice_start")), 0);
  pb::TableCommand sent = Cmd(3, "voice_sent");
  sent.set_note_id("n1");
  sent.set_duration_ms(3'000);
  EXPECT_EQ(Result(ann, sent),
            std::make_pair(3, std::string("voice_sent: a note is announced by the moderation "
                                          "service after its upload (POST /v1/voice or "
                                          "CourtPiece.UploadNote)")));
  EXPECT_EQ(Reason("a"), "may_send");  // the lock stays
  EXPECT_TRUE(Notes(ben.sink->All()).empty());
  EXPECT_TRUE(Announce(Req("a", "n1")).ok());  // and moderation can still announce it
}

// RULES.md §5.4 through the host: from when the note plays until 5 s after it ends.
TEST_F(Voice, AReportIsTakenFromPlayAtUntilFiveSecondsAfterTheEndAndFiled) {
  ASSERT_EQ(Do(*a->host, ann, Cmd(2, "voice_start")), 0);
  absl::StatusOr<pb::AnnounceVoiceNoteResponse> r = Announce(Req("a", "n1", 3'000));
  ASSERT_TRUE(r.ok()) << r.status();
  const int64_t play_at = r->play_at_ms();
  auto at = [&](int64_t ms) { clock.Advance(absl::Milliseconds(ms - NowMs())); };
  at(play_at - 1);
  EXPECT_EQ(Result(ben, Report(10, "n1")),
            std::make_pair(9, std::string("the note has not played yet")));
  at(play_at);
  EXPECT_EQ(Result(host, Report(11, "n1")), std::make_pair(0, std::string()));
  EXPECT_EQ(Result(ann, Report(12, "n1")),
            std::make_pair(7, std::string("nobody reports their own note")));
  at(play_at + 3'000 + 5'000);
  EXPECT_EQ(Result(ben, Report(13, "n1")), std::make_pair(0, std::string()));
  at(play_at + 3'000 + 5'000 + 1);
  // (the window is checked before "already reported")
  EXPECT_EQ(Result(host, Report(14, "n1")),
            std::make_pair(9, std::string("the report window closed")));
  EXPECT_EQ(Result(host, Report(15, "n9")), std::make_pair(5, std::string("no such voice note")));
  // The reporter sees "reported"; the reports reach moderation as effects.
  std::vector<pb::TableEvent> seen;
  for (const pb::TableEvent& e : EventsIn(host.sink->All())) {
    if (e.type() == "reported") seen.push_back(e);
  }
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].seat(), 2);
  EXPECT_EQ(seen[0].detail(), "n1");
  std::map<std::string, moderation::v1::FileReportRequest> filed = records.reports();
  ASSERT_EQ(filed.size(), 2u);
  const moderation::v1::FileReportRequest& f = filed.at("t1:report:n1:host");
  EXPECT_EQ(f.key(), "t1:report:n1:host");
  EXPECT_EQ(f.table_id(), "t1");
  EXPECT_EQ(f.note_id(), "n1");
  EXPECT_EQ(f.author(), "a");
  EXPECT_EQ(f.reporter(), "host");
  EXPECT_EQ(f.round(), 0u);
  EXPECT_EQ(filed.at("t1:report:n1:b").reporter(), "b");
  EXPECT_EQ(records.received("t1:report:n1:host"), 1);
}

// Four people, start now, nobody moves: the turn timer plays for them (bots after five
// timeouts); the one-round game ends, the pot is paid out once, the records are sent.
class FullGame : public HostTest {
 protected:
  void SeatEveryone(TableHost& h) {
    ASSERT_TRUE(CreateOn(h, Create()).ok());
    clients["host"] = OpenOn(h, "host");
    uint64_t n = 100;
    for (const char* p : {"a", "b", "c"}) {
      clients[p] = OpenOn(h, p);
      ASSERT_EQ(Do(h, clients[p], Cmd(++n, "join")), 0) << p;
    }
    ASSERT_EQ(Do(h, clients["host"], Cmd(++n, "start_now")), 0);
  }
  // inst-b live beside inst-a; four people on inst-a, round 1's stake retried there (the
  // wallet down), its players told "wallet_unavailable".
  void StakeRetriedOnA(Instance& b) {
    ASSERT_TRUE(b.host->Start().ok());
    a->host->WatchOnce();
    b.host->WatchOnce();
    SeatEveryone(*a->host);
    wallet.SetDown(true);
    Run(*a->host, 7'000);
    Run(*a->host, 3'000, 100);
  }
  std::map<std::string, Client> clients;
};

TEST_F(FullGame, AGameByTimeoutsPaysThePotOnceAndRecordsIt) {
  const int64_t total = wallet.TotalCoins();
  SeatEveryone(*a->host);
  Run(*a->host, 7'000);  // count-in, then the stake
  EXPECT_TRUE(wallet.Applied("t1:1:stake:0"));
  EXPECT_EQ(Coins("pot:t1:1"), 400);
  EXPECT_EQ(Coins("player:a"), 900);
  Run(*a->host, 20 * 60'000, 1'000);
  // Everyone had a bot playing for them when the game ended: all freed, the table closed
  // and left the store once its effects were acknowledged.
  EXPECT_TRUE(a->host->ListTables().empty());
  EXPECT_EQ(store.GetOwner("t1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Coins("pot:t1:1"), 0);
  EXPECT_EQ(wallet.TotalCoins(), total);
  EXPECT_TRUE(wallet.Applied("t1:1:payout"));
  EXPECT_EQ(records.games().count("t1:game:1"), 1u);
  EXPECT_EQ(records.rounds().count("t1:round:1"), 1u);
  // Winners got 200 each (a 100 bet, pot 400 split), losers lost 100.
  int64_t sum = 0;
  for (const char* p : {"host", "a", "b", "c"}) sum += Coins(std::string("player:") + p);
  EXPECT_EQ(sum, 4'000);
  // Every seat's stream saw its own hand and nobody else's.
  for (auto& [player, c] : clients) {
    for (const pb::TableEvent& e : EventsIn(c.sink->All())) {
      if (e.type() == "hand") {
        EXPECT_GT(e.cards_size(), 0) << player;
      }
    }
  }
}

TEST_F(FullGame, AStakeWaitsForTheWalletAndMovesCoinsOnce) {
  SeatEveryone(*a->host);
  wallet.SetDown(true);
  Run(*a->host, 7'000);
  Run(*a->host, 3'000, 100);
  EXPECT_FALSE(wallet.Applied("t1:1:stake:0"));
  std::vector<pb::PlayResponse> got = clients["b"].sink->Take();
  bool noticed = false;
  for (const auto& m : got)
    noticed = noticed || (m.has_notice() && m.notice().type() == "wallet_unavailable");
  EXPECT_TRUE(noticed);
  EXPECT_EQ(CreateOn(*a->host, Create())->table().phase(), "staking");
  wallet.SetDown(false);
  Run(*a->host, 6'000, 100);
  EXPECT_TRUE(wallet.Applied("t1:1:stake:0"));
  EXPECT_EQ(Coins("pot:t1:1"), 400);
  EXPECT_EQ(CreateOn(*a->host, Create())->table().phase(), "playing");
}

TEST_F(FullGame, NothingIsPublishedBeforeItIsSaved) {
  SeatEveryone(*a->host);
  clients["a"].sink->Take();
  store.FailNext(1);
  pb::TableCommand vote = Cmd(500, "end_early");  // any state-changing command
  a->host->Command(clients["a"].id, vote);
  a->host->Poll();
  std::vector<pb::PlayResponse> held = clients["a"].sink->Take();
  EXPECT_TRUE(ResultsIn(held).empty());  // the save failed: nothing out yet
  Run(*a->host, 1'000, 100);
  std::vector<pb::PlayResponse> later = clients["a"].sink->Take();
  ASSERT_EQ(ResultsIn(later).size(), 1u);
  EXPECT_EQ(ResultsIn(later)[0].command_id(), 500u);
}

// Redis and the wallet both away: the stake waits in its backoff and every save fails.
// The due stake must wait for the save's retry (nothing is sent before a save), not fire
// its table's timer again and again at one instant (a worker spinning for as long as
// Redis is away); once both are back the stake goes through once.
TEST_F(FullGame, WhileSavesFailADueEffectWaitsForTheSaveRetryInsteadOfSpinning) {
  SeatEveryone(*a->host);
  wallet.SetDown(true);
  Run(*a->host, 7'000);  // the count-in is over: the stake is sent, refused, retried
  Run(*a->host, 1'000, 100);
  ASSERT_FALSE(wallet.Applied("t1:1:stake:0"));
  store.FailNext(1'000'000);
  pb::TableCommand vote = Cmd(600, "end_early");  // a change to save: the saves fail now
  a->host->Command(clients["a"].id, vote);
  EXPECT_LT(a->host->Poll(), 5);
  for (int i = 0; i < 20; ++i) {  // 10 s: past every backoff of the stake and of the save
    clock.Advance(absl::Milliseconds(500));
    EXPECT_LT(a->host->Poll(), 5) << "at step " << i;
  }
  EXPECT_FALSE(wallet.Applied("t1:1:stake:0"));
  store.FailNext(0);
  wallet.SetDown(false);
  Run(*a->host, 10'000, 100);
  EXPECT_TRUE(wallet.Applied("t1:1:stake:0"));
  EXPECT_EQ(Coins("pot:t1:1"), 400);
  EXPECT_EQ(CreateOn(*a->host, Create())->table().phase(), "playing");
}

// Leave mid-round and change your mind on the same stream: join brings you back (a bot
// played meanwhile), as it does after a reconnect; seated and present, join is refused.
TEST_F(FullGame, LeaveThenJoinOnTheSameStreamComesBackMidRound) {
  SeatEveryone(*a->host);
  Run(*a->host, 7'000);  // count-in, then the stake: round 1 is dealt
  Client& ann = clients["a"];
  ASSERT_EQ(Do(*a->host, ann, Cmd(201, "leave")), 0);
  ann.sink->Take();
  ASSERT_EQ(Do(*a->host, ann, Cmd(202, "join")), 0);
  bool back = false;
  for (const pb::TableEvent& e : EventsIn(clients["host"].sink->All())) {
    back = back || (e.type() == "back" && e.player() == "a");
  }
  EXPECT_TRUE(back);
  EXPECT_TRUE(HasEvent(ann.sink->All(), "hand"));     // its view again, its own cards
  EXPECT_EQ(Do(*a->host, ann, Cmd(203, "join")), 6);  // ALREADY_EXISTS: seated and here
}

TEST_F(FullGame, ResumeBySeqGivesTheMissedEventsOnlyOrAFreshView) {
  SeatEveryone(*a->host);
  Run(*a->host, 7'000);
  std::vector<pb::TableEvent> seen = EventsIn(clients["b"].sink->Take());
  ASSERT_FALSE(seen.empty());
  const uint64_t last = seen.back().seq();
  // b's connection drops; the table plays on; b comes back with its last seq.
  a->host->StreamEnded(clients["b"].id);
  a->host->Poll();
  Run(*a->host, 6'000);
  Client again = OpenOn(*a->host, "b", last);
  std::vector<pb::PlayResponse> got = again.sink->Take();
  ASSERT_TRUE(got[0].has_opened());
  EXPECT_TRUE(got[0].opened().resumed());
  uint64_t prev = last;
  for (const pb::TableEvent& e : EventsIn(got)) {
    EXPECT_GT(e.seq(), prev) << "each missed event once, in order";
    prev = e.seq();
  }
  // Too old (seq 1 is long trimmed from the 64 kept): a fresh view instead.
  Client old = OpenOn(*a->host, "c", 1);
  std::vector<pb::PlayResponse> view = old.sink->Take();
  EXPECT_FALSE(view[0].opened().resumed());
  EXPECT_TRUE(HasEvent(view, "hand"));
  EXPECT_TRUE(clients["c"].sink->finished().has_value());  // the older stream was replaced
  EXPECT_EQ(clients["c"].sink->finished()->code(), absl::StatusCode::kAborted);
}

TEST_F(FullGame, AClientThatDoesNotReadIsCutAndCountsAsAway) {
  ASSERT_TRUE(CreateOn(*a->host, Create()).ok());
  Client slow = OpenOn(*a->host, "a", 0, "t1", /*capacity=*/8);
  ASSERT_EQ(Do(*a->host, slow, Cmd(1, "join")), 0);
  Client host = OpenOn(*a->host, "host");
  ASSERT_EQ(Do(*a->host, host, Cmd(10, "start_now")), 0);
  Run(*a->host, 12'000);  // the count-in, the stake, the deal: more than 8 messages for a
  ASSERT_TRUE(slow.sink->finished().has_value());
  EXPECT_EQ(slow.sink->finished()->code(), absl::StatusCode::kResourceExhausted);
  a->host->Poll();
  absl::StatusOr<pb::CreateTableResponse> info = CreateOn(*a->host, Create());
  EXPECT_FALSE(info->table().seats(2).connected());
}

// Told "wallet_unavailable" by the old owner, a player hears "wallet_available" from the new
// one when the stake goes through there (the notice state is not in the snapshot).
TEST_F(FullGame, AStakeRetriedAcrossATakeoverIsAnnouncedAvailableByTheNewOwner) {
  Instance b("inst-b", clock, store, wallet, records);
  StakeRetriedOnA(b);
  ASSERT_FALSE(wallet.Applied("t1:1:stake:0"));
  std::vector<pb::PlayResponse> old_owner = clients["b"].sink->Take();
  bool unavailable = false;
  for (const auto& m : old_owner) {
    unavailable = unavailable || (m.has_notice() && m.notice().type() == "wallet_unavailable");
  }
  ASSERT_TRUE(unavailable);
  const uint64_t last = EventsIn(old_owner).back().seq();
  wallet.SetDown(false);
  wallet.SetManual(true);           // the new owner's stake is answered once its player is back
  clock.Advance(absl::Seconds(4));  // inst-a stalls; inst-b claims the table
  b.host->WatchOnce();
  ASSERT_EQ(store.GetOwner("t1")->instance, "inst-b");
  Client moved = OpenOn(*b.host, "b", last);
  ASSERT_GE(wallet.ReleaseReplies(), 1);
  Run(*b.host, 1'000, 100);
  EXPECT_TRUE(wallet.Applied("t1:1:stake:0"));
  std::vector<std::string> notices;
  for (const auto& m : moved.sink->All()) {
    if (m.has_notice()) notices.push_back(m.notice().type());
  }
  EXPECT_THAT(notices, ::testing::Contains("wallet_available"));
}

// The wallet still down after the takeover: the new owner tells its players so itself, then
// that it went through.
TEST_F(FullGame, AWalletStillDownAfterATakeoverIsAnnouncedByTheNewOwner) {
  Instance b("inst-b", clock, store, wallet, records);
  StakeRetriedOnA(b);
  const uint64_t last = EventsIn(clients["b"].sink->Take()).back().seq();
  clock.Advance(absl::Seconds(4));
  b.host->WatchOnce();
  ASSERT_EQ(store.GetOwner("t1")->instance, "inst-b");
  Client moved = OpenOn(*b.host, "b", last);
  Run(*b.host, 3'000, 100);
  wallet.SetDown(false);
  Run(*b.host, 6'000, 100);
  EXPECT_TRUE(wallet.Applied("t1:1:stake:0"));
  std::vector<std::string> notices;
  for (const auto& m : moved.sink->All()) {
    if (m.has_notice()) notices.push_back(m.notice().type());
  }
  EXPECT_THAT(notices, ElementsAre("wallet_unavailable", "wallet_available"));
}

TEST_F(FullGame, AnotherInstanceTakesTheTableOverWhenTheOwnerStopsHeartbeating) {
  Instance b("inst-b", clock, store, wallet, records);
  ASSERT_TRUE(b.host->Start().ok());
  a->host->WatchOnce();
  b.host->WatchOnce();
  SeatEveryone(*a->host);
  Run(*a->host, 7'000);
  ASSERT_EQ(Coins("pot:t1:1"), 400);
  std::vector<pb::TableEvent> seen = EventsIn(clients["a"].sink->Take());
  const uint64_t last = seen.back().seq();
  // inst-a stalls (no heartbeat, no inputs); past the TTL inst-b claims its table.
  clock.Advance(absl::Seconds(4));
  b.host->WatchOnce();
  EXPECT_EQ(store.GetOwner("t1")->instance, "inst-b");
  EXPECT_EQ(store.GetOwner("t1")->epoch, 2);
  ASSERT_EQ(b.host->ListTables().size(), 1u);
  // The client goes to the new owner and resumes by seq.
  Client moved = OpenOn(*b.host, "a", last);
  std::vector<pb::PlayResponse> got = moved.sink->Take();
  ASSERT_TRUE(got[0].has_opened());
  EXPECT_EQ(got[0].opened().table().owner_instance(), "inst-b");
  // The stalled owner wakes up: its next save is fenced, it drops the table.
  a->host->Command(clients["host"].id, Cmd(900, "end_early"));
  a->host->Poll();
  ASSERT_TRUE(clients["host"].sink->finished().has_value());
  EXPECT_EQ(clients["host"].sink->finished()->code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(a->host->ListTables().empty());
  // The game finishes on inst-b; the pot is paid out once.
  for (const char* p : {"host", "b", "c"}) clients[p] = OpenOn(*b.host, p);
  Run(*b.host, 20 * 60'000, 1'000);
  EXPECT_EQ(Coins("pot:t1:1"), 0);
  EXPECT_TRUE(wallet.Applied("t1:1:payout"));
  int payouts = 0;
  for (const FakeTransferCall& call : wallet.calls()) {
    payouts += call.transfer.key == "t1:1:payout" && call.code == absl::StatusCode::kOk;
  }
  EXPECT_GE(payouts, 1);
  EXPECT_EQ(wallet.applied_count(), 2);  // the stake and the payout, each once
}

// A stalled owner whose table gets no input still learns it lost the table: its first
// heartbeat after the stall checks every table against its owner record.
TEST_F(FullGame, AnOwnerBackFromAStallDropsTablesTakenOverWithoutWaitingForAnInput) {
  Instance b("inst-b", clock, store, wallet, records);
  ASSERT_TRUE(b.host->Start().ok());
  a->host->WatchOnce();
  ASSERT_TRUE(CreateOn(*a->host, Create()).ok());
  Client host = OpenOn(*a->host, "host");
  clock.Advance(absl::Seconds(4));
  b.host->WatchOnce();
  ASSERT_EQ(store.GetOwner("t1")->instance, "inst-b");
  EXPECT_FALSE(host.sink->finished().has_value());
  a->host->WatchOnce();  // back: heartbeat after 4 s > the 3 s TTL
  ASSERT_TRUE(host.sink->finished().has_value());
  EXPECT_EQ(host.sink->finished()->code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(a->host->ListTables().empty());
  EXPECT_EQ(b.host->ListTables().size(), 1u);
}

TEST_F(FullGame, TheTableIsRemovedWhenEveryoneHasLeft) {
  ASSERT_TRUE(CreateOn(*a->host, Create()).ok());
  Client host = OpenOn(*a->host, "host");
  EXPECT_EQ(Do(*a->host, host, Cmd(1, "leave")), 0);
  a->host->Poll();
  EXPECT_TRUE(a->host->ListTables().empty());
  EXPECT_EQ(store.GetOwner("t1").status().code(), absl::StatusCode::kNotFound);
  ASSERT_EQ(records.closes().count("t1:closed"), 1u);
  EXPECT_EQ(records.closes().at("t1:closed").table_id(), "t1");
}

// The close is a durable effect (RecordTableClosed): while the lobby is down the closed table
// stays in the store with its close pending; the instance that takes it over sends it; only
// the lobby's ack removes the table.
TEST_F(FullGame, AClosedTableStaysUntilTheLobbyAcksItsCloseEvenAcrossATakeover) {
  Instance b("inst-b", clock, store, wallet, records);
  ASSERT_TRUE(b.host->Start().ok());
  a->host->WatchOnce();
  b.host->WatchOnce();
  ASSERT_TRUE(CreateOn(*a->host, Create()).ok());
  Client host = OpenOn(*a->host, "host");
  records.SetDown(true);
  EXPECT_EQ(Do(*a->host, host, Cmd(1, "leave")), 0);
  Run(*a->host, 2'000, 100);
  EXPECT_TRUE(store.GetOwner("t1").ok());  // kept: its close is not acknowledged
  EXPECT_TRUE(records.closes().empty());
  // inst-a dies (no heartbeat, no polls); inst-b takes the table over.
  clock.Advance(absl::Seconds(4));
  b.host->WatchOnce();
  ASSERT_EQ(store.GetOwner("t1")->instance, "inst-b");
  records.SetDown(false);
  Run(*b.host, 60'000, 1'000);
  ASSERT_EQ(records.closes().count("t1:closed"), 1u);
  EXPECT_TRUE(b.host->ListTables().empty());
  EXPECT_EQ(store.GetOwner("t1").status().code(), absl::StatusCode::kNotFound);
}

TEST(PickOwner, IsStableAndSpreadsTables) {
  std::vector<InstanceInfo> three = {{"a", "x"}, {"b", "y"}, {"c", "z"}};
  std::map<std::string, int> count;
  for (int i = 0; i < 300; ++i) {
    const std::string t = "t" + std::to_string(i);
    const std::string owner = PickOwner(t, three);
    EXPECT_EQ(owner, PickOwner(t, {three[2], three[0], three[1]}));
    ++count[owner];
  }
  EXPECT_EQ(count.size(), 3u);
  for (auto& [o, n] : count) EXPECT_GT(n, 50) << o;
  EXPECT_EQ(PickOwner("t", {}), "");
}

}  // namespace
}  // namespace courtpiece::table_service
