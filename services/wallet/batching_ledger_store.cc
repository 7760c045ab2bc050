#include "services/wallet/batching_ledger_store.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "services/wallet/account_id.h"

namespace courtpiece::wallet {
namespace {

constexpr int kTransfersMax = 1000;
constexpr absl::Duration kWaitMax = absl::Milliseconds(100);
constexpr int kBatchesInFlightMax = 64;
// A queued caller re-checks its deadline at least this often (the injected clock may be a
// fake one that does not move with real time).
constexpr absl::Duration kDeadlineRecheck = absl::Seconds(1);

std::chrono::nanoseconds ToChrono(absl::Duration d) {
  return std::chrono::nanoseconds(absl::ToInt64Nanoseconds(std::max(d, absl::ZeroDuration())));
}

}  // namespace

BatchingLedgerStore::BatchingLedgerStore(LedgerStore& inner, const Clock& clock,
                                         BatchOptions options)
    : inner_(inner), clock_(clock), options_(options) {}

absl::Status BatchingLedgerStore::ValidateOptions(const BatchOptions& o) {
  if (o.transfers_max < 1 || o.transfers_max > kTransfersMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch size must be in 1..", kTransfersMax, " transfers"));
  }
  if (o.wait_max < absl::ZeroDuration() || o.wait_max > kWaitMax) {
    return absl::InvalidArgumentError("batch wait must be in 0..100ms");
  }
  if (o.batches_in_flight_max < 1 || o.batches_in_flight_max > kBatchesInFlightMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("batches in flight must be in 1..", kBatchesInFlightMax));
  }
  return absl::OkStatus();
}

absl::Status BatchingLedgerStore::EnsureHouseShards(int shard_count, absl::Time deadline) {
  absl::Status s = inner_.EnsureHouseShards(shard_count, deadline);
  if (s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    house_shard_count_ = std::max(house_shard_count_, shard_count);
  }
  return s;
}

absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> BatchingLedgerStore::ApplyBatch(
    const std::vector<const TransferRecord*>& transfers, absl::Time deadline) {
  return inner_.ApplyBatch(transfers, deadline);
}

absl::StatusOr<int64_t> BatchingLedgerStore::Balance(absl::string_view account_id,
                                                     absl::Time deadline) {
  return inner_.Balance(account_id, deadline);
}

absl::StatusOr<std::vector<LedgerEntry>> BatchingLedgerStore::History(absl::string_view account_id,
                                                                      int64_t before_entry_id,
                                                                      int limit,
                                                                      absl::Time deadline) {
  return inner_.History(account_id, before_entry_id, limit, deadline);
}

absl::StatusOr<std::vector<PotSummary>> BatchingLedgerStore::ListPots(
    absl::string_view after_account_id, int limit, absl::Time deadline) {
  return inner_.ListPots(after_account_id, limit, deadline);
}

absl::StatusOr<std::vector<AccountBalance>> BatchingLedgerStore::PotPayers(absl::string_view pot_id,
                                                                           absl::Time deadline) {
  return inner_.PotPayers(pot_id, deadline);
}

absl::StatusOr<AppliedTransfer> BatchingLedgerStore::Apply(const TransferRecord& transfer,
                                                           absl::Time deadline) {
  Waiter self;
  self.record = &transfer;
  self.deadline = deadline;
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&self);
  QueueChanged();
  while (!self.done) {
    if (self.taken) {
      self.wake.wait(lock);  // the leader of its batch wakes it when the result is there
      continue;
    }
    const absl::Time now = clock_.Now();
    if (now >= deadline) {
      queue_.erase(std::find(queue_.begin(), queue_.end(), &self));
      QueueChanged();
      return absl::DeadlineExceededError("deadline passed while waiting for a batch");
    }
    if (in_flight_ < options_.batches_in_flight_max && IsNextLeader(self) && Lead(lock, self)) {
      continue;
    }
    self.wake.wait_for(lock, ToChrono(std::min(deadline - now, kDeadlineRecheck)));
  }
  return std::move(self.result);
}

bool BatchingLedgerStore::IsNextLeader(const Waiter& self) const {
  for (const Waiter* w : queue_) {
    if (!w->leading) return w == &self;
  }
  return false;
}

void BatchingLedgerStore::WakeLeaders() {
  for (Waiter* leader : gathering_) leader->wake.notify_one();
  if (in_flight_ >= options_.batches_in_flight_max) return;
  for (Waiter* w : queue_) {
    if (!w->leading) {
      w->wake.notify_one();
      return;
    }
  }
}

