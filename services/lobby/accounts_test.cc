#include "services/lobby/accounts.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/auth/keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/lobby/fake_player_store.h"
#include "services/lobby/fake_wallet_port.h"

namespace courtpiece::lobby {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGrant = 750;
const std::string kDevice(40, 'd');
const std::string kOtherDevice(40, 'e');

class AccountsTest : public ::testing::Test {
 protected:
  AccountsTest()
      : key_(*auth::SigningKey::FromSeed("k1", std::string(32, 's'))),
        signer_(key_, clock_),
        verifier_(auth::VerifyKeys{{{"k1", key_.public_key}}}, clock_),
        wallet_(kGrant) {
    Rebuild({});
  }

  void Rebuild(AccountsOptions options) {
    accounts_ = std::make_unique<Accounts>(
        store_, wallet_, signer_, clock_, options,
        AccountsRandomness{.player_id = [this] { return absl::StrCat("p-test-", ++next_id_); },
                           .refresh_token =
                               [this] {
                                 std::string t = absl::StrCat("r", ++next_refresh_);
                                 return t + std::string(43 - t.size(), 'x');
                               }});
  }

  absl::Time Deadline() const { return clock_.Now() + absl::Seconds(5); }
  absl::StatusOr<Session> Login(const std::string& device, const std::string& name = "Ali") {
    return accounts_->GuestLogin(device, name, Deadline());
  }

  FakeClock clock_;
  auth::SigningKey key_;
  auth::TokenSigner signer_;
  auth::TokenVerifier verifier_;
  FakePlayerStore store_;
  FakeWalletPort wallet_;
  int next_id_ = 0;
  int next_refresh_ = 0;
  std::unique_ptr<Accounts> accounts_;
};

TEST_F(AccountsTest, ANewDeviceMakesAPlayerPaysTheGrantAndSignsIn) {
  absl::StatusOr<Session> s = Login(kDevice, "  Ali  Khan ");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->created);
  EXPECT_EQ(s->player_id, "p-test-1");
  EXPECT_EQ(s->role, auth::Role::kPlayer);
  EXPECT_EQ(s->access_expires_at_ms, absl::ToUnixMillis(clock_.Now() + absl::Minutes(15)));
  EXPECT_EQ(s->refresh_expires_at_ms, absl::ToUnixMillis(clock_.Now() + absl::Hours(24 * 30)));
  absl::StatusOr<auth::Claims> claims = verifier_.Verify(s->access_token);
  ASSERT_TRUE(claims.ok()) << claims.status();
  EXPECT_EQ(claims->player_id, "p-test-1");
  EXPECT_EQ(claims->role, auth::Role::kPlayer);
  EXPECT_EQ(wallet_.grants_paid(), 1);
  EXPECT_EQ(store_.player_count(), 1u);
  EXPECT_FALSE(store_.HasDeviceHash(kDevice));  // only its hash is stored
  EXPECT_TRUE(store_.HasDeviceHash(auth::SecretHash("courtpiece-device-v1", kDevice)));
  absl::StatusOr<Profile> profile = accounts_->GetProfile("p-test-1", Deadline());
  ASSERT_TRUE(profile.ok());
  EXPECT_EQ(profile->display_name, "Ali Khan");
  EXPECT_EQ(profile->coins, kGrant);
  EXPECT_EQ(profile->avatar_id, 1);
  EXPECT_EQ(profile->created_at_ms, absl::ToUnixMillis(clock_.Now()));
}

TEST_F(AccountsTest, TheSameDeviceSignsTheSamePlayerInWithoutASecondGrant) {
  ASSERT_TRUE(Login(kDevice).ok());
  clock_.Advance(absl::Hours(1));
  absl::StatusOr<Session> again = Login(kDevice, "Another Name");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->player_id, "p-test-1");
  EXPECT_EQ(wallet_.open_calls(), 1);  // the account is known to be open: no wallet call
  EXPECT_EQ(wallet_.grants_paid(), 1);
  EXPECT_EQ(accounts_->GetProfile("p-test-1", Deadline())->display_name, "Ali");
  absl::StatusOr<Session> other = Login(kOtherDevice);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->created);
  EXPECT_EQ(other->player_id, "p-test-3");  // every login draws a candidate id
}

