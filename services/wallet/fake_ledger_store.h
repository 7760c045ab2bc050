// FakeLedgerStore: an in-memory LedgerStore with the same contract as PgLedgerStore, for
// unit tests. One mutex makes every call atomic; ApplyBatch applies its items in order
// under it. Failure injection (a batch counts as one call):
//   FailNext(n, status)  the next n calls of Apply/ApplyBatch fail with `status` before
//                        doing anything;
//   LoseNextReplies(n)   the next n Apply/ApplyBatch calls commit and then return
//                        Unavailable, like a connection that breaks after COMMIT.
// Thread-safety: safe for concurrent use (one std::mutex).
#ifndef COURTPIECE_SERVICES_WALLET_FAKE_LEDGER_STORE_H_
#define COURTPIECE_SERVICES_WALLET_FAKE_LEDGER_STORE_H_

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "services/wallet/ledger_store.h"

namespace courtpiece::wallet {

class FakeLedgerStore final : public LedgerStore {
 public:
  absl::Status EnsureHouseShards(int shard_count, absl::Time deadline) override;
  absl::StatusOr<AppliedTransfer> Apply(const TransferRecord& transfer,
                                        absl::Time deadline) override;
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

  void FailNext(int count, absl::Status status);
  void LoseNextReplies(int count);

  // Test views.
  int64_t SumOfBalances() const;
  int TransferCount() const;
  int ApplyCalls() const;                         // Apply and ApplyBatch calls
  std::vector<int> BatchSizes() const;            // items of each ApplyBatch call, in call order
  std::vector<std::string> ReceivedKeys() const;  // keys of every item received, in order

 private:
  struct Transfer {
    int64_t id;
    std::string fingerprint;
    TransferMetadata metadata;
    std::vector<int64_t> entry_ids;
  };
  AppliedTransfer Replay(const Transfer& transfer) const /* requires mu_ */;
  absl::StatusOr<AppliedTransfer> ApplyOne(const TransferRecord& t) /* requires mu_ */;
  absl::Status CheckPostings(const TransferRecord& t) const /* requires mu_ */;

  // std::mutex, not absl::Mutex: Debian's Abseil is not TSan-instrumented.
  mutable std::mutex mu_;  // guards every member below
  std::map<std::string, int64_t> balances_;
  std::map<std::string, Transfer> transfers_;  // by key
  std::vector<LedgerEntry> entries_;           // entry id = index + 1
  int64_t next_transfer_id_ = 1;
  int fail_next_ = 0;
  absl::Status fail_status_;
  int lose_replies_ = 0;
  int apply_calls_ = 0;
  std::vector<int> batch_sizes_;
  std::vector<std::string> received_keys_;
};

}  // namespace courtpiece::wallet

#endif  // COURTPIECE_SERVICES_WALLET_FAKE_LEDGER_STORE_H_
