#include "services/wallet/ledger.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/status_macros.h"
#include "services/wallet/account_id.h"

namespace courtpiece::wallet {
namespace {

constexpr int kHouseShardCountMax = 1024;
constexpr absl::string_view kCursorPrefix = "e";
constexpr absl::string_view kOpenAccountKeyPrefix = "wallet:open-account:";

// Keys: visible ASCII, 0x21 '!' .. 0x7E '~' (no space: a key is an identifier, and "k" and
// "k " must not look like one key in logs).
bool IsKeyText(absl::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= '!' && c <= '~'; });
}

// Reasons: printable ASCII including the space, 0x20 ' ' .. 0x7E '~' (free text for humans;
// no control characters, no bytes >= 0x80).
bool IsReasonText(absl::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= ' ' && c <= '~'; });
}

bool IsTransient(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsAborted(status);
}

int64_t SignedAmount(const Leg& leg) { return leg.side == Side::kDebit ? -leg.amount : leg.amount; }

std::vector<AccountBalance> WithoutHouse(std::vector<AccountBalance> balances) {
  std::erase_if(balances, [](const AccountBalance& b) { return IsHouseShard(b.account_id); });
  return balances;
}

}  // namespace

Ledger::Ledger(LedgerStore& store, const Clock& clock, LedgerOptions options)
    : store_(store), clock_(clock), options_(std::move(options)) {}

absl::Status Ledger::ValidateOptions(const LedgerOptions& o) {
  if (o.starting_grant <= 0 || o.starting_grant > o.leg_amount_max) {
    return absl::InvalidArgumentError("starting grant must be in 1..leg_amount_max coins");
  }
  if (o.house_shard_count < 1 || o.house_shard_count > kHouseShardCountMax) {
    return absl::InvalidArgumentError("house shard count must be in 1..1024");
  }
  if (o.legs_max < 2 || o.store_attempts_max < 1 || o.history_page_size_max < 1 ||
      o.history_page_size_default < 1 || o.history_page_size_default > o.history_page_size_max) {
    return absl::InvalidArgumentError("ledger limits out of range");
  }
  return absl::OkStatus();
}

absl::Status Ledger::Init(absl::Time deadline) {
  return store_.EnsureHouseShards(options_.house_shard_count, deadline);
}

absl::Status Ledger::CheckDeadline(absl::Time deadline) const {
  if (clock_.Now() >= deadline) return absl::DeadlineExceededError("deadline passed");
  return absl::OkStatus();
}

std::string Ledger::HouseShardFor(absl::string_view idempotency_key) const {
  return HouseShardId(static_cast<int>(StableHash(idempotency_key) % options_.house_shard_count));
}

// Every store call is idempotent: reads trivially, Apply thanks to the key. Unavailable on
// Apply means "maybe applied"; retrying with the same key is safe because the store then
// returns the first result. Aborted is a transient conflict.
template <typename T, typename Fn>
absl::StatusOr<T> Ledger::WithRetry(absl::Time deadline, Fn fn) {
  absl::StatusOr<T> result;
  for (int attempt = 0; attempt < options_.store_attempts_max; ++attempt) {
    RETURN_IF_ERROR(CheckDeadline(deadline));
    result = fn();
    if (result.ok() || !IsTransient(result.status())) return result;
  }
  return result;
}

absl::StatusOr<OpenAccountResult> Ledger::OpenAccount(absl::string_view player_id,
                                                      absl::Time deadline) {
  if (!IsValidName(player_id)) {
    return absl::InvalidArgumentError("player id must be 1..64 chars of [A-Za-z0-9_-]");
  }
  OpenAccountResult out;
  out.account_id = PlayerAccountId(player_id);
  TransferRecord record;
  record.idempotency_key = absl::StrCat(kOpenAccountKeyPrefix, out.account_id);
  // The grant amount is left out of the fingerprint: changing the configured grant must
  // not make a second OpenAccount of an existing player fail.
  record.fingerprint = absl::StrCat("v1|open-account|", out.account_id);
  record.metadata.reason = "starting_grant";
  record.postings = {{HouseShardFor(record.idempotency_key), -options_.starting_grant},
                     {out.account_id, options_.starting_grant}};
  record.create_if_missing = {out.account_id};
  ASSIGN_OR_RETURN(AppliedTransfer applied, WithRetry<AppliedTransfer>(deadline, [&] {
                     return store_.Apply(record, deadline);
                   }));
  out.created = !applied.replayed;
  if (out.created) {
    for (const AccountBalance& b : applied.balances_after) {
      if (b.account_id == out.account_id) out.balance = b.balance;
    }
    return out;
  }
  ASSIGN_OR_RETURN(out.balance, GetBalance(out.account_id, deadline));
  return out;
}

