// The directory on fakes (store, Redis codes, table tier) and a fake clock.
#include "services/lobby/directory.h"

#include <atomic>
#include <set>
#include <thread>

#include "absl/strings/str_format.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/table/rules_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/lobby/directory_server.h"
#include "services/lobby/fake_directory_store.h"
#include "services/lobby/fake_table_port.h"
#include "services/lobby/fake_wallet_port.h"

namespace courtpiece::lobby {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class DirectoryTest : public ::testing::Test {
 protected:
  DirectoryTest() : codes(clock) {
    tier.AddInstance("inst-a");
    tier.AddInstance("inst-b");
    Make({});
  }
  void Make(DirectoryOptions o, CodeSource* source = nullptr) {
    o.invite_base_url = "https://cp.example";
    dir = std::make_unique<Directory>(o, clock, store, codes, tier, tier, engines,
                                      source != nullptr ? *source : random_codes);
  }
  NewTable Options(std::string request_id = "r1", int64_t bet = 100, bool listed = false,
                   std::string game = R"({"game":"classic","target":5})") {
    return NewTable{.request_id = std::move(request_id),
                    .game_options = std::move(game),
                    .bet_coins = bet,
                    .turn_time_ms = 15'000,
                    .listed = listed};
  }
  absl::StatusCode CreateCode(const NewTable& t, std::string caller = "ann") {
    return dir->CreateTable(caller, t).status().code();
  }

