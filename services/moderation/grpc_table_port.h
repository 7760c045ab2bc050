// TablePort over gRPC (table_port.h): the table's owner from the Redis registry
// (placement::OwnerLookup), one channel per owner address (made on first use, at most
// channels_max kept; the cache is dropped whole when full: addresses churn only on failover),
// every call with the caller's absolute deadline. A FAILED_PRECONDITION carrying the trailing
// metadata "courtpiece-owner-addr" (the table moved) is followed once to that address; a
// second redirect is UNAVAILABLE (the caller retries). NOT_FOUND: the registry or the owner
// does not know the table. DEADLINE_EXCEEDED and an unreachable owner are UNAVAILABLE.
// Thread-safety: thread-safe.
#ifndef COURTPIECE_SERVICES_MODERATION_GRPC_TABLE_PORT_H_
#define COURTPIECE_SERVICES_MODERATION_GRPC_TABLE_PORT_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "courtpiece/common/metrics.h"
#include "courtpiece/placement/owner_lookup.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "services/moderation/table_port.h"

namespace courtpiece::moderation {

class GrpcTablePort final : public TablePort {
 public:
  // `owners` and `metrics` (may be null) must outlive the port.
  explicit GrpcTablePort(placement::OwnerLookup& owners, common::Metrics* metrics = nullptr,
                         int channels_max = 64)
      : owners_(owners), metrics_(metrics), channels_max_(channels_max) {}

  absl::StatusOr<VoiceLock> CheckVoiceLock(const std::string& table_id, const std::string& player,
                                           absl::Time deadline) override;
  absl::StatusOr<Announced> AnnounceVoiceNote(const Announcement& note,
                                              absl::Time deadline) override;
  absl::StatusOr<TableView> GetTable(const std::string& table_id, absl::Time deadline) override;

  int channels() const;

 private:
  using Stub = table::v1::TableService::Stub;
  // Runs `call` at the table's owner, following one redirect.
  absl::Status AtOwner(const std::string& table_id, absl::Time deadline,
                       const std::function<grpc::Status(Stub&, grpc::ClientContext*)>& call);
  std::shared_ptr<Stub> StubFor(const std::string& addr);

  placement::OwnerLookup& owners_;
  common::Metrics* metrics_;
  const int channels_max_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Stub>> stubs_;  // guarded by mu_
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_GRPC_TABLE_PORT_H_
