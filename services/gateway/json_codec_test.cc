#include "services/gateway/json_codec.h"

#include <string>

#include "courtpiece/client/v1/client.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::gateway {
namespace {

using ::testing::HasSubstr;

TEST(JsonCodecTest, ParsesCanonicalJsonWithCamelCaseAndProtoNames) {
  client::v1::PlayRequest request;
  ASSERT_TRUE(
      ParseJson(R"({"open":{"tableId":"t-1","lastSeq":"42","access_token":"x"}})", &request).ok());
  EXPECT_EQ(request.open().table_id(), "t-1");
  EXPECT_EQ(request.open().last_seq(), 42u);
  EXPECT_EQ(request.open().access_token(), "x");
}

TEST(JsonCodecTest, RefusesUnknownFieldsWrongTypesAndBadJson) {
  client::v1::GuestLoginRequest request;
  absl::Status unknown = ParseJson(R"({"deviceSecret":"a","ownerAddr":"x"})", &request);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unknown.message()), HasSubstr("ownerAddr"));
  EXPECT_EQ(request.device_secret(), "");  // cleared on failure

  client::v1::UpdateProfileRequest update;
  EXPECT_EQ(ParseJson(R"({"avatarId":"seven"})", &update).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseJson("{", &update).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseJson("", &update).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseJson("[]", &update).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseJson("{", &update).message().empty());
}

TEST(JsonCodecTest, RefusesALoneValueWhereAListOrAMessageBelongs) {
  client::v1::GetPublicProfilesRequest profiles;
  absl::Status lone = ParseJson(R"({"playerIds":"p-1"})", &profiles);
  EXPECT_EQ(lone.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(lone.message(), "playerIds: expected an array");
  EXPECT_EQ(profiles.player_ids_size(), 0);
  EXPECT_EQ(ParseJson(R"({"player_ids":["p-1", 7, {}]})", &profiles).code(),
            absl::StatusCode::kInvalidArgument);  // protobuf's own check of the elements
  EXPECT_EQ(ParseJson(R"({"player_ids":{"a":"p-1"}})", &profiles).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(ParseJson(R"({"playerIds":["p-1","p-2"]})", &profiles).ok());
  EXPECT_EQ(profiles.player_ids_size(), 2);
  ASSERT_TRUE(ParseJson(R"({"playerIds":null})", &profiles).ok());
  EXPECT_EQ(profiles.player_ids_size(), 0);

  client::v1::PlayRequest play;
  absl::Status open = ParseJson(R"({"open":"t-1"})", &play);
  EXPECT_EQ(open.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(play.msg_case(), client::v1::PlayRequest::MSG_NOT_SET);
  ASSERT_TRUE(ParseJson(R"({"open":{"tableId":"t-1"}})", &play).ok());
  EXPECT_EQ(play.open().table_id(), "t-1");

  // Nested: an element of a list, and a message inside it.
  client::v1::MyTablesResponse mine;
  absl::Status nested = ParseJson(R"({"tables":[{"tableId":"t-1"},{"options":"x"}]})", &mine);
  EXPECT_EQ(nested.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseJson(R"({"tables":[{"tableId":"t-1"},{"seat":[1]}]})", &mine).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(mine.tables_size(), 0);
  ASSERT_TRUE(ParseJson(R"({"tables":[{"tableId":"t-1"},{"options":{}}]})", &mine).ok());
  EXPECT_EQ(mine.tables_size(), 2);
  client::v1::RecentResultsResponse recent;
  absl::Status deep = ParseJson(R"({"results":[{"scores":[1,2]},{"scores":5}]})", &recent);
  EXPECT_EQ(deep.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(deep.message(), "results[1].scores: expected an array");
  EXPECT_EQ(recent.results_size(), 0);
}

TEST(JsonCodecTest, PrintsCamelCaseInt64AsStringAndDefaults) {
  client::v1::Session session;
  session.set_player_id("p-1");
  session.set_access_expires_at_ms(1700000000000);
  EXPECT_EQ(PrintJson(session),
            R"({"playerId":"p-1","role":"","accessToken":"","accessExpiresAtMs":"1700000000000",)"
            R"("refreshToken":"","refreshExpiresAtMs":"0","created":false})");
}

TEST(JsonCodecTest, HttpStatusForEveryCode) {
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kOk), 200);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kCancelled), 499);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnknown), 500);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kAlreadyExists), 409);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kFailedPrecondition), 400);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kAborted), 409);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kOutOfRange), 400);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnimplemented), 501);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInternal), 500);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDataLoss), 500);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnauthenticated), 401);
}

