// FakeLedgerStore: an in-memory LedgerStore with the same contract as PgLedgerStore, for
// unit tests. One mutex makes every call atomic. Failure injection:
//   FailNext(n, status)  the next n calls of Apply fail with `status` before doing anything;
//   LoseNextReplies(n)   the next n successful Applies commit and then return Unavailable,
//                        like a connection that breaks after COMMIT.
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
  absl::StatusOr<int64_t> Balance(absl::string_view account_id, absl::Time deadline) override;
  absl::StatusOr<std::vector<LedgerEntry>> History(absl::string_view account_id,
                                                   int64_t before_entry_id, int limit,
                                                   absl::Time deadline) override;

  void FailNext(int count, absl::Status status);
  void LoseNextReplies(int count);

  // Test views.
  int64_t SumOfBalances() const;
  int TransferCount() const;
  int ApplyCalls() const;

 private:
  struct Transfer {
    int64_t id;
    std::string fingerprint;
    TransferMetadata metadata;
    std::vector<int64_t> entry_ids;
  };
  AppliedTransfer Replay(const Transfer& transfer) const /* requires mu_ */;
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
};

}  // namespace courtpiece::wallet

#endif  // COURTPIECE_SERVICES_WALLET_FAKE_LEDGER_STORE_H_
