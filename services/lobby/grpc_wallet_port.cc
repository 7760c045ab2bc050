#include "services/lobby/grpc_wallet_port.h"

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_status.h"
#include "grpcpp/client_context.h"

namespace courtpiece::lobby {

GrpcWalletPort::GrpcWalletPort(std::shared_ptr<grpc::Channel> channel)
    : stub_(wallet::v1::Wallet::NewStub(channel)) {}

absl::StatusOr<int64_t> GrpcWalletPort::OpenAccount(const std::string& player_id,
                                                    absl::Time deadline) {
  wallet::v1::OpenAccountRequest request;
  request.set_player_id(player_id);
  wallet::v1::OpenAccountResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(deadline));
  grpc::Status status = stub_->OpenAccount(&context, request, &response);
  if (!status.ok()) return common::FromGrpcStatus(status);
  return response.balance();
}

absl::StatusOr<int64_t> GrpcWalletPort::GetBalance(const std::string& player_id,
                                                   absl::Time deadline) {
  wallet::v1::GetBalanceRequest request;
  request.set_account_id(absl::StrCat("player:", player_id));
  wallet::v1::GetBalanceResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(deadline));
  grpc::Status status = stub_->GetBalance(&context, request, &response);
  if (!status.ok()) return common::FromGrpcStatus(status);
  return response.balance();
}

}  // namespace courtpiece::lobby
