// LobbyPort over gRPC (lobby_port.h): the lobby's LobbyAdmin on one channel, the admin's
// `authorization` forwarded as it came, every call with the caller's deadline.
// DEADLINE_EXCEEDED is UNAVAILABLE (best effort for the caller).
// Thread-safety: thread-safe.
#ifndef COURTPIECE_SERVICES_MODERATION_GRPC_LOBBY_PORT_H_
#define COURTPIECE_SERVICES_MODERATION_GRPC_LOBBY_PORT_H_

#include <memory>

#include "courtpiece/lobby/v1/lobby.grpc.pb.h"
#include "grpcpp/channel.h"
#include "services/moderation/lobby_port.h"

namespace courtpiece::moderation {

class GrpcLobbyPort final : public LobbyPort {
 public:
  explicit GrpcLobbyPort(std::shared_ptr<grpc::Channel> channel)
      : stub_(lobby::v1::LobbyAdmin::NewStub(std::move(channel))) {}

  absl::StatusOr<LobbyPlayer> GetPlayer(const std::string& authorization,
                                        const std::string& player_id, absl::Time deadline) override;
  absl::StatusOr<std::vector<LobbyQuit>> ListQuits(const std::string& authorization,
                                                   const std::string& player_id, int limit,
                                                   absl::Time deadline) override;

 private:
  std::unique_ptr<lobby::v1::LobbyAdmin::Stub> stub_;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_GRPC_LOBBY_PORT_H_
