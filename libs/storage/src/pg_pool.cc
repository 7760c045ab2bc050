#include "courtpiece/storage/pg_pool.h"

#include <poll.h>

#include <algorithm>
#include <cassert>
#include <exception>
#include <pqxx/pqxx>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/common/check.h"
#include "courtpiece/storage/pg_errors.h"
#include "pg_internal.h"

namespace courtpiece::storage {

struct PgTxHandle {
  pqxx::transaction_base* tx;
};

struct PgPool::Conn {
  std::unique_ptr<pqxx::connection> pq;
  absl::Time last_used;
  // ExecAutocommit's statements prepared on this connection: SQL text -> statement name.
  std::unordered_map<std::string, std::string> prepared;
};

namespace internal {

absl::Status PgExceptionToStatus(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const pqxx::broken_connection& e) {
    return absl::UnavailableError(absl::StrCat("postgres connection broken: ", e.what()));
  } catch (const pqxx::in_doubt_error& e) {
    return absl::UnavailableError(absl::StrCat("postgres commit outcome unknown: ", e.what()));
  } catch (const pqxx::sql_error& e) {
    return PgErrorStatus(e.sqlstate(), e.what());
  } catch (const pqxx::serialization_failure& e) {
    return PgErrorStatus("40001", e.what());
  } catch (const pqxx::deadlock_detected& e) {
    return PgErrorStatus("40P01", e.what());
  } catch (const pqxx::statement_completion_unknown& e) {
    return PgErrorStatus("40003", e.what());
  } catch (const pqxx::transaction_rollback& e) {
    return PgErrorStatus("40000", e.what());
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("postgres: ", e.what()));
  } catch (...) {
    return absl::InternalError("postgres: unknown exception");
  }
}

std::string WithConnectTimeout(const std::string& url, int connect_timeout_ms,
                               const std::string& application_name) {
  const int seconds = std::max(2, (connect_timeout_ms + 999) / 1000);
  const bool is_url =
      absl::StartsWith(url, "postgresql://") || absl::StartsWith(url, "postgres://");
  if (!is_url) {
    return absl::StrCat(url, " connect_timeout=", seconds, " application_name=", application_name);
  }
  const char sep = url.find('?') == std::string::npos ? '?' : '&';
  return absl::StrCat(url, std::string(1, sep), "connect_timeout=", seconds,
                      "&application_name=", application_name);
}

PgResult ToPgResult(const pqxx::result& r) {
  std::vector<std::string> columns;
  columns.reserve(r.columns());
  for (pqxx::row::size_type c = 0; c < r.columns(); ++c) columns.emplace_back(r.column_name(c));
  std::vector<PgRow> rows;
  rows.reserve(r.size());
  for (const pqxx::row& row : r) {
    std::vector<std::optional<std::string>> values;
    values.reserve(row.size());
    for (const pqxx::field& f : row) {
      if (f.is_null()) {
        values.emplace_back(std::nullopt);
      } else {
        values.emplace_back(std::string(f.c_str(), f.size()));
      }
    }
    rows.emplace_back(std::move(values));
  }
  return PgResult(std::move(columns), std::move(rows), static_cast<int64_t>(r.affected_rows()));
}

// libpq's view of the params: NULL or the text, alive as long as `params`.
std::vector<const char*> ParamPointers(const std::vector<PgParam>& params) {
  std::vector<const char*> args;
  args.reserve(params.size());
  for (const PgParam& p : params) args.push_back(p.is_null() ? nullptr : p.text().c_str());
  return args;
}

}  // namespace internal

absl::StatusOr<PgResult> PgTransaction::Exec(absl::string_view sql,
                                             const std::vector<PgParam>& params) {
  if (!first_error_.ok()) return first_error_;
  try {
    std::vector<const char*> args = internal::ParamPointers(params);
    pqxx::result r =
        handle_->tx->exec_params(std::string(sql), pqxx::prepare::make_dynamic_params(args));
    return internal::ToPgResult(r);
  } catch (...) {
    first_error_ = internal::PgExceptionToStatus(std::current_exception());
    return first_error_;
  }
}

absl::StatusOr<PgRow> PgTransaction::ExecOneRow(absl::string_view sql,
                                                const std::vector<PgParam>& params) {
  absl::StatusOr<PgResult> r = Exec(sql, params);
  if (!r.ok()) return r.status();
  if (r->size() != 1) {
    return absl::FailedPreconditionError(absl::StrCat("expected 1 row, got ", r->size()));
  }
  return r->row(0);
}

absl::Status PgTransaction::SetStatementTimeout(int statement_timeout_ms) {
  return Exec(absl::StrCat("SET LOCAL statement_timeout = ", std::max(0, statement_timeout_ms)))
      .status();
}

PgPool::PgPool(PgPoolOptions options)
    : options_(std::move(options)),
      conninfo_(internal::WithConnectTimeout(options_.url, options_.connect_timeout_ms,
                                             options_.application_name)) {
  assert(options_.size_max >= 1);
}

PgPool::~PgPool() {
  absl::MutexLock lock(&mu_);
  assert(in_use_ == 0);
  idle_.clear();
}

