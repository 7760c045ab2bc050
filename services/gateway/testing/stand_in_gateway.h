// A stand-in for the gateway's HTTP/WebSocket front, for the clients' tests and to smoke-test
// courtpiece-load without the real gateway: canned routes and a /v1/play that plays the fake
// game of fake_game_for_test.h, closing with the gateway's close codes. Not the gateway.
//
// Routes: POST /v1/Echo answers its body (header x-content-type = the request's);
// /v1/GuestLogin a Session {player_id "p<n>", access_token "tok"}; /v1/CreateTable a TableRef
// {table_id "t<n>"}; /v1/Bogus a body with an unknown field; /v1/Close answers and closes;
// GET /plain 503 "down"; anything else 404 {"code":5,...,"message":"unknown method <name>"}.
// WebSocket /v1/play: the upgrade needs `authorization: Bearer tok` (else 401 with the JSON
// error body); a binary frame closes 4003, a frame that is not a PlayRequest 4003 with the
// parser's message, open of "gone" 4005 "unknown table gone", open of "bye" 1000.
// Threads: one acceptor thread and one thread per connection (a test tool: at most
// `connections_max` connections at once, past it the accept is closed at once).
// Thread-safety: construct and destroy on one thread; accessors from any thread.
#ifndef COURTPIECE_SERVICES_GATEWAY_TESTING_STAND_IN_GATEWAY_H_
#define COURTPIECE_SERVICES_GATEWAY_TESTING_STAND_IN_GATEWAY_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "courtpiece/client/v1/client.grpc.pb.h"
#include "services/gateway/testing/fake_game_for_test.h"

namespace courtpiece::gateway::testing {

class StandInGateway {
 public:
  explicit StandInGateway(uint16_t port = 0, int connections_max = 4096);
  ~StandInGateway();
  StandInGateway(const StandInGateway&) = delete;
  StandInGateway& operator=(const StandInGateway&) = delete;

  uint16_t port() const { return port_; }
  int accepted() const { return accepted_; }

 private:
  void AcceptLoop();
  void Serve(boost::asio::ip::tcp::socket& socket);

  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  const int connections_max_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::atomic<int> open_{0};
  std::atomic<int> next_id_{0};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::shared_ptr<boost::asio::ip::tcp::socket>> sockets_;  // guarded by mu_
  std::vector<std::thread> connections_;                                // guarded by mu_
};

// The gRPC CourtPiece service with canned behaviour: GuestLogin answers a Session
// {player_id "p1", access_token "tok"} (INVALID_ARGUMENT without a device secret);
// GetProfile and Play need `authorization: Bearer tok` (else UNAUTHENTICATED "missing
// token"); Play plays one fake game shared by every stream (so a reopen resumes by seq),
// ends NOT_FOUND "unknown table" for an open of "gone", and cuts the first open of "moving"
// with UNAVAILABLE "draining"; every open is recorded.
class StandInCourtPiece final : public client::v1::CourtPiece::Service {
 public:
  grpc::Status GuestLogin(grpc::ServerContext* context,
                          const client::v1::GuestLoginRequest* request,
                          client::v1::Session* session) override;
  grpc::Status GetProfile(grpc::ServerContext* context,
                          const client::v1::GetProfileRequest* request,
                          client::v1::Profile* profile) override;
  grpc::Status Play(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<client::v1::PlayResponse, client::v1::PlayRequest>* stream) override;
  std::vector<client::v1::OpenTable> opens();

 private:
  std::mutex mu_;
  FakeGame game_;                             // guarded by mu_
  std::vector<client::v1::OpenTable> opens_;  // guarded by mu_
};

}  // namespace courtpiece::gateway::testing

#endif  // COURTPIECE_SERVICES_GATEWAY_TESTING_STAND_IN_GATEWAY_H_
