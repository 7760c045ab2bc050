// WalletPort: what the accounts need from the wallet. GrpcWalletPort (grpc_wallet_port.h)
// calls the wallet service; FakeWalletPort (fake_wallet_port.h) is for unit tests.
//
// Contract:
//  - OpenAccount is idempotent per player (the wallet's OpenAccount): the first call pays the
//    starting grant, later calls change nothing. Returns the balance after.
//  - GetBalance: the player's coins; NotFound when the account was never opened.
//  - Errors keep the wallet's code (Unavailable / DeadlineExceeded when it did not answer:
//    retry; InvalidArgument for a bad id, a bug).
// Thread-safety: implementations are thread-safe.
#ifndef COURTPIECE_SERVICES_LOBBY_WALLET_PORT_H_
#define COURTPIECE_SERVICES_LOBBY_WALLET_PORT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace courtpiece::lobby {

class WalletPort {
 public:
  virtual ~WalletPort() = default;
  virtual absl::StatusOr<int64_t> OpenAccount(const std::string& player_id,
                                              absl::Time deadline) = 0;
  virtual absl::StatusOr<int64_t> GetBalance(const std::string& player_id, absl::Time deadline) = 0;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_WALLET_PORT_H_
