// What the fronts (the WebSocket in http_server, the gRPC CourtPiece.Play) call for each
// client Play connection. play_session.h implements it; tests of a front use a fake.
//
// Contract: the front authenticates the player first (token_gate.h), then calls Connect
// once per connection, then OnClientMessage for every message the client sends, in order,
// one call at a time (the first one must be `open`; the front clears open.access_token),
// and OnClientGone exactly once when the client went away or the front closed it. The
// connection answers through the sink (client_sink.h), possibly from other threads, until
// it calls sink->Finish or OnClientGone returned. The connection keeps the sink alive
// (shared_ptr) as long as it may call it.
// Thread-safety: PlayService::Connect is safe from any thread; a PlayConnection's methods
// are called by its one front, one at a time.
#ifndef COURTPIECE_SERVICES_GATEWAY_PLAY_SERVICE_H_
#define COURTPIECE_SERVICES_GATEWAY_PLAY_SERVICE_H_

#include <memory>
#include <string>

#include "courtpiece/client/v1/client.pb.h"
#include "services/gateway/client_sink.h"

namespace courtpiece::gateway {

class PlayConnection {
 public:
  virtual ~PlayConnection() = default;
  virtual void OnClientMessage(client::v1::PlayRequest message) = 0;
  virtual void OnClientGone() = 0;
};

class PlayService {
 public:
  virtual ~PlayService() = default;
  // `player_id`: authenticated. `peer`: the client's address, for logs.
  virtual std::shared_ptr<PlayConnection> Connect(std::string player_id, std::string peer,
                                                  std::shared_ptr<ClientSink> sink) = 0;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_PLAY_SERVICE_H_
