#include "services/wallet/pg_ledger_store.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "courtpiece/common/client_errors.h"
#include "courtpiece/common/status_macros.h"
#include "services/wallet/account_id.h"

namespace courtpiece::wallet {
namespace {

using storage::PgParam;
using storage::PgResult;
using storage::PgRow;
using storage::PgTransaction;

constexpr int kRetryAttemptsMax = 3;  // writes: Aborted only; reads also Unavailable

// Elements that need no quoting: numbers, and t/f for booleans.
template <typename T>
std::string PlainArray(const std::vector<T>& items) {
  return absl::StrCat("{", absl::StrJoin(items, ","), "}");
}

constexpr char kApplyBatchSql[] = R"sql(
SELECT item, outcome, transfer_id, replayed,
       (extract(epoch FROM created_at) * 1000000)::bigint AS created_us,
       account_id, balance_after
  FROM wallet.apply_transfers($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[],
                              $6::int[], $7::text[], $8::bigint[], $9::boolean[]))sql";

absl::Status OutcomeStatus(const std::string& outcome, const PgRow& row, absl::string_view key) {
  std::string account = row.Nullable(5).value_or("");
  if (outcome == "overdraft") {
    return absl::FailedPreconditionError(absl::StrCat("account ", account, " would go below zero"));
  }
  if (outcome == "unknown") return absl::NotFoundError(absl::StrCat("unknown account ", account));
  if (outcome == "key_conflict") {
    return absl::AlreadyExistsError(
        absl::StrCat("idempotency key ", key, " was used for a different request"));
  }
  return absl::InternalError(absl::StrCat("unexpected outcome ", outcome));
}

// A database error the store did not expect (anything but the outcomes above): its text
// (Postgres message, SQL) is for the log only. Codes whose messages reach clients as written
// (common::IsClientMessageCode: a CHECK violation is FailedPrecondition, a data exception
// InvalidArgument, ...) become Internal; the others (Unavailable, DeadlineExceeded,
// Aborted, ...) keep their code and get a fixed client message at the gRPC boundary.
absl::Status Unexpected(const absl::Status& status) {
  if (status.ok() || !common::IsClientMessageCode(status.code())) return status;
  return absl::InternalError(status.message());
}

absl::Status ParseOkRow(const PgRow& row, AppliedTransfer& out) {
  ASSIGN_OR_RETURN(out.transfer_id, row.Int64(2));
  ASSIGN_OR_RETURN(out.replayed, row.Bool(3));
  ASSIGN_OR_RETURN(int64_t created_us, row.Int64(4));
  out.created_at = absl::FromUnixMicros(created_us);
  ASSIGN_OR_RETURN(std::string account, row.String(5));
  ASSIGN_OR_RETURN(int64_t balance, row.Int64(6));
  out.balances_after.push_back({std::move(account), balance});
  return absl::OkStatus();
}

// One result per item: the transfer, or its outcome status (OutcomeStatus); Internal for
// the whole batch if the reply is malformed (an item without rows, an item out of range).
absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> ParseBatch(
    const PgResult& result, const std::vector<const TransferRecord*>& transfers) {
  std::vector<AppliedTransfer> applied(transfers.size());
  std::vector<absl::Status> refused(transfers.size());
  for (const PgRow& row : result.rows()) {
    absl::StatusOr<int64_t> item = row.Int64(0);
    if (!item.ok()) return Unexpected(item.status());
    if (*item < 1 || *item > static_cast<int64_t>(transfers.size())) {
      return absl::InternalError(absl::StrCat("apply_transfers answered for item ", *item));
    }
    const size_t i = static_cast<size_t>(*item - 1);
    absl::StatusOr<std::string> outcome = row.String(1);
    if (!outcome.ok()) return Unexpected(outcome.status());
    if (*outcome != "ok") {
      refused[i] = OutcomeStatus(*outcome, row, transfers[i]->idempotency_key);
      continue;
    }
    if (absl::Status parsed = ParseOkRow(row, applied[i]); !parsed.ok()) return Unexpected(parsed);
  }
  std::vector<absl::StatusOr<AppliedTransfer>> out;
  for (size_t i = 0; i < transfers.size(); ++i) {
    if (!refused[i].ok()) {
      out.push_back(refused[i]);
    } else if (applied[i].balances_after.empty()) {
      return absl::InternalError(absl::StrCat("apply_transfers: item ", i + 1, " without rows"));
    } else {
      out.push_back(std::move(applied[i]));
    }
  }
  return out;
}

}  // namespace

