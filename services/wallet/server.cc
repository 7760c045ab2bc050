#include "services/wallet/server.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/time/clock.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/grpc_status.h"

namespace courtpiece::wallet {
namespace {

// Finer than the default buckets at the low end: a transfer takes about a millisecond.
const std::vector<double>& TransferBucketsSeconds() {
  static const std::vector<double> buckets = {0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.016,
                                              0.032,   0.064,  0.128, 0.256, 0.512, 1.024, 2.048};
  return buckets;
}

Side FromProto(v1::Side side) {
  switch (side) {
    case v1::SIDE_DEBIT:
      return Side::kDebit;
    case v1::SIDE_CREDIT:
      return Side::kCredit;
    default:
      return Side::kUnspecified;
  }
}

TransferRequest FromProto(const v1::TransferRequest& in) {
  TransferRequest out;
  out.idempotency_key = in.idempotency_key();
  for (const v1::Leg& leg : in.legs()) {
    out.legs.push_back({leg.account_id(), FromProto(leg.side()), leg.amount()});
  }
  out.metadata = {in.table_id(), in.round(), in.reason()};
  return out;
}

void ToProto(const LedgerEntry& in, v1::Entry* out) {
  out->set_entry_id(in.entry_id);
  out->set_transfer_id(in.transfer_id);
  out->set_amount(in.amount);
  out->set_balance_after(in.balance_after);
  out->set_table_id(in.metadata.table_id);
  out->set_round(in.metadata.round);
  out->set_reason(in.metadata.reason);
  out->set_created_at_unix_micros(absl::ToUnixMicros(in.created_at));
  out->set_idempotency_key(in.idempotency_key);
}

std::string ResultLabel(const absl::Status& status, bool replayed) {
  if (status.ok()) return replayed ? "replayed" : "ok";
  return absl::AsciiStrToLower(common::GrpcCodeName(static_cast<grpc::StatusCode>(status.code())));
}

}  // namespace

WalletService::WalletService(Ledger& ledger, const Clock& clock, absl::Duration rpc_deadline_max,
                             common::Metrics& metrics, const common::Logger& log)
    : ledger_(ledger),
      clock_(clock),
      rpc_deadline_max_(rpc_deadline_max),
      transfers_(metrics.Counter("transfers", "Transfer RPCs by result.")),
      transfer_latency_(metrics.LatencyHistogram("transfer_latency", "Transfer RPC latency.",
                                                 TransferBucketsSeconds())),
      replays_(metrics.Counter("idempotent_replays",
                               "Transfers answered from an earlier application of the key.")),
      log_(log) {}

grpc::Status WalletService::Failed(std::string_view rpc, const absl::Status& status) const {
  if (!common::IsClientMessageCode(status.code())) {
    log_.Warn("rpc failed", {{"rpc", rpc}, {"status", status}});
  }
  return common::ToClientGrpcStatus(status);
}

absl::Time WalletService::Deadline(const grpc::ServerContext& context) const {
  return common::ServerDeadline(context, clock_, rpc_deadline_max_);
}

void WalletService::RecordTransfer(const absl::Status& status, bool replayed, absl::Duration took) {
  transfers_.WithLabels({{"result", ResultLabel(status, replayed)}}).Increment();
  transfer_latency_.WithLabels({}).Observe(absl::ToDoubleSeconds(took));
  if (replayed) replays_.WithLabels({}).Increment();
}

grpc::Status WalletService::OpenAccount(grpc::ServerContext* context,
                                        const v1::OpenAccountRequest* request,
                                        v1::OpenAccountResponse* response) {
  absl::StatusOr<OpenAccountResult> r =
      ledger_.OpenAccount(request->player_id(), Deadline(*context));
  if (!r.ok()) return Failed("OpenAccount", r.status());
  response->set_account_id(r->account_id);
  response->set_created(r->created);
  response->set_balance(r->balance);
  return grpc::Status::OK;
}

grpc::Status WalletService::GetBalance(grpc::ServerContext* context,
                                       const v1::GetBalanceRequest* request,
                                       v1::GetBalanceResponse* response) {
  absl::StatusOr<int64_t> balance = ledger_.GetBalance(request->account_id(), Deadline(*context));
  if (!balance.ok()) return Failed("GetBalance", balance.status());
  response->set_account_id(request->account_id());
  response->set_balance(*balance);
  return grpc::Status::OK;
}

grpc::Status WalletService::Transfer(grpc::ServerContext* context,
                                     const v1::TransferRequest* request,
                                     v1::TransferResponse* response) {
  const absl::Time start = clock_.Now();
  absl::StatusOr<TransferResult> r = ledger_.Transfer(FromProto(*request), Deadline(*context));
  RecordTransfer(r.status(), r.ok() && r->replayed, clock_.Now() - start);
  if (!r.ok()) return Failed("Transfer", r.status());
  response->set_transfer_id(r->transfer_id);
  response->set_replayed(r->replayed);
  response->set_created_at_unix_micros(absl::ToUnixMicros(r->created_at));
  for (const AccountBalance& b : r->balances_after) {
    v1::AccountBalance* out = response->add_balances_after();
    out->set_account_id(b.account_id);
    out->set_balance(b.balance);
  }
  return grpc::Status::OK;
}

grpc::Status WalletService::History(grpc::ServerContext* context, const v1::HistoryRequest* request,
                                    v1::HistoryResponse* response) {
  absl::StatusOr<HistoryPage> page = ledger_.History(request->account_id(), request->page_size(),
                                                     request->cursor(), Deadline(*context));
  if (!page.ok()) return Failed("History", page.status());
  for (const LedgerEntry& e : page->entries) ToProto(e, response->add_entries());
  response->set_next_cursor(page->next_cursor);
  return grpc::Status::OK;
}

grpc::Status WalletService::ListPots(grpc::ServerContext* context,
                                     const v1::ListPotsRequest* request,
                                     v1::ListPotsResponse* response) {
  absl::StatusOr<PotPage> page =
      ledger_.ListPots(request->page_size(), request->cursor(), Deadline(*context));
  if (!page.ok()) return Failed("ListPots", page.status());
  for (const PotSummary& pot : page->pots) {
    v1::Pot* out = response->add_pots();
    out->set_account_id(pot.account_id);
    out->set_balance(pot.balance);
    out->set_last_entry_unix_micros(absl::ToUnixMicros(pot.last_entry_at));
  }
  response->set_next_cursor(page->next_cursor);
  return grpc::Status::OK;
}

grpc::Status WalletService::PotPayers(grpc::ServerContext* context,
                                      const v1::PotPayersRequest* request,
                                      v1::PotPayersResponse* response) {
  absl::StatusOr<PotPayersResult> r = ledger_.PotPayers(request->pot_id(), Deadline(*context));
  if (!r.ok()) return Failed("PotPayers", r.status());
  response->set_balance(r->balance);
  for (const AccountBalance& payer : r->payers) {
    v1::PotPayer* out = response->add_payers();
    out->set_account_id(payer.account_id);
    out->set_net_coins(payer.balance);
  }
  return grpc::Status::OK;
}

}  // namespace courtpiece::wallet
