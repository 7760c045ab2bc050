#include "services/lobby/directory_server.h"

#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/grpc_status.h"

namespace courtpiece::lobby {

using common::ToGrpcStatus;

void ToProto(const TableRef& ref, v1::TableRef* out) {
  out->set_table_id(ref.table_id);
  out->set_code(ref.code);
  out->set_invite_link(ref.invite_link);
  out->set_owner_instance(ref.owner_instance);
  out->set_owner_addr(ref.owner_addr);
  v1::TableOptions* o = out->mutable_options();
  o->set_game_options(ref.game_options);
  o->set_bet_coins(ref.bet_coins);
  o->set_turn_time_ms(ref.turn_time_ms);
  o->set_public_(ref.listed);
  o->set_bot_level(ref.bot_level);
  out->set_host_player(ref.host_player);
  out->set_seat(ref.seat);
}

DirectoryService::DirectoryService(Directory& directory, const auth::CallerAuth& auth,
                                   ResolveBatchOptions resolve_options)
    : directory_(directory),
      auth_(auth),
      resolver_(
          [&directory](const std::vector<std::string>& codes) {
            return directory.ResolveCodes(codes);
          },
          resolve_options) {}

grpc::Status DirectoryService::CreateTable(grpc::ServerContext* context,
                                           const v1::CreateTableRequest* request,
                                           v1::TableRef* response) {
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  const v1::TableOptions& o = request->options();
  absl::StatusOr<TableRef> ref =
      directory_.CreateTable(caller->player_id, NewTable{.request_id = request->request_id(),
                                                         .game_options = o.game_options(),
                                                         .bet_coins = o.bet_coins(),
                                                         .turn_time_ms = o.turn_time_ms(),
                                                         .listed = o.public_(),
                                                         .bot_level = o.bot_level()});
  if (!ref.ok()) return ToGrpcStatus(ref.status());
  ToProto(*ref, response);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* DirectoryService::ResolveCode(grpc::CallbackServerContext* context,
                                                        const v1::ResolveCodeRequest* request,
                                                        v1::TableRef* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) {
    reactor->Finish(ToGrpcStatus(caller.status()));
    return reactor;
  }
  // The request and the response live until Finish.
  const bool queued = resolver_.Submit(
      request->code(),
      common::ServerDeadline(*context, RealClock::Instance(), absl::InfiniteDuration()),
      [reactor, response](absl::StatusOr<TableRef> ref) {
        if (!ref.ok()) {
          reactor->Finish(ToGrpcStatus(ref.status()));
          return;
        }
        ToProto(*ref, response);
        reactor->Finish(grpc::Status::OK);
      });
  if (!queued) {
    reactor->Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                 "too many code lookups waiting in this lobby: retry"));
  }
  return reactor;
}

grpc::Status DirectoryService::ListOpenTables(grpc::ServerContext* context,
                                              const v1::ListOpenTablesRequest* request,
                                              v1::ListOpenTablesResponse* response) {
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::StatusOr<std::vector<OpenTableEntry>> open =
      directory_.ListOpenTables(TableQuery{.game = request->game(),
                                           .bet_min_coins = request->bet_min_coins(),
                                           .bet_max_coins = request->bet_max_coins(),
                                           .limit = request->limit(),
                                           .bot_level = request->bot_level()});
  if (!open.ok()) return ToGrpcStatus(open.status());
  for (const OpenTableEntry& e : *open) {
    v1::OpenTable* t = response->add_tables();
    ToProto(e.table, t->mutable_table());
    t->set_seats_taken(e.seats_taken);
    t->set_phase(e.phase);
  }
  return grpc::Status::OK;
}

grpc::Status DirectoryService::QuickJoin(grpc::ServerContext* context,
                                         const v1::QuickJoinRequest* request,
                                         v1::TableRef* response) {
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::StatusOr<TableRef> ref =
      directory_.QuickJoin(caller->player_id,
                           TableQuery{.game = request->game(),
                                      .bet_min_coins = request->bet_min_coins(),
                                      .bet_max_coins = request->bet_max_coins(),
                                      .bot_level = request->bot_level()},
                           request->request_id());
  if (!ref.ok()) return ToGrpcStatus(ref.status());
  ToProto(*ref, response);
  return grpc::Status::OK;
}

grpc::Status DirectoryService::MyTables(grpc::ServerContext* context,
                                        const v1::MyTablesRequest* /*request*/,
                                        v1::MyTablesResponse* response) {
  absl::StatusOr<auth::Caller> caller = auth_.Authenticate(*context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::StatusOr<std::vector<TableRef>> mine = directory_.MyTables(caller->player_id);
  if (!mine.ok()) return ToGrpcStatus(mine.status());
  for (const TableRef& ref : *mine) ToProto(ref, response->add_tables());
  return grpc::Status::OK;
}

}  // namespace courtpiece::lobby
