#include "services/lobby/grpc_table_port.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_status.h"

namespace courtpiece::lobby {
namespace {

namespace pb = ::courtpiece::table::v1;
constexpr char kOwnerAddr[] = "courtpiece-owner-addr";

absl::Status StatusOf(const grpc::ClientContext& ctx, const grpc::Status& s) {
  absl::Status out = common::FromGrpcStatus(s);
  if (out.code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::UnavailableError(absl::StrCat("table instance timed out: ", out.message()));
  }
  if (out.code() == absl::StatusCode::kFailedPrecondition) {
    auto it = ctx.GetServerTrailingMetadata().find(kOwnerAddr);
    if (it != ctx.GetServerTrailingMetadata().end()) {
      out.SetPayload(kOwnerAddr, absl::Cord(std::string(it->second.data(), it->second.size())));
    }
  }
  return out;
}

void Prepare(grpc::ClientContext& ctx, absl::Time deadline) {
  ctx.set_deadline(absl::ToChronoTime(deadline));
}

}  // namespace

std::shared_ptr<pb::TableService::Stub> GrpcTablePort::StubFor(const std::string& addr) {
  absl::MutexLock lock(&mu_);
  auto it = stubs_.find(addr);
  if (it != stubs_.end()) return it->second;
  if (static_cast<int>(stubs_.size()) >= channels_max_) stubs_.clear();  // addresses churned
  auto stub = std::shared_ptr<pb::TableService::Stub>(
      pb::TableService::NewStub(common::CreateGrpcChannel(addr, metrics_)));
  stubs_[addr] = stub;
  return stub;
}

absl::StatusOr<pb::CreateTableResponse> GrpcTablePort::CreateTable(
    const InstanceInfo& at, const pb::CreateTableRequest& request, absl::Time deadline) {
  grpc::ClientContext ctx;
  Prepare(ctx, deadline);
  pb::CreateTableResponse out;
  grpc::Status s = StubFor(at.addr)->CreateTable(&ctx, request, &out);
  if (!s.ok()) return StatusOf(ctx, s);
  return out;
}

absl::StatusOr<pb::JoinTableResponse> GrpcTablePort::JoinTable(const InstanceInfo& at,
                                                               std::string_view table_id,
                                                               std::string_view player,
                                                               absl::Time deadline) {
  grpc::ClientContext ctx;
  Prepare(ctx, deadline);
  pb::JoinTableRequest request;
  request.set_table_id(std::string(table_id));
  request.set_player(std::string(player));
  pb::JoinTableResponse out;
  grpc::Status s = StubFor(at.addr)->JoinTable(&ctx, request, &out);
  if (!s.ok()) return StatusOf(ctx, s);
  return out;
}

absl::StatusOr<std::vector<pb::TableInfo>> GrpcTablePort::ListTables(
    const InstanceInfo& at, const pb::ListTablesRequest& request, absl::Time deadline) {
  grpc::ClientContext ctx;
  Prepare(ctx, deadline);
  pb::ListTablesResponse out;
  grpc::Status s = StubFor(at.addr)->ListTables(&ctx, request, &out);
  if (!s.ok()) return StatusOf(ctx, s);
  return std::vector<pb::TableInfo>(out.tables().begin(), out.tables().end());
}

absl::StatusOr<pb::TableInfo> GrpcTablePort::GetTable(const InstanceInfo& at,
                                                      std::string_view table_id,
                                                      absl::Time deadline) {
  grpc::ClientContext ctx;
  Prepare(ctx, deadline);
  pb::GetTableRequest request;
  request.set_table_id(std::string(table_id));
  pb::TableInfo out;
  grpc::Status s = StubFor(at.addr)->GetTable(&ctx, request, &out);
  if (!s.ok()) return StatusOf(ctx, s);
  return out;
}

}  // namespace courtpiece::lobby
