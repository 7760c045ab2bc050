// The TableStore contract (table_store.h), one typed suite run against both implementations:
// built without COURTPIECE_TABLE_STORE_REDIS it runs on FakeTableStore (label unit, plus the
// fake's own failure-injection tests); with it, on RedisTableStore over a real Redis
// (COURTPIECE_TEST_REDIS_ADDR, label integration, a private key prefix per test).
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/table/fake_table_store.h"
#include "services/table/table_store.h"
#ifdef COURTPIECE_TABLE_STORE_REDIS
#include "courtpiece/storage/testing.h"
#include "services/table/redis_table_store.h"
#endif

namespace courtpiece::table_service {
namespace {

using C = absl::StatusCode;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class FakeHarness {
 public:
  FakeHarness() : store_(clock_) {}
  bool Ready() { return true; }
  TableStore& store() { return store_; }
  int64_t short_ttl_ms() const { return 300; }
  // Time passes until a heartbeat given short_ttl_ms ago has expired.
  void LetShortTtlPass() { clock_.Advance(absl::Milliseconds(short_ttl_ms())); }
  bool StillLive(const std::string& id) {
    absl::StatusOr<std::vector<InstanceInfo>> live = store_.LiveInstances();
    if (!live.ok()) return true;
    for (const InstanceInfo& i : *live) {
      if (i.id == id) return true;
    }
    return false;
  }

  FakeClock clock_;
  FakeTableStore store_;
};

#ifdef COURTPIECE_TABLE_STORE_REDIS
class RedisHarness {
 public:
  bool Ready() {
    absl::StatusOr<std::unique_ptr<storage::TestRedis>> redis = storage::TestRedis::Create();
    EXPECT_TRUE(redis.ok()) << redis.status();
    if (!redis.ok()) return false;
    redis_ = *std::move(redis);
    store_ = std::make_unique<RedisTableStore>(RedisTableStoreOptions{
        .redis = redis_->options(), .connections = 4, .key_prefix = redis_->prefix()});
    return true;
  }
  TableStore& store() { return *store_; }
  int64_t short_ttl_ms() const { return 300; }
  // Real time: polls (bounded at 10 s) until the key's TTL ran out on the server.
  void LetShortTtlPass() {}
  bool StillLive(const std::string& id) {
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    while (absl::Now() < give_up) {
      absl::StatusOr<std::vector<InstanceInfo>> live = store_->LiveInstances();
      if (!live.ok()) return true;
      bool found = false;
      for (const InstanceInfo& i : *live) found = found || i.id == id;
      if (!found) return false;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return true;
  }

  std::unique_ptr<storage::TestRedis> redis_;
  std::unique_ptr<RedisTableStore> store_;
};
using Harnesses = ::testing::Types<RedisHarness>;
#else
using Harnesses = ::testing::Types<FakeHarness>;
#endif

template <typename H>
class TableStoreContract : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(h_.Ready()); }
  TableStore& store() { return h_.store(); }
  H h_;
};
TYPED_TEST_SUITE(TableStoreContract, Harnesses);

TYPED_TEST(TableStoreContract, CreateThenLoadGetOwnerAndIndexes) {
  TableStore& s = this->store();
  const std::string state("s0\0\xff", 4);  // opaque bytes
  ASSERT_EQ(*s.Create("t1", "a", state), (Owner{"a", 1}));
  absl::StatusOr<StoredTableBytes> loaded = s.Load("t1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->owner, (Owner{"a", 1}));
  EXPECT_EQ(loaded->state, state);
  EXPECT_THAT(loaded->events, IsEmpty());
  EXPECT_EQ(*s.GetOwner("t1"), (Owner{"a", 1}));
  EXPECT_THAT(*s.TablesOf("a"), ElementsAre("t1"));
  EXPECT_THAT(*s.AllTables(), ElementsAre("t1"));
}

TYPED_TEST(TableStoreContract, CreateTwiceIsAlreadyExistsAndWritesNothing) {
  TableStore& s = this->store();
  ASSERT_TRUE(s.Create("t1", "a", "first").ok());
  EXPECT_EQ(s.Create("t1", "b", "second").status().code(), C::kAlreadyExists);
  EXPECT_EQ(s.Create("t1", "a", "again").status().code(), C::kAlreadyExists);
  absl::StatusOr<StoredTableBytes> loaded = s.Load("t1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->owner, (Owner{"a", 1}));
  EXPECT_EQ(loaded->state, "first");
  EXPECT_THAT(*s.TablesOf("a"), ElementsAre("t1"));
  EXPECT_THAT(*s.TablesOf("b"), IsEmpty());
  EXPECT_THAT(*s.AllTables(), ElementsAre("t1"));
}

TYPED_TEST(TableStoreContract, TwoClaimersWithTheSameEpochExactlyOneWins) {
  TableStore& s = this->store();
  ASSERT_TRUE(s.Create("t1", "a", "s").ok());
  std::atomic<bool> go{false};
  absl::StatusOr<Owner> by_b, by_c;
  std::thread tb([&] {
    while (!go.load()) std::this_thread::yield();
    by_b = s.Claim("t1", "b", 1);
  });
  std::thread tc([&] {
    while (!go.load()) std::this_thread::yield();
    by_c = s.Claim("t1", "c", 1);
  });
  go = true;
  tb.join();
  tc.join();
  ASSERT_NE(by_b.ok(), by_c.ok()) << by_b.status() << " / " << by_c.status();
  const std::string winner = by_b.ok() ? "b" : "c";
  const std::string loser = by_b.ok() ? "c" : "b";
  const absl::StatusOr<Owner>& won = by_b.ok() ? by_b : by_c;
  const absl::StatusOr<Owner>& lost = by_b.ok() ? by_c : by_b;
  EXPECT_EQ(*won, (Owner{winner, 2}));
  EXPECT_EQ(lost.status().code(), C::kAborted) << lost.status();
  EXPECT_EQ(*s.GetOwner("t1"), (Owner{winner, 2}));
  // TablesOf after a claim: the table moved to the winner's index only.
  EXPECT_THAT(*s.TablesOf(winner), ElementsAre("t1"));
  EXPECT_THAT(*s.TablesOf(loser), IsEmpty());
  EXPECT_THAT(*s.TablesOf("a"), IsEmpty());
}

TYPED_TEST(TableStoreContract, ClaimWithAStaleEpochIsAbortedAndChangesNothing) {
  TableStore& s = this->store();
  ASSERT_TRUE(s.Create("t1", "a", "s").ok());
  ASSERT_EQ(*s.Claim("t1", "b", 1), (Owner{"b", 2}));
  ASSERT_EQ(*s.Claim("t1", "c", 2), (Owner{"c", 3}));
  absl::Status stale = s.Claim("t1", "b", 2).status();
  EXPECT_EQ(stale.code(), C::kAborted) << stale;
  EXPECT_EQ(s.Claim("t1", "b", 4).status().code(), C::kAborted);
  EXPECT_EQ(*s.GetOwner("t1"), (Owner{"c", 3}));
  EXPECT_THAT(*s.TablesOf("c"), ElementsAre("t1"));
  EXPECT_THAT(*s.TablesOf("b"), IsEmpty());
  EXPECT_EQ(s.Claim("nope", "b", 1).status().code(), C::kNotFound);
  EXPECT_THAT(*s.TablesOf("b"), IsEmpty());
}

TYPED_TEST(TableStoreContract, SaveByTheOldOwnerAfterAClaimIsFencedAndWritesNothing) {
  TableStore& s = this->store();
  ASSERT_TRUE(s.Create("t1", "a", "s0").ok());
  ASSERT_TRUE(s.Save("t1", {"a", 1}, "s1", {"e1"}, 10).ok());
  ASSERT_EQ(*s.Claim("t1", "b", 1), (Owner{"b", 2}));

  absl::Status old_owner = s.Save("t1", {"a", 1}, "stale", {"e-stale"}, 10);
  EXPECT_EQ(old_owner.code(), C::kFailedPrecondition) << old_owner;
  EXPECT_TRUE(absl::StartsWith(old_owner.message(), "fenced:")) << old_owner;
  // The fence checks the instance AND the epoch.
  EXPECT_EQ(s.Save("t1", {"a", 2}, "stale", {"x"}, 10).code(), C::kFailedPrecondition);
  EXPECT_EQ(s.Save("t1", {"b", 1}, "stale", {"x"}, 10).code(), C::kFailedPrecondition);
  EXPECT_EQ(s.Save("t1", {"b", 3}, "stale", {"x"}, 10).code(), C::kFailedPrecondition);

  absl::StatusOr<StoredTableBytes> loaded = s.Load("t1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->owner, (Owner{"b", 2}));
  EXPECT_EQ(loaded->state, "s1");
  EXPECT_THAT(loaded->events, ElementsAre("e1"));

  ASSERT_TRUE(s.Save("t1", {"b", 2}, "s2", {"e2"}, 10).ok());
  loaded = s.Load("t1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->state, "s2");
  EXPECT_THAT(loaded->events, ElementsAre("e1", "e2"));
}

TYPED_TEST(TableStoreContract, SaveManyAnswersEachSaveAsSaveWould) {
  TableStore& s = this->store();
  ASSERT_TRUE(s.Create("t1", "a", "s0").ok());
  ASSERT_TRUE(s.Create("t2", "a", "s0").ok());
  ASSERT_EQ(*s.Claim("t2", "b", 1), (Owner{"b", 2}));
  std::vector<absl::Status> got =
      s.SaveMany({{"t1", {"a", 1}, "s1", {"e1", "e2"}},
                  {"t2", {"a", 1}, "stale", {"x"}},  // fenced: b owns it now
                  {"bad id", {"a", 1}, "x", {}},     // refused before any I/O
                  {"t9", {"a", 1}, "x", {}},         // unknown
                  {"t1", {"a", 1}, "s1b", {"e3"}}},  // a second save of t1 in the same batch
                 10);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_TRUE(got[0].ok()) << got[0];
  EXPECT_EQ(got[1].code(), C::kFailedPrecondition) << got[1];
  EXPECT_EQ(got[2].code(), C::kInvalidArgument) << got[2];
  EXPECT_EQ(got[3].code(), C::kNotFound) << got[3];
  EXPECT_TRUE(got[4].ok()) << got[4];
  EXPECT_EQ(s.Load("t1")->state, "s1b");
  EXPECT_THAT(s.Load("t1")->events, ElementsAre("e1", "e2", "e3"));
  EXPECT_EQ(s.Load("t2")->state, "s0");
  EXPECT_TRUE(s.SaveMany({}, 10).empty());
}

TYPED_TEST(TableStoreContract, EventsAreAppendedOldestFirstAndTrimmedToEventsMax) {
  TableStore& s = this->store();
  ASSERT_TRUE(s.Create("t1", "a", "s").ok());
  const Owner a{"a", 1};
  ASSERT_TRUE(s.Save("t1", a, "s", {"e1", "e2"}, 3).ok());
  EXPECT_THAT(s.Load("t1")->events, ElementsAre("e1", "e2"));
  ASSERT_TRUE(s.Save("t1", a, "s", {"e3", "e4"}, 3).ok());
  EXPECT_THAT(s.Load("t1")->events, ElementsAre("e2", "e3", "e4"));
  ASSERT_TRUE(s.Save("t1", a, "s", {}, 3).ok());
  EXPECT_THAT(s.Load("t1")->events, ElementsAre("e2", "e3", "e4"));
  ASSERT_TRUE(s.Save("t1", a, "s", {"e5"}, 2).ok());
  EXPECT_THAT(s.Load("t1")->events, ElementsAre("e4", "e5"));
  // More new events than events_max: only the newest stay.
  std::vector<std::string> many;
  for (int i = 0; i < 250; ++i) many.push_back("m" + std::to_string(i));
  ASSERT_TRUE(s.Save("t1", a, "s", many, 3).ok());
  EXPECT_THAT(s.Load("t1")->events, ElementsAre("m247", "m248", "m249"));
  ASSERT_TRUE(s.Save("t1", a, "s", {"e6"}, 0).ok());
  EXPECT_THAT(s.Load("t1")->events, IsEmpty());
}

TYPED_TEST(TableStoreContract, UnknownTableIsNotFound) {
  TableStore& s = this->store();
  EXPECT_EQ(s.Load("nope").status().code(), C::kNotFound);
  EXPECT_EQ(s.GetOwner("nope").status().code(), C::kNotFound);
  EXPECT_EQ(s.Save("nope", {"a", 1}, "s", {"e"}, 10).code(), C::kNotFound);
  EXPECT_EQ(s.Remove("nope", {"a", 1}).code(), C::kNotFound);
  EXPECT_EQ(s.Load("nope").status().code(), C::kNotFound);  // Save created nothing
  EXPECT_THAT(*s.AllTables(), IsEmpty());
}

TYPED_TEST(TableStoreContract, HeartbeatExpiresDeregisterAndForget) {
  TableStore& s = this->store();
  ASSERT_TRUE(s.Heartbeat({"a", "127.0.0.1:1001"}, 60'000).ok());
  ASSERT_TRUE(s.Heartbeat({"b", "127.0.0.1:1002"}, 60'000).ok());
  EXPECT_THAT(*s.LiveInstances(), ElementsAre(InstanceInfo{"a", "127.0.0.1:1001"},
                                              InstanceInfo{"b", "127.0.0.1:1002"}));
  // a's next heartbeat is short and is not renewed: a stops being live, stays known.
  ASSERT_TRUE(s.Heartbeat({"a", "127.0.0.1:1001"}, this->h_.short_ttl_ms()).ok());
  this->h_.LetShortTtlPass();
  EXPECT_FALSE(this->h_.StillLive("a"));
  EXPECT_THAT(*s.LiveInstances(), ElementsAre(InstanceInfo{"b", "127.0.0.1:1002"}));
  EXPECT_THAT(*s.KnownInstances(), ElementsAre("a", "b"));

  ASSERT_TRUE(s.Deregister("b").ok());
  EXPECT_THAT(*s.LiveInstances(), IsEmpty());
  EXPECT_THAT(*s.KnownInstances(), ElementsAre("a", "b"));

  ASSERT_TRUE(s.Forget("a").ok());
  EXPECT_THAT(*s.KnownInstances(), ElementsAre("b"));
  // A heartbeat brings an instance back.
  ASSERT_TRUE(s.Heartbeat({"a", "127.0.0.1:1003"}, 60'000).ok());
  EXPECT_THAT(*s.LiveInstances(), ElementsAre(InstanceInfo{"a", "127.0.0.1:1003"}));
  EXPECT_THAT(*s.KnownInstances(), ElementsAre("a", "b"));
}

TYPED_TEST(TableStoreContract, ForgetDropsTheInstanceIndex) {
  TableStore& s = this->store();
  ASSERT_TRUE(s.Heartbeat({"a", "127.0.0.1:1001"}, 60'000).ok());
  ASSERT_TRUE(s.Create("t1", "a", "s").ok());
  ASSERT_TRUE(s.Create("t2", "a", "s").ok());
  EXPECT_THAT(*s.TablesOf("a"), ElementsAre("t1", "t2"));
  ASSERT_EQ(*s.Claim("t1", "b", 1), (Owner{"b", 2}));
  ASSERT_EQ(*s.Claim("t2", "b", 1), (Owner{"b", 2}));
  ASSERT_TRUE(s.Forget("a").ok());
  EXPECT_THAT(*s.KnownInstances(), IsEmpty());
  EXPECT_THAT(*s.TablesOf("a"), IsEmpty());
  EXPECT_THAT(*s.TablesOf("b"), ElementsAre("t1", "t2"));
  EXPECT_THAT(*s.AllTables(), ElementsAre("t1", "t2"));
}

TYPED_TEST(TableStoreContract, RemoveIsFencedThenDeletesEverything) {
  TableStore& s = this->store();
  ASSERT_TRUE(s.Create("t1", "a", "s").ok());
  ASSERT_TRUE(s.Create("t2", "a", "s").ok());
  ASSERT_TRUE(s.Save("t1", {"a", 1}, "s1", {"e1"}, 10).ok());
  ASSERT_EQ(*s.Claim("t1", "b", 1), (Owner{"b", 2}));

  absl::Status fenced = s.Remove("t1", {"a", 1});
  EXPECT_EQ(fenced.code(), C::kFailedPrecondition) << fenced;
  EXPECT_TRUE(absl::StartsWith(fenced.message(), "fenced:")) << fenced;
  // The fence checks the instance AND the epoch.
  EXPECT_EQ(s.Remove("t1", {"b", 1}).code(), C::kFailedPrecondition);
  EXPECT_EQ(s.Remove("t1", {"b", 3}).code(), C::kFailedPrecondition);
  absl::StatusOr<StoredTableBytes> loaded = s.Load("t1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->state, "s1");
  EXPECT_THAT(loaded->events, ElementsAre("e1"));

  ASSERT_TRUE(s.Remove("t1", {"b", 2}).ok());
  EXPECT_EQ(s.Load("t1").status().code(), C::kNotFound);
  EXPECT_EQ(s.GetOwner("t1").status().code(), C::kNotFound);
  EXPECT_THAT(*s.TablesOf("b"), IsEmpty());
  EXPECT_THAT(*s.AllTables(), ElementsAre("t2"));
  // The id is free again: a new table starts at epoch 1 with no old events.
  ASSERT_EQ(*s.Create("t1", "c", "fresh"), (Owner{"c", 1}));
  EXPECT_THAT(s.Load("t1")->events, IsEmpty());
}

TYPED_TEST(TableStoreContract, BadIdsAreInvalidArgumentAndChangeNothing) {
  TableStore& s = this->store();
  ASSERT_TRUE(s.Create("t1", "a", "s").ok());
  const std::vector<std::string> bad = {"",    std::string(65, 'x'),  "a b",     "t{1}",
                                        "t:1", std::string("t\0", 2), "\xc3\xa9"};
  for (const std::string& id : bad) {
    SCOPED_TRACE(id);
    EXPECT_EQ(s.Create(id, "a", "s").status().code(), C::kInvalidArgument);
    EXPECT_EQ(s.Create("t2", id, "s").status().code(), C::kInvalidArgument);
    EXPECT_EQ(s.GetOwner(id).status().code(), C::kInvalidArgument);
    EXPECT_EQ(s.Claim(id, "b", 1).status().code(), C::kInvalidArgument);
    EXPECT_EQ(s.Claim("t1", id, 1).status().code(), C::kInvalidArgument);
    EXPECT_EQ(s.Save(id, {"a", 1}, "x", {}, 10).code(), C::kInvalidArgument);
    EXPECT_EQ(s.Save("t1", {id, 1}, "x", {}, 10).code(), C::kInvalidArgument);
    EXPECT_EQ(s.Load(id).status().code(), C::kInvalidArgument);
    EXPECT_EQ(s.Remove(id, {"a", 1}).code(), C::kInvalidArgument);
    EXPECT_EQ(s.Remove("t1", {id, 1}).code(), C::kInvalidArgument);
    EXPECT_EQ(s.TablesOf(id).status().code(), C::kInvalidArgument);
    EXPECT_EQ(s.Heartbeat({id, "127.0.0.1:1"}, 1000).code(), C::kInvalidArgument);
    EXPECT_EQ(s.Deregister(id).code(), C::kInvalidArgument);
    EXPECT_EQ(s.Forget(id).code(), C::kInvalidArgument);
  }
  EXPECT_TRUE(s.Create(std::string(64, 'x'), "a", "s").ok());  // 64 is the limit
  EXPECT_EQ(s.Claim("t1", "b", 0).status().code(), C::kInvalidArgument);
  EXPECT_EQ(s.Save("t1", {"a", 0}, "x", {}, 10).code(), C::kInvalidArgument);
  EXPECT_EQ(s.Save("t1", {"a", 1}, "x", {}, -1).code(), C::kInvalidArgument);
  EXPECT_EQ(s.Heartbeat({"a", ""}, 1000).code(), C::kInvalidArgument);
  EXPECT_EQ(s.Heartbeat({"a", "127.0.0.1:1"}, 0).code(), C::kInvalidArgument);
  EXPECT_EQ(*s.GetOwner("t1"), (Owner{"a", 1}));
  EXPECT_EQ(s.Load("t1")->state, "s");
  EXPECT_THAT(*s.AllTables(), ElementsAre("t1", std::string(64, 'x')));
  EXPECT_THAT(*s.KnownInstances(), IsEmpty());
}

#ifndef COURTPIECE_TABLE_STORE_REDIS
// The fake's own behaviour: exact TTL boundary on the fake clock, failure injection.

TEST(FakeTableStore, HeartbeatLivesExactlyTtlOnTheFakeClock) {
  FakeClock clock;
  FakeTableStore s(clock);
  ASSERT_TRUE(s.Heartbeat({"a", "h:1"}, 300).ok());
  clock.Advance(absl::Milliseconds(299));
  EXPECT_THAT(*s.LiveInstances(), ElementsAre(InstanceInfo{"a", "h:1"}));
  clock.Advance(absl::Milliseconds(1));
  EXPECT_THAT(*s.LiveInstances(), IsEmpty());
  ASSERT_TRUE(s.Heartbeat({"a", "h:1"}, 300).ok());  // renewed
  EXPECT_THAT(*s.LiveInstances(), ElementsAre(InstanceInfo{"a", "h:1"}));
}

TEST(FakeTableStore, FailNextFailsThatManyCallsAndWritesNothing) {
  FakeClock clock;
  FakeTableStore s(clock);
  ASSERT_TRUE(s.Create("t1", "a", "s0").ok());
  s.FailNext(2);
  EXPECT_EQ(s.Save("t1", {"a", 1}, "s1", {"e1"}, 10).code(), C::kUnavailable);
  EXPECT_EQ(s.Claim("t1", "b", 1).status().code(), C::kUnavailable);
  absl::StatusOr<StoredTableBytes> loaded = s.Load("t1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->owner, (Owner{"a", 1}));
  EXPECT_EQ(loaded->state, "s0");
  EXPECT_THAT(loaded->events, IsEmpty());
  s.FailNext(1, absl::DeadlineExceededError("slow"));
  EXPECT_EQ(s.GetOwner("t1").status().code(), C::kDeadlineExceeded);
  EXPECT_EQ(*s.GetOwner("t1"), (Owner{"a", 1}));
  EXPECT_EQ(s.calls(), 6);
}

TEST(FakeTableStore, BadInputIsRefusedBeforeAnInjectedFailure) {
  FakeClock clock;
  FakeTableStore s(clock);
  s.FailNext(1);
  EXPECT_EQ(s.Load("").status().code(), C::kInvalidArgument);
  EXPECT_EQ(s.Load("t1").status().code(), C::kUnavailable);
  EXPECT_EQ(s.Load("t1").status().code(), C::kNotFound);
}

TEST(FakeTableStore, LostReplyAppliesTheWriteAndReportsUnavailable) {
  FakeClock clock;
  FakeTableStore s(clock);
  ASSERT_TRUE(s.Create("t1", "a", "s0").ok());
  s.LoseNextReplies(1);
  EXPECT_EQ(s.Save("t1", {"a", 1}, "s1", {"e1"}, 10).code(), C::kUnavailable);
  absl::StatusOr<StoredTableBytes> loaded = s.Load("t1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->state, "s1");
  EXPECT_THAT(loaded->events, ElementsAre("e1"));

  // A claim whose reply was lost: the retry is Aborted, GetOwner shows the claim happened.
  s.LoseNextReplies(1);
  EXPECT_EQ(s.Claim("t1", "b", 1).status().code(), C::kUnavailable);
  EXPECT_EQ(s.Claim("t1", "b", 1).status().code(), C::kAborted);
  EXPECT_EQ(*s.GetOwner("t1"), (Owner{"b", 2}));
  // Failed calls do not consume lost replies.
  s.LoseNextReplies(1);
  EXPECT_EQ(s.Load("nope").status().code(), C::kNotFound);
  EXPECT_EQ(s.Create("t2", "b", "s").status().code(), C::kUnavailable);
  EXPECT_EQ(*s.GetOwner("t2"), (Owner{"b", 1}));
}
#endif

}  // namespace
}  // namespace courtpiece::table_service
