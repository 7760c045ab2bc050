#include "courtpiece/auth/token.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/ids.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

SigningKey Key(const std::string& kid, char fill) {
  absl::StatusOr<SigningKey> key = SigningKey::FromSeed(kid, std::string(kSeedBytes, fill));
  EXPECT_TRUE(key.ok()) << key.status();
  return *key;
}

VerifyKeys Keys(std::initializer_list<const SigningKey*> keys) {
  VerifyKeys out;
  for (const SigningKey* k : keys) out.by_key_id[k->key_id] = k->public_key;
  return out;
}

class TokenTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  SigningKey k1_ = Key("k1", 'a');
  SigningKey k2_ = Key("k2", 'b');
  TokenSigner signer_{k1_, clock_};
};

void ExpectUnauthenticated(const absl::StatusOr<Claims>& claims, const std::string& reason) {
  ASSERT_FALSE(claims.ok());
  EXPECT_EQ(claims.status().code(), absl::StatusCode::kUnauthenticated) << claims.status();
  EXPECT_THAT(std::string(claims.status().message()), StartsWith(reason));
}

TEST_F(TokenTest, RoundTripCarriesEveryClaim) {
  Claims signed_claims;
  const std::string token = signer_.Sign("p-1f2e", Role::kAdmin, absl::Minutes(15), &signed_claims);
  EXPECT_THAT(token, StartsWith("cp1."));
  EXPECT_LE(token.size(), kTokenMax);
  TokenVerifier verifier(Keys({&k1_}), clock_);
  absl::StatusOr<Claims> claims = verifier.Verify(token);
  ASSERT_TRUE(claims.ok()) << claims.status();
  EXPECT_EQ(claims->key_id, "k1");
  EXPECT_EQ(claims->player_id, "p-1f2e");
  EXPECT_EQ(claims->role, Role::kAdmin);
  EXPECT_EQ(claims->issued_at_ms, 1'700'000'000'000);
  EXPECT_EQ(claims->expires_at_ms, 1'700'000'000'000 + 15 * 60 * 1000);
  EXPECT_EQ(signed_claims.expires_at_ms, claims->expires_at_ms);
}

TEST_F(TokenTest, ThePayloadIsTheDocumentedText) {
  const std::string token = signer_.Sign("p-9", Role::kPlayer, absl::Seconds(60));
  const size_t dot = token.find('.', 4);
  absl::StatusOr<std::string> payload =
      common::Base64UrlDecode(std::string_view(token).substr(4, dot - 4));
  ASSERT_TRUE(payload.ok());
  EXPECT_EQ(*payload, "k1|p-9|player|1700000000000|1700000060000");
  EXPECT_EQ(token.size() - dot - 1, 86u);  // 64 bytes of signature, base64url
}

TEST_F(TokenTest, ExpiresAfterTtlPlusSkew) {
  const std::string token = signer_.Sign("p-1", Role::kPlayer, absl::Minutes(15));
  TokenVerifier verifier(Keys({&k1_}), clock_, absl::Seconds(30));
  clock_.Advance(absl::Minutes(15) + absl::Seconds(29));
  EXPECT_TRUE(verifier.Verify(token).ok());
  clock_.Advance(absl::Seconds(1));
  ExpectUnauthenticated(verifier.Verify(token), "expired token");
}

TEST_F(TokenTest, FromTheFutureBeyondSkewIsRefused) {
  FakeClock ahead(clock_.Now() + absl::Seconds(31));
  TokenSigner signer(k1_, ahead);
  TokenVerifier verifier(Keys({&k1_}), clock_, absl::Seconds(30));
  ExpectUnauthenticated(verifier.Verify(signer.Sign("p-1", Role::kPlayer, absl::Minutes(1))),
                        "token not yet valid");
}

TEST_F(TokenTest, EveryFlippedByteIsRefused) {
  const std::string token = signer_.Sign("p-1", Role::kPlayer, absl::Minutes(15));
  TokenVerifier verifier(Keys({&k1_}), clock_);
  for (size_t i = 0; i < token.size(); ++i) {
    std::string forged = token;
    forged[i] = forged[i] == 'A' ? 'B' : 'A';
    absl::StatusOr<Claims> claims = verifier.Verify(forged);
    EXPECT_FALSE(claims.ok()) << "byte " << i;
    EXPECT_EQ(claims.status().code(), absl::StatusCode::kUnauthenticated);
  }
}

