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

TEST(GrpcStatusTest, ClientStatusKeepsOnlyClientMessages) {
  const std::string leak = "postgres [57014] ERROR: canceling statement; SELECT wallet.x($1)";
  for (int code = 1; code <= 16; ++code) {
    const absl::Status status(static_cast<absl::StatusCode>(code), leak);
    const grpc::Status client = ToClientGrpcStatus(status);
    EXPECT_EQ(static_cast<int>(client.error_code()), code);
    if (IsClientMessageCode(status.code())) {
      EXPECT_EQ(client.error_message(), leak) << code;
    } else {
      EXPECT_THAT(client.error_message(), ::testing::Not(::testing::HasSubstr("postgres"))) << code;
      EXPECT_THAT(client.error_message(), ::testing::Not(::testing::HasSubstr("SELECT"))) << code;
    }
  }
  EXPECT_TRUE(ToClientGrpcStatus(absl::OkStatus()).ok());
  EXPECT_EQ(ToClientGrpcStatus(absl::DeadlineExceededError(leak)).error_message(),
            "deadline exceeded before the server finished; the call may or may not have taken "
            "effect");
  EXPECT_EQ(ToClientGrpcStatus(absl::UnavailableError(leak)).error_message(),
            "temporarily unavailable; the call may or may not have taken effect; retry");
  EXPECT_EQ(ToClientGrpcStatus(absl::InternalError(leak)).error_message(),
            "internal error; the details are in the server's log");
  EXPECT_EQ(ToClientGrpcStatus(absl::NotFoundError("unknown account player:x")).error_message(),
            "unknown account player:x");
  int client_codes = 0;
  for (int code = 1; code <= 16; ++code) {
    client_codes += IsClientMessageCode(static_cast<absl::StatusCode>(code)) ? 1 : 0;
  }
  EXPECT_EQ(client_codes, 7);
}

TEST(GrpcStatusTest, CodeNames) {
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::OK), "OK");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::UNAUTHENTICATED), "UNAUTHENTICATED");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::DATA_LOSS), "DATA_LOSS");
  EXPECT_STREQ(GrpcCodeName(16), "UNAUTHENTICATED");
  EXPECT_STREQ(GrpcCodeName(0), "OK");
  EXPECT_STREQ(GrpcCodeName(17), "UNKNOWN");
  EXPECT_STREQ(GrpcCodeName(99), "UNKNOWN");
  EXPECT_STREQ(GrpcCodeName(-1), "UNKNOWN");
  // Every code's name is Abseil's name of the same number.
  for (int code = 0; code <= 16; ++code) {
    EXPECT_EQ(GrpcCodeName(code), absl::StatusCodeToString(static_cast<absl::StatusCode>(code)))
        << code;
  }
}

}  // namespace
}  // namespace courtpiece::common
