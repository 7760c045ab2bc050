// LobbyRecordsService: the gRPC face of Records for table instances (records.proto). It only
// translates proto <-> domain and the deadline, and counts records by kind and result.
// Trust model: LobbyRecords is served on the lobby's internal port only and called by table
// instances with no player token; the gateway never exposes it (docs/lobby.md "Records and
// stats"). The domain still validates every record.
// Thread-safety: safe for concurrent RPCs (Records is).
#ifndef COURTPIECE_SERVICES_LOBBY_RECORDS_SERVER_H_
#define COURTPIECE_SERVICES_LOBBY_RECORDS_SERVER_H_

#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/lobby/v1/records.grpc.pb.h"
#include "services/lobby/records.h"

namespace courtpiece::lobby {

struct RecordsServerOptions {
  absl::Duration rpc_deadline_max = absl::Seconds(5);
};

class LobbyRecordsService final : public v1::LobbyRecords::Service {
 public:
  // Every reference must outlive the service.
  LobbyRecordsService(Records& records, const Clock& clock, RecordsServerOptions options,
                      common::Metrics& metrics, const common::Logger& log);

  grpc::Status RecordGame(grpc::ServerContext* context, const v1::RecordGameRequest* request,
                          v1::RecordReply* reply) override;
  grpc::Status RecordQuit(grpc::ServerContext* context, const v1::RecordQuitRequest* request,
                          v1::RecordReply* reply) override;
  grpc::Status RecordRound(grpc::ServerContext* context, const v1::RecordRoundRequest* request,
                           v1::RecordReply* reply) override;
  grpc::Status RecordTableClosed(grpc::ServerContext* context,
                                 const v1::RecordTableClosedRequest* request,
                                 v1::RecordReply* reply) override;

 private:
  grpc::Status Done(std::string_view kind, const absl::StatusOr<ApplyResult>& result,
                    v1::RecordReply* reply);

  Records& records_;
  const Clock& clock_;
  const RecordsServerOptions options_;
  common::CounterFamily recorded_;
  const common::Logger& log_;
};

// proto -> domain (no validation: the domain validates).
GameRecordData GameFromProto(const v1::RecordGameRequest& in);
QuitRecordData QuitFromProto(const v1::RecordQuitRequest& in);
RoundRecordData RoundFromProto(const v1::RecordRoundRequest& in);
TableClosedData TableClosedFromProto(const v1::RecordTableClosedRequest& in);

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_RECORDS_SERVER_H_