// The cache of verified tokens (cache_max > 0): a token seen again skips the signature
// check, never the times, and only a token whose signature checked out is remembered.
TEST_F(TokenTest, ACachedTokenStillExpires) {
  const std::string token = signer_.Sign("p-1", Role::kAdmin, absl::Minutes(15));
  TokenVerifier verifier(Keys({&k1_}), clock_, absl::Seconds(30), /*cache_max=*/64);
  ASSERT_TRUE(verifier.Verify(token).ok());
  EXPECT_EQ(verifier.cache_hits(), 0u);
  clock_.Advance(absl::Minutes(15) + absl::Seconds(29));
  absl::StatusOr<Claims> again = verifier.Verify(token);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(verifier.cache_hits(), 1u);
  EXPECT_EQ(again->player_id, "p-1");
  EXPECT_EQ(again->role, Role::kAdmin);
  EXPECT_EQ(again->expires_at_ms, 1'700'000'000'000 + 15 * 60 * 1000);
  clock_.Advance(absl::Seconds(1));
  ExpectUnauthenticated(verifier.Verify(token), "expired token");
  EXPECT_EQ(verifier.cache_hits(), 2u);
}

TEST_F(TokenTest, WithACachedTokenEveryFlippedByteIsStillRefused) {
  const std::string token = signer_.Sign("p-1", Role::kPlayer, absl::Minutes(15));
  TokenVerifier verifier(Keys({&k1_}), clock_, absl::Seconds(30), /*cache_max=*/64);
  ASSERT_TRUE(verifier.Verify(token).ok());
  for (size_t i = 0; i < token.size(); ++i) {
    std::string forged = token;
    forged[i] = forged[i] == 'A' ? 'B' : 'A';
    for (int attempt = 0; attempt < 2; ++attempt) {  // a refused token is not remembered
      absl::StatusOr<Claims> claims = verifier.Verify(forged);
      EXPECT_FALSE(claims.ok()) << "byte " << i;
      EXPECT_EQ(claims.status().code(), absl::StatusCode::kUnauthenticated);
    }
  }
  EXPECT_EQ(verifier.cache_hits(), 0u);
  EXPECT_TRUE(verifier.Verify(token).ok());
  EXPECT_EQ(verifier.cache_hits(), 1u);
}

TEST_F(TokenTest, AnExpiredTokenIsNotRemembered) {
  const std::string token = signer_.Sign("p-1", Role::kPlayer, absl::Minutes(1));
  TokenVerifier verifier(Keys({&k1_}), clock_, absl::Seconds(30), /*cache_max=*/64);
  clock_.Advance(absl::Minutes(2));
  ExpectUnauthenticated(verifier.Verify(token), "expired token");
  ExpectUnauthenticated(verifier.Verify(token), "expired token");
  EXPECT_EQ(verifier.cache_hits(), 0u);
}

TEST_F(TokenTest, TheCacheIsBounded) {
  // 16 entries: one per shard. 200 distinct tokens all verify; asked again, at most 16 come
  // from the cache (the others were dropped to make room, and are checked again).
  TokenVerifier verifier(Keys({&k1_}), clock_, absl::Seconds(30), /*cache_max=*/16);
  std::vector<std::string> tokens;
  for (int i = 0; i < 200; ++i) {
    tokens.push_back(signer_.Sign(absl::StrCat("p-", i), Role::kPlayer, absl::Minutes(15)));
    ASSERT_TRUE(verifier.Verify(tokens.back()).ok());
  }
  EXPECT_EQ(verifier.cache_hits(), 0u);
  for (int i = 0; i < 200; ++i) {
    absl::StatusOr<Claims> claims = verifier.Verify(tokens[i]);
    ASSERT_TRUE(claims.ok()) << claims.status();
    EXPECT_EQ(claims->player_id, absl::StrCat("p-", i));
  }
  const uint64_t hits = verifier.cache_hits();
  EXPECT_LE(hits, 16u);
  ASSERT_TRUE(verifier.Verify(tokens.back()).ok());  // just checked: remembered
  EXPECT_EQ(verifier.cache_hits(), hits + 1);
}

TEST_F(TokenTest, TheCacheForgetsTheOldestFirstAndKeepsServingNewTokens) {
  // 16 shards of 4. Tokens come and go (each lives a minute, one a second): the one before
  // the newest, asked again, is always served from the cache (a shard forgets its oldest
  // first, so one newer token cannot push it out), however many came before.
  TokenVerifier verifier(Keys({&k1_}), clock_, absl::Seconds(0), /*cache_max=*/64);
  std::string previous;
  for (int i = 0; i < 2'000; ++i) {
    const std::string token = signer_.Sign(absl::StrCat("p-", i), Role::kPlayer, absl::Minutes(1));
    ASSERT_TRUE(verifier.Verify(token).ok());
    if (!previous.empty()) {
      const uint64_t hits = verifier.cache_hits();
      ASSERT_TRUE(verifier.Verify(previous).ok());
      EXPECT_EQ(verifier.cache_hits(), hits + 1) << i;
    }
    previous = token;
    clock_.Advance(absl::Seconds(1));
  }
}

