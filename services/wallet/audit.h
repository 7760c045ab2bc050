// The ledger audit: recomputes every balance from the entries, in one consistent snapshot
// (REPEATABLE READ, so it can run beside live traffic), and checks
//   * each account's balance equals the sum of its entries;
//   * each entry's balance_after equals the running sum of its account's entries;
//   * each transfer has >= 2 entries summing to zero;
//   * each entry names an existing account and transfer (the triggers of migration 0005
//     refuse any other; this finds one written with triggers off);
//   * conservation: the sum of all balances (and of all entries) is zero;
//   * no account but a house shard is below zero.
// Used by courtpiece-wallet-audit and by the integration tests.
// Thread-safety: a free function; safe to call concurrently.
#ifndef COURTPIECE_SERVICES_WALLET_AUDIT_H_
#define COURTPIECE_SERVICES_WALLET_AUDIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "courtpiece/storage/pg_pool.h"

namespace courtpiece::wallet {

struct AuditReport {
  int64_t accounts = 0;
  int64_t transfers = 0;
  int64_t entries = 0;
  int64_t sum_of_balances = 0;
  int64_t house_balance = 0;
  std::vector<std::string> problems;  // empty: the ledger is consistent (at most 20 per check)

  bool ok() const { return problems.empty(); }
};

// Errors are the pool's (Unavailable, ...); inconsistencies are problems in the report.
absl::StatusOr<AuditReport> AuditLedger(storage::PgPool& pool);

}  // namespace courtpiece::wallet

#endif  // COURTPIECE_SERVICES_WALLET_AUDIT_H_