absl::StatusOr<int64_t> Ledger::GetBalance(absl::string_view account_id, absl::Time deadline) {
  RETURN_IF_ERROR(ParseAccountId(account_id).status());
  return WithRetry<int64_t>(deadline, [&] { return store_.Balance(account_id, deadline); });
}

absl::Status Ledger::ValidateMetadata(const TransferMetadata& metadata) const {
  if (!metadata.table_id.empty() && !IsValidName(metadata.table_id)) {
    return absl::InvalidArgumentError("table id must be empty or 1..64 chars of [A-Za-z0-9_-]");
  }
  if (metadata.round < 0) return absl::InvalidArgumentError("round must be >= 0");
  if (metadata.reason.size() > static_cast<size_t>(options_.reason_length_max) ||
      !IsReasonText(metadata.reason)) {
    return absl::InvalidArgumentError(
        absl::StrCat("reason must be 0..", options_.reason_length_max,
                     " characters of printable ASCII, space included (0x20..0x7E)"));
  }
  return absl::OkStatus();
}

absl::Status Ledger::ValidateTransfer(const TransferRequest& request) const {
  const std::string& key = request.idempotency_key;
  if (key.empty()) return absl::InvalidArgumentError("idempotency key is required");
  if (key.size() > static_cast<size_t>(options_.idempotency_key_length_max) || !IsKeyText(key)) {
    return absl::InvalidArgumentError(
        absl::StrCat("idempotency key must be 1..", options_.idempotency_key_length_max,
                     " characters of printable ASCII without space (0x21..0x7E)"));
  }
  if (absl::StartsWith(key, kReservedKeyPrefix)) {
    return absl::InvalidArgumentError("idempotency keys starting with \"wallet:\" are reserved");
  }
  if (request.legs.size() < 2 || request.legs.size() > static_cast<size_t>(options_.legs_max)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a transfer has 2..", options_.legs_max, " legs, not ", request.legs.size()));
  }
  std::set<absl::string_view> seen;
  int64_t sum = 0;
  for (const Leg& leg : request.legs) {
    RETURN_IF_ERROR(ParseAccountId(leg.account_id).status());
    if (!seen.insert(leg.account_id).second) {
      return absl::InvalidArgumentError(absl::StrCat("account ", leg.account_id, " appears twice"));
    }
    if (leg.side == Side::kUnspecified) {
      return absl::InvalidArgumentError(absl::StrCat("leg ", leg.account_id, " has no side"));
    }
    if (leg.amount <= 0 || leg.amount > options_.leg_amount_max) {
      return absl::InvalidArgumentError(absl::StrCat("leg ", leg.account_id, " amount ", leg.amount,
                                                     " is not in 1..", options_.leg_amount_max));
    }
    sum += SignedAmount(leg);
  }
  if (sum != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("debits and credits differ by ", sum, " coins; legs must sum to zero"));
  }
  return ValidateMetadata(request.metadata);
}

std::string Ledger::Fingerprint(const TransferRequest& request) {
  std::vector<const Leg*> legs;
  for (const Leg& leg : request.legs) legs.push_back(&leg);
  std::sort(legs.begin(), legs.end(),
            [](const Leg* a, const Leg* b) { return a->account_id < b->account_id; });
  const TransferMetadata& m = request.metadata;
  std::string out =
      absl::StrCat("v1|table=", m.table_id.size(), ":", m.table_id, "|round=", m.round,
                   "|reason=", m.reason.size(), ":", m.reason, "|legs=");
  for (const Leg* leg : legs) absl::StrAppend(&out, leg->account_id, "=", SignedAmount(*leg), ";");
  return out;
}

absl::StatusOr<TransferRecord> Ledger::ToRecord(const TransferRequest& request) const {
  RETURN_IF_ERROR(ValidateTransfer(request));
  TransferRecord record;
  record.idempotency_key = request.idempotency_key;
  record.fingerprint = Fingerprint(request);
  record.metadata = request.metadata;
  for (const Leg& leg : request.legs) {
    ASSIGN_OR_RETURN(AccountKind kind, ParseAccountId(leg.account_id));
    std::string id =
        kind == AccountKind::kHouse ? HouseShardFor(request.idempotency_key) : leg.account_id;
    // A pot comes to life with the first transfer into it; a pot debited before it exists
    // stays unknown (NotFound).
    if (kind == AccountKind::kPot && leg.side == Side::kCredit) {
      record.create_if_missing.push_back(id);
    }
    record.postings.push_back({std::move(id), SignedAmount(leg)});
  }
  return record;
}

