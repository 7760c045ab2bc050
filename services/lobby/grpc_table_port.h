// TablePort over gRPC: one channel per instance address (made on first use, at most
// channels_max kept), every call with the caller's absolute deadline. A FAILED_PRECONDITION
// with the trailing metadata "courtpiece-owner-addr" keeps the address as the status
// payload of the same name (the directory tells "owned elsewhere" from "too few coins").
// Thread-safety: thread-safe.
#ifndef COURTPIECE_SERVICES_LOBBY_GRPC_TABLE_PORT_H_
#define COURTPIECE_SERVICES_LOBBY_GRPC_TABLE_PORT_H_

#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "services/lobby/table_port.h"

namespace courtpiece::lobby {

class GrpcTablePort final : public TablePort {
 public:
  explicit GrpcTablePort(common::Metrics* metrics = nullptr, int channels_max = 256)
      : metrics_(metrics), channels_max_(channels_max) {}

  absl::StatusOr<table::v1::CreateTableResponse> CreateTable(
      const InstanceInfo& at, const table::v1::CreateTableRequest& request,
      absl::Time deadline) override;
  absl::StatusOr<table::v1::JoinTableResponse> JoinTable(const InstanceInfo& at,
                                                         std::string_view table_id,
                                                         std::string_view player,
                                                         absl::Time deadline) override;
  absl::StatusOr<std::vector<table::v1::TableInfo>> ListTables(
      const InstanceInfo& at, const table::v1::ListTablesRequest& request,
      absl::Time deadline) override;
  absl::StatusOr<table::v1::TableInfo> GetTable(const InstanceInfo& at, std::string_view table_id,
                                                absl::Time deadline) override;

 private:
  std::shared_ptr<table::v1::TableService::Stub> StubFor(const std::string& addr);
  common::Metrics* metrics_;
  const int channels_max_;
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<table::v1::TableService::Stub>> stubs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_GRPC_TABLE_PORT_H_
