// PgDirectoryStore on a real Postgres (COURTPIECE_TEST_PG_URL), a fresh database per test.
#include "services/lobby/pg_directory_store.h"

#include <set>
#include <thread>

#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/testing.h"
#include "gtest/gtest.h"

namespace courtpiece::lobby {
namespace {

class PgDirectoryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> made = storage::TestDatabase::Create(
        {.migrations = {
             {"lobby", ::courtpiece::common::SourceDir() + "/services/lobby/migrations"}}});
    ASSERT_TRUE(made.ok()) << made.status();
    db = std::move(*made);
    storage::PgPoolOptions o = db->PoolOptions();
    o.size_max = 8;
    pool = std::make_unique<storage::PgPool>(o);
    store = std::make_unique<PgDirectoryStore>(*pool);
  }
  DirectoryTable Row(std::string id, std::string code, std::string host = "ann",
                     std::string request = "r1") {
    return DirectoryTable{.table_id = std::move(id),
                          .code = std::move(code),
                          .host_player = std::move(host),
                          .request_id = std::move(request),
                          .game_options = R"({"game":"classic"})",
                          .bet_coins = 100,
                          .turn_time_ms = 15'000,
                          .listed = true,
                          .owner_instance = "inst-a",
                          .created_at_ms = 1'000};
  }
  std::unique_ptr<storage::TestDatabase> db;
  std::unique_ptr<storage::PgPool> pool;
  std::unique_ptr<PgDirectoryStore> store;
};

TEST_F(PgDirectoryStoreTest, ACodeHasOneHolderUntilItsTableClosedAndCooledOff) {
  EXPECT_TRUE(*store->ReserveCode("123456", "t1", 1'000));
  EXPECT_FALSE(*store->ReserveCode("123456", "t2", 1'000));
  ASSERT_TRUE(store->InsertTable(Row("t1", "123456"))->inserted);
  EXPECT_EQ(store->FindOpenByCode("123456")->value().table_id, "t1");
  EXPECT_TRUE(*store->MarkClosed("t1", 2'000, 5'000));
  EXPECT_FALSE(*store->MarkClosed("t1", 3'000, 6'000));  // idempotent
  EXPECT_EQ(store->FindTable("t1")->value().closed_at_ms, 2'000);
  EXPECT_FALSE(store->FindOpenByCode("123456")->has_value());
  EXPECT_FALSE(*store->ReserveCode("123456", "t2", 4'999));  // cooling off
  EXPECT_TRUE(*store->ReserveCode("123456", "t2", 5'000));
  EXPECT_FALSE(*store->ReserveCode("123456", "t3", 9'999'999));
  EXPECT_EQ(store->MarkClosed("nope", 1, 2).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->UpdateOwner("nope", "x").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->ReserveCode("12345", "t9", 1).status().code(),
            absl::StatusCode::kFailedPrecondition);  // the CHECK constraint: 6 digits
}

TEST_F(PgDirectoryStoreTest, TheBotLevelIsStoredAndOnlyTheThreeNamesAreTaken) {
  DirectoryTable strong = Row("t1", "123456");
  strong.bot_level = "strong";
  ASSERT_TRUE(store->InsertTable(strong)->inserted);
  EXPECT_EQ(store->FindTable("t1")->value(), strong);
  DirectoryTable bad = Row("t2", "654321", "bob");
  bad.bot_level = "hard";  // the lobby refuses it first; the column's CHECK as well
  EXPECT_FALSE(store->InsertTable(bad).ok());
  EXPECT_FALSE(store->FindTable("t2")->has_value());
}

TEST_F(PgDirectoryStoreTest, InsertIsIdempotentByHostAndRequestAndReleaseSparesRealTables) {
  ASSERT_TRUE(*store->ReserveCode("111111", "t1", 1));
  ASSERT_TRUE(*store->ReserveCode("222222", "t2", 1));
  absl::StatusOr<InsertedTable> first = store->InsertTable(Row("t1", "111111"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->inserted);
  absl::StatusOr<InsertedTable> dup = store->InsertTable(Row("t2", "222222"));
  ASSERT_TRUE(dup.ok());
  EXPECT_FALSE(dup->inserted);
  EXPECT_EQ(dup->table, Row("t1", "111111"));
  ASSERT_TRUE(store->ReleaseCode("222222", "t2").ok());
  EXPECT_TRUE(*store->ReserveCode("222222", "t3", 1));   // released: free again
  ASSERT_TRUE(store->ReleaseCode("111111", "t1").ok());  // t1 exists: kept
  EXPECT_FALSE(*store->ReserveCode("111111", "t4", 1));
  EXPECT_EQ(store->FindByRequest("ann", "r1")->value().table_id, "t1");
  EXPECT_FALSE(store->FindByRequest("ann", "r2")->has_value());
  ASSERT_TRUE(store->UpdateOwner("t1", "inst-b").ok());
  EXPECT_EQ(store->FindTable("t1")->value().owner_instance, "inst-b");
}

TEST_F(PgDirectoryStoreTest, ConcurrentReservationsOfOneCodeHaveOneWinner) {
  std::atomic<int> won{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([this, i, &won] {
      absl::StatusOr<bool> r = store->ReserveCode("777777", "t" + std::to_string(i), 1);
      if (r.ok() && *r) won.fetch_add(1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(won.load(), 1);
}

}  // namespace
}  // namespace courtpiece::lobby
