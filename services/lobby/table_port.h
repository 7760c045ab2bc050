// How the directory talks to the table tier: the table service's API on one instance
// (TablePort: gRPC in grpc_table_port.h, memory in fake_table_port.h), the registry of live
// instances and owner records (TableRegistry: Redis through libs/placement, or memory), and
// the Redis side of the codes (CodeCache).
//
// Contract (TablePort): every call goes to the instance `at` and carries the absolute
// `deadline`; the table service's status codes come back as they are (NOT_FOUND,
// FAILED_PRECONDITION owner elsewhere / too few coins, RESOURCE_EXHAUSTED full, ...);
// DEADLINE_EXCEEDED and an unreachable instance are Unavailable.
// Thread-safety: implementations are thread-safe.
#ifndef COURTPIECE_SERVICES_LOBBY_TABLE_PORT_H_
#define COURTPIECE_SERVICES_LOBBY_TABLE_PORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/placement/placement.h"
#include "courtpiece/table/v1/table_service.pb.h"

namespace courtpiece::lobby {

using placement::InstanceInfo;

class TablePort {
 public:
  virtual ~TablePort() = default;
  virtual absl::StatusOr<table::v1::CreateTableResponse> CreateTable(
      const InstanceInfo& at, const table::v1::CreateTableRequest& request,
      absl::Time deadline) = 0;
  virtual absl::StatusOr<table::v1::JoinTableResponse> JoinTable(const InstanceInfo& at,
                                                                 std::string_view table_id,
                                                                 std::string_view player,
                                                                 absl::Time deadline) = 0;
  virtual absl::StatusOr<std::vector<table::v1::TableInfo>> ListTables(
      const InstanceInfo& at, const table::v1::ListTablesRequest& request, absl::Time deadline) = 0;
  virtual absl::StatusOr<table::v1::TableInfo> GetTable(const InstanceInfo& at,
                                                        std::string_view table_id,
                                                        absl::Time deadline) = 0;
};

// The table tier's registry, read only (libs/placement). NotFound from Owner: no owner
// record (never created, or removed after it closed).
class TableRegistry {
 public:
  virtual ~TableRegistry() = default;
  virtual absl::StatusOr<std::vector<InstanceInfo>> LiveInstances() = 0;
  virtual absl::StatusOr<placement::Owner> Owner(std::string_view table_id) = 0;
  // Owner of each id, in order (an implementation may ask for them all in one round trip).
  virtual std::vector<absl::StatusOr<placement::Owner>> Owners(
      const std::vector<std::string>& table_ids) {
    std::vector<absl::StatusOr<placement::Owner>> out;
    out.reserve(table_ids.size());
    for (const std::string& id : table_ids) out.push_back(Owner(id));
    return out;
  }
};

// The Redis side of the codes: "code -> entry" for the hot ResolveCode path, and the first
// half of a reservation (SET NX; Postgres' unique constraint is the second).
class CodeCache {
 public:
  virtual ~CodeCache() = default;
  // SET NX: true when the code was free in Redis and now holds `value`.
  virtual absl::StatusOr<bool> Claim(std::string_view code, std::string_view value) = 0;
  // Overwrites (a reservation confirmed in Postgres, or a fall-back read re-filling Redis).
  virtual absl::Status Put(std::string_view code, std::string_view value) = 0;
  virtual absl::StatusOr<std::optional<std::string>> Get(std::string_view code) = 0;
  // Get of each code, in order (an implementation may ask for them all in one round trip).
  virtual std::vector<absl::StatusOr<std::optional<std::string>>> GetMany(
      const std::vector<std::string>& codes) {
    std::vector<absl::StatusOr<std::optional<std::string>>> out;
    out.reserve(codes.size());
    for (const std::string& code : codes) out.push_back(Get(code));
    return out;
  }
  // Deletes the key only while it still holds `value` (undoing our own Claim).
  virtual absl::Status Release(std::string_view code, std::string_view value) = 0;
  // The table closed: the key holds `tombstone` for ttl_ms (the cooling-off), then is free.
  virtual absl::Status Close(std::string_view code, std::string_view tombstone, int64_t ttl_ms) = 0;
};

// A lock shared by every lobby process (Redis SET NX PX), so that quick joins of one game
// type run one at a time across lobbies. TryLock: true when taken (it expires after ttl_ms
// whatever happens to its holder); Unlock releases only the holder's own token.
class SharedLock {
 public:
  virtual ~SharedLock() = default;
  virtual absl::StatusOr<bool> TryLock(std::string_view name, std::string_view token,
                                       int64_t ttl_ms) = 0;
  virtual absl::Status Unlock(std::string_view name, std::string_view token) = 0;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_TABLE_PORT_H_
