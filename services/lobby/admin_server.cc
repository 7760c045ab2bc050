#include "services/lobby/admin_server.h"

#include "services/lobby/records_rpc.h"
#include "services/lobby/stats_server.h"

namespace courtpiece::lobby {

LobbyAdminService::LobbyAdminService(Records& records, const auth::CallerAuth& auth,
                                     ProfileFn profile, const Clock& clock,
                                     AdminServerOptions options, const common::Logger& log)
    : records_(records),
      auth_(auth),
      profile_(std::move(profile)),
      clock_(clock),
      options_(options),
      log_(log) {}

grpc::Status LobbyAdminService::GetPlayer(grpc::ServerContext* context,
                                          const v1::GetPlayerRequest* request,
                                          v1::PlayerDossier* response) {
  if (absl::StatusOr<auth::Caller> c = auth_.RequireAdmin(*context); !c.ok()) {
    return records_rpc::Failed(log_, "GetPlayer", c.status());
  }
  const absl::Time deadline = records_rpc::Deadline(*context, clock_, options_.rpc_deadline_max);
  const std::string& player = request->player_id();
  if (absl::Status s = ValidateId("player_id", player); !s.ok()) {
    return records_rpc::Failed(log_, "GetPlayer", s);
  }
  absl::StatusOr<v1::Profile> profile =
      profile_ ? profile_(player) : absl::UnavailableError("no profile source");
  if (!profile.ok()) return records_rpc::Failed(log_, "GetPlayer", profile.status());
  absl::StatusOr<StatsView> stats = records_.Stats(player, deadline);
  if (!stats.ok()) return records_rpc::Failed(log_, "GetPlayer", stats.status());
  absl::StatusOr<std::vector<PlayerGameResult>> results =
      records_.RecentResults(player, options_.dossier_results, deadline);
  if (!results.ok()) return records_rpc::Failed(log_, "GetPlayer", results.status());
  absl::StatusOr<int64_t> quits = records_.QuitsTotal(player, deadline);
  if (!quits.ok()) return records_rpc::Failed(log_, "GetPlayer", quits.status());
  *response->mutable_profile() = std::move(*profile);
  StatsToProto(*stats, response->mutable_stats());
  for (const PlayerGameResult& r : *results) ResultToProto(r, response->add_recent_results());
  response->set_quits_total(*quits);
  return grpc::Status::OK;
}

grpc::Status LobbyAdminService::ListQuits(grpc::ServerContext* context,
                                          const v1::ListQuitsRequest* request,
                                          v1::ListQuitsResponse* response) {
  if (absl::StatusOr<auth::Caller> c = auth_.RequireAdmin(*context); !c.ok()) {
    return records_rpc::Failed(log_, "ListQuits", c.status());
  }
  absl::StatusOr<std::vector<QuitRow>> quits =
      records_.Quits(request->player_id(), request->limit(),
                     records_rpc::Deadline(*context, clock_, options_.rpc_deadline_max));
  if (!quits.ok()) return records_rpc::Failed(log_, "ListQuits", quits.status());
  for (const QuitRow& q : *quits) {
    v1::Quit* out = response->add_quits();
    out->set_table_id(q.table_id);
    out->set_game_no(q.game_no);
    out->set_game(q.game);
    out->set_recorded_at_ms(absl::ToUnixMillis(q.recorded_at));
  }
  return grpc::Status::OK;
}

grpc::Status LobbyAdminService::ListRounds(grpc::ServerContext* context,
                                           const v1::ListRoundsRequest* request,
                                           v1::ListRoundsResponse* response) {
  if (absl::StatusOr<auth::Caller> c = auth_.RequireAdmin(*context); !c.ok()) {
    return records_rpc::Failed(log_, "ListRounds", c.status());
  }
  absl::StatusOr<std::vector<RoundRow>> rounds =
      records_.Rounds(request->table_id(), request->after_round(), request->limit(),
                      records_rpc::Deadline(*context, clock_, options_.rpc_deadline_max));
  if (!rounds.ok()) return records_rpc::Failed(log_, "ListRounds", rounds.status());
  for (const RoundRow& r : *rounds) {
    v1::RoundRecord* out = response->add_rounds();
    out->set_round(r.round);
    out->set_seed_hex(r.seed_hex);
    out->set_result(r.result);
    out->set_seed_only_to(r.seed_only_to);
    out->set_recorded_at_ms(absl::ToUnixMillis(r.recorded_at));
  }
  return grpc::Status::OK;
}

}  // namespace courtpiece::lobby