TEST_F(AccountsTest, WalletDownFailsUnavailableAndTheNextLoginOpensTheAccount) {
  wallet_.FailNext(1, absl::UnavailableError("wallet down"));
  absl::StatusOr<Session> first = Login(kDevice);
  EXPECT_EQ(first.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store_.player_count(), 1u);
  EXPECT_EQ(store_.refresh_token_count(), 0u);
  absl::StatusOr<Session> second = Login(kDevice);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->created);  // this call finished making the player
  EXPECT_EQ(second->player_id, "p-test-1");
  EXPECT_EQ(wallet_.grants_paid(), 1);
  absl::StatusOr<Session> third = Login(kDevice);
  EXPECT_FALSE(third->created);
  EXPECT_EQ(wallet_.open_calls(), 2);
}

TEST_F(AccountsTest, AWalletBugIsInternalNotRetryable) {
  wallet_.FailNext(1, absl::InvalidArgumentError("bad player id"));
  EXPECT_EQ(Login(kDevice).status().code(), absl::StatusCode::kInternal);
}

TEST_F(AccountsTest, BadDeviceSecretsAndNamesAreInvalidArgument) {
  for (const std::string& secret : {std::string(31, 'a'), std::string(129, 'a'),
                                    std::string(40, 'a') + "!", std::string(40, 'a') + " "}) {
    absl::StatusOr<Session> s = Login(secret);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << secret;
    EXPECT_THAT(std::string(s.status().message()), HasSubstr("device_secret"));
  }
  EXPECT_TRUE(Login(std::string(32, 'a')).ok());
  EXPECT_TRUE(Login(std::string(128, '-')).ok());
  absl::StatusOr<Session> bot = Login(kDevice, "Bot 1");
  EXPECT_EQ(bot.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bot.status().message()), HasSubstr("display_name"));
  EXPECT_EQ(store_.player_count(), 2u);
}

TEST_F(AccountsTest, AnEmptyNameGetsAGuestName) {
  absl::StatusOr<Session> s = Login(kDevice, "");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(accounts_->GetProfile(s->player_id, Deadline())->display_name, "Guest st-1");
}

TEST_F(AccountsTest, ATakenRandomIdIsDrawnAgain) {
  ASSERT_TRUE(Login(kDevice).ok());  // p-test-1
  next_id_ = 0;                      // the next draw collides
  absl::StatusOr<Session> s = Login(kOtherDevice);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->player_id, "p-test-2");
}

TEST_F(AccountsTest, RefreshWorksOnceAndCarriesTheCurrentRole) {
  absl::StatusOr<Session> login = Login(kDevice);
  ASSERT_TRUE(login.ok());
  ASSERT_TRUE(store_.SetRole(login->player_id, auth::Role::kAdmin).ok());
  clock_.Advance(absl::Minutes(14));
  absl::StatusOr<Session> refreshed = accounts_->Refresh(login->refresh_token, Deadline());
  ASSERT_TRUE(refreshed.ok()) << refreshed.status();
  EXPECT_FALSE(refreshed->created);
  EXPECT_EQ(refreshed->player_id, login->player_id);
  EXPECT_EQ(refreshed->role, auth::Role::kAdmin);
  EXPECT_NE(refreshed->refresh_token, login->refresh_token);
  EXPECT_EQ(verifier_.Verify(refreshed->access_token)->role, auth::Role::kAdmin);
  EXPECT_EQ(refreshed->access_expires_at_ms, absl::ToUnixMillis(clock_.Now() + absl::Minutes(15)));

  absl::StatusOr<Session> reused = accounts_->Refresh(login->refresh_token, Deadline());
  EXPECT_EQ(reused.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(reused.status().message()), HasSubstr("used"));

  ASSERT_TRUE(store_.SetRole(login->player_id, auth::Role::kPlayer).ok());  // revoked
  absl::StatusOr<Session> after_revoke = accounts_->Refresh(refreshed->refresh_token, Deadline());
  ASSERT_TRUE(after_revoke.ok());
  EXPECT_EQ(after_revoke->role, auth::Role::kPlayer);
}

