// Integration tests of the test helpers themselves: they clean up after themselves.
#include "courtpiece/storage/testing.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace courtpiece::storage {
namespace {

using R = RedisReply;

TEST(TestDatabaseTest, CreatesAUsableDatabaseAndDropsIt) {
  absl::StatusOr<std::unique_ptr<TestDatabase>> db = TestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status();
  const std::string name = (*db)->name();
  const std::string admin_url = (*db)->admin_url();
  EXPECT_EQ(name.rfind("cpt_", 0), 0u);
  {
    PgPool pool((*db)->PoolOptions());
    std::string current;
    ASSERT_TRUE(pool.Run([&](PgTransaction& tx) -> absl::Status {
                      absl::StatusOr<PgRow> row = tx.ExecOneRow("SELECT current_database()");
                      if (!row.ok()) return row.status();
                      current = *row->String(0);
                      return absl::OkStatus();
                    })
                    .ok());
    EXPECT_EQ(current, name);
    db->reset();  // drops while the pool still holds an open connection
  }
  PgPoolOptions admin_options;
  admin_options.url = admin_url;
  PgPool admin(admin_options);
  int64_t count = -1;
  ASSERT_TRUE(admin
                  .Run([&](PgTransaction& tx) -> absl::Status {
                    absl::StatusOr<PgRow> row = tx.ExecOneRow(
                        "SELECT count(*) FROM pg_database WHERE datname = $1", {name});
                    if (!row.ok()) return row.status();
                    count = *row->Int64(0);
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(count, 0);
}

TEST(TestDatabaseTest, DistinctNames) {
  absl::StatusOr<std::unique_ptr<TestDatabase>> a = TestDatabase::Create();
  absl::StatusOr<std::unique_ptr<TestDatabase>> b = TestDatabase::Create();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE((*a)->name(), (*b)->name());
  EXPECT_NE((*a)->url(), (*b)->url());
}

TEST(TestRedisTest, DeletesItsKeysAndOnlyThose) {
  absl::StatusOr<std::unique_ptr<TestRedis>> other = TestRedis::Create();
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE((*other)->client().Command({"SET", (*other)->Key("keep"), "1"}).ok());
  std::string prefix;
  {
    absl::StatusOr<std::unique_ptr<TestRedis>> redis = TestRedis::Create();
    ASSERT_TRUE(redis.ok()) << redis.status();
    prefix = (*redis)->prefix();
    EXPECT_NE(prefix, (*other)->prefix());
    for (int i = 0; i < 1200; ++i) {  // more than one SCAN page
      ASSERT_TRUE((*redis)->client().Command({"SET", (*redis)->Key(std::to_string(i)), "v"}).ok());
    }
    ASSERT_TRUE((*redis)->client().Command({"HSET", (*redis)->Key("{t1}:seat"), "n", "1"}).ok());
  }
  RedisClient& probe = (*other)->client();
  absl::StatusOr<RedisReply> left =
      probe.Command({"SCAN", "0", "MATCH", prefix + "*", "COUNT", "100000"});
  ASSERT_TRUE(left.ok()) << left.status();
  ASSERT_EQ(left->elements.size(), 2u);
  EXPECT_TRUE(left->elements[1].elements.empty());
  EXPECT_EQ(*probe.Command({"GET", (*other)->Key("keep")}), R::String("1"));
}

}  // namespace
}  // namespace courtpiece::storage
