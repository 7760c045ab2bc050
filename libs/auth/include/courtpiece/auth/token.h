// Session tokens signed with Ed25519 (libsodium): the lobby signs, the lobby and the gateway
// verify with the public keys alone. Format (docs/lobby.md "Accounts and tokens"):
//
//   token   = "cp1." base64url(payload) "." base64url(signature)      (no padding)
//   payload = kid "|" player_id "|" role "|" issued_at_ms "|" expires_at_ms   (ASCII)
//   signature = Ed25519(secret key, the ASCII bytes of "cp1." base64url(payload))   64 bytes
//
//   TokenSigner signer(*SigningKey::Parse("k1:<base64 seed>"), clock);
//   std::string token = signer.Sign("p-1f2e", Role::kPlayer, absl::Minutes(15));
//   TokenVerifier verifier(*VerifyKeys::Parse("k1:<base64 pub>,k0:<base64 pub>"), clock);
//   absl::StatusOr<Claims> claims = verifier.Verify(token);
//
// Contract: Verify returns the claims, or UNAUTHENTICATED whose message starts with the
// reason: "malformed token", "unknown key", "bad signature", "expired token" or "token not
// yet valid". A token longer than kTokenMax chars is malformed before anything is decoded.
// The signature is checked before any claim is trusted. Expiry allows `skew` either way:
// a token is expired when now >= expires_at + skew and not yet valid when issued_at > now +
// skew. Player ids are 1..64 chars of [A-Za-z0-9_-]; key ids 1..32 of the same.
// Thread-safety: TokenSigner and TokenVerifier are immutable after construction and safe to
// share between threads.
#ifndef COURTPIECE_AUTH_TOKEN_H_
#define COURTPIECE_AUTH_TOKEN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/auth/keys.h"
#include "courtpiece/common/clock.h"

namespace courtpiece::auth {

inline constexpr size_t kTokenMax = 512;  // chars
inline constexpr char kTokenPrefix[] = "cp1.";

enum class Role { kPlayer, kAdmin };
// "player" / "admin".
const char* RoleName(Role role);
// The inverse of RoleName; anything else is InvalidArgument.
absl::StatusOr<Role> ParseRole(std::string_view name);

// 1..64 chars of [A-Za-z0-9_-] (the table service's rule for player ids).
bool IsValidPlayerId(std::string_view id);

// The token of an `authorization` header value "Bearer <token>" (the scheme
// case-insensitive, RFC 6750). UNAUTHENTICATED "missing token" for an empty value, and
// "malformed authorization header: want \"Bearer <token>\"" for anything else that is not
// of that shape. The token itself is not checked here (TokenVerifier::Verify does).
absl::StatusOr<std::string_view> BearerToken(std::string_view authorization);

struct Claims {
  std::string key_id;
  std::string player_id;
  Role role = Role::kPlayer;
  int64_t issued_at_ms = 0;   // unix ms
  int64_t expires_at_ms = 0;  // unix ms
};

class TokenSigner {
 public:
  // `clock` must outlive the signer.
  TokenSigner(SigningKey key, const Clock& clock);

  // A token for `player_id` (must satisfy IsValidPlayerId: a programmer error otherwise),
  // issued now, expiring now + ttl (ttl > 0).
  std::string Sign(std::string_view player_id, Role role, absl::Duration ttl) const;
  // The same, with the claims it signed (issued/expiry as unix ms).
  std::string Sign(std::string_view player_id, Role role, absl::Duration ttl, Claims* claims) const;

  const std::string& key_id() const { return key_.key_id; }
  // The public key matching the secret key (32 bytes).
  const std::string& public_key() const { return key_.public_key; }

 private:
  SigningKey key_;
  const Clock& clock_;
};

class TokenVerifier {
 public:
  static constexpr absl::Duration kDefaultSkew = absl::Seconds(30);
  // What the services pass as cache_max: ~300 bytes a token, so ~2.5 MiB at most.
  static constexpr size_t kDefaultCacheMax = 8192;  // tokens

  // `clock` must outlive the verifier. cache_max > 0 remembers up to that many tokens whose
  // signature checked out (the token's text -> its claims), so that a token seen again skips
  // the decoding and the Ed25519 check (about 40 us, the largest part of an authenticated
  // lobby call's CPU); its times are checked on every call all the same, and the keys never
  // change in a verifier, so a remembered signature stays good. A full cache forgets its
  // oldest entries first, and an entry found expired is dropped. 0: no cache; else at least
  // 16 (one per shard).
  TokenVerifier(VerifyKeys keys, const Clock& clock, absl::Duration skew = kDefaultSkew,
                size_t cache_max = 0);
  ~TokenVerifier();
  TokenVerifier(const TokenVerifier&) = delete;
  TokenVerifier& operator=(const TokenVerifier&) = delete;

  absl::StatusOr<Claims> Verify(std::string_view token) const;

  const VerifyKeys& keys() const { return keys_; }
  // Calls answered from the cache so far (for tests and metrics).
  uint64_t cache_hits() const;

 private:
  class Cache;
  absl::StatusOr<Claims> CheckTimes(Claims claims) const;

  VerifyKeys keys_;
  const Clock& clock_;
  absl::Duration skew_;
  std::unique_ptr<Cache> cache_;  // null: no cache
};

}  // namespace courtpiece::auth

#endif  // COURTPIECE_AUTH_TOKEN_H_
