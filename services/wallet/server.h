// WalletService: the gRPC face of the Ledger. It only translates: proto -> domain request,
// domain result -> proto, absl::Status -> grpc::Status (codes 1:1), and the RPC's deadline
// (the client's, capped at rpc_deadline_max) -> the domain's deadline. It also records the
// wallet's own metrics (transfers by result, transfer latency, idempotent replays).
// Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, ALREADY_EXISTS carry the
// domain's message (written for clients); any other code reaches the client with a fixed
// message (common::ToClientGrpcStatus) and the full status (Postgres text, SQL) is logged.
// Thread-safety: safe for concurrent RPCs (the Ledger is).
#ifndef COURTPIECE_SERVICES_WALLET_SERVER_H_
#define COURTPIECE_SERVICES_WALLET_SERVER_H_

#include <string_view>

#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "services/wallet/ledger.h"

namespace courtpiece::wallet {

class WalletService final : public v1::Wallet::Service {
 public:
  // Every reference must outlive the service.
  WalletService(Ledger& ledger, const Clock& clock, absl::Duration rpc_deadline_max,
                common::Metrics& metrics, const common::Logger& log);

  grpc::Status OpenAccount(grpc::ServerContext* context, const v1::OpenAccountRequest* request,
                           v1::OpenAccountResponse* response) override;
  grpc::Status GetBalance(grpc::ServerContext* context, const v1::GetBalanceRequest* request,
                          v1::GetBalanceResponse* response) override;
  grpc::Status Transfer(grpc::ServerContext* context, const v1::TransferRequest* request,
                        v1::TransferResponse* response) override;
  grpc::Status History(grpc::ServerContext* context, const v1::HistoryRequest* request,
                       v1::HistoryResponse* response) override;
  grpc::Status ListPots(grpc::ServerContext* context, const v1::ListPotsRequest* request,
                        v1::ListPotsResponse* response) override;
  grpc::Status PotPayers(grpc::ServerContext* context, const v1::PotPayersRequest* request,
                         v1::PotPayersResponse* response) override;

 private:
  absl::Time Deadline(const grpc::ServerContext& context) const;
  void RecordTransfer(const absl::Status& status, bool replayed, absl::Duration took);
  // The client's status for a failed RPC; logs what the client does not see.
  grpc::Status Failed(std::string_view rpc, const absl::Status& status) const;

  Ledger& ledger_;
  const Clock& clock_;
  const absl::Duration rpc_deadline_max_;
  common::CounterFamily transfers_;
  common::HistogramFamily transfer_latency_;
  common::CounterFamily replays_;
  const common::Logger& log_;
};

}  // namespace courtpiece::wallet

#endif  // COURTPIECE_SERVICES_WALLET_SERVER_H_
