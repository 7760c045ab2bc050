// Ledger: the wallet's domain. Validates every request, maps the client's "house" onto a
// house shard (chosen by a stable hash of the idempotency key, so a retry lands on the same
// shard), builds the canonical fingerprint that makes idempotency keys safe, retries
// idempotent work a bounded number of times, and hands validated transfers to a LedgerStore.
//
// Errors (absl codes): InvalidArgument for malformed requests, NotFound for unknown accounts,
// FailedPrecondition for an overdraft, AlreadyExists for a key reused with another request,
// Unavailable / DeadlineExceeded when the store cannot answer in time. A refused transfer
// moves nothing and leaves no trace: its key may be used again.
// Thread-safety: safe for concurrent use (no mutable state of its own).
#ifndef COURTPIECE_SERVICES_WALLET_LEDGER_H_
#define COURTPIECE_SERVICES_WALLET_LEDGER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "services/wallet/ledger_store.h"

namespace courtpiece::wallet {

struct LedgerOptions {
  int64_t starting_grant = 1000;  // coins paid by the house to each new player, > 0
  int house_shard_count = 8;      // 1..1024
  int legs_max = 16;
  int64_t leg_amount_max = 1'000'000'000'000;
  int idempotency_key_length_max = 128;
  int reason_length_max = 64;
  int history_page_size_default = 50;
  int history_page_size_max = 100;
  int store_attempts_max = 3;  // tries of one store call on Unavailable/Aborted
};

enum class Side { kUnspecified, kDebit, kCredit };

struct Leg {
  std::string account_id;
  Side side = Side::kUnspecified;
  int64_t amount = 0;
};

struct TransferRequest {
  std::string idempotency_key;
  std::vector<Leg> legs;
  TransferMetadata metadata;
};

struct TransferResult {
  int64_t transfer_id = 0;
  bool replayed = false;
  absl::Time created_at;
  std::vector<AccountBalance> balances_after;  // non-house accounts, sorted by id
};

struct OpenAccountResult {
  std::string account_id;
  bool created = false;
  int64_t balance = 0;
};

struct HistoryPage {
  std::vector<LedgerEntry> entries;
  std::string next_cursor;  // empty: no older entries
};

struct PotPage {
  std::vector<PotSummary> pots;
  std::string next_cursor;  // empty: no more pots
};

struct PotPayersResult {
  int64_t balance = 0;                 // the pot's balance now
  std::vector<AccountBalance> payers;  // net coins put in, "house" for the shards; by id
};

// Key prefix reserved for the wallet's own transfers (starting grants).
inline constexpr absl::string_view kReservedKeyPrefix = "wallet:";

class Ledger {
 public:
  // `store` and `clock` must outlive the Ledger.
  Ledger(LedgerStore& store, const Clock& clock, LedgerOptions options);

  // InvalidArgument for options out of range.
  static absl::Status ValidateOptions(const LedgerOptions& options);

  // Creates house shards (call once at startup).
  absl::Status Init(absl::Time deadline);

  absl::StatusOr<OpenAccountResult> OpenAccount(absl::string_view player_id, absl::Time deadline);
  absl::StatusOr<int64_t> GetBalance(absl::string_view account_id, absl::Time deadline);
  absl::StatusOr<TransferResult> Transfer(const TransferRequest& request, absl::Time deadline);
  absl::StatusOr<HistoryPage> History(absl::string_view account_id, int page_size,
                                      absl::string_view cursor, absl::Time deadline);

  // Pots with a balance other than 0, by id; page_size 0 = history_page_size_default.
  absl::StatusOr<PotPage> ListPots(int page_size, absl::string_view cursor, absl::Time deadline);
  // InvalidArgument when `pot_id` is not a pot id; NotFound for an unknown pot.
  absl::StatusOr<PotPayersResult> PotPayers(absl::string_view pot_id, absl::Time deadline);

  // The canonical form of a request (exposed for tests): equal iff the requests are equal up
  // to the order of legs.
  static std::string Fingerprint(const TransferRequest& request);

 private:
  absl::Status ValidateTransfer(const TransferRequest& request) const;
  absl::Status ValidateMetadata(const TransferMetadata& metadata) const;
  absl::StatusOr<TransferRecord> ToRecord(const TransferRequest& request) const;
  std::string HouseShardFor(absl::string_view idempotency_key) const;
  // Runs an idempotent store call up to store_attempts_max times while it fails with
  // Unavailable or Aborted and the deadline has not passed.
  template <typename T, typename Fn>
  absl::StatusOr<T> WithRetry(absl::Time deadline, Fn fn);
  absl::Status CheckDeadline(absl::Time deadline) const;

  LedgerStore& store_;
  const Clock& clock_;
  const LedgerOptions options_;
};

}  // namespace courtpiece::wallet

#endif  // COURTPIECE_SERVICES_WALLET_LEDGER_H_