absl::Status PgLedgerStore::EnsureHouseShards(int shard_count, absl::Time) {
  return Unexpected(pool_.RunWithRetry(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
    return tx
        .Exec(
            "INSERT INTO wallet.accounts (id, kind) SELECT 'house:' || n, 'house' "
            "FROM generate_series(0, $1::int - 1) AS n ON CONFLICT (id) DO NOTHING",
            {shard_count})
        .status();
  }));
}

absl::StatusOr<AppliedTransfer> PgLedgerStore::Apply(const TransferRecord& t, absl::Time deadline) {
  ASSIGN_OR_RETURN(std::vector<absl::StatusOr<AppliedTransfer>> results,
                   ApplyBatch({&t}, deadline));
  return std::move(results.front());
}

absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> PgLedgerStore::ApplyBatch(
    const std::vector<const TransferRecord*>& transfers, absl::Time) {
  std::vector<std::string> keys, fingerprints, table_ids, reasons, accounts;
  std::vector<int64_t> rounds, amounts;
  std::vector<int> post_items;
  std::vector<std::string> creates;  // "t"/"f"
  for (size_t i = 0; i < transfers.size(); ++i) {
    const TransferRecord& t = *transfers[i];
    keys.push_back(t.idempotency_key);
    fingerprints.push_back(t.fingerprint);
    table_ids.push_back(t.metadata.table_id);
    rounds.push_back(t.metadata.round);
    reasons.push_back(t.metadata.reason);
    for (const Posting& p : t.postings) {
      post_items.push_back(static_cast<int>(i) + 1);
      accounts.push_back(p.account_id);
      amounts.push_back(p.amount);
      const bool create = std::find(t.create_if_missing.begin(), t.create_if_missing.end(),
                                    p.account_id) != t.create_if_missing.end();
      creates.push_back(create ? "t" : "f");
    }
  }
  // One statement in autocommit (one round trip, one commit for the whole batch):
  // apply_transfers (0003) refuses items one by one inside it and is all or nothing as a
  // statement. Aborted means the statement was rolled back, so it is re-run; Unavailable is
  // "maybe applied" for every item and goes up to the Ledger, which retries with the keys.
  absl::StatusOr<PgResult> result = pool_.ExecAutocommit(
      kApplyBatchSql,
      {storage::PgTextArray(keys), storage::PgTextArray(fingerprints),
       storage::PgTextArray(table_ids), PlainArray(rounds), storage::PgTextArray(reasons),
       PlainArray(post_items), storage::PgTextArray(accounts), PlainArray(amounts),
       PlainArray(creates)},
      kRetryAttemptsMax);
  if (!result.ok()) return Unexpected(result.status());
  return ParseBatch(*result, transfers);
}

absl::StatusOr<int64_t> PgLedgerStore::Balance(absl::string_view account_id, absl::Time) {
  int64_t balance = 0;
  bool unknown = false;
  // A read: safe to run again when a backend dies under it (PgPool::RunIdempotent).
  absl::Status status =
      pool_.RunIdempotent(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
        if (account_id == kHouseAccount) {
          ASSIGN_OR_RETURN(PgRow row, tx.ExecOneRow("SELECT coalesce(sum(balance), 0)::bigint FROM "
                                                    "wallet.accounts WHERE kind = 'house'"));
          ASSIGN_OR_RETURN(balance, row.Int64(0));
          return absl::OkStatus();
        }
        ASSIGN_OR_RETURN(
            PgResult result,
            tx.Exec("SELECT balance FROM wallet.accounts WHERE id = $1", {account_id}));
        if (result.empty()) {
          unknown = true;
          return absl::NotFoundError(absl::StrCat("unknown account ", account_id));
        }
        ASSIGN_OR_RETURN(balance, result.row(0).Int64(0));
        return absl::OkStatus();
      });
  if (unknown) return status;
  if (!status.ok()) return Unexpected(status);
  return balance;
}

