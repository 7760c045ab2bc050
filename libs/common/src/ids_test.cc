#include "courtpiece/common/ids.h"

#include <sodium.h>

#include <set>

#include "courtpiece/common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::common {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

const std::string kKey(32, 'k');

TEST(IdsTest, RandomHexIdsAreDistinctLowercaseHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = RandomHexId();
    EXPECT_THAT(id, MatchesRegex("[0-9a-f]{32}"));
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(RandomBytes(7).size(), 7u);
  EXPECT_EQ(RandomHexId(4).size(), 8u);
}

TEST(IdsTest, HexRoundTrip) {
  EXPECT_EQ(HexEncode(std::string("\x00\x01\xab\xff", 4)), "0001abff");
  EXPECT_EQ(HexEncode(""), "");
  EXPECT_EQ(HexDecode("0001ABff").value(), std::string("\x00\x01\xab\xff", 4));
  EXPECT_EQ(HexDecode("").value(), "");
}

TEST(IdsTest, HexDecodeRejectsBadInput) {
  EXPECT_THAT(HexDecode("abc"), StatusIs(absl::StatusCode::kInvalidArgument,
                                         "not an even-length hex string: \"abc\""));
  EXPECT_THAT(HexDecode("zz"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(HexDecode("00 1"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(IdsTest, Base64UrlRoundTrip) {
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_EQ(Base64UrlEncode("hello"), "aGVsbG8");
  EXPECT_EQ(Base64UrlDecode("aGVsbG8").value(), "hello");
  EXPECT_EQ(Base64UrlDecode("-_8").value(), "\xfb\xff");
  EXPECT_EQ(Base64UrlDecode("").value(), "");
}

TEST(IdsTest, Base64UrlDecodeRejectsBadInput) {
  EXPECT_THAT(Base64UrlDecode("aGVsbG8="), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Base64UrlDecode("+/8"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Base64UrlDecode("a"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SessionTokensTest, KeyMustBe32Bytes) {
  FakeClock clock;
  EXPECT_THAT(
      SessionTokens::Create("short", clock),
      StatusIs(absl::StatusCode::kInvalidArgument, "session token key must be 32 bytes, got 5"));
}

TEST(SessionTokensTest, IssueThenVerify) {
  FakeClock clock(absl::FromUnixSeconds(1'700'000'000));
  const SessionTokens tokens = SessionTokens::Create(kKey, clock).value();
  const std::string token = tokens.Issue("p-42|x", absl::Hours(1));
  EXPECT_THAT(token, MatchesRegex("[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}"));
  const absl::StatusOr<SessionClaims> claims = tokens.Verify(token);
  ASSERT_THAT(claims, IsOk());
  EXPECT_EQ(claims->player_id, "p-42|x");
  EXPECT_EQ(claims->expires_at, absl::FromUnixSeconds(1'700'003'600));
  EXPECT_EQ(Base64UrlDecode(token.substr(0, token.find('.'))).value(), "v1|1700003600|p-42|x");
}

TEST(SessionTokensTest, ExpiresAtTheExpirySecond) {
  FakeClock clock(absl::FromUnixSeconds(1'700'000'000));
  const SessionTokens tokens = SessionTokens::Create(kKey, clock).value();
  const std::string token = tokens.Issue("p-1", absl::Hours(1));
  clock.Advance(absl::Hours(1) - absl::Seconds(1));
  EXPECT_THAT(tokens.Verify(token), IsOk());
  clock.Advance(absl::Seconds(1));
  EXPECT_THAT(tokens.Verify(token), StatusIs(absl::StatusCode::kUnauthenticated,
                                             "session token expired at 2023-11-14T23:13:20+00:00"));
}

TEST(SessionTokensTest, OtherKeyOrTamperedPayloadIsBadSignature) {
  FakeClock clock;
  const SessionTokens tokens = SessionTokens::Create(kKey, clock).value();
  const SessionTokens other = SessionTokens::Create(std::string(32, 'o'), clock).value();
  const std::string token = tokens.Issue("p-1", absl::Hours(1));
  EXPECT_THAT(other.Verify(token),
              StatusIs(absl::StatusCode::kUnauthenticated, "session token signature mismatch"));
  const std::string mac = token.substr(token.find('.'));
  const std::string forged = Base64UrlEncode("v1|9999999999|p-1") + mac;
  EXPECT_THAT(tokens.Verify(forged),
              StatusIs(absl::StatusCode::kUnauthenticated, "session token signature mismatch"));
}

TEST(SessionTokensTest, MalformedTokens) {
  FakeClock clock;
  const SessionTokens tokens = SessionTokens::Create(kKey, clock).value();
  const std::string token = tokens.Issue("p-1", absl::Hours(1));
  for (const std::string& bad : {std::string(""), std::string("abc"), token + ".x",
                                 std::string("!!!.") + token.substr(token.find('.') + 1),
                                 token.substr(0, token.size() - 2)}) {
    EXPECT_THAT(tokens.Verify(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("malformed session token")))
        << bad;
  }
}

TEST(SessionTokensTest, SignedButUnknownPayloadIsMalformed) {
  FakeClock clock;
  const SessionTokens tokens = SessionTokens::Create(kKey, clock).value();
  for (const std::string payload :
       {"v2|1800000000|p-1", "v1|soon|p-1", "v1|1800000000|", "v1|1800000000"}) {
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256(mac, reinterpret_cast<const unsigned char*>(payload.data()),
                           payload.size(), reinterpret_cast<const unsigned char*>(kKey.data()));
    const std::string token =
        Base64UrlEncode(payload) + "." +
        Base64UrlEncode(std::string(reinterpret_cast<const char*>(mac), sizeof(mac)));
    EXPECT_THAT(tokens.Verify(token),
                StatusIs(absl::StatusCode::kInvalidArgument, "malformed session token payload"))
        << payload;
  }
}

}  // namespace
}  // namespace courtpiece::common
