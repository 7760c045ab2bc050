// What the moderation service reads from the lobby for an admin judging a report: the
// author's profile and quit count (LobbyAdmin.GetPlayer) and their latest quits
// (LobbyAdmin.ListQuits). The admin's own `authorization` header value is forwarded, so the
// lobby checks the admin role itself. The real one is grpc_lobby_port.h; the in-memory one
// FakeLobbyPort (fake_ports.h).
//
// Contract: the lobby's codes as they are (NOT_FOUND unknown player, UNAUTHENTICATED /
// PERMISSION_DENIED from the lobby's own check); UNAVAILABLE when the lobby is unreachable or
// did not answer before `deadline`.
// Thread-safety: implementations are thread-safe.
#ifndef COURTPIECE_SERVICES_MODERATION_LOBBY_PORT_H_
#define COURTPIECE_SERVICES_MODERATION_LOBBY_PORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace courtpiece::moderation {

struct LobbyPlayer {
  std::string player_id;
  std::string display_name;
  int64_t quits_total = 0;
};

struct LobbyQuit {
  std::string table_id;
  uint64_t game_no = 0;
  std::string game;
  int64_t recorded_at_ms = 0;
};

class LobbyPort {
 public:
  virtual ~LobbyPort() = default;
  virtual absl::StatusOr<LobbyPlayer> GetPlayer(const std::string& authorization,
                                                const std::string& player_id,
                                                absl::Time deadline) = 0;
  // Newest first, at most `limit` (1..500).
  virtual absl::StatusOr<std::vector<LobbyQuit>> ListQuits(const std::string& authorization,
                                                           const std::string& player_id, int limit,
                                                           absl::Time deadline) = 0;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_LOBBY_PORT_H_
