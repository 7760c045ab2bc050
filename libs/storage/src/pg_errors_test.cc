#include "courtpiece/storage/pg_errors.h"

#include "gtest/gtest.h"

namespace courtpiece::storage {
namespace {

using C = absl::StatusCode;

TEST(PgSqlStateToCode, RetryableConflictsAreAborted) {
  EXPECT_EQ(PgSqlStateToCode("40001"), C::kAborted);  // serialization_failure
  EXPECT_EQ(PgSqlStateToCode("40P01"), C::kAborted);  // deadlock_detected
  EXPECT_EQ(PgSqlStateToCode("55P03"), C::kAborted);  // lock_not_available
  EXPECT_EQ(PgSqlStateToCode("40002"), C::kAborted);  // other rollback
}

TEST(PgSqlStateToCode, ConstraintViolations) {
  EXPECT_EQ(PgSqlStateToCode("23505"), C::kAlreadyExists);
  EXPECT_EQ(PgSqlStateToCode("23514"), C::kFailedPrecondition);  // check
  EXPECT_EQ(PgSqlStateToCode("23503"), C::kFailedPrecondition);  // foreign key
  EXPECT_EQ(PgSqlStateToCode("23502"), C::kFailedPrecondition);  // not null
  EXPECT_EQ(PgSqlStateToCode("P0001"), C::kFailedPrecondition);  // RAISE
}

TEST(PgSqlStateToCode, ConnectionAndTimeouts) {
  EXPECT_EQ(PgSqlStateToCode("57014"), C::kDeadlineExceeded);
  EXPECT_EQ(PgSqlStateToCode("57P01"), C::kUnavailable);
  EXPECT_EQ(PgSqlStateToCode("08006"), C::kUnavailable);
  EXPECT_EQ(PgSqlStateToCode("40003"), C::kUnavailable);
  EXPECT_EQ(PgSqlStateToCode("53300"), C::kUnavailable);
  EXPECT_EQ(PgSqlStateToCode("53100"), C::kResourceExhausted);
}

TEST(PgSqlStateToCode, DataExceptionsAndRest) {
  EXPECT_EQ(PgSqlStateToCode("22P02"), C::kInvalidArgument);
  EXPECT_EQ(PgSqlStateToCode("22003"), C::kInvalidArgument);
  EXPECT_EQ(PgSqlStateToCode("42P01"), C::kInternal);  // undefined table: our bug
  EXPECT_EQ(PgSqlStateToCode(""), C::kInternal);
  EXPECT_EQ(PgSqlStateToCode("4000"), C::kInternal);
}

TEST(PgErrorStatus, MessageNamesStateAndTrimsNewline) {
  absl::Status s = PgErrorStatus("23505", "ERROR:  duplicate key\n");
  EXPECT_EQ(s.code(), C::kAlreadyExists);
  EXPECT_EQ(s.message(), "postgres [23505] ERROR:  duplicate key");
}

}  // namespace
}  // namespace courtpiece::storage