  FakeClock clock{absl::FromUnixSeconds(1'800'000'000)};
  FakeDirectoryStore store;
  FakeCodeCache codes;
  FakeTableTier tier;
  table::RulesEngineFactory engines;
  RandomCodeSource random_codes;
  std::unique_ptr<Directory> dir;
};

TEST_F(DirectoryTest, CreateThenResolveByCodeAndByLink) {
  absl::StatusOr<TableRef> made = dir->CreateTable("ann", Options("r1", 100, true));
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->code.size(), 6u);
  EXPECT_EQ(made->invite_link, "https://cp.example/t/" + made->code);
  EXPECT_EQ(made->host_player, "ann");
  EXPECT_EQ(made->bet_coins, 100);
  EXPECT_TRUE(made->listed);
  EXPECT_EQ(
      made->owner_instance,
      placement::PickOwner(made->table_id, {{"inst-a", "inst-a:7002"}, {"inst-b", "inst-b:7002"}}));
  EXPECT_EQ(made->owner_addr, made->owner_instance + ":7002");
  EXPECT_EQ(made->seat, -1);

  for (const std::string& in : {made->code, made->invite_link, made->invite_link + "/"}) {
    absl::StatusOr<TableRef> r = dir->ResolveCode(in);
    ASSERT_TRUE(r.ok()) << in << ": " << r.status();
    EXPECT_EQ(r->table_id, made->table_id);
    EXPECT_EQ(r->owner_addr, made->owner_addr);
    EXPECT_EQ(r->code, made->code);
  }
  // Redis alone answers: the store may be down.
  store.SetDown(true);
  EXPECT_TRUE(dir->ResolveCode(made->code).ok());
  store.SetDown(false);
  // Not a code, another site's link, an unknown code.
  EXPECT_EQ(dir->ResolveCode("12345").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(dir->ResolveCode("https://evil.example/t/" + made->code).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::string other = made->code == "000000" ? "000001" : "000000";
  EXPECT_EQ(dir->ResolveCode(other).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(DirectoryTest, CreateIsIdempotentByCallerAndRequestId) {
  absl::StatusOr<TableRef> first = dir->CreateTable("ann", Options("r1"));
  ASSERT_TRUE(first.ok());
  absl::StatusOr<TableRef> again = dir->CreateTable("ann", Options("r1"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->table_id, first->table_id);
  EXPECT_EQ(again->code, first->code);
  EXPECT_EQ(tier.creates(), 1);
  EXPECT_EQ(CreateCode(Options("r1", 200)), absl::StatusCode::kAlreadyExists);
  absl::StatusOr<TableRef> bob = dir->CreateTable("bob", Options("r1"));  // another caller
  ASSERT_TRUE(bob.ok());
  EXPECT_NE(bob->table_id, first->table_id);
  EXPECT_NE(bob->code, first->code);
  EXPECT_EQ(store.tables(), 2u);
}

TEST_F(DirectoryTest, ARetryFinishesACreateTheInstanceMissed) {
  tier.SetDown("inst-a", true);
  tier.SetDown("inst-b", true);
  EXPECT_EQ(CreateCode(Options("r1")), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store.tables(), 1u);  // reserved and recorded, not yet on an instance
  tier.SetDown("inst-a", false);
  tier.SetDown("inst-b", false);
  absl::StatusOr<TableRef> made = dir->CreateTable("ann", Options("r1"));
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(tier.creates(), 1);
  EXPECT_TRUE(dir->ResolveCode(made->code).ok());
}

TEST_F(DirectoryTest, ALateRetryOfAClosedTablesRequestIsNotFoundAndMakesNothing) {
  Make({.resolve_close_grace_ms = 10'000});
  absl::StatusOr<TableRef> t = dir->CreateTable("ann", Options("r1"));
  ASSERT_TRUE(t.ok());
  tier.CloseTable(t->table_id);
  clock.Advance(absl::Seconds(10));
  EXPECT_EQ(CreateCode(Options("r1")), absl::StatusCode::kNotFound);
  EXPECT_EQ(tier.creates(), 1);
  EXPECT_NE(store.FindTable(t->table_id)->value().closed_at_ms, 0);
  EXPECT_EQ(CreateCode(Options("r1")), absl::StatusCode::kNotFound);  // closed row
}

TEST_F(DirectoryTest, BadOptionsAreInvalidArgumentNamingTheOption) {
  auto message = [this](const NewTable& t) {
    absl::Status s = dir->CreateTable("ann", t).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    return std::string(s.message());
  };
  EXPECT_THAT(message(Options("")), HasSubstr("request_id"));
  EXPECT_THAT(message(Options("bad id!")), HasSubstr("request_id"));
  EXPECT_THAT(message(Options("r1", 24)), HasSubstr("bet_coins"));
  EXPECT_THAT(message(Options("r1", 1001)), HasSubstr("bet_coins"));
  NewTable slow = Options("r1");
  slow.turn_time_ms = 30'001;
  EXPECT_THAT(message(slow), HasSubstr("turn_time_ms"));
  EXPECT_THAT(message(Options("r1", 100, false, R"({"game":"chess"})")), HasSubstr("game"));
  EXPECT_THAT(message(Options("r1", 100, false, R"({"game":"classic","target":0})")),
              HasSubstr("target"));
  EXPECT_THAT(message(Options("r1", 100, false, "not json")), HasSubstr("game_options"));
  EXPECT_EQ(store.tables(), 0u);
  EXPECT_EQ(tier.creates(), 0);
}

TEST_F(DirectoryTest, TheBotLevelIsCheckedPassedToTheTableAndGivenBackByName) {
  NewTable strong = Options("r1");
  strong.bot_level = "strong";
  absl::StatusOr<TableRef> made = dir->CreateTable("ann", strong);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->bot_level, "strong");  // from the table service's TableInfo
  EXPECT_EQ(store.FindTable(made->table_id)->value().bot_level, "strong");
  absl::StatusOr<TableRef> resolved = dir->ResolveCode(made->code);  // the Redis entry
  ASSERT_TRUE(resolved.ok());
  EXPECT_EQ(resolved->bot_level, "strong");
  // The level is part of the same options of a retried request.
  NewTable normal = Options("r1");
  normal.bot_level = "normal";
  EXPECT_EQ(CreateCode(normal), absl::StatusCode::kAlreadyExists);
  // "" is easy, by name.
  absl::StatusOr<TableRef> easy = dir->CreateTable("ann", Options("r2"));
  ASSERT_TRUE(easy.ok());
  EXPECT_EQ(easy->bot_level, "easy");
  NewTable easy_by_name = Options("r2");
  easy_by_name.bot_level = "easy";
  EXPECT_TRUE(dir->CreateTable("ann", easy_by_name).ok());  // the same options
  // Any other name: refused, nothing written.
  NewTable bad = Options("r3");
  bad.bot_level = "hard";
  absl::Status s = dir->CreateTable("ann", bad).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "bot_level must be easy, normal or strong");
  EXPECT_EQ(store.tables(), 2u);
  EXPECT_EQ(tier.creates(), 2);
}

TEST(DirectoryEntry, AnEntryWrittenBeforeTheBotLevelReadsAsEasy) {
  absl::StatusOr<DirectoryTable> old = DecodeEntry(
      R"({"t":"t-1","c":"123456","h":"ann","r":"r1","g":"{}","b":100,"tt":15000,"l":false,)"
      R"("o":"inst-a","at":5})");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->bot_level, "easy");
  DirectoryTable row = *old;
  row.bot_level = "strong";
  absl::StatusOr<DirectoryTable> back = DecodeEntry(EncodeEntry(row));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, row);
}

TEST_F(DirectoryTest, NoLiveInstanceIsUnavailable) {
  tier.Kill("inst-a");
  tier.Kill("inst-b");
  absl::Status s = dir->CreateTable("ann", Options()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("no table instance is live"));
  EXPECT_EQ(dir->ListOpenTables({}).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(dir->MyTables("ann").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store.tables(), 0u);
}

TEST_F(DirectoryTest, AnExhaustedCodeSpaceIsResourceExhaustedAndClosedCodesComeBackAfterCooloff) {
  ListCodeSource two({"111111", "222222"});
  Make({.code_cooloff_ms = 3'600'000, .code_tries_max = 6}, &two);
  absl::StatusOr<TableRef> t1 = dir->CreateTable("ann", Options("r1"));
  absl::StatusOr<TableRef> t2 = dir->CreateTable("ann", Options("r2"));
  ASSERT_TRUE(t1.ok() && t2.ok());
  EXPECT_EQ(std::set<std::string>({t1->code, t2->code}),
            std::set<std::string>({"111111", "222222"}));
  absl::Status full = dir->CreateTable("ann", Options("r3")).status();
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(full.message()), HasSubstr("6 tries"));

  ASSERT_TRUE(dir->MarkClosed(t1->table_id).ok());
  ASSERT_TRUE(dir->MarkClosed(t1->table_id).ok());  // idempotent
  EXPECT_EQ(dir->ResolveCode(t1->code).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(CreateCode(Options("r3")), absl::StatusCode::kResourceExhausted);  // cooling off
  clock.Advance(absl::Minutes(59));
  EXPECT_EQ(CreateCode(Options("r3")), absl::StatusCode::kResourceExhausted);
  clock.Advance(absl::Minutes(1));
  absl::StatusOr<TableRef> t3 = dir->CreateTable("ann", Options("r3"));
  ASSERT_TRUE(t3.ok()) << t3.status();
  EXPECT_EQ(t3->code, t1->code);
  absl::StatusOr<TableRef> r = dir->ResolveCode(t1->code);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->table_id, t3->table_id);  // the new holder
  EXPECT_EQ(dir->MarkClosed("t-unknown").code(), absl::StatusCode::kNotFound);
}

TEST_F(DirectoryTest, ACodeWhoseTableIsGoneIsClosedByResolve) {
  Make({.code_cooloff_ms = 1'000, .resolve_close_grace_ms = 5'000});
  absl::StatusOr<TableRef> t = dir->CreateTable("ann", Options("r1"));
  ASSERT_TRUE(t.ok());
  tier.CloseTable(t->table_id);  // the owner removed it; no record reached us
  EXPECT_EQ(dir->ResolveCode(t->code).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.FindTable(t->table_id)->value().closed_at_ms, 0);  // young: not closed yet
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ(dir->ResolveCode(t->code).status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(store.FindTable(t->table_id)->value().closed_at_ms, 0);
  EXPECT_EQ(codes.Get(t->code)->value_or(""), kClosedTombstone);
}

TEST_F(DirectoryTest, ACodeRedisLostIsFoundInPostgresAndPutBack) {
  absl::StatusOr<TableRef> t = dir->CreateTable("ann", Options("r1"));
  ASSERT_TRUE(t.ok());
  codes.Forget(t->code);
  absl::StatusOr<TableRef> r = dir->ResolveCode(t->code);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->table_id, t->table_id);
  EXPECT_TRUE(codes.Get(t->code)->has_value());
  codes.SetDown(true);  // Redis down: Postgres answers
  EXPECT_TRUE(dir->ResolveCode(t->code).ok());
}

TEST_F(DirectoryTest, ResolveCodesAnswersABatchExactlyAsResolveCodeAnswersEachCode) {
  Make({.code_cooloff_ms = 60'000, .resolve_close_grace_ms = 5'000});
  absl::StatusOr<TableRef> open = dir->CreateTable("ann", Options("r1"));
  absl::StatusOr<TableRef> closed = dir->CreateTable("bob", Options("r2"));
  absl::StatusOr<TableRef> forgotten = dir->CreateTable("carl", Options("r3"));
  absl::StatusOr<TableRef> gone = dir->CreateTable("dora", Options("r4"));
  ASSERT_TRUE(open.ok() && closed.ok() && forgotten.ok() && gone.ok());
  ASSERT_TRUE(dir->MarkClosed(closed->table_id).ok());
  codes.Forget(forgotten->code);    // Redis lost it: Postgres answers and it is put back
  tier.CloseTable(gone->table_id);  // no owner record, and younger than the grace
  std::string unknown;
  for (int i = 0; unknown.empty() || unknown == open->code || unknown == closed->code ||
                  unknown == forgotten->code || unknown == gone->code;
       ++i) {
    unknown = absl::StrFormat("%06d", i);
  }
  const std::vector<std::string> in = {open->code,   open->invite_link, "12345",    unknown,
                                       closed->code, forgotten->code,   gone->code, open->code};
  std::vector<absl::StatusOr<TableRef>> out = dir->ResolveCodes(in);
  ASSERT_EQ(out.size(), in.size());
  for (size_t i : {0u, 1u, 7u}) {
    ASSERT_TRUE(out[i].ok()) << i << ": " << out[i].status();
    EXPECT_EQ(out[i]->table_id, open->table_id);
    EXPECT_EQ(out[i]->owner_addr, open->owner_addr);
  }
  EXPECT_EQ(out[2].status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out[3].status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(out[3].status().message(), "no table has code " + unknown);
  EXPECT_EQ(out[4].status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(out[4].status().message(), "the table of this code closed");
  ASSERT_TRUE(out[5].ok()) << out[5].status();
  EXPECT_EQ(out[5]->table_id, forgotten->table_id);
  EXPECT_TRUE(codes.Get(forgotten->code)->has_value());
  EXPECT_EQ(out[6].status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(out[6].status().message(), "the table of this code is not open yet: retry");
  // Each answer is ResolveCode's for that input.
  for (size_t i = 0; i < in.size(); ++i) {
    absl::StatusOr<TableRef> one = dir->ResolveCode(in[i]);
    EXPECT_EQ(one.status(), out[i].status()) << i;
    if (one.ok()) {
      EXPECT_EQ(one->table_id, out[i]->table_id) << i;
    }
  }
  // The registry down: every parsed code whose row was found is UNAVAILABLE.
  tier.SetRegistryDown(true);
  out = dir->ResolveCodes({open->code, "x"});
  EXPECT_EQ(out[0].status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(out[1].status().code(), absl::StatusCode::kInvalidArgument);
  tier.SetRegistryDown(false);
  EXPECT_TRUE(dir->ResolveCodes({}).empty());
}

TEST_F(DirectoryTest, ResolveCodeThroughTheServerInBatches) {
  std::vector<TableRef> tables;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<TableRef> t = dir->CreateTable("ann", Options("r" + std::to_string(i)));
    ASSERT_TRUE(t.ok()) << t.status();
    tables.push_back(*t);
  }
  auth::FakeCallerAuth auth;
  DirectoryService service(*dir, auth, {.threads = 2, .batch_max = 8, .queue_max = 64});
  common::Metrics metrics("lobby");
  absl::StatusOr<std::unique_ptr<common::GrpcServer>> server =
      common::GrpcServer::Start({.listen_address = "127.0.0.1:0"}, {&service}, metrics);
  ASSERT_TRUE(server.ok()) << server.status();
  std::unique_ptr<v1::Directory::Stub> stub = v1::Directory::NewStub((*server)->InProcessChannel());
  auto resolve = [&](const std::string& code, bool with_token, v1::TableRef* out) {
    grpc::ClientContext ctx;
    if (with_token) ctx.AddMetadata("courtpiece-test-player", "bob");
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ResolveCodeRequest r;
    r.set_code(code);
    return stub->ResolveCode(&ctx, r, out);
  };
  v1::TableRef out;
  EXPECT_EQ(resolve(tables[0].code, false, &out).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(resolve("12345", true, &out).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // 8 callers x 25 calls at once, each answered with its own code's table.
  std::atomic<int> right{0}, wrong{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 8; ++c) {
    callers.emplace_back([&, c] {
      for (int i = 0; i < 25; ++i) {
        const TableRef& want = tables[(c + i) % tables.size()];
        v1::TableRef got;
        grpc::Status s = resolve(want.code, true, &got);
        (s.ok() && got.table_id() == want.table_id && got.code() == want.code &&
                 got.owner_addr() == want.owner_addr
             ? right
             : wrong)
            .fetch_add(1);
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(right.load(), 200);
  EXPECT_EQ(wrong.load(), 0);
  // Every call with a token went through the batcher ("12345" too: parsed there).
  EXPECT_EQ(service.resolver().requests(), 201);
  EXPECT_LE(service.resolver().batches(), 201);
  EXPECT_EQ(service.resolver().expired(), 0);
  (*server)->Shutdown(absl::Now() + absl::Seconds(2));
}

TEST_F(DirectoryTest, OpenTablesAreFilteredFullestFirstAndLimited) {
  Make({.open_tables_cache_ms = 0});
  absl::StatusOr<TableRef> c100 = dir->CreateTable("ann", Options("a", 100, true));
  absl::StatusOr<TableRef> c200 = dir->CreateTable("bob", Options("b", 200, true));
  absl::StatusOr<TableRef> h100 =
      dir->CreateTable("cat", Options("c", 100, true, R"({"game":"hidden"})"));
  ASSERT_TRUE(dir->CreateTable("dan", Options("d", 100, false)).ok());  // private
  ASSERT_TRUE(c100.ok() && c200.ok() && h100.ok());
  for (const char* p : {"p1", "p2"}) {
    ASSERT_TRUE(tier.JoinTable({c200->owner_instance, c200->owner_addr}, c200->table_id, p,
                               absl::InfiniteFuture())
                    .ok());
  }
  auto ids = [](const absl::StatusOr<std::vector<OpenTableEntry>>& v) {
    std::vector<std::string> out;
    EXPECT_TRUE(v.ok()) << v.status();
    if (v.ok()) {
      for (const auto& e : *v) out.push_back(e.table.table_id);
    }
    return out;
  };
  std::vector<std::string> any = ids(dir->ListOpenTables({}));
  ASSERT_EQ(any.size(), 3u);
  EXPECT_EQ(any[0], c200->table_id);  // 3 seats taken
  EXPECT_THAT(ids(dir->ListOpenTables({.game = "classic"})),
              ElementsAre(c200->table_id, c100->table_id));
  EXPECT_THAT(ids(dir->ListOpenTables({.game = "classic", .bet_max_coins = 150})),
              ElementsAre(c100->table_id));
  EXPECT_THAT(ids(dir->ListOpenTables({.bet_min_coins = 150})), ElementsAre(c200->table_id));
  EXPECT_EQ(ids(dir->ListOpenTables({.limit = 1})).size(), 1u);
  absl::StatusOr<std::vector<OpenTableEntry>> first = dir->ListOpenTables({.limit = 1});
  EXPECT_EQ((*first)[0].seats_taken, 3);
  EXPECT_EQ((*first)[0].phase, "waiting");
  EXPECT_EQ(dir->ListOpenTables({.game = "chess"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(dir->ListOpenTables({.bet_min_coins = 200, .bet_max_coins = 100}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // One instance unreachable: the other's tables are still listed.
  tier.SetDown(c200->owner_instance, true);
  std::vector<std::string> partial = ids(dir->ListOpenTables({}));
  EXPECT_EQ(std::count(partial.begin(), partial.end(), c200->table_id), 0);
}

TEST_F(DirectoryTest, QuickJoinFillsTheFullestTableThenCreatesWithDefaults) {
  absl::StatusOr<TableRef> first = dir->QuickJoin("p0", {.game = "kaat"}, "q0");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->seat, 0);
  EXPECT_EQ(first->host_player, "p0");
  EXPECT_EQ(first->game_options, R"({"game":"kaat"})");
  EXPECT_EQ(first->bet_coins, 100);
  EXPECT_EQ(first->turn_time_ms, 15'000);
  EXPECT_TRUE(first->listed);
  std::vector<int> seats;
  for (const char* p : {"p1", "p2", "p3"}) {
    absl::StatusOr<TableRef> r = dir->QuickJoin(p, {.game = "kaat"}, "");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->table_id, first->table_id);
    seats.push_back(r->seat);
  }
  EXPECT_THAT(seats, ElementsAre(2, 1, 3));
  absl::StatusOr<TableRef> next = dir->QuickJoin("p4", {.game = "kaat"}, "");
  ASSERT_TRUE(next.ok());
  EXPECT_NE(next->table_id, first->table_id);
  // Bets: a range below the default bet makes a table at its top.
  absl::StatusOr<TableRef> cheap =
      dir->QuickJoin("p5", {.game = "kaat", .bet_min_coins = 25, .bet_max_coins = 50}, "");
  ASSERT_TRUE(cheap.ok());
  EXPECT_NE(cheap->table_id, next->table_id);
  EXPECT_EQ(cheap->bet_coins, 50);
  EXPECT_EQ(dir->QuickJoin("p6", {}, "").status().code(), absl::StatusCode::kInvalidArgument);
  // A range outside 25..1000 (RULES.md §4.1) is refused, not met with a table outside it.
  absl::StatusOr<TableRef> below = dir->QuickJoin("p6", {.game = "kaat", .bet_max_coins = 10}, "");
  EXPECT_EQ(below.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(below.status().message(), "bet_max_coins: below the smallest bet (25)");
  absl::StatusOr<TableRef> above =
      dir->QuickJoin("p6", {.game = "kaat", .bet_min_coins = 5000}, "");
  EXPECT_EQ(above.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(above.status().message(), "bet_min_coins: above the largest bet (1000)");
  absl::StatusOr<TableRef> top = dir->QuickJoin("p6", {.game = "kaat", .bet_min_coins = 1000}, "");
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_EQ(top->bet_coins, 1000);
  EXPECT_EQ(dir->QuickJoin("p6", {.game = "chess"}, "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A quick join naming a bot level fills only tables whose bots play at it and creates one
// with it; without a level any table fits (and a new one has easy bots).
TEST_F(DirectoryTest, QuickJoinWithABotLevelKeepsToTablesOfThatLevel) {
  absl::StatusOr<TableRef> easy = dir->QuickJoin("p0", {.game = "piles"}, "");
  ASSERT_TRUE(easy.ok()) << easy.status();
  EXPECT_EQ(easy->bot_level, "easy");
  absl::StatusOr<TableRef> strong =
      dir->QuickJoin("p1", {.game = "piles", .bot_level = "strong"}, "");
  ASSERT_TRUE(strong.ok()) << strong.status();
  EXPECT_NE(strong->table_id, easy->table_id);
  EXPECT_EQ(strong->bot_level, "strong");
  EXPECT_EQ(strong->seat, 0);
  absl::StatusOr<TableRef> strong2 =
      dir->QuickJoin("p2", {.game = "piles", .bot_level = "strong"}, "");
  ASSERT_TRUE(strong2.ok()) << strong2.status();
  EXPECT_EQ(strong2->table_id, strong->table_id);
  EXPECT_EQ(strong2->seat, 2);
  // No level: the fullest table of any level (two people at the strong one, one at the easy one).
  absl::StatusOr<TableRef> any = dir->QuickJoin("p3", {.game = "piles"}, "");
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ(any->table_id, strong->table_id);
  absl::StatusOr<TableRef> named_easy =
      dir->QuickJoin("p4", {.game = "piles", .bot_level = "easy"}, "");
  ASSERT_TRUE(named_easy.ok()) << named_easy.status();
  EXPECT_EQ(named_easy->table_id, easy->table_id);
  absl::StatusOr<TableRef> normal =
      dir->QuickJoin("p5", {.game = "piles", .bot_level = "normal"}, "");
  ASSERT_TRUE(normal.ok()) << normal.status();
  EXPECT_NE(normal->table_id, easy->table_id);
  EXPECT_NE(normal->table_id, strong->table_id);
  EXPECT_EQ(normal->bot_level, "normal");
  // ListOpenTables filters by the level the same way.
  absl::StatusOr<std::vector<OpenTableEntry>> listed = dir->ListOpenTables({.bot_level = "strong"});
  ASSERT_TRUE(listed.ok()) << listed.status();
  std::vector<std::string> strong_ids;
  for (const OpenTableEntry& e : *listed) strong_ids.push_back(e.table.table_id);
  EXPECT_THAT(strong_ids, ElementsAre(strong->table_id));
  EXPECT_EQ(dir->ListOpenTables({.bot_level = "hard"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  const size_t tables = dir->ListOpenTables({}).value().size();
  absl::StatusOr<TableRef> bad = dir->QuickJoin("p6", {.game = "piles", .bot_level = "hard"}, "");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "bot_level must be easy, normal or strong");
  EXPECT_EQ(dir->ListOpenTables({}).value().size(), tables);  // nothing made
}

// RULES.md §4.5: the host sits down at seat 0 and needs twice the bet, as a joiner does;
// refused before a code is reserved (nothing left behind); the wallet down is UNAVAILABLE.
TEST_F(DirectoryTest, AHostWithLessThanTwiceTheBetCannotCreateTheTable) {
  FakeWalletPort wallet(1000);
  ASSERT_TRUE(wallet.OpenAccount("ann", absl::InfiniteFuture()).ok());  // 1000 coins
  DirectoryOptions o;
  o.invite_base_url = "https://cp.example";
  dir = std::make_unique<Directory>(o, clock, store, codes, tier, tier, engines, random_codes,
                                    nullptr, &wallet);
  absl::StatusOr<TableRef> refused = dir->CreateTable("ann", Options("r1", 600));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(), "sitting down needs 1200 coins, you have 1000");
  EXPECT_EQ(store.tables(), 0u);
  EXPECT_EQ(tier.creates(), 0);
  EXPECT_EQ(CreateCode(Options("r2", 500)), absl::StatusCode::kOk);  // exactly twice: fine
  EXPECT_EQ(dir->CreateTable("nobody", Options("r3")).status().code(),
            absl::StatusCode::kFailedPrecondition);  // no coin account
  wallet.FailNext(1, absl::UnavailableError("down"));
  EXPECT_EQ(CreateCode(Options("r4", 100)), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store.tables(), 1u);
}

TEST_F(DirectoryTest, QuickJoinWithTooFewCoinsIsFailedPrecondition) {
  ASSERT_TRUE(dir->QuickJoin("p0", {.game = "classic"}, "").ok());
  tier.SetBalance("poor", 150);
  EXPECT_EQ(dir->QuickJoin("poor", {.game = "classic"}, "").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(DirectoryTest, TwelveConcurrentQuickJoinsFillExactlyThreeTables) {
  std::vector<std::thread> threads;
  std::vector<absl::StatusOr<TableRef>> got(12, absl::UnknownError("not run"));
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([this, i, &got] {
      got[static_cast<size_t>(i)] =
          dir->QuickJoin("p" + std::to_string(i), {.game = "classic"}, "");
    });
  }
  for (auto& t : threads) t.join();
  std::map<std::string, std::set<int>> seats;
  for (const auto& r : got) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(seats[r->table_id].insert(r->seat).second);
  }
  EXPECT_EQ(seats.size(), 3u);
  for (const auto& [t, s] : seats) EXPECT_EQ(s, std::set<int>({0, 1, 2, 3})) << t;
}

TEST_F(DirectoryTest, TwoLobbiesSharingTheLockAlsoFillExactlyThreeTables) {
  FakeSharedLock lock;
  DirectoryOptions o;
  Directory one(o, clock, store, codes, tier, tier, engines, random_codes, &lock);
  Directory two(o, clock, store, codes, tier, tier, engines, random_codes, &lock);
  std::vector<std::thread> threads;
  std::vector<absl::StatusOr<TableRef>> got(12, absl::UnknownError("not run"));
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([&, i] {
      Directory& d = i % 2 == 0 ? one : two;
      got[static_cast<size_t>(i)] = d.QuickJoin("p" + std::to_string(i), {.game = "stack"}, "");
    });
  }
  for (auto& t : threads) t.join();
  std::map<std::string, std::set<int>> seats;
  for (const auto& r : got) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(seats[r->table_id].insert(r->seat).second);
  }
  EXPECT_EQ(seats.size(), 3u);
  EXPECT_EQ(lock.taken(), 12);
}

TEST_F(DirectoryTest, MyTablesNamesTheCallersSeats) {
  absl::StatusOr<TableRef> t1 = dir->CreateTable("ann", Options("a"));
  absl::StatusOr<TableRef> t2 = dir->CreateTable("bob", Options("b", 100, true));
  ASSERT_TRUE(t1.ok() && t2.ok());
  ASSERT_TRUE(dir->QuickJoin("ann", {.game = "classic"}, "").ok());  // joins t2
  absl::StatusOr<std::vector<TableRef>> mine = dir->MyTables("ann");
  ASSERT_TRUE(mine.ok());
  std::map<std::string, int> seat_of;
  for (const TableRef& r : *mine) seat_of[r.table_id] = r.seat;
  EXPECT_EQ(seat_of, (std::map<std::string, int>{{t1->table_id, 0}, {t2->table_id, 2}}));
  EXPECT_TRUE(dir->MyTables("nobody")->empty());
}

TEST_F(DirectoryTest, TheServiceRefusesCallsWithoutAToken) {
  auth::FakeCallerAuth auth;
  DirectoryService service(*dir, auth);
  grpc::ServerContext ctx;
  v1::CreateTableRequest req;
  v1::TableRef out;
  EXPECT_EQ(service.CreateTable(&ctx, &req, &out).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  // ResolveCode is a callback method: ResolveCodeThroughTheServer below.
  v1::MyTablesResponse mine;
  v1::MyTablesRequest mine_req;
  EXPECT_EQ(service.MyTables(&ctx, &mine_req, &mine).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

}  // namespace
}  // namespace courtpiece::lobby
