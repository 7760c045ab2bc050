#include "courtpiece/auth/keys.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SigningKeyTest, ParsesWhatItPrints) {
  const SigningKey key = SigningKey::Generate("k-2026");
  absl::StatusOr<SigningKey> parsed = SigningKey::Parse(key.SeedText());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->key_id, "k-2026");
  EXPECT_EQ(parsed->public_key, key.public_key);
  absl::StatusOr<VerifyKeys> keys = VerifyKeys::Parse(key.PublicText());
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->by_key_id.at("k-2026"), key.public_key);
}

TEST(SigningKeyTest, TheSeedDecidesThePublicKey) {
  const std::string seed(kSeedBytes, '\x07');
  EXPECT_EQ(SigningKey::FromSeed("a", seed)->public_key,
            SigningKey::FromSeed("b", seed)->public_key);
  EXPECT_NE(SigningKey::Generate("a").public_key, SigningKey::Generate("a").public_key);
}

TEST(SigningKeyTest, AcceptsBothBase64Alphabets) {
  // 32 bytes of 0xfb: '+' and '/' in the standard alphabet, '-' and '_' url-safe.
  const std::string seed(kSeedBytes, '\xfb');
  const std::string standard = EncodeBase64(seed);
  ASSERT_THAT(standard, HasSubstr("+"));
  std::string urlsafe = standard;
  for (char& c : urlsafe) c = c == '+' ? '-' : c == '/' ? '_' : c;
  urlsafe.erase(urlsafe.find('='));
  for (const std::string& text : {standard, urlsafe, standard.substr(0, standard.find('='))}) {
    absl::StatusOr<SigningKey> key = SigningKey::Parse("k:" + text);
    ASSERT_TRUE(key.ok()) << text << ": " << key.status();
    EXPECT_EQ(key->seed, seed);
  }
}

TEST(SigningKeyTest, BadTextIsNamedWithoutEchoingTheSecret) {
  const std::string seed_text = EncodeBase64(std::string(kSeedBytes, 'q'));
  for (const std::string& bad :
       {std::string(""), std::string("nokid"), ":" + seed_text, "k k:" + seed_text,
        std::string(33, 'k') + ":" + seed_text, "k:" + seed_text.substr(4), std::string("k:%%%%"),
        "k:" + EncodeBase64(std::string(31, 'q'))}) {
    absl::StatusOr<SigningKey> key = SigningKey::Parse(bad);
    ASSERT_FALSE(key.ok()) << bad;
    EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(key.status().message()), Not(HasSubstr(seed_text.substr(4, 8))));
  }
}

TEST(VerifyKeysTest, ParsesASetAndRefusesDuplicates) {
  const SigningKey a = SigningKey::Generate("a");
  const SigningKey b = SigningKey::Generate("b");
  absl::StatusOr<VerifyKeys> keys =
      VerifyKeys::Parse(absl::StrCat(" ", a.PublicText(), " , ", b.PublicText(), ","));
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->by_key_id.size(), 2u);
  EXPECT_EQ(keys->by_key_id.at("b"), b.public_key);
  absl::StatusOr<VerifyKeys> dup = VerifyKeys::Parse(a.PublicText() + "," + a.PublicText());
  EXPECT_EQ(dup.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(dup.status().message()), HasSubstr("twice"));
  EXPECT_EQ(VerifyKeys::Parse(" , ").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReadEnvOrFileTest, ValueFileOrNeitherButNotBoth) {
  const std::string path = ::testing::TempDir() + "/auth_key_file";
  std::ofstream(path) << "k1:abc\n";
  unsetenv("CP_AUTH_TEST");
  unsetenv("CP_AUTH_TEST_FILE");
  EXPECT_FALSE(ReadEnvOrFile("CP_AUTH_TEST")->has_value());
  setenv("CP_AUTH_TEST_FILE", path.c_str(), 1);
  EXPECT_EQ(ReadEnvOrFile("CP_AUTH_TEST")->value(), "k1:abc");
  setenv("CP_AUTH_TEST", "k2:def", 1);
  EXPECT_EQ(ReadEnvOrFile("CP_AUTH_TEST").status().code(), absl::StatusCode::kInvalidArgument);
  unsetenv("CP_AUTH_TEST_FILE");
  EXPECT_EQ(ReadEnvOrFile("CP_AUTH_TEST")->value(), "k2:def");
  setenv("CP_AUTH_TEST_FILE", "/nonexistent/key", 1);
  unsetenv("CP_AUTH_TEST");
  EXPECT_EQ(ReadEnvOrFile("CP_AUTH_TEST").status().code(), absl::StatusCode::kInvalidArgument);
  unsetenv("CP_AUTH_TEST_FILE");
  std::remove(path.c_str());
}

TEST(SecretHashTest, DependsOnPurposeAndSecret) {
  EXPECT_EQ(SecretHash("device", "s").size(), 32u);
  EXPECT_EQ(SecretHash("device", "s"), SecretHash("device", "s"));
  EXPECT_NE(SecretHash("device", "s"), SecretHash("refresh", "s"));
  EXPECT_NE(SecretHash("device", "s"), SecretHash("device", "t"));
  EXPECT_NE(SecretHash("de", "vices"), SecretHash("device", "s"));
}

}  // namespace
}  // namespace courtpiece::auth