TEST(JsonCodecTest, ErrorJsonEscapesTheMessage) {
  EXPECT_EQ(ErrorJson(absl::NotFoundError("unknown method X")),
            R"({"code":5,"status":"NOT_FOUND","message":"unknown method X"})");
  EXPECT_EQ(ErrorJson(absl::InvalidArgumentError("a \"b\"\\\n\x01")),
            R"({"code":3,"status":"INVALID_ARGUMENT","message":"a \"b\"\\\u000a\u0001"})");
  // Invalid UTF-8 becomes U+FFFD; valid multi-byte text stays.
  EXPECT_EQ(ErrorJson(absl::UnavailableError("\xff\xc3\xa9")),
            "{\"code\":14,\"status\":\"UNAVAILABLE\",\"message\":\"\xef\xbf\xbd\xc3\xa9\"}");
}

TEST(JsonCodecTest, SanitizeUtf8ReplacesEveryIllFormedByte) {
  EXPECT_EQ(SanitizeUtf8("caf\xc3\xa9 \xf0\x9f\x82\xa1"), "caf\xc3\xa9 \xf0\x9f\x82\xa1");
  const std::string kBad = "\xef\xbf\xbd";
  EXPECT_EQ(SanitizeUtf8("\xc0\xa6"), kBad + kBad);                        // overlong
  EXPECT_EQ(SanitizeUtf8("\xe0\x80\xaf"), kBad + kBad + kBad);             // overlong
  EXPECT_EQ(SanitizeUtf8("\xed\xa0\x80"), kBad + kBad + kBad);             // a surrogate
  EXPECT_EQ(SanitizeUtf8("\xf4\x90\x80\x80"), kBad + kBad + kBad + kBad);  // past U+10FFFF
  EXPECT_EQ(SanitizeUtf8("a\xe2\x82"), "a" + kBad + kBad);                 // cut short
  // The error body and the close reason carry the sanitized text.
  EXPECT_EQ(ErrorJson(absl::AbortedError("\xc0\xa6")),
            "{\"code\":10,\"status\":\"ABORTED\",\"message\":\"" + kBad + kBad + "\"}");
  EXPECT_EQ(WsCloseFor(absl::AbortedError("x\xff")).reason, "x" + kBad);
}

TEST(JsonCodecTest, WsCloseCodes) {
  EXPECT_EQ(WsCloseFor(absl::OkStatus()).code, 1000);
  EXPECT_EQ(WsCloseFor(absl::OkStatus()).reason, "");
  EXPECT_EQ(WsCloseFor(absl::InvalidArgumentError("bad")).code, 4003);
  EXPECT_EQ(WsCloseFor(absl::InvalidArgumentError("bad")).reason, "bad");
  EXPECT_EQ(WsCloseFor(absl::NotFoundError("x")).code, 4005);
  EXPECT_EQ(WsCloseFor(absl::PermissionDeniedError("x")).code, 4007);
  EXPECT_EQ(WsCloseFor(absl::ResourceExhaustedError("x")).code, 4008);
  EXPECT_EQ(WsCloseFor(absl::AbortedError("x")).code, 4010);
  EXPECT_EQ(WsCloseFor(absl::UnavailableError("x")).code, 4014);
  EXPECT_EQ(WsCloseFor(absl::UnauthenticatedError("x")).code, 4016);
}

TEST(JsonCodecTest, WsReasonCutTo120BytesOnACharacterBoundary) {
  EXPECT_EQ(WsCloseFor(absl::AbortedError(std::string(200, 'a'))).reason, std::string(120, 'a'));
  // 119 ASCII bytes then a 2-byte character: the character does not fit and is dropped whole.
  std::string text = std::string(119, 'a') + "\xc3\xa9" + "zz";
  EXPECT_EQ(WsCloseFor(absl::AbortedError(text)).reason, std::string(119, 'a'));
  EXPECT_EQ(CutUtf8("abc", 3), "abc");
  EXPECT_EQ(CutUtf8("ab\xe2\x82\xac", 4), "ab");
}

}  // namespace
}  // namespace courtpiece::gateway
