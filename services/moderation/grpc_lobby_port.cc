#include "services/moderation/grpc_lobby_port.h"

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_status.h"

namespace courtpiece::moderation {
namespace {

void Prepare(grpc::ClientContext& ctx, const std::string& authorization, absl::Time deadline) {
  ctx.set_deadline(absl::ToChronoTime(deadline));
  if (!authorization.empty()) ctx.AddMetadata("authorization", authorization);
}

absl::Status StatusOf(const grpc::Status& s) {
  absl::Status out = common::FromGrpcStatus(s);
  if (out.code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::UnavailableError(absl::StrCat("the lobby timed out: ", out.message()));
  }
  return out;
}

}  // namespace

absl::StatusOr<LobbyPlayer> GrpcLobbyPort::GetPlayer(const std::string& authorization,
                                                     const std::string& player_id,
                                                     absl::Time deadline) {
  grpc::ClientContext ctx;
  Prepare(ctx, authorization, deadline);
  lobby::v1::GetPlayerRequest request;
  request.set_player_id(player_id);
  lobby::v1::PlayerDossier out;
  grpc::Status s = stub_->GetPlayer(&ctx, request, &out);
  if (!s.ok()) return StatusOf(s);
  return LobbyPlayer{.player_id = out.profile().player_id(),
                     .display_name = out.profile().display_name(),
                     .quits_total = out.quits_total()};
}

absl::StatusOr<std::vector<LobbyQuit>> GrpcLobbyPort::ListQuits(const std::string& authorization,
                                                                const std::string& player_id,
                                                                int limit, absl::Time deadline) {
  grpc::ClientContext ctx;
  Prepare(ctx, authorization, deadline);
  lobby::v1::ListQuitsRequest request;
  request.set_player_id(player_id);
  request.set_limit(limit);
  lobby::v1::ListQuitsResponse out;
  grpc::Status s = stub_->ListQuits(&ctx, request, &out);
  if (!s.ok()) return StatusOf(s);
  std::vector<LobbyQuit> quits;
  for (const lobby::v1::Quit& q : out.quits()) {
    quits.push_back({.table_id = q.table_id(),
                     .game_no = q.game_no(),
                     .game = q.game(),
                     .recorded_at_ms = q.recorded_at_ms()});
  }
  return quits;
}

}  // namespace courtpiece::moderation
