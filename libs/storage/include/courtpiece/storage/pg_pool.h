// A bounded pool of PostgreSQL connections with transactions that report absl::Status.
//
//   PgPool pool(PgPoolOptions{.url = url, .size_max = 8});
//   absl::Status s = pool.RunWithRetry(3, [&](PgTransaction& tx) -> absl::Status {
//     ASSIGN_OR_RETURN(PgResult r, tx.Exec("SELECT balance FROM wallet.accounts WHERE id = $1",
//                                          {account_id}));
//     ...
//     return absl::OkStatus();
//   }, {.isolation = PgIsolation::kSerializable});
//
// Contract:
//  - Run() takes a connection (waiting at most acquire_timeout_ms; then Unavailable), opens a
//    transaction, calls `fn`, and commits when `fn` returns OK and every statement succeeded;
//    otherwise it rolls back and returns the first error. A failed statement dooms the whole
//    transaction (PostgreSQL semantics): later statements in it are not sent.
//  - No exception leaves this API: libpqxx errors become statuses (see docs/storage.md):
//      broken connection / admin shutdown / commit outcome unknown -> Unavailable
//      serialization failure (40001), deadlock (40P01), lock not available -> Aborted
//      unique violation (23505) -> AlreadyExists; other integrity violations, RAISE ->
//      FailedPrecondition data exceptions (class 22) -> InvalidArgument; statement timeout/cancel
//      -> DeadlineExceeded anything else -> Internal.
//  - A connection that failed (or is no longer open) is closed and replaced on a later
//    acquire. Before reuse, an idle connection the server closed (terminated backend,
//    restart) is noticed without a round trip and replaced; one idle longer than
//    health_check_idle_ms is also pinged. So only statements in flight see Unavailable.
//    The failed Run is never retried by the pool (its commit may or may not have happened).
//  - RunIdempotent() also re-runs on Unavailable: only for transactions that may commit
//    twice (reads).
//  - RunWithRetry() re-runs `fn` on Aborted only, at most max_attempts times in total, after
//    a short jittered backoff (retry_backoff_ms), so `fn` must reset whatever it writes
//    outside the transaction.
//
// Thread-safety: PgPool is thread-safe. A PgTransaction belongs to the thread running `fn`
// and must not escape it.
#ifndef COURTPIECE_STORAGE_PG_POOL_H_
#define COURTPIECE_STORAGE_PG_POOL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace courtpiece::storage {

// One statement parameter: NULL or the PostgreSQL text form of a value.
class PgParam {
 public:
  PgParam(std::nullptr_t) {}                                     // NOLINT: NULL
  PgParam(absl::string_view text) : text_(std::string(text)) {}  // NOLINT
  PgParam(std::string_view text) : text_(std::string(text)) {}   // NOLINT
  PgParam(const std::string& text) : text_(text) {}              // NOLINT
  PgParam(const char* text) : text_(std::string(text)) {}        // NOLINT
  template <typename Int>
  requires std::is_integral_v<Int> PgParam(Int v)
      : text_(IntegerText(v)) {}                                  // NOLINT: integers and bool
  PgParam(std::optional<std::string> v) : text_(std::move(v)) {}  // NOLINT
  // Raw bytes for a bytea parameter (sent in the hex input form).
  static PgParam Bytes(absl::string_view raw);

  bool is_null() const { return !text_.has_value(); }
  const std::string& text() const { return *text_; }  // requires !is_null()

 private:
  template <typename Int>
  static std::string IntegerText(Int v) {
    if constexpr (std::is_same_v<Int, bool>) {
      return v ? "true" : "false";
    } else {
      return std::to_string(v);
    }
  }
  std::optional<std::string> text_;
};

// One result row, values in PostgreSQL's text form (NULL is nullopt).
class PgRow {
 public:
  explicit PgRow(std::vector<std::optional<std::string>> values) : values_(std::move(values)) {}
  size_t size() const { return values_.size(); }
  bool IsNull(size_t col) const;
  const std::optional<std::string>& Nullable(size_t col) const;
  // Errors: OutOfRange for a bad column, FailedPrecondition for NULL or an unparsable value.
  absl::StatusOr<std::string> String(size_t col) const;
  absl::StatusOr<int64_t> Int64(size_t col) const;
  absl::StatusOr<bool> Bool(size_t col) const;
  absl::StatusOr<std::string> Bytes(size_t col) const;  // decodes bytea hex output

 private:
  std::vector<std::optional<std::string>> values_;
};

class PgResult {
 public:
  PgResult() = default;
  PgResult(std::vector<std::string> columns, std::vector<PgRow> rows, int64_t affected_rows)
      : columns_(std::move(columns)), rows_(std::move(rows)), affected_rows_(affected_rows) {}
  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }
  const PgRow& row(size_t i) const { return rows_.at(i); }
  const std::vector<PgRow>& rows() const { return rows_; }
  const std::vector<std::string>& columns() const { return columns_; }
  // Index of the column named `name`, or NotFound.
  absl::StatusOr<size_t> Column(absl::string_view name) const;
  // The command tag's row count: rows inserted/updated/deleted (or returned, for SELECT).
  int64_t affected_rows() const { return affected_rows_; }

 private:
  std::vector<std::string> columns_;
  std::vector<PgRow> rows_;
  int64_t affected_rows_ = 0;
};

enum class PgIsolation { kReadCommitted, kRepeatableRead, kSerializable };

struct PgTxOptions {
  PgIsolation isolation = PgIsolation::kReadCommitted;
};

struct PgTxHandle;  // the libpqxx transaction, private to the .cc

