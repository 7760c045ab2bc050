// Integration tests of PgPool against a real PostgreSQL (COURTPIECE_TEST_PG_URL).
#include "courtpiece/storage/pg_pool.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "courtpiece/storage/testing.h"
#include "gtest/gtest.h"

namespace courtpiece::storage {
namespace {

using C = absl::StatusCode;

// All parties wait until `parties` arrived (bounded, so a broken test cannot hang).
class Barrier {
 public:
  explicit Barrier(int parties) : left_(parties) {}
  bool ArriveAndWait(absl::Duration timeout = absl::Seconds(10)) {
    absl::MutexLock lock(&mu_);
    --left_;
    auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return left_ <= 0; };
    return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  }

 private:
  absl::Mutex mu_;
  int left_ ABSL_GUARDED_BY(mu_);
};

class PgPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestDatabase>> db = TestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  PgPoolOptions Options(int size_max = 4) {
    PgPoolOptions o = db_->PoolOptions();
    o.size_max = size_max;
    return o;
  }

  static absl::Status Exec(PgPool& pool, const std::string& sql, std::vector<PgParam> params = {}) {
    return pool.Run([&](PgTransaction& tx) { return tx.Exec(sql, params).status(); });
  }

  static absl::StatusOr<int64_t> QueryInt(PgPool& pool, const std::string& sql) {
    int64_t value = 0;
    absl::Status s = pool.Run([&](PgTransaction& tx) -> absl::Status {
      absl::StatusOr<PgRow> row = tx.ExecOneRow(sql);
      if (!row.ok()) return row.status();
      absl::StatusOr<int64_t> v = row->Int64(0);
      if (!v.ok()) return v.status();
      value = *v;
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    return value;
  }

  std::unique_ptr<TestDatabase> db_;
};

TEST_F(PgPoolTest, RunCommitsParamsNullsAndBytes) {
  PgPool pool(Options());
  ASSERT_TRUE(pool.Ping().ok());
  ASSERT_TRUE(Exec(pool, "CREATE TABLE t (id bigint PRIMARY KEY, name text, data bytea)").ok());
  const std::string raw("\x00\x01\xfe\xff", 4);
  absl::Status s = pool.Run([&](PgTransaction& tx) -> absl::Status {
    absl::StatusOr<PgResult> r =
        tx.Exec("INSERT INTO t VALUES ($1, $2, $3), ($4, $5, $6)",
                {int64_t{1}, "one", PgParam::Bytes(raw), 2, nullptr, nullptr});
    if (!r.ok()) return r.status();
    EXPECT_EQ(r->affected_rows(), 2);
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
  s = pool.Run([&](PgTransaction& tx) -> absl::Status {
    absl::StatusOr<PgResult> r = tx.Exec("SELECT id, name, data FROM t ORDER BY id");
    if (!r.ok()) return r.status();
    EXPECT_EQ(r->columns(), (std::vector<std::string>{"id", "name", "data"}));
    EXPECT_EQ(r->size(), 2u);
    EXPECT_EQ(*r->row(0).Int64(0), 1);
    EXPECT_EQ(*r->row(0).String(1), "one");
    EXPECT_EQ(*r->row(0).Bytes(2), raw);
    EXPECT_TRUE(r->row(1).IsNull(1));
    EXPECT_TRUE(r->row(1).IsNull(2));
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
}

TEST_F(PgPoolTest, CallbackErrorRollsBackAndIsReturned) {
  PgPool pool(Options());
  ASSERT_TRUE(Exec(pool, "CREATE TABLE t (id int PRIMARY KEY)").ok());
  absl::Status s = pool.Run([](PgTransaction& tx) -> absl::Status {
    if (absl::Status e = tx.Exec("INSERT INTO t VALUES (1)").status(); !e.ok()) return e;
    return absl::FailedPreconditionError("insufficient coins");
  });
  EXPECT_EQ(s.code(), C::kFailedPrecondition);
  EXPECT_EQ(s.message(), "insufficient coins");
  EXPECT_EQ(*QueryInt(pool, "SELECT count(*) FROM t"), 0);
}

TEST_F(PgPoolTest, SwallowedStatementErrorStillRollsBack) {
  PgPool pool(Options());
  ASSERT_TRUE(Exec(pool, "CREATE TABLE t (id int PRIMARY KEY)").ok());
  ASSERT_TRUE(Exec(pool, "INSERT INTO t VALUES (1)").ok());
  absl::Status s = pool.Run([](PgTransaction& tx) -> absl::Status {
    EXPECT_TRUE(tx.Exec("INSERT INTO t VALUES (2)").ok());
    EXPECT_EQ(tx.Exec("INSERT INTO t VALUES (1)").status().code(), C::kAlreadyExists);
    // Later statements are not sent: the transaction is doomed.
    EXPECT_EQ(tx.Exec("INSERT INTO t VALUES (3)").status().code(), C::kAlreadyExists);
    return absl::OkStatus();
  });
  EXPECT_EQ(s.code(), C::kAlreadyExists);
  EXPECT_EQ(*QueryInt(pool, "SELECT count(*) FROM t"), 1);
}

TEST_F(PgPoolTest, ErrorMapping) {
  PgPool pool(Options());
  ASSERT_TRUE(
      Exec(pool, "CREATE TABLE acct (id int PRIMARY KEY, coins bigint CHECK (coins >= 0))").ok());
  ASSERT_TRUE(Exec(pool, "INSERT INTO acct VALUES (1, 10)").ok());
  EXPECT_EQ(Exec(pool, "INSERT INTO acct VALUES (1, 5)").code(), C::kAlreadyExists);
  EXPECT_EQ(Exec(pool, "UPDATE acct SET coins = coins - 11 WHERE id = 1").code(),
            C::kFailedPrecondition);
  EXPECT_EQ(Exec(pool, "INSERT INTO acct VALUES ($1, 1)", {"not a number"}).code(),
            C::kInvalidArgument);
  EXPECT_EQ(Exec(pool, "DO $$ BEGIN RAISE EXCEPTION 'no'; END $$").code(), C::kFailedPrecondition);
  EXPECT_EQ(Exec(pool, "SELECT * FROM no_such_table").code(), C::kInternal);
  EXPECT_EQ(*QueryInt(pool, "SELECT coins FROM acct WHERE id = 1"), 10);
}

TEST_F(PgPoolTest, IsolationLevelIsApplied) {
  PgPool pool(Options());
  for (auto [level, name] : {std::pair{PgIsolation::kReadCommitted, "read committed"},
                             std::pair{PgIsolation::kRepeatableRead, "repeatable read"},
                             std::pair{PgIsolation::kSerializable, "serializable"}}) {
    std::string seen;
    absl::Status s = pool.Run(
        [&](PgTransaction& tx) -> absl::Status {
          absl::StatusOr<PgRow> row = tx.ExecOneRow("SHOW transaction_isolation");
          if (!row.ok()) return row.status();
          seen = *row->String(0);
          return absl::OkStatus();
        },
        {.isolation = level});
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(seen, name);
  }
}

TEST_F(PgPoolTest, PoolLimitAndAcquireTimeout) {
  PgPoolOptions options = Options(2);
  options.acquire_timeout_ms = 300;
  PgPool pool(options);
  absl::Notification release;
  std::atomic<int> held{0};
  auto hold = [&] {
    absl::Status s = pool.Run([&](PgTransaction& tx) -> absl::Status {
      if (absl::Status e = tx.Exec("SELECT 1").status(); !e.ok()) return e;
      ++held;
      release.WaitForNotificationWithTimeout(absl::Seconds(20));
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << s;
  };
  std::thread a(hold), b(hold);
  for (int i = 0; i < 500 && held.load() < 2; ++i) absl::SleepFor(absl::Milliseconds(10));
  ASSERT_EQ(held.load(), 2);
  EXPECT_EQ(pool.in_use(), 2);
  EXPECT_EQ(pool.open(), 2);

  const absl::Time start = absl::Now();
  absl::Status timed_out = Exec(pool, "SELECT 1");
  const absl::Duration waited = absl::Now() - start;
  EXPECT_EQ(timed_out.code(), C::kUnavailable) << timed_out;
  EXPECT_GE(waited, absl::Milliseconds(280));
  EXPECT_LT(waited, absl::Seconds(3));
  EXPECT_EQ(pool.acquire_timeouts(), 1);

  // A waiter shows up in waiting() and gets a connection once one is released.
  absl::Status late;
  std::thread waiter([&] { late = Exec(pool, "SELECT 1"); });
  for (int i = 0; i < 500 && pool.waiting() < 1; ++i) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(pool.waiting(), 1);
  release.Notify();
  a.join();
  b.join();
  waiter.join();
  EXPECT_TRUE(late.ok()) << late;
  EXPECT_EQ(pool.in_use(), 0);
  EXPECT_EQ(pool.waiting(), 0);
  EXPECT_EQ(pool.open(), 2);
  EXPECT_EQ(pool.connections_opened(), 2);
}

TEST_F(PgPoolTest, SerializationFailureIsAbortedAndRetrySucceeds) {
  PgPool pool(Options(4));
  ASSERT_TRUE(Exec(pool, "CREATE TABLE seats (tbl text, seat int)").ok());
  // Write skew: both read "who is seated" then both insert; SSI aborts one of them.
  auto seat_txn = [&](int seat, Barrier* barrier, std::atomic<int>* attempts) {
    return [&pool, seat, barrier, attempts](PgTransaction& tx) -> absl::Status {
      const int attempt = attempts->fetch_add(1);
      absl::StatusOr<PgResult> r = tx.Exec("SELECT count(*) FROM seats WHERE tbl = 'x'");
      if (!r.ok()) return r.status();
      if (attempt == 0 && barrier != nullptr) {
        EXPECT_TRUE(barrier->ArriveAndWait());
      }
      return tx.Exec("INSERT INTO seats VALUES ('x', $1)", {seat}).status();
    };
  };
  {
    Barrier barrier(2);
    std::atomic<int> attempts1{0}, attempts2{0};
    absl::Status s1, s2;
    std::thread t1([&] {
      s1 = pool.Run(seat_txn(1, &barrier, &attempts1), {.isolation = PgIsolation::kSerializable});
    });
    std::thread t2([&] {
      s2 = pool.Run(seat_txn(2, &barrier, &attempts2), {.isolation = PgIsolation::kSerializable});
    });
    t1.join();
    t2.join();
    EXPECT_EQ((s1.ok() ? 1 : 0) + (s2.ok() ? 1 : 0), 1) << s1 << " / " << s2;
    const absl::Status& failed = s1.ok() ? s2 : s1;
    EXPECT_EQ(failed.code(), C::kAborted) << failed;
    EXPECT_EQ(*QueryInt(pool, "SELECT count(*) FROM seats"), 1);
  }
  ASSERT_TRUE(Exec(pool, "DELETE FROM seats").ok());
  {
    Barrier barrier(2);
    std::atomic<int> attempts1{0}, attempts2{0};
    absl::Status s1, s2;
    std::thread t1([&] {
      s1 = pool.RunWithRetry(3, seat_txn(1, &barrier, &attempts1),
                             {.isolation = PgIsolation::kSerializable});
    });
    std::thread t2([&] {
      s2 = pool.RunWithRetry(3, seat_txn(2, &barrier, &attempts2),
                             {.isolation = PgIsolation::kSerializable});
    });
    t1.join();
    t2.join();
    EXPECT_TRUE(s1.ok()) << s1;
    EXPECT_TRUE(s2.ok()) << s2;
    EXPECT_EQ(attempts1.load() + attempts2.load(), 3);  // exactly one retry
    EXPECT_EQ(*QueryInt(pool, "SELECT count(*) FROM seats"), 2);
  }
}

TEST_F(PgPoolTest, RetryGivesUpAfterMaxAttempts) {
  PgPool pool(Options());
  int runs = 0;
  absl::Status s = pool.RunWithRetry(3, [&](PgTransaction&) {
    ++runs;
    return absl::AbortedError("conflict");
  });
  EXPECT_EQ(s.code(), C::kAborted);
  EXPECT_EQ(runs, 3);
}

TEST_F(PgPoolTest, KilledBackendIsUnavailableAndPoolRecovers) {
  PgPool pool(Options(1));
  PgPool admin(Options(1));
  std::atomic<int64_t> pid{0};
  absl::Status killed;
  absl::Duration took;
  std::thread victim([&] {
    const absl::Time start = absl::Now();
    killed = pool.Run([&](PgTransaction& tx) -> absl::Status {
      absl::StatusOr<PgRow> row = tx.ExecOneRow("SELECT pg_backend_pid()");
      if (!row.ok()) return row.status();
      pid = *row->Int64(0);
      return tx.Exec("SELECT pg_sleep(30)").status();
    });
    took = absl::Now() - start;
  });
  bool sleeping = false;
  for (int i = 0; i < 500 && !sleeping; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
    if (pid.load() == 0) continue;
    absl::StatusOr<int64_t> n = QueryInt(
        admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + std::to_string(pid.load()) +
                   " AND query LIKE 'SELECT pg_sleep%'");
    sleeping = n.ok() && *n == 1;
  }
  if (!sleeping) {
    victim.join();
    FAIL() << "the victim never reached pg_sleep";
  }
  absl::StatusOr<int64_t> terminated =
      QueryInt(admin, "SELECT count(*) FROM pg_terminate_backend(" + std::to_string(pid.load()) +
                          ") WHERE pg_terminate_backend");
  victim.join();
  ASSERT_TRUE(terminated.ok()) << terminated.status();
  EXPECT_EQ(*terminated, 1);
  EXPECT_EQ(killed.code(), C::kUnavailable) << killed;
  EXPECT_LT(took, absl::Seconds(10));  // the sleep was 30 s
  EXPECT_EQ(pool.open(), 0);
  EXPECT_EQ(pool.connections_discarded(), 1);

  absl::StatusOr<int64_t> one = QueryInt(pool, "SELECT 1");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one, 1);
  EXPECT_EQ(pool.connections_opened(), 2);
}

TEST_F(PgPoolTest, IdleConnectionKilledIsReplacedTransparently) {
  PgPool pool(Options(1));
  PgPool admin(Options(1));
  absl::StatusOr<int64_t> pid = QueryInt(pool, "SELECT pg_backend_pid()");
  ASSERT_TRUE(pid.ok()) << pid.status();
  const std::string pid_text = std::to_string(*pid);
  EXPECT_EQ(*QueryInt(admin, "SELECT count(*) FROM pg_terminate_backend(" + pid_text +
                                 ") WHERE pg_terminate_backend"),
            1);
  int64_t alive = 1;
  for (int i = 0; i < 500 && alive != 0; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
    alive = *QueryInt(admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid_text);
  }
  ASSERT_EQ(alive, 0);
  absl::StatusOr<int64_t> fresh = QueryInt(pool, "SELECT pg_backend_pid()");
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_NE(*fresh, *pid);
  EXPECT_EQ(pool.connections_discarded(), 1);
  EXPECT_EQ(pool.connections_opened(), 2);
}

// A read whose connection breaks under it (here it terminates its own backend on the first
// attempt): Run gives Unavailable; RunIdempotent runs it again on a fresh connection.
TEST_F(PgPoolTest, RunIdempotentRetriesABrokenConnection) {
  PgPool pool(Options(1));
  int attempts = 0;
  auto read = [&](PgTransaction& tx) -> absl::Status {
    if (++attempts == 1) return tx.Exec("SELECT pg_terminate_backend(pg_backend_pid())").status();
    return tx.Exec("SELECT 1").status();
  };
  EXPECT_EQ(pool.Run(read).code(), C::kUnavailable);
  EXPECT_EQ(attempts, 1);
  attempts = 0;
  EXPECT_TRUE(pool.RunIdempotent(3, read).ok());
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(pool.connections_discarded(), 2);
  // RunWithRetry does not retry Unavailable (a write's commit may have happened).
  attempts = 0;
  EXPECT_EQ(pool.RunWithRetry(3, read).code(), C::kUnavailable);
  EXPECT_EQ(attempts, 1);
}

TEST_F(PgPoolTest, StatementTimeoutIsDeadlineExceeded) {
  PgPoolOptions options = Options(1);
  options.statement_timeout_ms = 200;
  PgPool pool(options);
  const absl::Time start = absl::Now();
  EXPECT_EQ(Exec(pool, "SELECT pg_sleep(20)").code(), C::kDeadlineExceeded);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  // The connection survives a timeout.
  EXPECT_EQ(*QueryInt(pool, "SELECT 7"), 7);
  EXPECT_EQ(pool.connections_opened(), 1);
  // Per transaction override.
  absl::Status s = pool.Run([](PgTransaction& tx) -> absl::Status {
    if (absl::Status e = tx.SetStatementTimeout(1000); !e.ok()) return e;
    return tx.Exec("SELECT pg_sleep(0.4)").status();
  });
  EXPECT_TRUE(s.ok()) << s;
}

// One statement in autocommit: committed when OK, no trace when the statement fails (even
// its earlier writes within the same statement), and errors map like Run's.
TEST_F(PgPoolTest, ExecAutocommitCommitsOneStatementAtomically) {
  PgPool pool(Options());
  ASSERT_TRUE(
      Exec(pool, "CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL CHECK (v >= 0))").ok());
  absl::StatusOr<PgResult> inserted =
      pool.ExecAutocommit("INSERT INTO t VALUES ($1, $2), ($3, $4) RETURNING id", {1, 10, 2, 20});
  ASSERT_TRUE(inserted.ok()) << inserted.status();
  EXPECT_EQ(inserted->size(), 2u);
  EXPECT_EQ(inserted->affected_rows(), 2);
  // Row 3 is written before row 4 violates the CHECK: the whole statement leaves nothing.
  EXPECT_EQ(pool.ExecAutocommit("INSERT INTO t VALUES (3, 1), (4, -1)").status().code(),
            C::kFailedPrecondition);
  EXPECT_EQ(pool.ExecAutocommit("SELECT 1/0").status().code(), C::kInvalidArgument);
  EXPECT_EQ(*QueryInt(pool, "SELECT count(*) FROM t"), 2);
  EXPECT_EQ(*QueryInt(pool, "SELECT sum(v) FROM t"), 30);
  // Each call is its own transaction (none is left open on the pooled connection).
  PgPool one(Options(1));
  absl::StatusOr<PgResult> first = one.ExecAutocommit("SELECT txid_current()");
  absl::StatusOr<PgResult> second = one.ExecAutocommit("SELECT txid_current()");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(*first->row(0).Int64(0), *second->row(0).Int64(0));
  EXPECT_EQ(one.connections_opened(), 1);
  // Prepared once per connection and SQL text: the two txid_current() calls shared one.
  absl::StatusOr<PgResult> prepared =
      one.ExecAutocommit("SELECT count(*) FROM pg_prepared_statements");
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(*prepared->row(0).Int64(0), 2);
  EXPECT_EQ(pool.in_use(), 0);
}

TEST(PgPoolNoServer, ConnectFailureIsUnavailable) {
  PgPoolOptions options;
  options.url = "postgresql://postgres@127.0.0.1:1/postgres";
  options.size_max = 1;
  PgPool pool(options);
  const absl::Time start = absl::Now();
  absl::Status s = pool.Ping();
  EXPECT_EQ(s.code(), C::kUnavailable) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_EQ(pool.open(), 0);
  EXPECT_EQ(pool.in_use(), 0);
}

}  // namespace
}  // namespace courtpiece::storage