absl::StatusOr<std::unique_ptr<PgPool::Conn>> PgPool::Connect() {
  try {
    auto conn = std::make_unique<Conn>();
    conn->pq = std::make_unique<pqxx::connection>(conninfo_);
    if (options_.statement_timeout_ms > 0) {
      pqxx::nontransaction setup(*conn->pq);
      setup.exec(absl::StrCat("SET statement_timeout = ", options_.statement_timeout_ms));
    }
    conn->last_used = absl::Now();
    return conn;
  } catch (...) {
    absl::Status s = internal::PgExceptionToStatus(std::current_exception());
    return absl::UnavailableError(absl::StrCat("postgres connect failed: ", s.message()));
  }
}

bool PgPool::Healthy(Conn& conn) {
  if (!conn.pq || !conn.pq->is_open()) return false;
  // An idle connection has nothing to read unless the server closed it (a terminated
  // backend sends FATAL then EOF), so a readable socket means broken; no round trip needed.
  pollfd pending{conn.pq->sock(), POLLIN, 0};
  if (pending.fd < 0 || ::poll(&pending, 1, 0) != 0) return false;
  if (absl::Now() - conn.last_used < absl::Milliseconds(options_.health_check_idle_ms)) {
    return true;
  }
  try {
    pqxx::nontransaction ping(*conn.pq);
    ping.exec("SELECT 1");
    return true;
  } catch (...) {
    return false;
  }
}

absl::StatusOr<std::unique_ptr<PgPool::Conn>> PgPool::Acquire() {
  const absl::Time deadline = absl::Now() + absl::Milliseconds(options_.acquire_timeout_ms);
  // Bounded: each pass either returns, or discards an unhealthy idle connection.
  while (true) {
    std::unique_ptr<Conn> conn;
    {
      absl::MutexLock lock(&mu_);
      ++waiting_;
      auto available = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return !idle_.empty() || open_ < options_.size_max;
      };
      const bool got = mu_.AwaitWithDeadline(absl::Condition(&available), deadline);
      --waiting_;
      if (!got) {
        ++acquire_timeouts_;
        return absl::UnavailableError(absl::StrCat("postgres pool: no connection within ",
                                                   options_.acquire_timeout_ms, " ms (", in_use_,
                                                   " in use, size_max ", options_.size_max, ")"));
      }
      ++in_use_;
      if (!idle_.empty()) {
        conn = std::move(idle_.back());
        idle_.pop_back();
      } else {
        ++open_;  // reserve the slot while connecting outside the lock
      }
    }
    if (!conn) {
      absl::StatusOr<std::unique_ptr<Conn>> fresh = Connect();
      absl::MutexLock lock(&mu_);
      if (!fresh.ok()) {
        --open_;
        --in_use_;
        return fresh.status();
      }
      ++connections_opened_;
      return fresh;
    }
    if (Healthy(*conn)) return conn;
    absl::MutexLock lock(&mu_);
    --open_;
    --in_use_;
    ++connections_discarded_;
  }
}

void PgPool::Release(std::unique_ptr<Conn> conn, bool broken) {
  if (!broken && conn->pq->is_open()) {
    conn->last_used = absl::Now();
    absl::MutexLock lock(&mu_);
    --in_use_;
    idle_.push_back(std::move(conn));
    return;
  }
  conn.reset();  // closes outside the lock
  absl::MutexLock lock(&mu_);
  --in_use_;
  --open_;
  ++connections_discarded_;
}

namespace {

// Runs fn in a transaction of type Tx; commits only when fn and every statement succeeded.
template <typename Tx>
absl::Status RunTx(pqxx::connection& pq, const PgPool::TxFn& fn, bool& statement_unavailable) {
  Tx tx(pq);
  PgTxHandle handle{&tx};
  PgTransaction txn(&handle);
  absl::Status s = fn(txn);
  if (s.ok()) s = txn.first_error();  // a swallowed statement error still dooms the txn
  statement_unavailable = txn.first_error().code() == absl::StatusCode::kUnavailable;
  if (!s.ok()) return s;  // ~Tx rolls back
  tx.commit();
  return absl::OkStatus();
}

}  // namespace

absl::Status PgPool::RunOn(Conn& conn, const TxFn& fn, PgTxOptions tx_options, bool& broken) {
  bool statement_unavailable = false;
  absl::Status status;
  try {
    switch (tx_options.isolation) {
      case PgIsolation::kReadCommitted:
        status =
            RunTx<pqxx::transaction<pqxx::read_committed>>(*conn.pq, fn, statement_unavailable);
        break;
      case PgIsolation::kRepeatableRead:
        status =
            RunTx<pqxx::transaction<pqxx::repeatable_read>>(*conn.pq, fn, statement_unavailable);
        break;
      case PgIsolation::kSerializable:
        status = RunTx<pqxx::transaction<pqxx::serializable>>(*conn.pq, fn, statement_unavailable);
        break;
    }
  } catch (...) {
    status = internal::PgExceptionToStatus(std::current_exception());
    statement_unavailable = status.code() == absl::StatusCode::kUnavailable;
  }
  broken = statement_unavailable || !conn.pq->is_open();
  return status;
}

