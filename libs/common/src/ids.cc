#include "courtpiece/common/ids.h"

#include <sodium.h>

#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/check.h"

namespace courtpiece::common {
namespace {

void EnsureSodium() {
  static const bool ready = sodium_init() >= 0;
  COURTPIECE_CHECK(ready, "libsodium failed to initialise");
}

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

std::string RandomBytes(size_t num_bytes) {
  EnsureSodium();
  std::string out(num_bytes, '\0');
  randombytes_buf(out.data(), out.size());
  return out;
}

std::string RandomHexId(size_t num_bytes) { return HexEncode(RandomBytes(num_bytes)); }

std::string HexEncode(std::string_view bytes) {
  std::string out(bytes.size() * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), Bytes(bytes), bytes.size());
  out.pop_back();  // the terminating NUL
  return out;
}

absl::StatusOr<std::string> HexDecode(std::string_view hex) {
  std::string out(hex.size() / 2, '\0');
  size_t out_len = 0;
  const char* end = nullptr;
  if (hex.size() % 2 != 0 ||
      sodium_hex2bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), hex.data(),
                     hex.size(), nullptr, &out_len, &end) != 0 ||
      end != hex.data() + hex.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an even-length hex string: \"", ToAbsl(hex.substr(0, 64)), "\""));
  }
  out.resize(out_len);
  return out;
}

std::string Base64UrlEncode(std::string_view bytes) {
  constexpr int kVariant = sodium_base64_VARIANT_URLSAFE_NO_PADDING;
  std::string out(sodium_base64_encoded_len(bytes.size(), kVariant), '\0');
  sodium_bin2base64(out.data(), out.size(), Bytes(bytes), bytes.size(), kVariant);
  out.resize(out.size() - 1);  // the terminating NUL
  return out;
}

absl::StatusOr<std::string> Base64UrlDecode(std::string_view text) {
  std::string out(text.size() * 3 / 4 + 1, '\0');
  size_t out_len = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(),
                        text.size(), nullptr, &out_len, &end,
                        sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
      end != text.data() + text.size()) {
    return absl::InvalidArgumentError("not unpadded base64url");
  }
  out.resize(out_len);
  return out;
}

absl::StatusOr<SessionTokens> SessionTokens::Create(std::string_view key, const Clock& clock) {
  EnsureSodium();
  if (key.size() != kKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("session token key must be ", kKeyBytes, " bytes, got ", key.size()));
  }
  return SessionTokens(std::string(key), clock);
}

std::string SessionTokens::Mac(std::string_view payload) const {
  std::string mac(crypto_auth_hmacsha256_BYTES, '\0');
  crypto_auth_hmacsha256(reinterpret_cast<unsigned char*>(mac.data()), Bytes(payload),
                         payload.size(), Bytes(key_));
  return mac;
}

std::string SessionTokens::Issue(std::string_view player_id, absl::Duration ttl) const {
  COURTPIECE_CHECK(!player_id.empty(), "a session token needs a player id");
  const int64_t expires_unix_s = absl::ToUnixSeconds(clock_->Now() + ttl);
  const std::string payload = absl::StrCat("v1|", expires_unix_s, "|", ToAbsl(player_id));
  return absl::StrCat(Base64UrlEncode(payload), ".", Base64UrlEncode(Mac(payload)));
}

absl::StatusOr<SessionClaims> SessionTokens::Verify(std::string_view token) const {
  const std::vector<absl::string_view> parts = absl::StrSplit(ToAbsl(token), '.');
  if (parts.size() != 2) return absl::InvalidArgumentError("malformed session token");
  absl::StatusOr<std::string> payload = Base64UrlDecode(ToStd(parts[0]));
  absl::StatusOr<std::string> mac = Base64UrlDecode(ToStd(parts[1]));
  if (!payload.ok() || !mac.ok() || mac->size() != crypto_auth_hmacsha256_BYTES) {
    return absl::InvalidArgumentError("malformed session token");
  }
  if (crypto_auth_hmacsha256_verify(Bytes(*mac), Bytes(*payload), payload->size(), Bytes(key_)) !=
      0) {
    return absl::UnauthenticatedError("session token signature mismatch");
  }
  const std::vector<absl::string_view> fields = absl::StrSplit(*payload, absl::MaxSplits('|', 2));
  int64_t expires_unix_s = 0;
  if (fields.size() != 3 || fields[0] != "v1" || !absl::SimpleAtoi(fields[1], &expires_unix_s) ||
      fields[2].empty()) {
    return absl::InvalidArgumentError("malformed session token payload");
  }
  const absl::Time expires_at = absl::FromUnixSeconds(expires_unix_s);
  if (clock_->Now() >= expires_at) {
    return absl::UnauthenticatedError(
        absl::StrCat("session token expired at ",
                     absl::FormatTime(absl::RFC3339_sec, expires_at, absl::UTCTimeZone())));
  }
  return SessionClaims{std::string(fields[2]), expires_at};
}

}  // namespace courtpiece::common
