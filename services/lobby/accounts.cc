#include "services/lobby/accounts.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/auth/keys.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/ids.h"
#include "services/lobby/display_name.h"

namespace courtpiece::lobby {
namespace {

constexpr size_t kDeviceSecretMin = 32;
constexpr size_t kDeviceSecretMax = 128;
constexpr size_t kRefreshTokenBytes = 32;
constexpr size_t kRefreshTokenChars = 43;  // base64url of 32 bytes, no padding
// Hash contexts (auth::SecretHash): never change them, stored hashes depend on them.
constexpr char kDevicePurpose[] = "courtpiece-device-v1";
constexpr char kRefreshPurpose[] = "courtpiece-refresh-v1";

bool IsUrlSafe(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

absl::Status ValidateDeviceSecret(std::string_view secret) {
  if (secret.size() < kDeviceSecretMin || secret.size() > kDeviceSecretMax || !IsUrlSafe(secret)) {
    return absl::InvalidArgumentError(absl::StrCat("device_secret: must be ", kDeviceSecretMin,
                                                   "..", kDeviceSecretMax,
                                                   " chars of [A-Za-z0-9_-]"));
  }
  return absl::OkStatus();
}

// The wallet's failure to open an account, as the client of GuestLogin sees it.
absl::Status WalletOpenFailed(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kResourceExhausted:
      return absl::UnavailableError(absl::StrCat("the wallet did not open the account (",
                                                 status.message(), "); sign in again"));
    default:
      return absl::InternalError(absl::StrCat("wallet OpenAccount: ", status.ToString()));
  }
}

bool Retryable(const absl::Status& status) { return status.code() == absl::StatusCode::kAborted; }

}  // namespace

AccountsRandomness RealRandomness() {
  return {.player_id = [] { return "p-" + common::RandomHexId(12); },
          .refresh_token =
              [] { return common::Base64UrlEncode(common::RandomBytes(kRefreshTokenBytes)); }};
}

bool RefreshTokenLooksValid(std::string_view token) {
  return token.size() == kRefreshTokenChars && IsUrlSafe(token);
}

absl::Status Accounts::ValidateOptions(const AccountsOptions& o) {
  if (o.access_ttl < absl::Seconds(10) || o.access_ttl > absl::Hours(24)) {
    return absl::InvalidArgumentError("access token ttl must be 10s..24h");
  }
  if (o.refresh_ttl < o.access_ttl || o.refresh_ttl > absl::Hours(24 * 365)) {
    return absl::InvalidArgumentError("refresh token ttl must be access ttl..365 days");
  }
  if (o.avatar_max < 1 || o.avatar_max > 10000) {
    return absl::InvalidArgumentError("avatar_max must be 1..10000");
  }
  if (o.wallet_read_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("wallet_read_timeout must be positive");
  }
  if (o.store_attempts_max < 1 || o.store_attempts_max > 10) {
    return absl::InvalidArgumentError("store_attempts_max must be 1..10");
  }
  if (o.public_profiles_max < 1 || o.public_profiles_max > 1000) {
    return absl::InvalidArgumentError("public_profiles_max must be 1..1000");
  }
  return absl::OkStatus();
}

Accounts::Accounts(PlayerStore& store, WalletPort& wallet, const auth::TokenSigner& signer,
                   const Clock& clock, AccountsOptions options, AccountsRandomness randomness)
    : store_(store),
      wallet_(wallet),
      signer_(signer),
      clock_(clock),
      options_(std::move(options)),
      randomness_(std::move(randomness)) {}

absl::Status Accounts::CheckDeadline(absl::Time deadline) const {
  if (clock_.Now() >= deadline) return absl::DeadlineExceededError("deadline passed");
  return absl::OkStatus();
}

absl::StatusOr<Session> Accounts::GuestLogin(std::string_view device_secret,
                                             std::string_view display_name, absl::Time deadline) {
  if (absl::Status s = ValidateDeviceSecret(device_secret); !s.ok()) return s;
  std::string name;
  if (!display_name.empty()) {
    absl::StatusOr<std::string> normalized = NormalizeDisplayName(display_name);
    if (!normalized.ok()) return normalized.status();
    name = *std::move(normalized);
  }
  // A returning device whose account is open signs in with this one store call.
  const std::string refresh = randomness_.refresh_token();
  const RefreshTokenRecord token{.token_hash = auth::SecretHash(kRefreshPurpose, refresh),
                                 .player_id = "",
                                 .expires_at = clock_.Now() + options_.refresh_ttl};
  absl::StatusOr<SignInResult> signed_in =
      SignIn(auth::SecretHash(kDevicePurpose, device_secret), name, token, deadline);
  if (!signed_in.ok()) return signed_in.status();
  const PlayerRecord& player = signed_in->player;
  if (signed_in->refresh_issued) return SessionFor(player, refresh, token.expires_at);
  bool opened_now = false;
  if (!player.wallet_opened) {
    if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
    absl::StatusOr<int64_t> balance = wallet_.OpenAccount(player.player_id, deadline);
    if (!balance.ok()) return WalletOpenFailed(balance.status());
    opened_now = true;
  }
  absl::StatusOr<Session> session = NewSession(player.player_id, opened_now, deadline);
  if (!session.ok()) return session.status();
  session->created = opened_now;
  return session;
}

absl::StatusOr<SignInResult> Accounts::SignIn(const std::string& device_hash, std::string_view name,
                                              const RefreshTokenRecord& token,
                                              absl::Time deadline) {
  absl::Status last;
  for (int attempt = 0; attempt < options_.store_attempts_max; ++attempt) {
    if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
    NewPlayer candidate{.player_id = randomness_.player_id(), .display_name = std::string(name)};
    if (candidate.display_name.empty()) {
      candidate.display_name =
          "Guest " + candidate.player_id.substr(candidate.player_id.size() - 4);
    }
    absl::StatusOr<SignInResult> result =
        store_.SignIn(device_hash, candidate, token, clock_.Now(), deadline);
    // AlreadyExists: the random id was taken (2^-96 odds; or a test): draw another.
    if (result.ok() || (!Retryable(result.status()) &&
                        result.status().code() != absl::StatusCode::kAlreadyExists)) {
      return result;
    }
    last = result.status();
  }
  if (last.code() == absl::StatusCode::kAlreadyExists) {
    return absl::InternalError(absl::StrCat("no free player id: ", last.message()));
  }
  return last;
}

absl::StatusOr<Session> Accounts::NewSession(const std::string& player_id, bool mark_wallet_opened,
                                             absl::Time deadline) {
  const std::string refresh = randomness_.refresh_token();
  const absl::Time now = clock_.Now();
  RefreshTokenRecord record{.token_hash = auth::SecretHash(kRefreshPurpose, refresh),
                            .player_id = player_id,
                            .expires_at = now + options_.refresh_ttl};
  absl::StatusOr<PlayerRecord> player;
  for (int attempt = 0; attempt < options_.store_attempts_max; ++attempt) {
    if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
    player = store_.IssueRefreshToken(record, mark_wallet_opened, now, deadline);
    if (player.ok() || !Retryable(player.status())) break;
  }
  if (!player.ok()) return player.status();
  return SessionFor(*player, refresh, record.expires_at);
}

Session Accounts::SessionFor(const PlayerRecord& player, std::string refresh_token,
                             absl::Time refresh_expires_at) const {
  Session session;
  auth::Claims claims;
  session.access_token = signer_.Sign(player.player_id, player.role, options_.access_ttl, &claims);
  session.player_id = player.player_id;
  session.role = player.role;
  session.access_expires_at_ms = claims.expires_at_ms;
  session.refresh_token = std::move(refresh_token);
  session.refresh_expires_at_ms = absl::ToUnixMillis(refresh_expires_at);
  return session;
}

absl::StatusOr<Session> Accounts::Refresh(std::string_view refresh_token, absl::Time deadline) {
  if (!RefreshTokenLooksValid(refresh_token)) {
    return absl::UnauthenticatedError("malformed refresh token");
  }
  const std::string old_hash = auth::SecretHash(kRefreshPurpose, refresh_token);
  const std::string next = randomness_.refresh_token();
  const absl::Time now = clock_.Now();
  RefreshTokenRecord record{.token_hash = auth::SecretHash(kRefreshPurpose, next),
                            .player_id = "",
                            .expires_at = now + options_.refresh_ttl};
  absl::StatusOr<PlayerRecord> player;
  for (int attempt = 0; attempt < options_.store_attempts_max; ++attempt) {
    if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
    player = store_.RotateRefreshToken(old_hash, record, now, deadline);
    if (player.ok() || !Retryable(player.status())) break;
  }
  if (!player.ok()) return player.status();
  return SessionFor(*player, next, record.expires_at);
}

Profile Accounts::WithCoins(const PlayerRecord& player, absl::Time deadline) {
  Profile profile{.player_id = player.player_id,
                  .display_name = player.display_name,
                  .avatar_id = player.avatar_id,
                  .role = player.role,
                  .coins = -1,
                  .created_at_ms = absl::ToUnixMillis(player.created_at)};
  const absl::Time wallet_deadline =
      std::min(deadline, clock_.Now() + options_.wallet_read_timeout);
  if (CheckDeadline(wallet_deadline).ok()) {
    absl::StatusOr<int64_t> coins = wallet_.GetBalance(player.player_id, wallet_deadline);
    if (coins.ok()) profile.coins = *coins;
  }
  return profile;
}

absl::StatusOr<Profile> Accounts::GetProfile(const std::string& player_id, absl::Time deadline) {
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<PlayerRecord> player = store_.GetPlayer(player_id, deadline);
  if (!player.ok()) return player.status();
  return WithCoins(*player, deadline);
}

absl::StatusOr<Profile> Accounts::UpdateProfile(const std::string& player_id,
                                                std::string_view display_name, int avatar_id,
                                                absl::Time deadline) {
  std::optional<std::string> name;
  if (!display_name.empty()) {
    absl::StatusOr<std::string> normalized = NormalizeDisplayName(display_name);
    if (!normalized.ok()) return normalized.status();
    name = *std::move(normalized);
  }
  std::optional<int> avatar;
  if (avatar_id != 0) {
    if (avatar_id < 1 || avatar_id > options_.avatar_max) {
      return absl::InvalidArgumentError(
          absl::StrCat("avatar_id: must be 1..", options_.avatar_max, " (0: unchanged)"));
    }
    avatar = avatar_id;
  }
  if (!name.has_value() && !avatar.has_value()) return GetProfile(player_id, deadline);
  absl::StatusOr<PlayerRecord> player;
  for (int attempt = 0; attempt < options_.store_attempts_max; ++attempt) {
    if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
    player = store_.UpdateProfile(player_id, name, avatar, clock_.Now(), deadline);
    if (player.ok() || !Retryable(player.status())) break;
  }
  if (!player.ok()) return player.status();
  return WithCoins(*player, deadline);
}

absl::StatusOr<std::vector<PublicProfile>> Accounts::GetPublicProfiles(
    const std::vector<std::string>& player_ids, absl::Time deadline) {
  if (player_ids.size() > static_cast<size_t>(options_.public_profiles_max)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "player_ids: at most ", options_.public_profiles_max, " ids, got ", player_ids.size()));
  }
  for (size_t i = 0; i < player_ids.size(); ++i) {
    if (!auth::IsValidPlayerId(player_ids[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("player_ids[", i, "]: must be 1..64 chars of [A-Za-z0-9_-]"));
    }
  }
  std::vector<PublicProfile> out;
  if (player_ids.empty()) return out;
  std::vector<std::string> ids = player_ids;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<std::vector<PlayerRecord>> players = store_.GetPlayers(ids, deadline);
  if (!players.ok()) return players.status();
  out.reserve(players->size());
  for (PlayerRecord& p : *players) {
    out.push_back(PublicProfile{.player_id = std::move(p.player_id),
                                .display_name = std::move(p.display_name),
                                .avatar_id = p.avatar_id});
  }
  return out;
}

}  // namespace courtpiece::lobby
