#include "courtpiece/auth/keys.h"

#include <sodium.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/check.h"

namespace courtpiece::auth {
namespace {

using common::ToAbsl;

void InitSodium() {
  static const bool ok = sodium_init() >= 0;
  COURTPIECE_CHECK(ok, "sodium_init failed");
}

// Splits "<kid>:<base64>" and decodes the base64 to exactly `bytes` bytes. `what` names the
// entry in errors (the material itself is never echoed).
absl::StatusOr<std::pair<std::string, std::string>> ParseEntry(std::string_view text, size_t bytes,
                                                               std::string_view what) {
  absl::string_view trimmed = absl::StripAsciiWhitespace(ToAbsl(text));
  const size_t colon = trimmed.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), ": want <kid>:<base64>"));
  }
  std::string kid(trimmed.substr(0, colon));
  if (!IsValidKeyId(kid)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), ": key id must be 1..", kKeyIdMax, " chars of [A-Za-z0-9_-]"));
  }
  absl::StatusOr<std::string> raw = DecodeBase64(common::ToStd(trimmed.substr(colon + 1)));
  if (!raw.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), " ", kid, ": not base64"));
  }
  if (raw->size() != bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), " ", kid, ": want ", bytes, " bytes, got ", raw->size()));
  }
  return std::make_pair(std::move(kid), *std::move(raw));
}

}  // namespace

bool IsValidKeyId(std::string_view kid) {
  if (kid.empty() || kid.size() > kKeyIdMax) return false;
  for (char c : kid) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

absl::StatusOr<SigningKey> SigningKey::FromSeed(std::string_view key_id, std::string_view seed) {
  InitSodium();
  if (!IsValidKeyId(key_id)) {
    return absl::InvalidArgumentError("signing key: bad key id");
  }
  if (seed.size() != kSeedBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("signing key: seed must be ", kSeedBytes, " bytes"));
  }
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_seed_keypair(pk, sk, reinterpret_cast<const unsigned char*>(seed.data()));
  SigningKey key;
  key.key_id = std::string(key_id);
  key.seed = std::string(seed);
  key.public_key.assign(reinterpret_cast<const char*>(pk), sizeof(pk));
  key.secret_key.assign(reinterpret_cast<const char*>(sk), sizeof(sk));
  sodium_memzero(sk, sizeof(sk));
  return key;
}

absl::StatusOr<SigningKey> SigningKey::Parse(std::string_view text) {
  auto entry = ParseEntry(text, kSeedBytes, "signing key");
  if (!entry.ok()) return entry.status();
  return FromSeed(entry->first, entry->second);
}

SigningKey SigningKey::Generate(std::string_view key_id) {
  InitSodium();
  std::string seed(kSeedBytes, '\0');
  randombytes_buf(seed.data(), seed.size());
  absl::StatusOr<SigningKey> key = FromSeed(key_id, seed);
  COURTPIECE_CHECK(key.ok(), "Generate: bad key id");
  return *std::move(key);
}

std::string SigningKey::SeedText() const { return absl::StrCat(key_id, ":", EncodeBase64(seed)); }

std::string SigningKey::PublicText() const {
  return absl::StrCat(key_id, ":", EncodeBase64(public_key));
}

absl::StatusOr<VerifyKeys> VerifyKeys::Parse(std::string_view text) {
  VerifyKeys keys;
  for (absl::string_view part : absl::StrSplit(ToAbsl(text), ',')) {
    if (absl::StripAsciiWhitespace(part).empty()) continue;
    auto entry = ParseEntry(common::ToStd(part), kPublicKeyBytes, "verify key");
    if (!entry.ok()) return entry.status();
    if (!keys.by_key_id.emplace(entry->first, entry->second).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("verify keys: key id ", entry->first, " appears twice"));
    }
  }
  if (keys.by_key_id.empty()) {
    return absl::InvalidArgumentError("verify keys: want at least one <kid>:<base64 pub>");
  }
  return keys;
}

absl::StatusOr<std::string> DecodeBase64(std::string_view text) {
  InitSodium();
  for (int variant : {sodium_base64_VARIANT_ORIGINAL, sodium_base64_VARIANT_ORIGINAL_NO_PADDING,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING}) {
    std::string out(text.size(), '\0');
    size_t len = 0;
    const char* end = nullptr;
    if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(),
                          text.size(), nullptr, &len, &end, variant) == 0 &&
        end == text.data() + text.size()) {
      out.resize(len);
      return out;
    }
  }
  return absl::InvalidArgumentError("not base64");
}

std::string EncodeBase64(std::string_view bytes) {
  InitSodium();
  std::string out(sodium_base64_ENCODED_LEN(bytes.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                    bytes.size(), sodium_base64_VARIANT_ORIGINAL);
  out.resize(out.size() - 1);  // the terminating NUL
  return out;
}

absl::StatusOr<std::optional<std::string>> ReadEnvOrFile(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  const std::string file_var = name + "_FILE";
  const char* file = std::getenv(file_var.c_str());
  const bool has_value = value != nullptr && *value != '\0';
  const bool has_file = file != nullptr && *file != '\0';
  if (has_value && has_file) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " and ", file_var, " are both set: set one"));
  }
  if (has_value) return std::optional<std::string>(value);
  if (!has_file) return std::optional<std::string>();
  std::ifstream in(file);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(file_var, ": cannot read ", file));
  std::stringstream contents;
  contents << in.rdbuf();
  return std::optional<std::string>(std::string(absl::StripAsciiWhitespace(contents.str())));
}

std::string SecretHash(std::string_view purpose, std::string_view secret) {
  InitSodium();
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, 32);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(purpose.data()),
                            purpose.size());
  const unsigned char nul = 0;
  crypto_generichash_update(&state, &nul, 1);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(secret.data()),
                            secret.size());
  std::string out(32, '\0');
  crypto_generichash_final(&state, reinterpret_cast<unsigned char*>(out.data()), out.size());
  return out;
}

}  // namespace courtpiece::auth
