// PotSweeper: refunds orphaned round pots. A pot `pot:<table>:<round>` holds coins between a
// round's stakes and its payout; the table that staked it settles it. When the table's state
// is gone (Redis lost it, or a bug removed it), nobody will: the sweeper gives the coins
// back to whoever put them in. See docs/table-service.md, "Orphaned pots".
//
// One pass (RunPass), over at most `pots_per_pass_max` pots listed by the wallet (paged; the
// next pass goes on from where this one stopped, and starts over after the last pot):
//   - a pot whose table still has state in the TableStore (Load OK) is left alone: its owner,
//     live or future (failover), settles it; a Load error other than NotFound skips it too;
//   - a pot whose newest entry is younger than `grace_ms` is left alone (a table being
//     created, or a store that has not caught up);
//   - otherwise the pot's payers (PotLedgerPort::PotPayers: the net coins each other account
//     put in) are refunded in ONE transfer with key `<table>:<round>:sweep_refund`: the pot
//     -balance, each payer +its net ("house" for the house). Only when every net is > 0,
//     they sum exactly to the pot's balance and the transfer fits in `legs_max` legs; else
//     an error is logged and the pot skipped (a human looks).
// The key makes it idempotent: a second pass, a retry after Unavailable, or another instance
// sweeping the same pot moves nothing twice (the wallet replays the key). Every wallet call
// carries a deadline of now + `call_timeout_ms`.
//
// Errors: RunPass returns the status of listing the pots when that fails (nothing else
// happened); a failure on one pot is counted in the report and the pass goes on.
// Thread-safety: not thread-safe; one thread runs the passes.
#ifndef COURTPIECE_SERVICES_TABLE_POT_SWEEPER_H_
#define COURTPIECE_SERVICES_TABLE_POT_SWEEPER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/log.h"
#include "services/table/table_store.h"

namespace courtpiece::table_service {

struct LedgerPot {
  std::string pot_id;  // "pot:<table>:<round>"
  int64_t balance_coins = 0;
  absl::Time last_entry_at;
};

struct LedgerPotPage {
  std::vector<LedgerPot> pots;
  std::string next_cursor;  // empty: no more pots
};

struct PotPayer {
  std::string account_id;  // "player:<id>", "house", ...
  int64_t net_coins = 0;   // put in, net of what it got back; never 0

  friend bool operator==(const PotPayer&, const PotPayer&) = default;
};

struct PotPayers {
  int64_t balance_coins = 0;  // the pot's balance now
  std::vector<PotPayer> payers;
};

struct PotRefundLeg {
  std::string account_id;
  int64_t amount_coins = 0;  // signed: < 0 debit (the pot), > 0 credit (a payer)

  friend bool operator==(const PotRefundLeg&, const PotRefundLeg&) = default;
};

struct PotRefund {
  std::string key;  // "<table>:<round>:sweep_refund"
  std::string table_id;
  int64_t round = 0;
  std::vector<PotRefundLeg> legs;  // the pot first, then the payers by account id
};

// The wallet as the sweeper sees it (synchronous; the sweeper has its own thread).
// Errors as the wallet's RPCs: Unavailable / DeadlineExceeded = maybe applied, retry.
class PotLedgerPort {
 public:
  virtual ~PotLedgerPort() = default;
  virtual absl::StatusOr<LedgerPotPage> ListPots(std::string_view cursor, int page_size,
                                                 absl::Time deadline) = 0;
  virtual absl::StatusOr<PotPayers> GetPotPayers(std::string_view pot_id, absl::Time deadline) = 0;
  virtual absl::Status Transfer(const PotRefund& refund, absl::Time deadline) = 0;
};

struct PotSweeperOptions {
  int64_t grace_ms = 60'000;       // >= 0
  int pots_per_pass_max = 1000;    // > 0
  int page_size = 100;             // 1..100 (the wallet's ListPots bound)
  int64_t call_timeout_ms = 5000;  // > 0, every wallet call
  int legs_max = 16;               // the wallet's bound on a transfer's legs
};

struct SweepReport {
  int pots_seen = 0;
  int refunded = 0;
  int skipped_table_live = 0;     // the table has state: its owner settles the pot
  int skipped_young = 0;          // last entry younger than the grace
  int skipped_payers_differ = 0;  // payers do not sum to the balance (logged as an error)
  int skipped_error = 0;          // a store or wallet call failed: next pass retries
  int skipped_malformed = 0;      // not a pot:<table>:<round> id (logged)

  friend bool operator==(const SweepReport&, const SweepReport&) = default;
};

class PotSweeper {
 public:
  // Every reference must outlive the sweeper.
  PotSweeper(PotLedgerPort& ledger, TableStore& store, const Clock& clock,
             PotSweeperOptions options, const common::Logger& log);

  // InvalidArgument for options out of range.
  static absl::Status ValidateOptions(const PotSweeperOptions& options);

  absl::StatusOr<SweepReport> RunPass();

 private:
  void SweepOne(const LedgerPot& pot, SweepReport& report);
  absl::Time Deadline() const;

  PotLedgerPort& ledger_;
  TableStore& store_;
  const Clock& clock_;
  const PotSweeperOptions options_;
  const common::Logger& log_;
  std::string cursor_;  // where the next pass goes on
};

// "pot:<table>:<round>" -> (table, round); InvalidArgument otherwise.
absl::Status ParsePotId(std::string_view pot_id, std::string* table_id, int64_t* round);

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_POT_SWEEPER_H_
