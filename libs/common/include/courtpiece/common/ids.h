// Random ids, hex and base64url encoding, and signed session tokens (libsodium).
//
//   std::string table_id = RandomHexId();          // 32 hex chars (16 random bytes)
//   ASSIGN_OR_RETURN(std::string key, HexDecode(env.RequiredString("COURTPIECE_SESSION_KEY")));
//   ASSIGN_OR_RETURN(SessionTokens tokens, SessionTokens::Create(key, clock));
//   std::string token = tokens.Issue("p-42", absl::Hours(24 * 30));
//   ASSIGN_OR_RETURN(SessionClaims claims, tokens.Verify(token));  // claims.player_id == "p-42"
//
// Token = base64url(payload) "." base64url(HMAC-SHA256(key, payload)), no padding, where
// payload = "v1|<expiry unix seconds>|<player_id>". The token is signed, not encrypted: the
// player id is readable by anyone holding it.
// Verify: malformed -> InvalidArgument; bad signature -> Unauthenticated ("signature");
// expired (now >= expires_at) -> Unauthenticated ("expired"). The MAC is checked in constant
// time before the payload is trusted.
// Thread-safety: free functions are safe; a SessionTokens is immutable and safe to share.
#ifndef COURTPIECE_COMMON_IDS_H_
#define COURTPIECE_COMMON_IDS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/common/clock.h"

namespace courtpiece::common {

// `num_bytes` bytes from the OS CSPRNG (libsodium randombytes_buf).
std::string RandomBytes(size_t num_bytes);
// RandomBytes(num_bytes) as lowercase hex (2 * num_bytes chars).
std::string RandomHexId(size_t num_bytes = 16);

// Lowercase hex.
std::string HexEncode(std::string_view bytes);
// Accepts upper- or lowercase; odd length or a non-hex char is InvalidArgument.
absl::StatusOr<std::string> HexDecode(std::string_view hex);

// RFC 4648 §5 url-safe alphabet, no padding.
std::string Base64UrlEncode(std::string_view bytes);
// Rejects padding, other alphabets and trailing garbage with InvalidArgument.
absl::StatusOr<std::string> Base64UrlDecode(std::string_view text);

struct SessionClaims {
  std::string player_id;
  absl::Time expires_at;  // whole seconds
};

class SessionTokens {
 public:
  static constexpr size_t kKeyBytes = 32;

  // `key` must be exactly kKeyBytes raw bytes (else InvalidArgument). `clock` must outlive
  // the SessionTokens.
  static absl::StatusOr<SessionTokens> Create(std::string_view key, const Clock& clock);

  // A token for `player_id` (non-empty) valid until now + ttl, truncated to whole seconds.
  std::string Issue(std::string_view player_id, absl::Duration ttl) const;
  absl::StatusOr<SessionClaims> Verify(std::string_view token) const;

 private:
  SessionTokens(std::string key, const Clock& clock) : key_(std::move(key)), clock_(&clock) {}
  std::string Mac(std::string_view payload) const;

  std::string key_;
  const Clock* clock_;
};

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_IDS_H_
