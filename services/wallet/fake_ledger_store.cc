#include "services/wallet/fake_ledger_store.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/wallet/account_id.h"

namespace courtpiece::wallet {
namespace {

bool Matches(absl::string_view wanted, absl::string_view account_id) {
  return wanted == kHouseAccount ? IsHouseShard(account_id) : wanted == account_id;
}

}  // namespace

absl::Status FakeLedgerStore::EnsureHouseShards(int shard_count, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < shard_count; ++i) balances_.try_emplace(HouseShardId(i), 0);
  return absl::OkStatus();
}

AppliedTransfer FakeLedgerStore::Replay(const Transfer& transfer) const {
  AppliedTransfer out;
  out.transfer_id = transfer.id;
  out.replayed = true;
  for (int64_t entry_id : transfer.entry_ids) {
    const LedgerEntry& e = entries_[entry_id - 1];
    out.balances_after.push_back({e.account_id, e.balance_after});
    out.created_at = e.created_at;
  }
  return out;
}

absl::Status FakeLedgerStore::CheckPostings(const TransferRecord& t) const {
  int64_t sum = 0;
  for (const Posting& p : t.postings) {
    sum += p.amount;
    bool creatable =
        std::count(t.create_if_missing.begin(), t.create_if_missing.end(), p.account_id) > 0;
    auto it = balances_.find(p.account_id);
    if (it == balances_.end() && !creatable) {
      return absl::NotFoundError(absl::StrCat("unknown account ", p.account_id));
    }
    int64_t before = it == balances_.end() ? 0 : it->second;
    if (before + p.amount < 0 && !IsHouseShard(p.account_id)) {
      return absl::FailedPreconditionError(
          absl::StrCat("account ", p.account_id, " would go below zero"));
    }
  }
  if (sum != 0) return absl::InvalidArgumentError("postings do not sum to zero");
  return absl::OkStatus();
}

absl::StatusOr<AppliedTransfer> FakeLedgerStore::ApplyOne(const TransferRecord& t) {
  received_keys_.push_back(t.idempotency_key);
  if (auto it = transfers_.find(t.idempotency_key); it != transfers_.end()) {
    if (it->second.fingerprint != t.fingerprint) {
      return absl::AlreadyExistsError(
          absl::StrCat("idempotency key ", t.idempotency_key, " was used for another request"));
    }
    return Replay(it->second);
  }
  if (absl::Status s = CheckPostings(t); !s.ok()) return s;
  Transfer& transfer = transfers_[t.idempotency_key];
  transfer = {next_transfer_id_++, t.fingerprint, t.metadata, {}};
  std::vector<Posting> sorted = t.postings;
  std::sort(sorted.begin(), sorted.end(),
            [](const Posting& a, const Posting& b) { return a.account_id < b.account_id; });
  const absl::Time now = absl::FromUnixSeconds(1'700'000'000) + absl::Seconds(transfer.id);
  for (const Posting& p : sorted) {
    int64_t& balance = balances_[p.account_id];
    balance += p.amount;
    entries_.push_back({static_cast<int64_t>(entries_.size()) + 1, transfer.id, p.account_id,
                        p.amount, balance, t.idempotency_key, t.metadata, now});
    transfer.entry_ids.push_back(entries_.back().entry_id);
  }
  AppliedTransfer out = Replay(transfer);
  out.replayed = false;
  return out;
}

absl::StatusOr<AppliedTransfer> FakeLedgerStore::Apply(const TransferRecord& t, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  ++apply_calls_;
  if (fail_next_ > 0) {
    --fail_next_;
    return fail_status_;
  }
  absl::StatusOr<AppliedTransfer> out = ApplyOne(t);
  if (lose_replies_ > 0 && out.ok()) {
    --lose_replies_;
    return absl::UnavailableError("connection lost after commit (injected)");
  }
  return out;
}

absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> FakeLedgerStore::ApplyBatch(
    const std::vector<const TransferRecord*>& transfers, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  ++apply_calls_;
  batch_sizes_.push_back(static_cast<int>(transfers.size()));
  if (fail_next_ > 0) {
    --fail_next_;
    return fail_status_;
  }
  std::vector<absl::StatusOr<AppliedTransfer>> out;
  for (const TransferRecord* t : transfers) out.push_back(ApplyOne(*t));
  if (lose_replies_ > 0) {
    --lose_replies_;
    return absl::UnavailableError("connection lost after commit (injected)");
  }
  return out;
}

absl::StatusOr<int64_t> FakeLedgerStore::Balance(absl::string_view account_id, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (account_id == kHouseAccount) {
    int64_t sum = 0;
    for (const auto& [id, balance] : balances_) {
      if (IsHouseShard(id)) sum += balance;
    }
    return sum;
  }
  auto it = balances_.find(std::string(account_id));
  if (it == balances_.end())
    return absl::NotFoundError(absl::StrCat("unknown account ", account_id));
  return it->second;
}

absl::StatusOr<std::vector<LedgerEntry>> FakeLedgerStore::History(absl::string_view account_id,
                                                                  int64_t before_entry_id,
                                                                  int limit, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LedgerEntry> out;
  for (auto it = entries_.rbegin(); it != entries_.rend() && static_cast<int>(out.size()) < limit;
       ++it) {
    if (before_entry_id > 0 && it->entry_id >= before_entry_id) continue;
    if (Matches(account_id, it->account_id)) out.push_back(*it);
  }
  return out;
}

absl::StatusOr<std::vector<PotSummary>> FakeLedgerStore::ListPots(
    absl::string_view after_account_id, int limit, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PotSummary> out;
  for (auto it = balances_.upper_bound(std::string(after_account_id));
       it != balances_.end() && static_cast<int>(out.size()) < limit; ++it) {
    if (!absl::StartsWith(it->first, "pot:") || it->second == 0) continue;
    PotSummary pot{it->first, it->second, absl::InfinitePast()};
    for (const LedgerEntry& e : entries_) {
      if (e.account_id == it->first) pot.last_entry_at = std::max(pot.last_entry_at, e.created_at);
    }
    out.push_back(std::move(pot));
  }
  return out;
}

absl::StatusOr<std::vector<AccountBalance>> FakeLedgerStore::PotPayers(absl::string_view pot_id,
                                                                       absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<int64_t> transfers;
  for (const LedgerEntry& e : entries_) {
    if (e.account_id == pot_id) transfers.insert(e.transfer_id);
  }
  std::map<std::string, int64_t> nets;
  for (const LedgerEntry& e : entries_) {
    if (e.account_id != pot_id && transfers.contains(e.transfer_id)) nets[e.account_id] -= e.amount;
  }
  std::vector<AccountBalance> out;
  for (const auto& [account, net] : nets) {
    if (net != 0) out.push_back({account, net});
  }
  return out;
}

void FakeLedgerStore::FailNext(int count, absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_ = count;
  fail_status_ = std::move(status);
}

void FakeLedgerStore::LoseNextReplies(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  lose_replies_ = count;
}

int64_t FakeLedgerStore::SumOfBalances() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t sum = 0;
  for (const auto& [id, balance] : balances_) sum += balance;
  return sum;
}

int FakeLedgerStore::TransferCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(transfers_.size());
}

int FakeLedgerStore::ApplyCalls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return apply_calls_;
}

std::vector<int> FakeLedgerStore::BatchSizes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batch_sizes_;
}

std::vector<std::string> FakeLedgerStore::ReceivedKeys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_keys_;
}

}  // namespace courtpiece::wallet
