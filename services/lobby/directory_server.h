// The gRPC face of the Directory (lobby.proto, service Directory): authenticates every call
// through auth::CallerAuth, translates proto <-> domain, and nothing else. ResolveCode, the
// hot path, is on gRPC's callback API and answered in batches by a ResolveBatcher of the
// service's own (resolve_batcher.h); a full batch queue is RESOURCE_EXHAUSTED. The other
// methods are synchronous.
// Thread-safety: gRPC calls it from its threads; the Directory is thread-safe. The service
// must outlive its server (its batcher answers the calls still waiting when it is
// destroyed).
#ifndef COURTPIECE_SERVICES_LOBBY_DIRECTORY_SERVER_H_
#define COURTPIECE_SERVICES_LOBBY_DIRECTORY_SERVER_H_

#include "courtpiece/auth/caller_auth.h"
#include "courtpiece/lobby/v1/lobby.grpc.pb.h"
#include "services/lobby/directory.h"
#include "services/lobby/resolve_batcher.h"

namespace courtpiece::lobby {

class DirectoryService final
    : public v1::Directory::WithCallbackMethod_ResolveCode<v1::Directory::Service> {
 public:
  DirectoryService(Directory& directory, const auth::CallerAuth& auth,
                   ResolveBatchOptions resolve_options = {});

  grpc::Status CreateTable(grpc::ServerContext* context, const v1::CreateTableRequest* request,
                           v1::TableRef* response) override;
  grpc::ServerUnaryReactor* ResolveCode(grpc::CallbackServerContext* context,
                                        const v1::ResolveCodeRequest* request,
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
  ResolveBatcher resolver_;

 public:
  const ResolveBatcher& resolver() const { return resolver_; }  // for tests
};

// Domain -> proto.
void ToProto(const TableRef& ref, v1::TableRef* out);

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_DIRECTORY_SERVER_H_
