#include "services/lobby/stats_server.h"

#include "services/lobby/records_rpc.h"

namespace courtpiece::lobby {
namespace {

void GameStatsToProto(const GameTypeStats& in, v1::GameTypeStats* out) {
  out->set_game(in.game);
  out->set_played(in.played);
  out->set_won(in.won);
  out->set_lost(in.lost);
  out->set_quits(in.quits);
  out->set_courts(in.courts);
  out->set_goon_courts(in.goon_courts);
}

}  // namespace

void StatsToProto(const StatsView& in, v1::StatsResponse* out) {
  out->set_player_id(in.player_id);
  for (const GameTypeStats& g : in.by_game) GameStatsToProto(g, out->add_by_game());
  GameStatsToProto(in.total, out->mutable_total());
}

void ResultToProto(const PlayerGameResult& in, v1::GameResult* out) {
  out->set_table_id(in.table_id);
  out->set_game_no(in.game_no);
  out->set_game(in.game);
  for (int s : in.scores) out->add_scores(s);
  out->set_winning_team(in.winning_team);
  out->set_won(in.won);
  out->set_counts_for_stats(in.counts_for_stats);
  out->set_recorded_at_ms(absl::ToUnixMillis(in.recorded_at));
}

StatsService::StatsService(Records& records, const auth::CallerAuth& auth, const Clock& clock,
                           StatsServerOptions options, const common::Logger& log)
    : records_(records), auth_(auth), clock_(clock), options_(options), log_(log) {}

grpc::Status StatsService::GetStats(grpc::ServerContext* context,
                                    const v1::GetStatsRequest* request,
                                    v1::StatsResponse* response) {
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) return records_rpc::Failed(log_, "GetStats", caller.status());
  const std::string& player =
      request->player_id().empty() ? caller->player_id : request->player_id();
  absl::StatusOr<StatsView> stats =
      records_.Stats(player, records_rpc::Deadline(*context, clock_, options_.rpc_deadline_max));
  if (!stats.ok()) return records_rpc::Failed(log_, "GetStats", stats.status());
  StatsToProto(*stats, response);
  return grpc::Status::OK;
}

grpc::Status StatsService::RecentResults(grpc::ServerContext* context,
                                         const v1::RecentResultsRequest* request,
                                         v1::RecentResultsResponse* response) {
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) return records_rpc::Failed(log_, "RecentResults", caller.status());
  const std::string& player =
      request->player_id().empty() ? caller->player_id : request->player_id();
  absl::StatusOr<std::vector<PlayerGameResult>> results = records_.RecentResults(
      player, request->limit(), records_rpc::Deadline(*context, clock_, options_.rpc_deadline_max));
  if (!results.ok()) return records_rpc::Failed(log_, "RecentResults", results.status());
  for (const PlayerGameResult& r : *results) ResultToProto(r, response->add_results());
  return grpc::Status::OK;
}

}  // namespace courtpiece::lobby
