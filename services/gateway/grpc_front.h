// The gRPC front for mobile clients: client.proto's CourtPiece. Unary methods (gRPC's
// callback API) go through a UnaryRouter (unary_relay.h) with the `authorization` metadata;
// Play (gRPC's async API, on the server's completion queues: common::AsyncService)
// authenticates with the TokenGate from the metadata, then relays through a PlayService
// (play_session.h), the call being the connection's ClientSink. Play is on the async API
// because Debian's gRPC checks every completion against all the operations outstanding on
// its queue, and the callback API puts every call of the process on one queue: with
// thousands of open Play streams that check was the largest single cost of the gateway.
//
// Contract: Play without a valid token ends UNAUTHENTICATED (the gate's message) before any
// Connect; past options' play_streams_max or play_streams_per_ip_max open streams it ends
// RESOURCE_EXHAUSTED before the token is checked (ConnectionRefused "grpc_total" /
// "grpc_per_ip"; such a stream is not counted as a connection). A Play
// message over play_message_bytes_max ends the stream RESOURCE_EXHAUSTED (the server's own receive
// limit is main's GrpcServerOptions: a voice note's size); a unary request over its method's
// request_bytes_max is RESOURCE_EXHAUSTED before the router. The send queue holds at most
// send_queue_max messages with one write in flight; past it the stream ends RESOURCE_EXHAUSTED
// "slow reader" (SendQueueDrop). A client half-close or cancel is the end of the connection
// (OnClientGone, exactly once). Unary statuses are the router's, code as is; a method the router
// lacks is UNIMPLEMENTED. Metrics (kind "grpc"): Play streams as connections; unary
// requests/responses as messages (Play messages are counted by the relay). EndPlayStreams(status)
// ends every Play stream open now with `status` after what is queued (main: UNAVAILABLE at the
// start of a drain, so that mobile clients dial again at once, as WebSockets get 1001; their relays
// see the client gone). Thread-safety: a grpc::Service; router, play, gate and metrics must outlive
// the server. EndPlayStreams from any thread. Serve it only through common::GrpcServer (which calls
// ServeOn and stops the queues).
#ifndef COURTPIECE_SERVICES_GATEWAY_GRPC_FRONT_H_
#define COURTPIECE_SERVICES_GATEWAY_GRPC_FRONT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "courtpiece/client/v1/client.grpc.pb.h"
#include "courtpiece/common/grpc_server.h"
#include "services/gateway/client_sink.h"
#include "services/gateway/conn_limiter.h"
#include "services/gateway/gateway_metrics.h"
#include "services/gateway/play_service.h"
#include "services/gateway/token_gate.h"
#include "services/gateway/unary_router.h"

namespace courtpiece::gateway {

// The Play streams open now (their sinks), for EndPlayStreams. Thread-safe.
class PlayStreamSet {
 public:
  uint64_t Add(std::weak_ptr<ClientSink> sink);
  void Remove(uint64_t id);
  void FinishAll(const absl::Status& status);  // calls Finish outside the set's lock
  size_t size() const;

 private:
  mutable std::mutex mu_;
  uint64_t next_id_ = 1;                                 // guarded by mu_
  std::map<uint64_t, std::weak_ptr<ClientSink>> sinks_;  // guarded by mu_
};

struct GrpcFrontOptions {
  int play_message_bytes_max = 16 * 1024;
  int unary_message_bytes_max = 64 * 1024;  // for main: the server's max receive size
  int send_queue_max = 256;
  // Play streams open at once, in all and from one client address (the web front's
  // connection limits, for the mobile front's costly part: gRPC 1.51 has no hook to refuse
  // a TCP connection itself). Over either, the stream ends RESOURCE_EXHAUSTED before its
  // token is checked.
  size_t play_streams_max = 30'000;
  size_t play_streams_per_ip_max = 256;
};

// The address part of a gRPC peer string: "ipv4:1.2.3.4:5" -> "1.2.3.4", and gRPC 1.51's
// "ipv6:%5B::1%5D:5" (or "ipv6:[::1]:5") -> "::1"; anything else whole.
std::string PeerAddress(std::string_view peer);

// Every method on the callback API but Play, which is on the async API.
namespace grpc_front_internal {
using CP = client::v1::CourtPiece;
using Base = CP::WithCallbackMethod_GuestLogin<CP::WithCallbackMethod_Refresh<
    CP::WithCallbackMethod_GetProfile<CP::WithCallbackMethod_UpdateProfile<
        CP::WithCallbackMethod_GetPublicProfiles<CP::WithCallbackMethod_GetStats<
            CP::WithCallbackMethod_RecentResults<CP::WithCallbackMethod_CreateTable<
                CP::WithCallbackMethod_ResolveCode<CP::WithCallbackMethod_ListOpenTables<
                    CP::WithCallbackMethod_QuickJoin<CP::WithCallbackMethod_MyTables<
                        CP::WithCallbackMethod_UploadNote<CP::WithCallbackMethod_GetNote<
                            CP::WithAsyncMethod_Play<CP::Service>>>>>>>>>>>>>>>;
}  // namespace grpc_front_internal

class GrpcFront final : public grpc_front_internal::Base, public common::AsyncService {
 public:
  GrpcFront(UnaryRouter& router, PlayService& play, const TokenGate& gate, GatewayMetrics& metrics,
            GrpcFrontOptions options = {})
      : router_(router),
        play_(play),
        gate_(gate),
        metrics_(metrics),
        options_(options),
        play_limiter_(options.play_streams_max, options.play_streams_per_ip_max) {}

