#include "services/table/pot_sweeper.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace courtpiece::table_service {
namespace {

constexpr absl::string_view kPotPrefix = "pot:";

}  // namespace

absl::Status ParsePotId(std::string_view pot_id_std, std::string* table_id, int64_t* round) {
  const absl::string_view pot_id(pot_id_std.data(), pot_id_std.size());
  const absl::Status malformed = absl::InvalidArgumentError(
      absl::StrCat("\"", pot_id.substr(0, 80), "\" is not pot:<table>:<round>"));
  if (!absl::StartsWith(pot_id, kPotPrefix)) return malformed;
  const absl::string_view rest = pot_id.substr(kPotPrefix.size());
  const size_t colon = rest.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return malformed;
  const absl::string_view digits = rest.substr(colon + 1);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return absl::ascii_isdigit(static_cast<unsigned char>(c));
      })) {
    return malformed;
  }
  int64_t parsed = 0;
  if (!absl::SimpleAtoi(digits, &parsed)) return malformed;
  *table_id = std::string(rest.substr(0, colon));
  *round = parsed;
  return absl::OkStatus();
}

PotSweeper::PotSweeper(PotLedgerPort& ledger, TableStore& store, const Clock& clock,
                       PotSweeperOptions options, const common::Logger& log)
    : ledger_(ledger), store_(store), clock_(clock), options_(options), log_(log) {}

absl::Status PotSweeper::ValidateOptions(const PotSweeperOptions& o) {
  if (o.grace_ms < 0) return absl::InvalidArgumentError("grace_ms must be >= 0");
  if (o.pots_per_pass_max <= 0) return absl::InvalidArgumentError("pots_per_pass_max must be > 0");
  if (o.page_size < 1 || o.page_size > 100) {
    return absl::InvalidArgumentError("page_size must be in 1..100");
  }
  if (o.call_timeout_ms <= 0) return absl::InvalidArgumentError("call_timeout_ms must be > 0");
  if (o.legs_max < 2) return absl::InvalidArgumentError("legs_max must be >= 2");
  return absl::OkStatus();
}

absl::Time PotSweeper::Deadline() const {
  return clock_.Now() + absl::Milliseconds(options_.call_timeout_ms);
}

absl::StatusOr<SweepReport> PotSweeper::RunPass() {
  SweepReport report;
  while (report.pots_seen < options_.pots_per_pass_max) {
    const int want = std::min(options_.page_size, options_.pots_per_pass_max - report.pots_seen);
    absl::StatusOr<LedgerPotPage> page = ledger_.ListPots(cursor_, want, Deadline());
    if (!page.ok()) {
      log_.Warn("pot sweep: listing pots failed", {{"status", page.status()}});
      if (report.pots_seen == 0) return page.status();
      break;
    }
    for (const LedgerPot& pot : page->pots) {
      ++report.pots_seen;
      SweepOne(pot, report);
    }
    // The wallet's cursor is the last pot id of the page: the next page (this pass or the
    // next one) starts after it; after the last page, the next pass starts over.
    cursor_ = page->next_cursor;
    if (page->next_cursor.empty() || page->pots.empty()) break;
  }
  if (report.refunded > 0 || report.skipped_payers_differ > 0 || report.skipped_error > 0) {
    log_.Info("pot sweep pass", {{"pots_seen", report.pots_seen},
                                 {"refunded", report.refunded},
                                 {"skipped_table_live", report.skipped_table_live},
                                 {"skipped_young", report.skipped_young},
                                 {"skipped_payers_differ", report.skipped_payers_differ},
                                 {"skipped_error", report.skipped_error}});
  }
  return report;
}

void PotSweeper::SweepOne(const LedgerPot& pot, SweepReport& report) {
  std::string table_id;
  int64_t round = 0;
  if (absl::Status parsed = ParsePotId(pot.pot_id, &table_id, &round); !parsed.ok()) {
    log_.Error("pot sweep: malformed pot id", {{"pot", pot.pot_id}, {"status", parsed}});
    ++report.skipped_malformed;
    return;
  }
  if (pot.balance_coins <= 0) return;  // nothing to give back (the wallet lists only > 0)
  if (clock_.Now() - pot.last_entry_at < absl::Milliseconds(options_.grace_ms)) {
    ++report.skipped_young;
    return;
  }
  absl::StatusOr<StoredTableBytes> stored = store_.Load(table_id);
  if (stored.ok()) {
    ++report.skipped_table_live;
    return;
  }
  if (stored.status().code() != absl::StatusCode::kNotFound) {
    log_.Warn("pot sweep: table store failed", {{"pot", pot.pot_id}, {"status", stored.status()}});
    ++report.skipped_error;
    return;
  }
  absl::StatusOr<PotPayers> payers = ledger_.GetPotPayers(pot.pot_id, Deadline());
  if (!payers.ok()) {
    log_.Warn("pot sweep: reading payers failed",
              {{"pot", pot.pot_id}, {"status", payers.status()}});
    ++report.skipped_error;
    return;
  }
  // The balance read with the payers is the one refunded (the listing may be older).
  PotRefund refund{absl::StrCat(table_id, ":", round, ":sweep_refund"), table_id, round, {}};
  refund.legs.push_back({pot.pot_id, -payers->balance_coins});
  int64_t sum = 0;
  bool all_positive = true;
  for (const PotPayer& payer : payers->payers) {
    all_positive = all_positive && payer.net_coins > 0;
    sum += payer.net_coins;
    refund.legs.push_back({payer.account_id, payer.net_coins});
  }
  if (payers->balance_coins <= 0) return;  // settled meanwhile
  if (!all_positive || sum != payers->balance_coins ||
      static_cast<int>(refund.legs.size()) > options_.legs_max) {
    log_.Error("pot sweep: payers do not match the pot; left for a human",
               {{"pot", pot.pot_id},
                {"balance", payers->balance_coins},
                {"payers_sum", sum},
                {"payers", static_cast<int64_t>(payers->payers.size())},
                {"all_positive", all_positive}});
    ++report.skipped_payers_differ;
    return;
  }
  if (absl::Status sent = ledger_.Transfer(refund, Deadline()); !sent.ok()) {
    // Unavailable / DeadlineExceeded: maybe applied; the next pass re-sends the same key
    // (replayed, or the pot is no longer listed).
    log_.Warn("pot sweep: refund failed", {{"pot", pot.pot_id}, {"status", sent}});
    ++report.skipped_error;
    return;
  }
  log_.Info("pot sweep: refunded an orphaned pot",
            {{"pot", pot.pot_id}, {"coins", payers->balance_coins}, {"key", refund.key}});
  ++report.refunded;
}

}  // namespace courtpiece::table_service
