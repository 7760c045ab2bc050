#include "services/lobby/token_caller_auth.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::lobby {
namespace {

using ::testing::HasSubstr;

TEST(TokenCallerAuthTest, BearerTokensOfEachRole) {
  FakeClock clock;
  const auth::SigningKey key = auth::SigningKey::Generate("k1");
  auth::TokenSigner signer(key, clock);
  auth::TokenVerifier verifier(auth::VerifyKeys{{{"k1", key.public_key}}}, clock);
  TokenCallerAuth caller_auth(verifier);

  absl::StatusOr<Caller> player = caller_auth.AuthenticateHeader(
      "Bearer " + signer.Sign("p-1", auth::Role::kPlayer, absl::Minutes(15)));
  ASSERT_TRUE(player.ok()) << player.status();
  EXPECT_EQ(player->player_id, "p-1");
  EXPECT_FALSE(player->admin);
  absl::StatusOr<Caller> admin = caller_auth.AuthenticateHeader(
      "Bearer " + signer.Sign("p-2", auth::Role::kAdmin, absl::Minutes(15)));
  ASSERT_TRUE(admin.ok());
  EXPECT_TRUE(admin->admin);

  for (const std::string& bad :
       {std::string(""), std::string("Bearer"), std::string("Bearer "), std::string("bearer x"),
        std::string("Basic abc"),
        "Token " + signer.Sign("p-1", auth::Role::kPlayer, absl::Minutes(1))}) {
    absl::StatusOr<Caller> caller = caller_auth.AuthenticateHeader(bad);
    EXPECT_EQ(caller.status().code(), absl::StatusCode::kUnauthenticated) << bad;
  }
  const std::string token = signer.Sign("p-1", auth::Role::kPlayer, absl::Minutes(15));
  clock.Advance(absl::Minutes(16));
  absl::StatusOr<Caller> expired = caller_auth.AuthenticateHeader("Bearer " + token);
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(expired.status().message()), HasSubstr("expired"));
}

}  // namespace
}  // namespace courtpiece::lobby
