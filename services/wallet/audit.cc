#include "services/wallet/audit.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "courtpiece/common/status_macros.h"

namespace courtpiece::wallet {
namespace {

using storage::PgResult;
using storage::PgRow;
using storage::PgTransaction;

struct Check {
  const char* what;
  const char* sql;  // each row is one problem; columns are joined into its description
};

constexpr Check kChecks[] = {
    {"balance differs from the sum of its entries",
     "SELECT a.id, a.balance, coalesce(sum(e.amount), 0) FROM wallet.accounts a "
     "LEFT JOIN wallet.entries e ON e.account_id = a.id GROUP BY a.id, a.balance "
     "HAVING a.balance <> coalesce(sum(e.amount), 0) LIMIT 20"},
    {"entry balance_after differs from its account's running sum",
     "SELECT id, account_id, balance_after, running FROM (SELECT e.id, e.account_id, "
     "e.balance_after, sum(e.amount) OVER (PARTITION BY e.account_id ORDER BY e.id) AS running "
     "FROM wallet.entries e) x WHERE balance_after <> running LIMIT 20"},
    {"transfer with fewer than two entries or not summing to zero",
     "SELECT t.id, t.idempotency_key, count(e.id), coalesce(sum(e.amount), 0) "
     "FROM wallet.transfers t LEFT JOIN wallet.entries e ON e.transfer_id = t.id GROUP BY t.id "
     "HAVING count(e.id) < 2 OR coalesce(sum(e.amount), 0) <> 0 LIMIT 20"},
    {"entry naming a missing account or transfer",
     "SELECT e.id, e.account_id, e.transfer_id FROM wallet.entries e "
     "WHERE NOT EXISTS (SELECT 1 FROM wallet.accounts a WHERE a.id = e.account_id) "
     "OR NOT EXISTS (SELECT 1 FROM wallet.transfers t WHERE t.id = e.transfer_id) LIMIT 20"},
    {"non-house account below zero",
     "SELECT id, balance FROM wallet.accounts WHERE kind <> 'house' AND balance < 0 LIMIT 20"},
    {"coins created or lost: sum of balances / sum of entries is not zero",
     "SELECT b, e FROM (SELECT coalesce(sum(balance), 0) AS b FROM wallet.accounts) x, "
     "(SELECT coalesce(sum(amount), 0) AS e FROM wallet.entries) y WHERE b <> 0 OR e <> 0"},
};

std::string Describe(const PgRow& row) {
  std::vector<std::string> cells;
  for (size_t i = 0; i < row.size(); ++i) cells.push_back(row.Nullable(i).value_or("NULL"));
  return absl::StrJoin(cells, " ");
}

absl::Status Totals(PgTransaction& tx, AuditReport& report) {
  ASSIGN_OR_RETURN(
      PgRow row,
      tx.ExecOneRow(
          "SELECT (SELECT count(*) FROM wallet.accounts), "
          "(SELECT count(*) FROM wallet.transfers), (SELECT count(*) FROM wallet.entries), "
          "(SELECT coalesce(sum(balance), 0)::bigint FROM wallet.accounts), "
          "(SELECT coalesce(sum(balance), 0)::bigint FROM wallet.accounts "
          "WHERE kind = 'house')"));
  ASSIGN_OR_RETURN(report.accounts, row.Int64(0));
  ASSIGN_OR_RETURN(report.transfers, row.Int64(1));
  ASSIGN_OR_RETURN(report.entries, row.Int64(2));
  ASSIGN_OR_RETURN(report.sum_of_balances, row.Int64(3));
  ASSIGN_OR_RETURN(report.house_balance, row.Int64(4));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AuditReport> AuditLedger(storage::PgPool& pool) {
  AuditReport report;
  absl::Status status = pool.Run(
      [&](PgTransaction& tx) -> absl::Status {
        report = AuditReport();
        RETURN_IF_ERROR(Totals(tx, report));
        for (const Check& check : kChecks) {
          ASSIGN_OR_RETURN(PgResult result, tx.Exec(check.sql));
          for (const PgRow& row : result.rows()) {
            report.problems.push_back(absl::StrCat(check.what, ": ", Describe(row)));
          }
        }
        return absl::OkStatus();
      },
      {.isolation = storage::PgIsolation::kRepeatableRead});
  if (!status.ok()) return status;
  return report;
}

}  // namespace courtpiece::wallet
