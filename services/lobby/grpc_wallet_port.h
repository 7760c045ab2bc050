// GrpcWalletPort: WalletPort (wallet_port.h) over the wallet's gRPC API (blocking calls:
// the lobby's handlers are synchronous). Each call carries the caller's deadline. gRPC
// codes map 1:1 to absl codes (common::FromGrpcStatus).
// Thread-safety: thread-safe (gRPC stubs are).
#ifndef COURTPIECE_SERVICES_LOBBY_GRPC_WALLET_PORT_H_
#define COURTPIECE_SERVICES_LOBBY_GRPC_WALLET_PORT_H_

#include <memory>

#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "grpcpp/channel.h"
#include "services/lobby/wallet_port.h"

namespace courtpiece::lobby {

class GrpcWalletPort final : public WalletPort {
 public:
  explicit GrpcWalletPort(std::shared_ptr<grpc::Channel> channel);

  absl::StatusOr<int64_t> OpenAccount(const std::string& player_id, absl::Time deadline) override;
  absl::StatusOr<int64_t> GetBalance(const std::string& player_id, absl::Time deadline) override;

 private:
  std::unique_ptr<wallet::v1::Wallet::Stub> stub_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_GRPC_WALLET_PORT_H_
