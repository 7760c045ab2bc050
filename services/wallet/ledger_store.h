// LedgerStore: where the ledger lives. The domain (Ledger) validates and decides; a store
// applies already-validated transfers atomically and answers queries. Two implementations:
// PgLedgerStore (PostgreSQL, schema `wallet`) and FakeLedgerStore (memory, for unit tests).
//
// Contract of every implementation:
//   * Apply is atomic (all postings or none) and idempotent by key: a key applied before
//     returns its stored result with replayed = true and moves nothing; a key applied before
//     with a different fingerprint is AlreadyExists. Concurrent calls with one key apply once.
//   * Errors: FailedPrecondition (a non-house account would go below zero), NotFound (an
//     account that does not exist and is not in create_if_missing), AlreadyExists (key reuse),
//     Unavailable (backend unreachable; the transfer may or may not have been applied, so
//     retry with the same key), DeadlineExceeded, Aborted (transient conflict).
//   * ApplyBatch applies several transfers in one go (one Postgres transaction: group
//     commit). Each item keeps exactly the outcome Apply would give it (its own overdraft,
//     NotFound, AlreadyExists, replay), in some serial order of the items; an item whose key
//     appears earlier in the same batch replays that item's result. An error of the whole
//     batch (the outer status: Unavailable, DeadlineExceeded, Internal, ...) applies to
//     every item; Unavailable means each item may or may not have been applied.
//   * The account id "house" in Balance/History means all house shards together.
// Thread-safety: implementations are safe for concurrent use.
#ifndef COURTPIECE_SERVICES_WALLET_LEDGER_STORE_H_
#define COURTPIECE_SERVICES_WALLET_LEDGER_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace courtpiece::wallet {

// One account's side of a transfer, with a stored account id ("house:3", never "house").
struct Posting {
  std::string account_id;
  int64_t amount = 0;  // signed: credit > 0, debit < 0; never 0

  friend bool operator==(const Posting&, const Posting&) = default;
};

struct TransferMetadata {
  std::string table_id;
  int64_t round = 0;
  std::string reason;
};

struct TransferRecord {
  std::string idempotency_key;
  std::string fingerprint;  // canonical form of the client request
  TransferMetadata metadata;
  std::vector<Posting> postings;               // each account once; amounts sum to zero
  std::vector<std::string> create_if_missing;  // accounts of postings to create at 0
};

struct AccountBalance {
  std::string account_id;
  int64_t balance = 0;

  friend bool operator==(const AccountBalance&, const AccountBalance&) = default;
};

struct AppliedTransfer {
  int64_t transfer_id = 0;
  bool replayed = false;
  absl::Time created_at;
  std::vector<AccountBalance> balances_after;  // one per posting, sorted by account id
};

struct LedgerEntry {
  int64_t entry_id = 0;
  int64_t transfer_id = 0;
  std::string account_id;  // stored id (a house shard for house entries)
  int64_t amount = 0;
  int64_t balance_after = 0;
  std::string idempotency_key;
  TransferMetadata metadata;
  absl::Time created_at;
};

// A pot holding coins (ListPots).
struct PotSummary {
  std::string account_id;
  int64_t balance = 0;
  absl::Time last_entry_at;  // created_at of the newest transfer touching the pot

  friend bool operator==(const PotSummary&, const PotSummary&) = default;
};

class LedgerStore {
 public:
  virtual ~LedgerStore() = default;

  // Creates house:0..shard_count-1 at balance 0 where missing. Idempotent.
  virtual absl::Status EnsureHouseShards(int shard_count, absl::Time deadline) = 0;

  virtual absl::StatusOr<AppliedTransfer> Apply(const TransferRecord& transfer,
                                                absl::Time deadline) = 0;

  // One result per transfer, in the order of `transfers` (non-empty, no null pointers).
  virtual absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> ApplyBatch(
      const std::vector<const TransferRecord*>& transfers, absl::Time deadline) = 0;

  // NotFound for an unknown account.
  virtual absl::StatusOr<int64_t> Balance(absl::string_view account_id, absl::Time deadline) = 0;

  // Entries of the account with entry_id < before_entry_id (0: no bound), newest first, at
  // most `limit`. An unknown account has no entries (NotFound is the caller's business).
  virtual absl::StatusOr<std::vector<LedgerEntry>> History(absl::string_view account_id,
                                                           int64_t before_entry_id, int limit,
                                                           absl::Time deadline) = 0;

  // Pots (kind pot) with a balance other than 0 and an id greater than `after_account_id`
  // (byte order; "" = from the start), ascending by id, at most `limit`.
  virtual absl::StatusOr<std::vector<PotSummary>> ListPots(absl::string_view after_account_id,
                                                           int limit, absl::Time deadline) = 0;

  // Over every transfer with an entry of `pot_id`: for each other stored account (house
  // shards separately), -(sum of its entries in those transfers), ascending by account id;
  // accounts netting 0 are omitted. An unknown pot has no payers.
  virtual absl::StatusOr<std::vector<AccountBalance>> PotPayers(absl::string_view pot_id,
                                                                absl::Time deadline) = 0;
};

}  // namespace courtpiece::wallet

#endif  // COURTPIECE_SERVICES_WALLET_LEDGER_STORE_H_