void BatchingLedgerStore::QueueChanged() {
  WakeLeaders();
  queue_changed_for_test_.notify_all();
}

std::string BatchingLedgerStore::FreeHouseShard() const {
  for (int i = 0; i < house_shard_count_; ++i) {
    std::string shard = HouseShardId(i);
    if (!busy_accounts_.contains(shard)) return shard;
  }
  return "";
}

std::vector<BatchingLedgerStore::Pick> BatchingLedgerStore::Eligible() const {
  const size_t transfers_max = static_cast<size_t>(options_.transfers_max);
  const std::string free_shard = FreeHouseShard();
  std::set<std::string_view> skipped_accounts;
  std::vector<Pick> out;
  for (size_t i = 0; i < queue_.size() && out.size() < transfers_max; ++i) {
    const std::vector<Posting>& postings = queue_[i]->record->postings;
    Pick pick;
    pick.index = i;
    bool conflict = false;
    for (const Posting& p : postings) {
      const bool busy = busy_accounts_.contains(p.account_id);
      if (!free_shard.empty() && IsHouseShard(p.account_id)) {
        if (busy) pick.house_shard = free_shard;  // moved, never a conflict
        continue;
      }
      conflict = conflict || busy || skipped_accounts.contains(p.account_id);
    }
    if (conflict) {
      for (const Posting& p : postings) {
        if (free_shard.empty() || !IsHouseShard(p.account_id)) {
          skipped_accounts.insert(p.account_id);
        }
      }
    } else {
      out.push_back(std::move(pick));
    }
  }
  return out;
}

bool BatchingLedgerStore::Lead(std::unique_lock<std::mutex>& lock, Waiter& self) {
  if (Eligible().empty()) return false;
  self.leading = true;
  ++in_flight_;
  const size_t transfers_max = static_cast<size_t>(options_.transfers_max);
  if (options_.wait_max > absl::ZeroDuration()) {
    gathering_.push_back(&self);
    self.wake.wait_for(lock, ToChrono(options_.wait_max),
                       [&] { return Eligible().size() >= transfers_max; });
    std::erase(gathering_, &self);
  }
  // Take the batch; a transfer whose deadline has passed is answered without being sent.
  std::vector<Waiter*> batch;
  std::vector<const TransferRecord*> records;
  std::deque<TransferRecord> moved;  // copies of the records sent on another house shard
  std::set<std::string> accounts;    // of the batch, busy until it is committed
  const absl::Time now = clock_.Now();
  for (Pick& pick : Eligible()) {
    Waiter* w = queue_[pick.index];
    w->taken = true;
    if (now >= w->deadline) {
      w->result = absl::DeadlineExceededError("deadline passed while waiting for a batch");
      w->done = true;
      w->wake.notify_one();
      continue;
    }
    const TransferRecord* record = w->record;
    if (!pick.house_shard.empty()) {
      TransferRecord& copy = moved.emplace_back(*record);
      for (Posting& p : copy.postings) {
        if (IsHouseShard(p.account_id)) p.account_id = pick.house_shard;
      }
      record = &copy;
    }
    batch.push_back(w);
    records.push_back(record);
    for (const Posting& p : record->postings) accounts.insert(p.account_id);
  }
  std::erase_if(queue_, [](const Waiter* w) { return w->taken; });
  for (const std::string& a : accounts) ++busy_accounts_[a];
  // Another waiter may lead a batch of its own if another may be in flight.
  QueueChanged();
  if (!batch.empty()) {
    absl::Time deadline = absl::InfinitePast();
    for (const Waiter* w : batch) deadline = std::max(deadline, w->deadline);
    lock.unlock();
    absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> results =
        inner_.ApplyBatch(records, deadline);
    if (results.ok() && results->size() != batch.size()) {
      results = absl::InternalError(
          absl::StrCat("the store answered ", results->size(), " of ", batch.size(), " transfers"));
    }
    lock.lock();
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i]->result = results.ok() ? std::move((*results)[i]) : results.status();
      batch[i]->done = true;
      batch[i]->wake.notify_one();
    }
  }
  for (const std::string& a : accounts) {
    auto it = busy_accounts_.find(a);
    if (--it->second == 0) busy_accounts_.erase(it);
  }
  self.leading = false;
  --in_flight_;
  WakeLeaders();  // its accounts are free again, and one more batch may be in flight
  return true;
}

void BatchingLedgerStore::WaitUntilQueuedForTest(int count) {
  std::unique_lock<std::mutex> lock(mu_);
  queue_changed_for_test_.wait(lock, [&] { return queue_.size() == static_cast<size_t>(count); });
}

}  // namespace courtpiece::wallet
