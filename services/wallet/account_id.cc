#include "services/wallet/account_id.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace courtpiece::wallet {
namespace {

constexpr absl::string_view kPlayerPrefix = "player:";
constexpr absl::string_view kPotPrefix = "pot:";
constexpr absl::string_view kHouseShardPrefix = "house:";
constexpr size_t kRoundDigitsMax = 18;

bool IsCanonicalDecimal(absl::string_view text) {
  if (text.empty() || text.size() > kRoundDigitsMax) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return text == "0" || text[0] != '0';
}

absl::Status Malformed(absl::string_view account_id) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed account id \"", account_id.substr(0, 80),
                   "\": want player:<id>, house or pot:<table>:<round>"));
}

}  // namespace

bool IsValidName(absl::string_view name) {
  if (name.empty() || name.size() > static_cast<size_t>(kNameLengthMax)) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

absl::StatusOr<AccountKind> ParseAccountId(absl::string_view account_id) {
  if (account_id == kHouseAccount) return AccountKind::kHouse;
  if (absl::StartsWith(account_id, kPlayerPrefix)) {
    if (!IsValidName(account_id.substr(kPlayerPrefix.size()))) return Malformed(account_id);
    return AccountKind::kPlayer;
  }
  if (absl::StartsWith(account_id, kPotPrefix)) {
    absl::string_view rest = account_id.substr(kPotPrefix.size());
    size_t colon = rest.rfind(':');
    if (colon == absl::string_view::npos) return Malformed(account_id);
    if (!IsValidName(rest.substr(0, colon)) || !IsCanonicalDecimal(rest.substr(colon + 1))) {
      return Malformed(account_id);
    }
    return AccountKind::kPot;
  }
  return Malformed(account_id);
}

std::string PlayerAccountId(absl::string_view player_id) {
  return absl::StrCat(kPlayerPrefix, player_id);
}

std::string HouseShardId(int shard) { return absl::StrCat(kHouseShardPrefix, shard); }

bool IsHouseShard(absl::string_view account_id) {
  return absl::StartsWith(account_id, kHouseShardPrefix);
}

uint64_t StableHash(absl::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace courtpiece::wallet
