#include "courtpiece/common/grpc_status.h"

#include "courtpiece/common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::common {
namespace {

TEST(GrpcStatusTest, EveryCodeMapsBothWaysWithItsMessage) {
  for (int code = 1; code <= 16; ++code) {
    const absl::Status status(static_cast<absl::StatusCode>(code), "why");
    const grpc::Status grpc_status = ToGrpcStatus(status);
    EXPECT_EQ(static_cast<int>(grpc_status.error_code()), code);
    EXPECT_EQ(grpc_status.error_message(), "why");
    EXPECT_EQ(FromGrpcStatus(grpc_status), status);
  }
}

TEST(GrpcStatusTest, OkStaysOk) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_THAT(FromGrpcStatus(grpc::Status::OK), IsOk());
}

TEST(GrpcStatusTest, SpecificCodes) {
  EXPECT_EQ(ToGrpcStatus(absl::FailedPreconditionError("seat taken")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(FromGrpcStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down")),
              StatusIs(absl::StatusCode::kUnavailable, "down"));
}

TEST(GrpcStatusTest, CodeNames) {
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::OK), "OK");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::UNAUTHENTICATED), "UNAUTHENTICATED");
  EXPECT_STREQ(GrpcCodeName(static_cast<grpc::StatusCode>(99)), "UNKNOWN");
}

}  // namespace
}  // namespace courtpiece::common
