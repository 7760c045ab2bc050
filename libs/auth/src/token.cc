#include "courtpiece/auth/token.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/check.h"
#include "courtpiece/common/ids.h"

namespace courtpiece::auth {
namespace {

using common::ToAbsl;

constexpr size_t kSignatureBytes = crypto_sign_BYTES;  // 64

absl::Status Unauthenticated(std::string_view reason, std::string_view detail = "") {
  if (detail.empty()) return absl::UnauthenticatedError(ToAbsl(reason));
  return absl::UnauthenticatedError(absl::StrCat(ToAbsl(reason), ": ", ToAbsl(detail)));
}

absl::Status Malformed(std::string_view detail) {
  return Unauthenticated("malformed token", detail);
}

std::string Payload(const Claims& c) {
  return absl::StrCat(c.key_id, "|", c.player_id, "|", RoleName(c.role), "|", c.issued_at_ms, "|",
                      c.expires_at_ms);
}

absl::StatusOr<Claims> ParsePayload(std::string_view payload) {
  std::vector<absl::string_view> fields = absl::StrSplit(ToAbsl(payload), '|');
  if (fields.size() != 5) return Malformed("want 5 claims");
  Claims c;
  c.key_id = std::string(fields[0]);
  c.player_id = std::string(fields[1]);
  if (!IsValidKeyId(c.key_id)) return Malformed("bad key id");
  if (!IsValidPlayerId(c.player_id)) return Malformed("bad player id");
  absl::StatusOr<Role> role = ParseRole(common::ToStd(fields[2]));
  if (!role.ok()) return Malformed("bad role");
  c.role = *role;
  for (auto [text, out] : {std::pair{fields[3], &c.issued_at_ms}, {fields[4], &c.expires_at_ms}}) {
    // Digits only: SimpleAtoi alone would take "+5" and " 5".
    if (text.empty() || text.size() > 15 ||
        !std::all_of(text.begin(), text.end(),
                     [](char ch) { return absl::ascii_isdigit(static_cast<unsigned char>(ch)); }) ||
        !absl::SimpleAtoi(text, out)) {
      return Malformed("bad time");
    }
  }
  if (c.expires_at_ms <= c.issued_at_ms) return Malformed("expiry before issue");
  return c;
}

}  // namespace

const char* RoleName(Role role) { return role == Role::kAdmin ? "admin" : "player"; }

absl::StatusOr<Role> ParseRole(std::string_view name) {
  if (name == "player") return Role::kPlayer;
  if (name == "admin") return Role::kAdmin;
  return absl::InvalidArgumentError("role must be player or admin");
}

bool IsValidPlayerId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

TokenSigner::TokenSigner(SigningKey key, const Clock& clock) : key_(std::move(key)), clock_(clock) {
  COURTPIECE_CHECK(key_.secret_key.size() == crypto_sign_SECRETKEYBYTES, "signing key not loaded");
}

std::string TokenSigner::Sign(std::string_view player_id, Role role, absl::Duration ttl) const {
  return Sign(player_id, role, ttl, nullptr);
}

std::string TokenSigner::Sign(std::string_view player_id, Role role, absl::Duration ttl,
                              Claims* claims) const {
  COURTPIECE_CHECK(IsValidPlayerId(player_id), "Sign: bad player id");
  COURTPIECE_CHECK(ttl > absl::ZeroDuration(), "Sign: ttl must be positive");
  Claims c;
  c.key_id = key_.key_id;
  c.player_id = std::string(player_id);
  c.role = role;
  c.issued_at_ms = absl::ToUnixMillis(clock_.Now());
  c.expires_at_ms = c.issued_at_ms + std::max<int64_t>(1, absl::ToInt64Milliseconds(ttl));
  const std::string signed_part = absl::StrCat(kTokenPrefix, common::Base64UrlEncode(Payload(c)));
  unsigned char sig[kSignatureBytes];
  crypto_sign_detached(sig, nullptr, reinterpret_cast<const unsigned char*>(signed_part.data()),
                       signed_part.size(),
                       reinterpret_cast<const unsigned char*>(key_.secret_key.data()));
  std::string token = absl::StrCat(
      signed_part, ".",
      common::Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(sig), sizeof(sig))));
  if (claims != nullptr) *claims = std::move(c);
  return token;
}

absl::StatusOr<std::string_view> BearerToken(std::string_view authorization) {
  if (authorization.empty()) return absl::UnauthenticatedError("missing token");
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(ToAbsl(authorization.substr(0, kScheme.size())), ToAbsl(kScheme))) {
    return absl::UnauthenticatedError("malformed authorization header: want \"Bearer <token>\"");
  }
  return authorization.substr(kScheme.size());
}

// Token text -> claims of the tokens whose signature checked out, in shards with a lock each
// so that the lobby's many handler threads rarely wait on one another. Each shard forgets its
// oldest entry first (insertion order) and drops an entry found expired.
class TokenVerifier::Cache {
 public:
  explicit Cache(size_t max) : shard_max_(std::max<size_t>(1, max / kShards)) {}

