// BatchingLedgerStore: group commit in front of any LedgerStore. Concurrent Apply calls are
// collected and handed to the inner store's ApplyBatch together (PgLedgerStore: one
// statement, one transaction, one WAL flush for the whole batch).
//
// How a batch forms (leader/follower, no thread of its own): a call queues its transfer.
// While fewer than `batches_in_flight_max` batches are being committed, the first queued
// caller not already leading becomes the leader: it waits up to `wait_max` (real time) for
// `transfers_max` transfers to be eligible, takes up to `transfers_max` of them, commits
// them with one ApplyBatch, hands every caller its own result and wakes them. Transfers
// that arrive while a batch is being committed queue up for the next one, so under load
// batches fill by themselves even with wait_max = 0.
// Batches in flight together never share an account: a transfer touching an account of a
// batch in flight waits for it (and so does every later transfer touching its accounts,
// so each account sees its transfers in arrival order). Concurrent batches therefore do
// not wait for each other's row locks in Postgres (held until after the commit's WAL
// flush), so one batch's CPU work overlaps another's flush.
// The house is the exception: its posting names a shard (Ledger::HouseShardFor, from the
// key), but any shard will do (the house has no floor, and a replay is found by its key,
// not its postings). A transfer whose house shard is held by a batch in flight is sent on
// the lowest-numbered shard no batch in flight holds, instead of waiting; only when every
// shard is held (fewer shards than batches in flight) does it wait like any other account.
//
// Outcomes are per transfer, exactly as Apply on the inner store would give them (see
// LedgerStore::ApplyBatch); an error of the whole batch (e.g. Unavailable: connection lost,
// maybe applied) is every item's result, and the Ledger retries each with its key.
// Deadlines: a transfer whose deadline (by the injected clock) has passed before a leader
// takes it into a batch is answered DeadlineExceeded and never sent; a waiting caller also
// gives up by itself at its deadline while it is still queued.
// Balance, History, ListPots, PotPayers and EnsureHouseShards go straight to the inner store.
// Thread-safety: safe for concurrent use (one std::mutex guards the queue). Each queued caller
// sleeps on its own condition variable and is woken only when something it waits for may
// have happened: its result is ready, it may lead the next batch, or (a leader gathering
// transfers for wait_max) the queue grew. Waking every caller on every change cost more
// CPU in context switches than the rest of the wallet's work per transfer.
#ifndef COURTPIECE_SERVICES_WALLET_BATCHING_LEDGER_STORE_H_
#define COURTPIECE_SERVICES_WALLET_BATCHING_LEDGER_STORE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "courtpiece/common/clock.h"
#include "services/wallet/ledger_store.h"

namespace courtpiece::wallet {

struct BatchOptions {
  int transfers_max = 32;                          // transfers per batch, 1..1000
  absl::Duration wait_max = absl::ZeroDuration();  // a leader's wait for more, 0..100ms
  int batches_in_flight_max = 1;                   // batches committing at once, 1..64
};

class BatchingLedgerStore final : public LedgerStore {
 public:
  // `inner` and `clock` must outlive this store; `options` must be valid.
  BatchingLedgerStore(LedgerStore& inner, const Clock& clock, BatchOptions options);

  // InvalidArgument for options out of range.
  static absl::Status ValidateOptions(const BatchOptions& options);

  // Also remembers `shard_count` (the house shards a transfer may be moved to).
  absl::Status EnsureHouseShards(int shard_count, absl::Time deadline) override;
  absl::StatusOr<AppliedTransfer> Apply(const TransferRecord& transfer,
                                        absl::Time deadline) override;
  // Straight to the inner store (no queueing).
  absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> ApplyBatch(
      const std::vector<const TransferRecord*>& transfers, absl::Time deadline) override;
  absl::StatusOr<int64_t> Balance(absl::string_view account_id, absl::Time deadline) override;
  absl::StatusOr<std::vector<LedgerEntry>> History(absl::string_view account_id,
                                                   int64_t before_entry_id, int limit,
                                                   absl::Time deadline) override;
  absl::StatusOr<std::vector<PotSummary>> ListPots(absl::string_view after_account_id, int limit,
                                                   absl::Time deadline) override;
  absl::StatusOr<std::vector<AccountBalance>> PotPayers(absl::string_view pot_id,
                                                        absl::Time deadline) override;

  // For tests: blocks until exactly `count` transfers wait in the queue (not yet taken).
  void WaitUntilQueuedForTest(int count);

 private:
  struct Waiter {
    const TransferRecord* record = nullptr;
    absl::Time deadline;
    bool taken = false;    // in a batch (or answered DeadlineExceeded by a leader)
    bool leading = false;  // its thread is leading a batch (maybe without its own transfer)
    bool done = false;
    absl::StatusOr<AppliedTransfer> result;
    std::condition_variable wake;  // its own: only what concerns it wakes it
  };
  // A queued transfer a new batch may take now: its queue position, and the house shard to
  // send its house posting to instead of its own ("" = as it is).
  struct Pick {
    size_t index = 0;
    std::string house_shard;
  };
  // The first queued waiter not already leading leads the next batch.
  bool IsNextLeader(const Waiter& self) const /* requires mu_ */;
  // After what a batch may take changed (the queue, the accounts in flight, the number of
  // batches in flight): wakes the leaders gathering transfers for wait_max and the waiter
  // that would lead the next batch, if another batch may be in flight.
  void WakeLeaders() /* requires mu_ */;
  // After the queue changed: WakeLeaders, and WaitUntilQueuedForTest.
  void QueueChanged() /* requires mu_ */;
  // The lowest-numbered house shard no batch in flight holds; "" if none (or no shards).
  std::string FreeHouseShard() const /* requires mu_ */;
  // What a new batch may take now, at most transfers_max: in queue order, skipping every
  // transfer that shares an account with a batch in flight or with an earlier skipped
  // transfer (so transfers touching one account are sent in arrival order, and a skipped
  // one is never overtaken on its accounts); a house shard in flight is not a conflict
  // while another shard is free (the transfer moves to it).
  std::vector<Pick> Eligible() const /* requires mu_ */;
  // Leads one batch with `lock` held by `self`; false (nothing done) if nothing is eligible.
  // Returns with `lock` held.
  bool Lead(std::unique_lock<std::mutex>& lock, Waiter& self) /* requires mu_ */;

  LedgerStore& inner_;
  const Clock& clock_;
  const BatchOptions options_;
  // std::mutex, not absl::Mutex: Debian's Abseil is not TSan-instrumented.
  std::mutex mu_;
  std::condition_variable queue_changed_for_test_;  // WaitUntilQueuedForTest only
  std::deque<Waiter*> queue_;                       // guarded by mu_
  std::vector<Waiter*> gathering_;  // leaders waiting up to wait_max, guarded by mu_
  int in_flight_ = 0;               // guarded by mu_
  int house_shard_count_ = 0;       // guarded by mu_ (from EnsureHouseShards)
  // Accounts of the batches in flight (with how many batches hold each), guarded by mu_.
  std::map<std::string, int, std::less<>> busy_accounts_;
};

}  // namespace courtpiece::wallet

#endif  // COURTPIECE_SERVICES_WALLET_BATCHING_LEDGER_STORE_H_
