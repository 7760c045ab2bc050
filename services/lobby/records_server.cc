#include "services/lobby/records_server.h"

#include <string>

#include "absl/strings/ascii.h"
#include "services/lobby/records_rpc.h"

namespace courtpiece::lobby {
namespace {

std::vector<int> Ints(const google::protobuf::RepeatedField<int32_t>& in) {
  return std::vector<int>(in.begin(), in.end());
}

std::string ResultLabel(const absl::StatusOr<ApplyResult>& r) {
  if (r.ok()) return r->replayed ? "replayed" : "ok";
  return absl::AsciiStrToLower(common::GrpcCodeName(static_cast<int>(r.status().code())));
}

}  // namespace

GameRecordData GameFromProto(const v1::RecordGameRequest& in) {
  GameRecordData out{.key = in.key(),
                     .table_id = in.table_id(),
                     .game_no = in.game_no(),
                     .game = in.game(),
                     .counts_for_stats = in.counts_for_stats(),
                     .ended_early = in.ended_early(),
                     .winning_team = in.winning_team(),
                     .scores = Ints(in.scores()),
                     .courts = Ints(in.courts()),
                     .goon_courts = Ints(in.goon_courts()),
                     .players = {}};
  for (const v1::PlayerResult& p : in.players()) {
    out.players.push_back({.player = p.player(), .seat = p.seat(), .won = p.won()});
  }
  return out;
}

QuitRecordData QuitFromProto(const v1::RecordQuitRequest& in) {
  return {.key = in.key(),
          .table_id = in.table_id(),
          .game_no = in.game_no(),
          .player = in.player(),
          .game = in.game()};
}

RoundRecordData RoundFromProto(const v1::RecordRoundRequest& in) {
  return {.key = in.key(),
          .table_id = in.table_id(),
          .round = in.round(),
          .seed_hex = in.seed_hex(),
          .result = in.result(),
          .seed_only_to = in.seed_only_to()};
}

TableClosedData TableClosedFromProto(const v1::RecordTableClosedRequest& in) {
  return {.key = in.key(), .table_id = in.table_id()};
}

LobbyRecordsService::LobbyRecordsService(Records& records, const Clock& clock,
                                         RecordsServerOptions options, common::Metrics& metrics,
                                         const common::Logger& log)
    : records_(records),
      clock_(clock),
      options_(options),
      recorded_(metrics.Counter("records", "LobbyRecords RPCs by kind and result.")),
      log_(log) {}

grpc::Status LobbyRecordsService::Done(std::string_view kind,
                                       const absl::StatusOr<ApplyResult>& result,
                                       v1::RecordReply* reply) {
  recorded_.WithLabels({{"kind", std::string(kind)}, {"result", ResultLabel(result)}}).Increment();
  if (!result.ok()) return records_rpc::Failed(log_, kind, result.status());
  reply->set_replayed(result->replayed);
  return grpc::Status::OK;
}

grpc::Status LobbyRecordsService::RecordGame(grpc::ServerContext* context,
                                             const v1::RecordGameRequest* request,
                                             v1::RecordReply* reply) {
  return Done(
      "game",
      records_.RecordGame(GameFromProto(*request),
                          records_rpc::Deadline(*context, clock_, options_.rpc_deadline_max)),
      reply);
}

grpc::Status LobbyRecordsService::RecordQuit(grpc::ServerContext* context,
                                             const v1::RecordQuitRequest* request,
                                             v1::RecordReply* reply) {
  return Done(
      "quit",
      records_.RecordQuit(QuitFromProto(*request),
                          records_rpc::Deadline(*context, clock_, options_.rpc_deadline_max)),
      reply);
}

grpc::Status LobbyRecordsService::RecordRound(grpc::ServerContext* context,
                                              const v1::RecordRoundRequest* request,
                                              v1::RecordReply* reply) {
  return Done(
      "round",
      records_.RecordRound(RoundFromProto(*request),
                           records_rpc::Deadline(*context, clock_, options_.rpc_deadline_max)),
      reply);
}

grpc::Status LobbyRecordsService::RecordTableClosed(grpc::ServerContext* context,
                                                    const v1::RecordTableClosedRequest* request,
                                                    v1::RecordReply* reply) {
  return Done("closed",
              records_.RecordTableClosed(
                  TableClosedFromProto(*request),
                  records_rpc::Deadline(*context, clock_, options_.rpc_deadline_max)),
              reply);
}

}  // namespace courtpiece::lobby
