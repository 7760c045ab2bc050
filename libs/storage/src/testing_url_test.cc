#include "courtpiece/storage/testing.h"
#include "gtest/gtest.h"
#include "pg_internal.h"

namespace courtpiece::storage {
namespace {

TEST(ReplaceDatabaseInUrl, UrlForms) {
  EXPECT_EQ(ReplaceDatabaseInUrl("postgresql://postgres@127.0.0.1:5432/postgres", "t1"),
            "postgresql://postgres@127.0.0.1:5432/t1");
  EXPECT_EQ(ReplaceDatabaseInUrl("postgresql://u:p@h:1/db?sslmode=disable", "t1"),
            "postgresql://u:p@h:1/t1?sslmode=disable");
  EXPECT_EQ(ReplaceDatabaseInUrl("postgres://h:1", "t1"), "postgres://h:1/t1");
  EXPECT_EQ(ReplaceDatabaseInUrl("postgres://h:1?x=y", "t1"), "postgres://h:1/t1?x=y");
  EXPECT_EQ(ReplaceDatabaseInUrl("host=h port=1 dbname=postgres", "t1"),
            "host=h port=1 dbname=postgres dbname=t1");
}

TEST(WithConnectTimeout, AppendsParameters) {
  EXPECT_EQ(internal::WithConnectTimeout("postgresql://h/db", 3500, "app"),
            "postgresql://h/db?connect_timeout=4&application_name=app");
  EXPECT_EQ(internal::WithConnectTimeout("postgresql://h/db?a=b", 100, "app"),
            "postgresql://h/db?a=b&connect_timeout=2&application_name=app");
  EXPECT_EQ(internal::WithConnectTimeout("host=h", 5000, "app"),
            "host=h connect_timeout=5 application_name=app");
}

TEST(RequiredTestEnv, UnsetIsFailedPreconditionWithInstructions) {
  absl::StatusOr<std::string> v = RequiredTestEnv("COURTPIECE_SURELY_UNSET_VARIABLE");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(v.status().message().find("deploy/local/postgres.sh"), absl::string_view::npos);
}

}  // namespace
}  // namespace courtpiece::storage