TEST_F(TokenTest, AForgedRoleFailsTheSignature) {
  const std::string token = signer_.Sign("p-1", Role::kPlayer, absl::Minutes(15));
  const size_t dot = token.find('.', 4);
  const std::string forged_payload = common::Base64UrlEncode(
      absl::StrCat("k1|p-1|admin|1700000000000|", 1'700'000'000'000 + 15 * 60 * 1000));
  const std::string forged = absl::StrCat("cp1.", forged_payload, token.substr(dot));
  TokenVerifier verifier(Keys({&k1_}), clock_);
  ExpectUnauthenticated(verifier.Verify(forged), "bad signature");
}

TEST_F(TokenTest, UnknownKeyIsNamed) {
  TokenSigner other(k2_, clock_);
  TokenVerifier verifier(Keys({&k1_}), clock_);
  absl::StatusOr<Claims> claims = verifier.Verify(other.Sign("p-1", Role::kPlayer, absl::Hours(1)));
  ExpectUnauthenticated(claims, "unknown key");
  EXPECT_THAT(std::string(claims.status().message()), HasSubstr("k2"));
}

TEST_F(TokenTest, AKeyWithTheRightIdButAnotherSecretFailsTheSignature) {
  SigningKey impostor = Key("k1", 'z');
  TokenSigner other(impostor, clock_);
  TokenVerifier verifier(Keys({&k1_}), clock_);
  ExpectUnauthenticated(verifier.Verify(other.Sign("p-1", Role::kAdmin, absl::Hours(1))),
                        "bad signature");
}

TEST_F(TokenTest, RotationBothKeysVerifyThenTheOldOneIsDropped) {
  TokenSigner new_signer(k2_, clock_);
  const std::string old_token = signer_.Sign("p-1", Role::kPlayer, absl::Hours(1));
  const std::string new_token = new_signer.Sign("p-2", Role::kPlayer, absl::Hours(1));
  TokenVerifier during(Keys({&k1_, &k2_}), clock_);
  EXPECT_EQ(during.Verify(old_token)->player_id, "p-1");
  EXPECT_EQ(during.Verify(new_token)->player_id, "p-2");
  TokenVerifier after(Keys({&k2_}), clock_);
  ExpectUnauthenticated(after.Verify(old_token), "unknown key");
  EXPECT_TRUE(after.Verify(new_token).ok());
}

TEST_F(TokenTest, MalformedInputs) {
  TokenVerifier verifier(Keys({&k1_}), clock_);
  const std::string good = signer_.Sign("p-1", Role::kPlayer, absl::Hours(1));
  const size_t dot = good.find('.', 4);
  const std::string sig = good.substr(dot + 1);
  auto with_payload = [&](const std::string& payload) {
    return absl::StrCat("cp1.", common::Base64UrlEncode(payload), ".", sig);
  };
  for (const std::string& bad : {
           std::string(),
           std::string(kTokenMax + 1, 'A'),
           std::string("cp1."),
           std::string("cp2.") + good.substr(4),
           std::string("Bearer ") + good,
           good + ".x",
           good.substr(0, dot),
           absl::StrCat("cp1.!!!!.", sig),
           absl::StrCat(good.substr(0, dot), ".", sig.substr(0, 40)),
           absl::StrCat(good.substr(0, dot), ".", sig, "=="),
           with_payload("k1|p-1|player|1700000000000"),
           with_payload("k1|p-1|root|1700000000000|1700000060000"),
           with_payload("k1|p 1|player|1700000000000|1700000060000"),
           with_payload("k1||player|1700000000000|1700000060000"),
           with_payload("|p-1|player|1700000000000|1700000060000"),
           with_payload("k1|p-1|player|+1700000000000|1700000060000"),
           with_payload("k1|p-1|player|1700000060000|1700000000000"),
           with_payload("k1|p-1|player|1700000000000|99999999999999999999"),
       }) {
    absl::StatusOr<Claims> claims = verifier.Verify(bad);
    ASSERT_FALSE(claims.ok()) << bad;
    EXPECT_EQ(claims.status().code(), absl::StatusCode::kUnauthenticated) << bad;
    EXPECT_THAT(std::string(claims.status().message()), StartsWith("malformed token")) << bad;
  }
}

TEST(RoleTest, NamesRoundTrip) {
  EXPECT_EQ(*ParseRole(RoleName(Role::kAdmin)), Role::kAdmin);
  EXPECT_EQ(*ParseRole(RoleName(Role::kPlayer)), Role::kPlayer);
  EXPECT_EQ(ParseRole("Admin").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PlayerIdTest, TheTableServiceRule) {
  EXPECT_TRUE(IsValidPlayerId("p-0123_AZ"));
  EXPECT_TRUE(IsValidPlayerId(std::string(64, 'x')));
  EXPECT_FALSE(IsValidPlayerId(std::string(65, 'x')));
  EXPECT_FALSE(IsValidPlayerId(""));
  EXPECT_FALSE(IsValidPlayerId("p|1"));
  EXPECT_FALSE(IsValidPlayerId("p.1"));
}

}  // namespace
}  // namespace courtpiece::auth
