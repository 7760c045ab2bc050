// status_macros.h and status_matchers.h.
#include "absl/status/status.h"

#include <string>

#include "absl/status/statusor.h"
#include "courtpiece/common/status_macros.h"
#include "courtpiece/common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::common {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<int> Half(int n) {
  if (n % 2 != 0) return absl::InvalidArgumentError("odd");
  return n / 2;
}

absl::Status CheckEven(int n) {
  if (n % 2 != 0) return absl::InvalidArgumentError("odd");
  return absl::OkStatus();
}

absl::StatusOr<int> Quarter(int n) {
  ASSIGN_OR_RETURN(int half, Half(n));
  ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

absl::Status CheckBoth(int a, int b) {
  RETURN_IF_ERROR(CheckEven(a));
  RETURN_IF_ERROR(CheckEven(b));
  return absl::OkStatus();
}

TEST(StatusMacrosTest, AssignOrReturnPassesValuesAndErrors) {
  EXPECT_EQ(Quarter(8).value(), 2);
  EXPECT_THAT(Quarter(6), StatusIs(absl::StatusCode::kInvalidArgument, "odd"));
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtFirstError) {
  EXPECT_THAT(CheckBoth(2, 4), IsOk());
  EXPECT_THAT(CheckBoth(2, 3), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(StatusMatchersTest, StatusIsOnStatus) {
  const absl::Status status = absl::NotFoundError("no table 123456");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound, "no table 123456"));
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound, HasSubstr("123456")));
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kAborted)));
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kNotFound, "other")));
  EXPECT_THAT(status, Not(IsOk()));
  EXPECT_THAT(absl::OkStatus(), IsOk());
}

TEST(StatusMatchersTest, StatusIsOnStatusOr) {
  const absl::StatusOr<std::string> value = std::string("x");
  const absl::StatusOr<std::string> error = absl::AbortedError("conflict");
  EXPECT_THAT(value, IsOk());
  EXPECT_THAT(error, Not(IsOk()));
  EXPECT_THAT(error, StatusIs(absl::StatusCode::kAborted, HasSubstr("confl")));
}

TEST(StatusMatchersTest, DescribesMismatch) {
  const ::testing::Matcher<absl::Status> matcher = StatusIs(absl::StatusCode::kNotFound, "gone");
  EXPECT_EQ(::testing::DescribeMatcher<absl::Status>(matcher),
            "has a status code that is equal to NOT_FOUND, and has an error message that is "
            "equal to \"gone\"");
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(matcher.MatchAndExplain(absl::AbortedError("x"), &listener));
  EXPECT_EQ(listener.str(), "whose status is ABORTED: x");
}

}  // namespace
}  // namespace courtpiece::common