absl::StatusOr<std::vector<LedgerEntry>> PgLedgerStore::History(absl::string_view account_id,
                                                                int64_t before_entry_id, int limit,
                                                                absl::Time) {
  // "house" means every shard: a range over the (account_id, id) index per shard.
  const std::string filter = account_id == kHouseAccount
                                 ? "e.account_id IN (SELECT id FROM wallet.accounts "
                                   "WHERE kind = 'house' AND $1::text = 'house')"
                                 : "e.account_id = $1";
  const std::string sql = absl::StrCat(
      "SELECT e.id, e.transfer_id, e.account_id, e.amount, e.balance_after, t.idempotency_key, "
      "t.table_id, t.round, t.reason, (extract(epoch FROM t.created_at) * 1000000)::bigint "
      "FROM wallet.entries e JOIN wallet.transfers t ON t.id = e.transfer_id WHERE ",
      filter, " AND ($2::bigint = 0 OR e.id < $2) ORDER BY e.id DESC LIMIT $3");
  std::vector<LedgerEntry> out;
  absl::Status status =
      pool_.RunIdempotent(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
        out.clear();  // a retried read starts over
        ASSIGN_OR_RETURN(PgResult result, tx.Exec(sql, {account_id, before_entry_id, limit}));
        for (const PgRow& row : result.rows()) {
          LedgerEntry e;
          ASSIGN_OR_RETURN(e.entry_id, row.Int64(0));
          ASSIGN_OR_RETURN(e.transfer_id, row.Int64(1));
          ASSIGN_OR_RETURN(e.account_id, row.String(2));
          ASSIGN_OR_RETURN(e.amount, row.Int64(3));
          ASSIGN_OR_RETURN(e.balance_after, row.Int64(4));
          ASSIGN_OR_RETURN(e.idempotency_key, row.String(5));
          ASSIGN_OR_RETURN(e.metadata.table_id, row.String(6));
          ASSIGN_OR_RETURN(e.metadata.round, row.Int64(7));
          ASSIGN_OR_RETURN(e.metadata.reason, row.String(8));
          ASSIGN_OR_RETURN(int64_t created_us, row.Int64(9));
          e.created_at = absl::FromUnixMicros(created_us);
          out.push_back(std::move(e));
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return Unexpected(status);
  return out;
}

absl::StatusOr<std::vector<PotSummary>> PgLedgerStore::ListPots(absl::string_view after_account_id,
                                                                int limit, absl::Time) {
  // Pots are few next to players; the newest entry comes from the (account_id, id) index.
  constexpr char kSql[] = R"sql(
SELECT a.id, a.balance,
       (SELECT (extract(epoch FROM t.created_at) * 1000000)::bigint
          FROM wallet.entries e JOIN wallet.transfers t ON t.id = e.transfer_id
         WHERE e.account_id = a.id ORDER BY e.id DESC LIMIT 1)
  FROM wallet.accounts a
 WHERE a.kind = 'pot' AND a.balance <> 0 AND a.id COLLATE "C" > $1::text COLLATE "C"
 ORDER BY a.id COLLATE "C" LIMIT $2)sql";
  std::vector<PotSummary> out;
  absl::Status status =
      pool_.RunIdempotent(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
        out.clear();  // a retried read starts over
        ASSIGN_OR_RETURN(PgResult result, tx.Exec(kSql, {after_account_id, limit}));
        for (const PgRow& row : result.rows()) {
          PotSummary pot;
          ASSIGN_OR_RETURN(pot.account_id, row.String(0));
          ASSIGN_OR_RETURN(pot.balance, row.Int64(1));
          ASSIGN_OR_RETURN(int64_t last_us, row.Int64(2));
          pot.last_entry_at = absl::FromUnixMicros(last_us);
          out.push_back(std::move(pot));
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return Unexpected(status);
  return out;
}

absl::StatusOr<std::vector<AccountBalance>> PgLedgerStore::PotPayers(absl::string_view pot_id,
                                                                     absl::Time) {
  // entries has no index on transfer_id: the counterparties' entries are found by a scan of
  // entries filtered to the pot's transfers (hashed). The sweeper asks this only for pots
  // that look orphaned, which is rare; see docs/wallet.md.
  constexpr char kSql[] = R"sql(
SELECT e.account_id, (-sum(e.amount))::bigint AS net
  FROM wallet.entries e
 WHERE e.transfer_id IN (SELECT p.transfer_id FROM wallet.entries p WHERE p.account_id = $1)
   AND e.account_id <> $1
 GROUP BY e.account_id
HAVING sum(e.amount) <> 0
 ORDER BY e.account_id COLLATE "C")sql";
  std::vector<AccountBalance> out;
  absl::Status status =
      pool_.RunIdempotent(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
        out.clear();
        ASSIGN_OR_RETURN(PgResult result, tx.Exec(kSql, {pot_id}));
        for (const PgRow& row : result.rows()) {
          AccountBalance payer;
          ASSIGN_OR_RETURN(payer.account_id, row.String(0));
          ASSIGN_OR_RETURN(payer.balance, row.Int64(1));
          out.push_back(std::move(payer));
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return Unexpected(status);
  return out;
}

}  // namespace courtpiece::wallet