  std::optional<Claims> Find(std::string_view token) {
    Shard& shard = ShardOf(token);
    absl::MutexLock lock(&shard.mu);
    auto it = shard.claims.find(ToAbsl(token));
    if (it == shard.claims.end()) return std::nullopt;
    hits_.fetch_add(1, std::memory_order_relaxed);
    return it->second;
  }

  void Forget(std::string_view token) {
    Shard& shard = ShardOf(token);
    absl::MutexLock lock(&shard.mu);
    shard.claims.erase(ToAbsl(token));  // its key in `order` goes when it comes up
  }

  void Insert(std::string_view token, const Claims& claims) {
    Shard& shard = ShardOf(token);
    absl::MutexLock lock(&shard.mu);
    // `order` holds every key in `claims` (and maybe keys forgotten since): bounding it
    // bounds both.
    while (shard.order.size() >= shard_max_) {
      shard.claims.erase(shard.order.front());
      shard.order.pop_front();
    }
    if (shard.claims.emplace(std::string(token), claims).second) {
      shard.order.emplace_back(token);
    }
  }

  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    absl::Mutex mu;
    absl::flat_hash_map<std::string, Claims> claims ABSL_GUARDED_BY(mu);
    std::deque<std::string> order ABSL_GUARDED_BY(mu);  // oldest first
  };
  Shard& ShardOf(std::string_view token) {
    return shards_[absl::Hash<absl::string_view>{}(ToAbsl(token)) % kShards];
  }

  const size_t shard_max_;
  std::array<Shard, kShards> shards_;
  std::atomic<uint64_t> hits_{0};
};

TokenVerifier::TokenVerifier(VerifyKeys keys, const Clock& clock, absl::Duration skew,
                             size_t cache_max)
    : keys_(std::move(keys)),
      clock_(clock),
      skew_(skew),
      cache_(cache_max > 0 ? std::make_unique<Cache>(cache_max) : nullptr) {
  for (const auto& [kid, pub] : keys_.by_key_id) {
    COURTPIECE_CHECK(pub.size() == crypto_sign_PUBLICKEYBYTES, "verify key of the wrong size");
  }
}

TokenVerifier::~TokenVerifier() = default;

uint64_t TokenVerifier::cache_hits() const { return cache_ == nullptr ? 0 : cache_->hits(); }

absl::StatusOr<Claims> TokenVerifier::CheckTimes(Claims claims) const {
  const int64_t now_ms = absl::ToUnixMillis(clock_.Now());
  const int64_t skew_ms = absl::ToInt64Milliseconds(skew_);
  if (now_ms >= claims.expires_at_ms + skew_ms) return Unauthenticated("expired token");
  if (claims.issued_at_ms > now_ms + skew_ms) return Unauthenticated("token not yet valid");
  return claims;
}

absl::StatusOr<Claims> TokenVerifier::Verify(std::string_view token) const {
  if (token.empty()) return Malformed("empty");
  if (token.size() > kTokenMax) return Malformed("too long");
  if (cache_ != nullptr) {
    if (std::optional<Claims> seen = cache_->Find(token)) {
      absl::StatusOr<Claims> timely = CheckTimes(*std::move(seen));
      if (!timely.ok()) cache_->Forget(token);
      return timely;
    }
  }
  const std::string_view prefix = kTokenPrefix;
  if (token.substr(0, prefix.size()) != prefix) return Malformed("unknown format");
  const size_t dot = token.find('.', prefix.size());
  if (dot == std::string_view::npos || token.find('.', dot + 1) != std::string_view::npos) {
    return Malformed("want cp1.<payload>.<signature>");
  }
  const std::string_view signed_part = token.substr(0, dot);
  absl::StatusOr<std::string> payload = common::Base64UrlDecode(signed_part.substr(prefix.size()));
  if (!payload.ok()) return Malformed("payload is not base64url");
  absl::StatusOr<std::string> sig = common::Base64UrlDecode(token.substr(dot + 1));
  // Canonical encoding only, so one signature has one spelling (no malleable tokens).
  if (!sig.ok() || sig->size() != kSignatureBytes ||
      common::Base64UrlEncode(*sig) != token.substr(dot + 1)) {
    return Malformed("bad signature encoding");
  }
  absl::StatusOr<Claims> claims = ParsePayload(*payload);
  if (!claims.ok()) return claims.status();
  auto key = keys_.by_key_id.find(claims->key_id);
  if (key == keys_.by_key_id.end()) return Unauthenticated("unknown key", claims->key_id);
  if (crypto_sign_verify_detached(
          reinterpret_cast<const unsigned char*>(sig->data()),
          reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size(),
          reinterpret_cast<const unsigned char*>(key->second.data())) != 0) {
    return Unauthenticated("bad signature");
  }
  absl::StatusOr<Claims> timely = CheckTimes(*std::move(claims));
  if (timely.ok() && cache_ != nullptr) cache_->Insert(token, *timely);
  return timely;
}

}  // namespace courtpiece::auth