absl::StatusOr<TransferResult> Ledger::Transfer(const TransferRequest& request,
                                                absl::Time deadline) {
  ASSIGN_OR_RETURN(TransferRecord record, ToRecord(request));
  ASSIGN_OR_RETURN(AppliedTransfer applied, WithRetry<AppliedTransfer>(deadline, [&] {
                     return store_.Apply(record, deadline);
                   }));
  TransferResult out;
  out.transfer_id = applied.transfer_id;
  out.replayed = applied.replayed;
  out.created_at = applied.created_at;
  out.balances_after = WithoutHouse(std::move(applied.balances_after));
  return out;
}

absl::StatusOr<HistoryPage> Ledger::History(absl::string_view account_id, int page_size,
                                            absl::string_view cursor, absl::Time deadline) {
  RETURN_IF_ERROR(ParseAccountId(account_id).status());
  if (page_size == 0) page_size = options_.history_page_size_default;
  if (page_size < 0 || page_size > options_.history_page_size_max) {
    return absl::InvalidArgumentError(
        absl::StrCat("page size must be in 0..", options_.history_page_size_max));
  }
  int64_t before = 0;
  if (!cursor.empty() &&
      (!absl::StartsWith(cursor, kCursorPrefix) ||
       !absl::SimpleAtoi(cursor.substr(kCursorPrefix.size()), &before) || before <= 0)) {
    return absl::InvalidArgumentError("malformed cursor");
  }
  // NotFound for an unknown account, rather than an empty page.
  RETURN_IF_ERROR(GetBalance(account_id, deadline).status());
  ASSIGN_OR_RETURN(std::vector<LedgerEntry> entries,
                   WithRetry<std::vector<LedgerEntry>>(deadline, [&] {
                     return store_.History(account_id, before, page_size + 1, deadline);
                   }));
  HistoryPage page;
  if (entries.size() > static_cast<size_t>(page_size)) {
    entries.resize(page_size);
    page.next_cursor = absl::StrCat(kCursorPrefix, entries.back().entry_id);
  }
  page.entries = std::move(entries);
  return page;
}

absl::StatusOr<PotPage> Ledger::ListPots(int page_size, absl::string_view cursor,
                                         absl::Time deadline) {
  if (page_size == 0) page_size = options_.history_page_size_default;
  if (page_size < 0 || page_size > options_.history_page_size_max) {
    return absl::InvalidArgumentError(
        absl::StrCat("page size must be in 0..", options_.history_page_size_max));
  }
  // The cursor is the last pot id of the previous page.
  if (!cursor.empty()) {
    absl::StatusOr<AccountKind> kind = ParseAccountId(cursor);
    if (!kind.ok() || *kind != AccountKind::kPot) {
      return absl::InvalidArgumentError("malformed cursor");
    }
  }
  ASSIGN_OR_RETURN(std::vector<PotSummary> pots, WithRetry<std::vector<PotSummary>>(deadline, [&] {
                     return store_.ListPots(cursor, page_size + 1, deadline);
                   }));
  PotPage page;
  if (pots.size() > static_cast<size_t>(page_size)) {
    pots.resize(page_size);
    page.next_cursor = pots.back().account_id;
  }
  page.pots = std::move(pots);
  return page;
}

absl::StatusOr<PotPayersResult> Ledger::PotPayers(absl::string_view pot_id, absl::Time deadline) {
  ASSIGN_OR_RETURN(AccountKind kind, ParseAccountId(pot_id));
  if (kind != AccountKind::kPot) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", pot_id.substr(0, 80), "\" is not a pot id (pot:<table>:<round>)"));
  }
  PotPayersResult out;
  // NotFound for an unknown pot.
  ASSIGN_OR_RETURN(out.balance, GetBalance(pot_id, deadline));
  ASSIGN_OR_RETURN(std::vector<AccountBalance> stored,
                   WithRetry<std::vector<AccountBalance>>(
                       deadline, [&] { return store_.PotPayers(pot_id, deadline); }));
  // House shards are internal: one "house" payer with their sum.
  std::map<std::string, int64_t> nets;
  for (const AccountBalance& payer : stored) {
    nets[IsHouseShard(payer.account_id) ? std::string(kHouseAccount) : payer.account_id] +=
        payer.balance;
  }
  for (const auto& [account, net] : nets) {
    if (net != 0) out.payers.push_back({account, net});
  }
  return out;
}

}  // namespace courtpiece::wallet
