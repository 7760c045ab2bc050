#include "services/wallet/pg_ledger_store.h"

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

// Account ids are validated ([A-Za-z0-9_:-]), so quoting each element is enough.
std::string TextArray(const std::vector<std::string>& items) {
  return absl::StrCat("{",
                      absl::StrJoin(items, ",",
                                    [](std::string* out, const std::string& s) {
                                      absl::StrAppend(out, "\"", s, "\"");
                                    }),
                      "}");
}

constexpr char kApplySql[] = R"sql(
SELECT outcome, transfer_id, replayed,
       (extract(epoch FROM created_at) * 1000000)::bigint AS created_us,
       account_id, balance_after
  FROM wallet.apply_transfer($1, $2, $3, $4, $5, $6::text[], $7::bigint[], $8::text[]))sql";

absl::Status OutcomeStatus(const std::string& outcome, const PgRow& row, absl::string_view key) {
  std::string account = row.Nullable(4).value_or("");
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
  ASSIGN_OR_RETURN(out.transfer_id, row.Int64(1));
  ASSIGN_OR_RETURN(out.replayed, row.Bool(2));
  ASSIGN_OR_RETURN(int64_t created_us, row.Int64(3));
  out.created_at = absl::FromUnixMicros(created_us);
  ASSIGN_OR_RETURN(std::string account, row.String(4));
  ASSIGN_OR_RETURN(int64_t balance, row.Int64(5));
  out.balances_after.push_back({std::move(account), balance});
  return absl::OkStatus();
}

// The transfer, or its outcome status (OutcomeStatus), or Internal for a malformed reply.
absl::StatusOr<AppliedTransfer> ParseApplied(const PgResult& result, absl::string_view key) {
  AppliedTransfer out;
  for (const PgRow& row : result.rows()) {
    absl::StatusOr<std::string> outcome = row.String(0);
    if (!outcome.ok()) return Unexpected(outcome.status());
    if (*outcome != "ok") return OutcomeStatus(*outcome, row, key);
    if (absl::Status parsed = ParseOkRow(row, out); !parsed.ok()) return Unexpected(parsed);
  }
  if (out.balances_after.empty()) return absl::InternalError("transfer without entries");
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

absl::StatusOr<AppliedTransfer> PgLedgerStore::Apply(const TransferRecord& t, absl::Time) {
  std::vector<std::string> accounts;
  std::vector<std::string> amounts;
  for (const Posting& p : t.postings) {
    accounts.push_back(p.account_id);
    amounts.push_back(absl::StrCat(p.amount));
  }
  const std::string accounts_param = TextArray(accounts);
  const std::string amounts_param = absl::StrCat("{", absl::StrJoin(amounts, ","), "}");
  const std::string create_param = TextArray(t.create_if_missing);
  // One statement in autocommit (one round trip): apply_transfer is all or nothing by
  // itself (0002: a refusal undoes its own writes and comes back as a row). Aborted means
  // the statement was rolled back, so it is re-run; Unavailable is "maybe applied" and goes
  // up to the Ledger, which retries with the same key.
  absl::StatusOr<PgResult> result =
      pool_.ExecAutocommit(kApplySql,
                           {t.idempotency_key, t.fingerprint, t.metadata.table_id, t.metadata.round,
                            t.metadata.reason, accounts_param, amounts_param, create_param},
                           kRetryAttemptsMax);
  if (!result.ok()) return Unexpected(result.status());
  return ParseApplied(*result, t.idempotency_key);
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

}  // namespace courtpiece::wallet
