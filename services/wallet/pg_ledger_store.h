// PgLedgerStore: the LedgerStore in PostgreSQL (schema `wallet`, migrations/), through
// libs/storage's PgPool. A batch of transfers (ApplyBatch; Apply is a batch of one) is ONE
// statement, `SELECT ... FROM wallet.apply_transfers(...)` (migration 0003), in autocommit
// (one round trip, one commit; READ COMMITTED): every row lock is taken in one global order
// (accounts by id, then keys), so batches never deadlock; the idempotency key is a unique
// constraint, so concurrent same-key transfers apply once; the function undoes a refused
// item itself (a subtransaction per item), so nothing is ever half-done.
// The pool's statement timeout bounds every statement; Unavailable from the pool (broken
// connection, commit outcome unknown) is passed up for the domain to retry with the key.
// Errors: the outcomes (FailedPrecondition overdraft, NotFound, AlreadyExists) carry client
// messages; an unexpected database error whose code would pass its text to clients
// (common::IsClientMessageCode) becomes Internal.
// Thread-safety: safe for concurrent use (as PgPool).
#ifndef COURTPIECE_SERVICES_WALLET_PG_LEDGER_STORE_H_
#define COURTPIECE_SERVICES_WALLET_PG_LEDGER_STORE_H_

#include "courtpiece/storage/pg_pool.h"
#include "services/wallet/ledger_store.h"

namespace courtpiece::wallet {

class PgLedgerStore final : public LedgerStore {
 public:
  // `pool` must outlive the store.
  explicit PgLedgerStore(storage::PgPool& pool) : pool_(pool) {}

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

 private:
  storage::PgPool& pool_;
};

}  // namespace courtpiece::wallet

#endif  // COURTPIECE_SERVICES_WALLET_PG_LEDGER_STORE_H_