absl::Status PgPool::Run(const TxFn& fn, PgTxOptions tx_options) {
  absl::StatusOr<std::unique_ptr<Conn>> conn = Acquire();
  if (!conn.ok()) return conn.status();
  bool broken = false;
  absl::Status status = RunOn(**conn, fn, tx_options, broken);
  Release(std::move(*conn), broken);
  return status;
}

namespace {

// Full jitter: uniform in [0, backoff_ms * 2^(attempt-1)], capped, so retrying conflicting
// transactions spread out instead of colliding again.
absl::Duration RetryBackoff(int backoff_ms, int attempt) {
  constexpr int kBackoffCapMs = 200;
  if (backoff_ms <= 0) return absl::ZeroDuration();
  const int ceiling_ms = std::min(kBackoffCapMs, backoff_ms << std::min(attempt - 1, 10));
  thread_local std::minstd_rand rng(std::random_device{}());
  std::uniform_int_distribution<int> pick(0, ceiling_ms * 1000);
  return absl::Microseconds(pick(rng));
}

}  // namespace

absl::Status PgPool::Retrying(int max_attempts, bool retry_unavailable,
                              absl::FunctionRef<absl::Status()> attempt_fn) {
  COURTPIECE_CHECK(max_attempts >= 1, "at least one attempt");
  absl::Status status;
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    if (attempt > 0) absl::SleepFor(RetryBackoff(options_.retry_backoff_ms, attempt));
    status = attempt_fn();
    const bool retry = status.code() == absl::StatusCode::kAborted ||
                       (retry_unavailable && status.code() == absl::StatusCode::kUnavailable);
    if (!retry) return status;
  }
  return status;
}

absl::Status PgPool::RunRetrying(int max_attempts, const TxFn& fn, PgTxOptions tx_options,
                                 bool retry_unavailable) {
  return Retrying(max_attempts, retry_unavailable, [&] { return Run(fn, tx_options); });
}

absl::Status PgPool::RunWithRetry(int max_attempts, const TxFn& fn, PgTxOptions tx_options) {
  return RunRetrying(max_attempts, fn, tx_options, /*retry_unavailable=*/false);
}

absl::Status PgPool::RunIdempotent(int max_attempts, const TxFn& fn, PgTxOptions tx_options) {
  return RunRetrying(max_attempts, fn, tx_options, /*retry_unavailable=*/true);
}

absl::StatusOr<PgResult> PgPool::ExecAutocommitOnce(absl::string_view sql,
                                                    const std::vector<PgParam>& params) {
  absl::StatusOr<std::unique_ptr<Conn>> conn = Acquire();
  if (!conn.ok()) return conn.status();
  absl::StatusOr<PgResult> result;
  bool broken = false;
  try {
    Conn& c = **conn;
    // Prepared once per connection (parsed and planned once, not on every call).
    auto [it, fresh] = c.prepared.try_emplace(std::string(sql), "");
    if (fresh) {
      it->second = absl::StrCat("courtpiece_autocommit_", c.prepared.size());
      c.pq->prepare(it->second, it->first);
    }
    std::vector<const char*> args = internal::ParamPointers(params);
    pqxx::nontransaction tx(*c.pq);  // sends nothing itself: no BEGIN, no COMMIT
    result = internal::ToPgResult(
        tx.exec_prepared(it->second, pqxx::prepare::make_dynamic_params(args)));
  } catch (...) {
    result = internal::PgExceptionToStatus(std::current_exception());
    broken = result.status().code() == absl::StatusCode::kUnavailable;
  }
  broken = broken || !(*conn)->pq->is_open();
  Release(std::move(*conn), broken);
  return result;
}

absl::StatusOr<PgResult> PgPool::ExecAutocommit(absl::string_view sql,
                                                const std::vector<PgParam>& params,
                                                int max_attempts) {
  absl::StatusOr<PgResult> result;
  // Aborted only: the statement was rolled back. Unavailable may have applied it.
  Retrying(max_attempts, /*retry_unavailable=*/false, [&] {
    result = ExecAutocommitOnce(sql, params);
    return result.status();
  }).IgnoreError();
  return result;
}

absl::Status PgPool::Ping() {
  return Run([](PgTransaction& tx) { return tx.Exec("SELECT 1").status(); });
}

int PgPool::in_use() const {
  absl::MutexLock lock(&mu_);
  return in_use_;
}
int PgPool::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_;
}
int PgPool::open() const {
  absl::MutexLock lock(&mu_);
  return open_;
}
int64_t PgPool::acquire_timeouts() const {
  absl::MutexLock lock(&mu_);
  return acquire_timeouts_;
}
int64_t PgPool::connections_opened() const {
  absl::MutexLock lock(&mu_);
  return connections_opened_;
}
int64_t PgPool::connections_discarded() const {
  absl::MutexLock lock(&mu_);
  return connections_discarded_;
}

}  // namespace courtpiece::storage
