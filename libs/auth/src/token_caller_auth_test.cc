#include "courtpiece/auth/token_caller_auth.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::auth {
namespace {

using ::testing::HasSubstr;

TEST(TokenCallerAuthTest, BearerTokensOfEachRole) {
  FakeClock clock;
  const SigningKey key = SigningKey::Generate("k1");
  TokenSigner signer(key, clock);
  TokenVerifier verifier(VerifyKeys{{{"k1", key.public_key}}}, clock);
  TokenCallerAuth caller_auth(verifier);

  absl::StatusOr<Caller> player = caller_auth.AuthenticateHeader(
      "Bearer " + signer.Sign("p-1", Role::kPlayer, absl::Minutes(15)));
  ASSERT_TRUE(player.ok()) << player.status();
  EXPECT_EQ(player->player_id, "p-1");
  EXPECT_FALSE(player->admin);
  absl::StatusOr<Caller> admin = caller_auth.AuthenticateHeader(
      "Bearer " + signer.Sign("p-2", Role::kAdmin, absl::Minutes(15)));
  ASSERT_TRUE(admin.ok());
  EXPECT_TRUE(admin->admin);

  for (const std::string& bad :
       {std::string(""), std::string("Bearer"), std::string("Bearer "), std::string("bearer x"),
        std::string("Basic abc"), "Token " + signer.Sign("p-1", Role::kPlayer, absl::Minutes(1))}) {
    absl::StatusOr<Caller> caller = caller_auth.AuthenticateHeader(bad);
    EXPECT_EQ(caller.status().code(), absl::StatusCode::kUnauthenticated) << bad;
  }
  const std::string token = signer.Sign("p-1", Role::kPlayer, absl::Minutes(15));
  clock.Advance(absl::Minutes(16));
  absl::StatusOr<Caller> expired = caller_auth.AuthenticateHeader("Bearer " + token);
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(expired.status().message()), HasSubstr("expired"));
}

// RequireAdmin on a fixed caller (a ServerContext's metadata cannot be set in a unit test).
class FixedCallerAuth final : public CallerAuth {
 public:
  explicit FixedCallerAuth(absl::StatusOr<Caller> caller) : caller_(std::move(caller)) {}
  absl::StatusOr<Caller> Authenticate(const grpc::ServerContextBase&) const override {
    return caller_;
  }

 private:
  absl::StatusOr<Caller> caller_;
};

TEST(CallerAuthTest, RequireAdminSaysNotAdminForAPlayer) {
  grpc::ServerContext context;
  absl::StatusOr<Caller> player =
      FixedCallerAuth(Caller{.player_id = "p-1", .admin = false}).RequireAdmin(context);
  EXPECT_EQ(player.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(player.status().message()), ::testing::StartsWith("not_admin: "));
  absl::StatusOr<Caller> admin =
      FixedCallerAuth(Caller{.player_id = "a-1", .admin = true}).RequireAdmin(context);
  ASSERT_TRUE(admin.ok());
  EXPECT_EQ(admin->player_id, "a-1");
  absl::StatusOr<Caller> none =
      FixedCallerAuth(absl::UnauthenticatedError("no session token")).RequireAdmin(context);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnauthenticated);
}

}  // namespace
}  // namespace courtpiece::auth