  grpc::ServerUnaryReactor* GuestLogin(grpc::CallbackServerContext* ctx,
                                       const client::v1::GuestLoginRequest* request,
                                       client::v1::Session* response) override;
  grpc::ServerUnaryReactor* Refresh(grpc::CallbackServerContext* ctx,
                                    const client::v1::RefreshRequest* request,
                                    client::v1::Session* response) override;
  grpc::ServerUnaryReactor* GetProfile(grpc::CallbackServerContext* ctx,
                                       const client::v1::GetProfileRequest* request,
                                       client::v1::Profile* response) override;
  grpc::ServerUnaryReactor* UpdateProfile(grpc::CallbackServerContext* ctx,
                                          const client::v1::UpdateProfileRequest* request,
                                          client::v1::Profile* response) override;
  grpc::ServerUnaryReactor* GetPublicProfiles(
      grpc::CallbackServerContext* ctx, const client::v1::GetPublicProfilesRequest* request,
      client::v1::GetPublicProfilesResponse* response) override;
  grpc::ServerUnaryReactor* GetStats(grpc::CallbackServerContext* ctx,
                                     const client::v1::GetStatsRequest* request,
                                     client::v1::StatsResponse* response) override;
  grpc::ServerUnaryReactor* RecentResults(grpc::CallbackServerContext* ctx,
                                          const client::v1::RecentResultsRequest* request,
                                          client::v1::RecentResultsResponse* response) override;
  grpc::ServerUnaryReactor* CreateTable(grpc::CallbackServerContext* ctx,
                                        const client::v1::CreateTableRequest* request,
                                        client::v1::TableRef* response) override;
  grpc::ServerUnaryReactor* ResolveCode(grpc::CallbackServerContext* ctx,
                                        const client::v1::ResolveCodeRequest* request,
                                        client::v1::TableRef* response) override;
  grpc::ServerUnaryReactor* ListOpenTables(grpc::CallbackServerContext* ctx,
                                           const client::v1::ListOpenTablesRequest* request,
                                           client::v1::ListOpenTablesResponse* response) override;
  grpc::ServerUnaryReactor* QuickJoin(grpc::CallbackServerContext* ctx,
                                      const client::v1::QuickJoinRequest* request,
                                      client::v1::TableRef* response) override;
  grpc::ServerUnaryReactor* MyTables(grpc::CallbackServerContext* ctx,
                                     const client::v1::MyTablesRequest* request,
                                     client::v1::MyTablesResponse* response) override;
  grpc::ServerUnaryReactor* UploadNote(grpc::CallbackServerContext* ctx,
                                       const client::v1::UploadNoteRequest* request,
                                       client::v1::UploadNoteResponse* response) override;
  grpc::ServerUnaryReactor* GetNote(grpc::CallbackServerContext* ctx,
                                    const client::v1::GetNoteRequest* request,
                                    client::v1::GetNoteResponse* response) override;
  // common::AsyncService: requests Play calls on every queue; each finished Play call is
  // recorded with `recorder` (the server's {method, code} metrics).
  void ServeOn(common::AsyncQueues& queues, common::CallRecorder& recorder) override;

  void EndPlayStreams(const absl::Status& status) { streams_.FinishAll(status); }
  size_t open_play_streams() const { return streams_.size(); }

 private:
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* ctx, const char* name,
                                  const google::protobuf::Message& request,
                                  google::protobuf::Message* response);

  UnaryRouter& router_;
  PlayService& play_;
  const TokenGate& gate_;
  GatewayMetrics& metrics_;
  const GrpcFrontOptions options_;
  PlayStreamSet streams_;
  ConnLimiter play_limiter_;
  common::CallRecorder* recorder_ = nullptr;  // set by ServeOn
  friend class GrpcPlayCall;                  // grpc_front.cc: one Play call
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_GRPC_FRONT_H_
