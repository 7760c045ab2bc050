// The gateway's gRPC API (client.proto's CourtPiece) as a test or tool calls it: a Play
// stream (GrpcPlayClient, a PlayTransport) and the unary calls (GrpcApiClient).
//
//   auto channel = grpc::CreateChannel(addr, grpc::InsecureChannelCredentials());
//   GrpcApiClient api(channel);
//   absl::StatusOr<client::v1::Session> s = api.GuestLogin(secret, "Ann");
//   auto play = GrpcPlayClient::Start(channel, "Bearer " + s->access_token());
//   (*play)->Send(open);  (*play)->Read(absl::Seconds(5));  (*play)->end();
//
// GrpcPlayClient: the sync ClientReaderWriter with a reader thread that queues what the
// server sends (at most 100000 messages; past that the reader waits, so the gateway sees a
// slow reader); Read takes from the queue. Send is bounded by gRPC flow control only.
// GrpcApiClient: each call with `authorization` metadata when given and a deadline
// (`timeout`, 10 s by default); the gRPC status as the absl::Status.
// Thread-safety: GrpcPlayClient as PlayTransport (Cancel from any thread); GrpcApiClient is
// safe from many threads.
#ifndef COURTPIECE_SERVICES_GATEWAY_TESTING_GRPC_PLAY_CLIENT_H_
#define COURTPIECE_SERVICES_GATEWAY_TESTING_GRPC_PLAY_CLIENT_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/client/v1/client.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "services/gateway/testing/play_transport.h"

namespace courtpiece::gateway::testing {

class GrpcPlayClient final : public PlayTransport {
 public:
  // Starts the Play call (`authorization` "" for none). The call's problems show at the
  // first Read / end(), as gRPC reports them.
  static std::unique_ptr<GrpcPlayClient> Start(std::shared_ptr<grpc::Channel> channel,
                                               const std::string& authorization);
  ~GrpcPlayClient() override;  // cancels if still open, joins the reader

  absl::Status Send(const client::v1::PlayRequest& request) override;
  absl::StatusOr<client::v1::PlayResponse> Read(absl::Duration timeout) override;
  std::optional<StreamEnd> end() const override;
  void Cancel() override;
  const char* kind() const override { return "grpc"; }
  // Half-closes (WritesDone): the client will send nothing more.
  void CloseWrites();
  std::optional<StreamEnd> WaitEnd(absl::Duration timeout);

 private:
  GrpcPlayClient() = default;
  void ReadLoop();

  std::unique_ptr<client::v1::CourtPiece::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<client::v1::PlayRequest, client::v1::PlayResponse>>
      stream_;
  std::thread reader_;
  std::mutex write_mu_;
  bool writes_closed_ = false;  // guarded by write_mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<client::v1::PlayResponse> inbox_;  // guarded by mu_
  std::optional<StreamEnd> end_;                // guarded by mu_
  bool cancelled_ = false;                      // guarded by mu_
};

class GrpcApiClient {
 public:
  explicit GrpcApiClient(std::shared_ptr<grpc::Channel> channel,
                         absl::Duration timeout = absl::Seconds(10));

  absl::StatusOr<client::v1::Session> GuestLogin(const std::string& device_secret,
                                                 const std::string& display_name);
  absl::StatusOr<client::v1::Session> Refresh(const std::string& refresh_token);
  absl::StatusOr<client::v1::Profile> GetProfile(const std::string& authorization);
  absl::StatusOr<client::v1::TableRef> CreateTable(const std::string& authorization,
                                                   const client::v1::CreateTableRequest& request);
  absl::StatusOr<client::v1::TableRef> ResolveCode(const std::string& authorization,
                                                   const std::string& code);
  absl::StatusOr<client::v1::TableRef> QuickJoin(const std::string& authorization,
                                                 const client::v1::QuickJoinRequest& request);
  absl::StatusOr<client::v1::MyTablesResponse> MyTables(const std::string& authorization);

  client::v1::CourtPiece::Stub& stub() { return *stub_; }
  // A context with this client's deadline and `authorization` (for calls not wrapped above).
  std::unique_ptr<grpc::ClientContext> Context(const std::string& authorization) const;

 private:
  std::unique_ptr<client::v1::CourtPiece::Stub> stub_;
  absl::Duration timeout_;
};

}  // namespace courtpiece::gateway::testing

#endif  // COURTPIECE_SERVICES_GATEWAY_TESTING_GRPC_PLAY_CLIENT_H_
