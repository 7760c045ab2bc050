// The gRPC face of the Directory (lobby.proto, service Directory): authenticates every call
// through auth::CallerAuth, translates proto <-> domain, and nothing else.
// Thread-safety: gRPC calls it from its threads; the Directory is thread-safe.
#ifndef COURTPIECE_SERVICES_LOBBY_DIRECTORY_SERVER_H_
#define COURTPIECE_SERVICES_LOBBY_DIRECTORY_SERVER_H_

#include "courtpiece/auth/caller_auth.h"
#include "courtpiece/lobby/v1/lobby.grpc.pb.h"
#include "services/lobby/directory.h"

namespace courtpiece::lobby {

class DirectoryService final : public v1::Directory::Service {
 public:
  DirectoryService(Directory& directory, const auth::CallerAuth& auth);

  grpc::Status CreateTable(grpc::ServerContext* context, const v1::CreateTableRequest* request,
                           v1::TableRef* response) override;
  grpc::Status ResolveCode(grpc::ServerContext* context, const v1::ResolveCodeRequest* request,
                           v1::TableRef* response) override;
  grpc::Status ListOpenTables(grpc::ServerContext* context,
                              const v1::ListOpenTablesRequest* request,
                              v1::ListOpenTablesResponse* response) override;
  grpc::Status QuickJoin(grpc::ServerContext* context, const v1::QuickJoinRequest* request,
                         v1::TableRef* response) override;
  grpc::Status MyTables(grpc::ServerContext* context, const v1::MyTablesRequest* request,
                        v1::MyTablesResponse* response) override;

 private:
  Directory& directory_;
  const auth::CallerAuth& auth_;
};

// Domain -> proto.
void ToProto(const TableRef& ref, v1::TableRef* out);

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_DIRECTORY_SERVER_H_