// A transaction in progress, handed to the function given to PgPool::Run.
class PgTransaction {
 public:
  // Runs ONE statement with $1.. parameters (text format; no multi-statement strings).
  // After the first failure every later call returns that same error (the transaction is
  // doomed).
  absl::StatusOr<PgResult> Exec(absl::string_view sql, const std::vector<PgParam>& params = {});
  // Exec, then FailedPrecondition unless exactly one row came back.
  absl::StatusOr<PgRow> ExecOneRow(absl::string_view sql, const std::vector<PgParam>& params = {});
  // SET LOCAL statement_timeout for the rest of this transaction.
  absl::Status SetStatementTimeout(int statement_timeout_ms);
  // The first error a statement returned, or OK.
  const absl::Status& first_error() const { return first_error_; }

  // Made by PgPool only (PgTxHandle is opaque).
  explicit PgTransaction(PgTxHandle* handle) : handle_(handle) {}

 private:
  PgTxHandle* handle_;
  absl::Status first_error_;
};

struct PgPoolOptions {
  std::string url;                   // libpq URL or key=value conninfo
  int size_max = 8;                  // connections open at most
  int acquire_timeout_ms = 2000;     // wait for a free connection, then Unavailable
  int connect_timeout_ms = 3000;     // libpq connect_timeout (whole seconds, at least 2)
  int statement_timeout_ms = 10000;  // per session; 0 disables
  int health_check_idle_ms = 30000;  // ping connections idle longer than this before reuse
  int retry_backoff_ms = 5;  // RunWithRetry sleeps U[0, this * 2^(n-1)] ms (cap 200) before retry n
  std::string application_name = "courtpiece";
};

// Connection pool. Connections open lazily, up to size_max.
class PgPool {
 public:
  using TxFn = std::function<absl::Status(PgTransaction&)>;

  explicit PgPool(PgPoolOptions options);
  ~PgPool();  // every Run must have returned
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  absl::Status Run(const TxFn& fn, PgTxOptions tx_options = {});
  // Run, retried while it returns Aborted, max_attempts >= 1 runs in total.
  absl::Status RunWithRetry(int max_attempts, const TxFn& fn, PgTxOptions tx_options = {});
  // For transactions that may safely commit more than once (reads): Run, retried while it
  // returns Aborted or Unavailable. Unavailable means the connection broke under the
  // statement (a backend terminated or the server restarting: an idle connection whose
  // backend is still exiting looks healthy); running a read again cannot apply anything
  // twice, so it is retried on a fresh connection. max_attempts >= 1 runs in total.
  absl::Status RunIdempotent(int max_attempts, const TxFn& fn, PgTxOptions tx_options = {});

  // Runs ONE statement outside an explicit transaction (autocommit): one round trip instead
  // of Run's three (BEGIN, statement, COMMIT). PostgreSQL runs a single statement
  // atomically: it has committed when this returns OK and left no trace when it returns an
  // error from the statement; Unavailable means the connection broke, so the statement may
  // or may not have committed (like a COMMIT whose reply was lost). Re-run on Aborted only
  // (serialization failure, deadlock, lock not available: the statement was rolled back),
  // at most max_attempts runs in total, with RunWithRetry's backoff. Use it for a write that
  // is one statement (e.g. a SQL function doing the whole write). The statement is prepared
  // once per pooled connection (keyed by its text), so pass a fixed SQL string with $n
  // parameters, never one with values spliced in.
  absl::StatusOr<PgResult> ExecAutocommit(absl::string_view sql,
                                          const std::vector<PgParam>& params = {},
                                          int max_attempts = 1);

  // SELECT 1 on a pooled connection: for readiness checks.
  absl::Status Ping();

  // Metrics (instantaneous / cumulative).
  int in_use() const;   // connections lent to a Run right now
  int waiting() const;  // Runs waiting for a connection
  int open() const;     // connections open (idle + in use + connecting)
  int64_t acquire_timeouts() const;
  int64_t connections_opened() const;
  int64_t connections_discarded() const;  // closed because broken or failed a health check

  const PgPoolOptions& options() const { return options_; }

 private:
  struct Conn;
  absl::StatusOr<std::unique_ptr<Conn>> Acquire();
  void Release(std::unique_ptr<Conn> conn, bool broken);
  absl::StatusOr<std::unique_ptr<Conn>> Connect();
  bool Healthy(Conn& conn);
  // Runs attempt_fn up to max_attempts times with backoff while it returns Aborted (and
  // Unavailable when retry_unavailable); returns its last status.
  absl::Status Retrying(int max_attempts, bool retry_unavailable,
                        absl::FunctionRef<absl::Status()> attempt_fn);
  absl::Status RunRetrying(int max_attempts, const TxFn& fn, PgTxOptions tx_options,
                           bool retry_unavailable);
  absl::Status RunOn(Conn& conn, const TxFn& fn, PgTxOptions tx_options, bool& broken);
  absl::StatusOr<PgResult> ExecAutocommitOnce(absl::string_view sql,
                                              const std::vector<PgParam>& params);

  const PgPoolOptions options_;
  const std::string conninfo_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Conn>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;
  int in_use_ ABSL_GUARDED_BY(mu_) = 0;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t acquire_timeouts_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t connections_opened_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t connections_discarded_ ABSL_GUARDED_BY(mu_) = 0;
};

// A PostgreSQL array literal of text for a `$n::text[]` parameter: every element
// double-quoted, `"` and `\` backslash-escaped (keys, names and reasons may hold both).
std::string PgTextArray(const std::vector<std::string>& items);

}  // namespace courtpiece::storage

#endif  // COURTPIECE_STORAGE_PG_POOL_H_