TEST_F(AccountsTest, RefreshRefusesMalformedUnknownAndExpiredTokens) {
  absl::StatusOr<Session> login = Login(kDevice);
  ASSERT_TRUE(login.ok());
  for (const std::string& bad :
       {std::string(), std::string(42, 'a'), std::string(44, 'a'), std::string(42, 'a') + "!"}) {
    absl::StatusOr<Session> s = accounts_->Refresh(bad, Deadline());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_THAT(std::string(s.status().message()), HasSubstr("malformed"));
  }
  EXPECT_THAT(std::string(accounts_->Refresh(std::string(43, 'u'), Deadline()).status().message()),
              HasSubstr("unknown"));
  clock_.Advance(absl::Hours(24 * 30));
  absl::StatusOr<Session> expired = accounts_->Refresh(login->refresh_token, Deadline());
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(expired.status().message()), HasSubstr("expired"));
}

TEST_F(AccountsTest, ProfileCoinsAreMinusOneWhenTheWalletDoesNotAnswer) {
  ASSERT_TRUE(Login(kDevice).ok());
  wallet_.FailNext(1, absl::DeadlineExceededError("slow"));
  absl::StatusOr<Profile> profile = accounts_->GetProfile("p-test-1", Deadline());
  ASSERT_TRUE(profile.ok());
  EXPECT_EQ(profile->coins, -1);
  EXPECT_EQ(accounts_->GetProfile("p-nobody", Deadline()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(AccountsTest, UpdateProfileValidatesAndKeepsWhatIsNotGiven) {
  ASSERT_TRUE(Login(kDevice).ok());
  absl::StatusOr<Profile> p = accounts_->UpdateProfile("p-test-1", " Sara ", 7, Deadline());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->display_name, "Sara");
  EXPECT_EQ(p->avatar_id, 7);
  EXPECT_EQ(p->coins, kGrant);
  p = accounts_->UpdateProfile("p-test-1", "", 0, Deadline());
  EXPECT_EQ(p->display_name, "Sara");
  EXPECT_EQ(p->avatar_id, 7);
  p = accounts_->UpdateProfile("p-test-1", "", 64, Deadline());
  EXPECT_EQ(p->avatar_id, 64);
  for (int bad : {65, -1}) {
    absl::StatusOr<Profile> r = accounts_->UpdateProfile("p-test-1", "", bad, Deadline());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("avatar_id: must be 1..64"));
  }
  EXPECT_EQ(accounts_->UpdateProfile("p-test-1", "admin", 0, Deadline()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(accounts_->UpdateProfile("p-nobody", "Zed", 0, Deadline()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(accounts_->GetProfile("p-test-1", Deadline())->display_name, "Sara");
}

TEST_F(AccountsTest, StoreErrorsKeepTheirCodesAndAbortedIsRetried) {
  store_.FailNext(1, absl::AbortedError("serialization"));
  EXPECT_TRUE(Login(kDevice).ok());
  store_.FailNext(1, absl::UnavailableError("pg down"));
  EXPECT_EQ(Login(kOtherDevice).status().code(), absl::StatusCode::kUnavailable);
  store_.FailNext(3, absl::AbortedError("serialization"));
  EXPECT_EQ(Login(kOtherDevice).status().code(), absl::StatusCode::kAborted);
}

TEST_F(AccountsTest, APassedDeadlineTouchesNothing) {
  EXPECT_EQ(accounts_->GuestLogin(kDevice, "Ali", clock_.Now()).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(store_.player_count(), 0u);
  EXPECT_EQ(wallet_.open_calls(), 0);
}

TEST_F(AccountsTest, PublicProfilesAreNameAndAvatarOfTheKnownPlayersOnly) {
  ASSERT_TRUE(Login(kDevice, "Ali").ok());        // p-test-1
  ASSERT_TRUE(Login(kOtherDevice, "Sara").ok());  // p-test-2
  ASSERT_TRUE(accounts_->UpdateProfile("p-test-2", "", 9, Deadline()).ok());
  // A bad wallet answer waiting: public profiles never ask the wallet (no coins in them).
  wallet_.FailNext(1, absl::UnavailableError("wallet down"));
  absl::StatusOr<std::vector<PublicProfile>> got = accounts_->GetPublicProfiles(
      {"p-test-2", "bot-1", "p-nobody", "p-test-1", "p-test-2"}, Deadline());
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);  // sorted by id, the duplicate once, bot and unknown absent
  EXPECT_EQ((*got)[0].player_id, "p-test-1");
  EXPECT_EQ((*got)[0].display_name, "Ali");
  EXPECT_EQ((*got)[0].avatar_id, 1);
  EXPECT_EQ((*got)[1].player_id, "p-test-2");
  EXPECT_EQ((*got)[1].display_name, "Sara");
  EXPECT_EQ((*got)[1].avatar_id, 9);
  EXPECT_EQ(store_.get_players_calls(), 1);
  EXPECT_EQ(accounts_->GetProfile("p-test-1", Deadline())->coins, -1);  // still waiting
  // Nobody known: an empty answer, not an error.
  got = accounts_->GetPublicProfiles({"bot-0", "bot-3", "p-nobody"}, Deadline());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->empty());
  EXPECT_EQ(store_.get_players_calls(), 2);
  // No ids: empty, without a store call.
  got = accounts_->GetPublicProfiles({}, Deadline());
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
  EXPECT_EQ(store_.get_players_calls(), 2);
}

TEST_F(AccountsTest, PublicProfilesRefuseOver16IdsAndMalformedIds) {
  ASSERT_TRUE(Login(kDevice, "Ali").ok());
  std::vector<std::string> ids(16, "p-test-1");
  absl::StatusOr<std::vector<PublicProfile>> got = accounts_->GetPublicProfiles(ids, Deadline());
  ASSERT_TRUE(got.ok()) << got.status();  // 16 is fine (duplicates count, answered once)
  EXPECT_EQ(got->size(), 1u);
  ids.push_back("p-test-2");
  EXPECT_EQ(accounts_->GetPublicProfiles(ids, Deadline()).status(),
            absl::InvalidArgumentError("player_ids: at most 16 ids, got 17"));
  for (const std::string& bad : {std::string(""), std::string("p 1"), std::string(65, 'a'),
                                 std::string("p-\xc3\xa9"), std::string("a,b")}) {
    EXPECT_EQ(accounts_->GetPublicProfiles({"p-test-1", bad}, Deadline()).status(),
              absl::InvalidArgumentError("player_ids[1]: must be 1..64 chars of [A-Za-z0-9_-]"))
        << bad;
  }
  EXPECT_TRUE(accounts_->GetPublicProfiles({std::string(64, 'a')}, Deadline()).ok());
  EXPECT_EQ(store_.get_players_calls(), 2);  // the refused calls never reached the store
}

TEST_F(AccountsTest, PublicProfilesKeepStoreCodesAndCheckTheDeadline) {
  store_.FailNext(1, absl::UnavailableError("pg down"));
  EXPECT_EQ(accounts_->GetPublicProfiles({"p-test-1"}, Deadline()).status(),
            absl::UnavailableError("pg down"));
  EXPECT_EQ(accounts_->GetPublicProfiles({"p-test-1"}, clock_.Now()).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(store_.get_players_calls(), 0);
}

TEST(AccountsOptionsTest, Validation) {
  EXPECT_TRUE(Accounts::ValidateOptions({}).ok());
  EXPECT_FALSE(Accounts::ValidateOptions({.access_ttl = absl::Seconds(1)}).ok());
  EXPECT_FALSE(
      Accounts::ValidateOptions({.access_ttl = absl::Hours(2), .refresh_ttl = absl::Hours(1)})
          .ok());
  EXPECT_FALSE(Accounts::ValidateOptions({.avatar_max = 0}).ok());
  EXPECT_FALSE(Accounts::ValidateOptions({.public_profiles_max = 0}).ok());
}

TEST(RealRandomnessTest, IdsAndTokensHaveTheirShapes) {
  AccountsRandomness r = RealRandomness();
  const std::string id = r.player_id();
  EXPECT_TRUE(auth::IsValidPlayerId(id));
  EXPECT_EQ(id.size(), 26u);
  EXPECT_NE(id, r.player_id());
  EXPECT_TRUE(RefreshTokenLooksValid(r.refresh_token()));
}

}  // namespace
}  // namespace courtpiece::lobby
