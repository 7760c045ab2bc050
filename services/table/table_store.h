// Where hosted tables live between inputs: Redis (redis_table_store.h) or memory
// (fake_table_store.h). Holds the instance registry, one owner record per table
// {instance, epoch}, each table's state and its recent events. docs/table-service.md has the
// key layout; keys of one table share the hash tag {<table_id>} (Redis Cluster safe).
//
// Contract:
//  - Epochs fence writers: Save/Remove succeed only while the owner record still names the
//    caller's instance AND epoch, checked atomically with the write; otherwise
//    FailedPrecondition("fenced: ...") and nothing is written. A stalled former owner can
//    therefore never overwrite the state of a table another instance claimed.
//  - Claim is a compare-and-set on the epoch: it succeeds only when the record still holds
//    `expected_epoch`, and then sets {instance, expected_epoch + 1}.
//  - Errors: Unavailable / DeadlineExceeded when the store is unreachable (the write may or
//    may not have happened; retry), NotFound for an unknown table (also from Save, Claim and
//    Remove), FailedPrecondition for a fence, Aborted for a lost Claim race, AlreadyExists
//    from Create. A Claim retried after Unavailable may be Aborted by its own first try:
//    GetOwner tells. InvalidArgument, changing nothing, for a bad id (1..64 chars of
//    [A-Za-z0-9_.-]), an epoch < 1, events_max < 0, ttl_ms < 1 or an empty addr.
//  - The indexes (TablesOf, AllTables) may name too much (a table claimed away or removed
//    a moment ago), never too little; the owner record is the truth.
//  - State and events are opaque bytes (hosted_table.proto, serialised by the caller).
// Thread-safety: implementations are thread-safe.
#ifndef COURTPIECE_SERVICES_TABLE_TABLE_STORE_H_
#define COURTPIECE_SERVICES_TABLE_TABLE_STORE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "courtpiece/placement/placement.h"

namespace courtpiece::table_service {

// Shared with the lobby, which reads the registry (libs/placement).
using InstanceInfo = placement::InstanceInfo;
using Owner = placement::Owner;

struct StoredTableBytes {
  Owner owner;
  std::string state;                // HostedTable bytes
  std::vector<std::string> events;  // StoredEvent bytes, oldest first (at most events_max)
};

class TableStore {
 public:
  virtual ~TableStore() = default;

  // Registry. Heartbeat marks `self` live for ttl_ms and lists it among known instances.
  virtual absl::Status Heartbeat(const InstanceInfo& self, int64_t ttl_ms) = 0;
  // Removes the live mark at once (graceful exit); it stays known until Forget.
  virtual absl::Status Deregister(std::string_view instance_id) = 0;
  virtual absl::StatusOr<std::vector<InstanceInfo>> LiveInstances() = 0;
  // Every instance ever heartbeating and not forgotten, live or not.
  virtual absl::StatusOr<std::vector<std::string>> KnownInstances() = 0;
  // Drops a dead instance from the known list (after its tables were claimed).
  virtual absl::Status Forget(std::string_view instance_id) = 0;

  // Creates the table owned by `instance` at epoch 1 with `state`, and indexes it under the
  // instance. AlreadyExists (writing nothing) when the table exists.
  virtual absl::StatusOr<Owner> Create(std::string_view table_id, std::string_view instance,
                                       std::string_view state) = 0;
  virtual absl::StatusOr<Owner> GetOwner(std::string_view table_id) = 0;
  // CAS: {instance, expected_epoch + 1} when the record holds expected_epoch; Aborted
  // otherwise. Moves the table into `instance`'s index.
  virtual absl::StatusOr<Owner> Claim(std::string_view table_id, std::string_view instance,
                                      int64_t expected_epoch) = 0;
  // Tables indexed under `instance` (the index may lag a claim: check GetOwner).
  virtual absl::StatusOr<std::vector<std::string>> TablesOf(std::string_view instance_id) = 0;
  // Every table in the store (a cursor walk; for the sweeper and operators).
  virtual absl::StatusOr<std::vector<std::string>> AllTables() = 0;

  // Fenced write of the state, appending `new_events` to the table's event list and trimming
  // it to its last `events_max` elements.
  virtual absl::Status Save(std::string_view table_id, const Owner& owner, std::string_view state,
                            const std::vector<std::string>& new_events, int events_max) = 0;
  struct SaveRequest {
    std::string table_id;
    Owner owner;
    std::string state;
    std::vector<std::string> new_events;
  };
  // Several Saves in one go (Redis: one pipelined round trip); one status per request, in
  // order, each as Save would give it. The default runs Save for each.
  virtual std::vector<absl::Status> SaveMany(const std::vector<SaveRequest>& requests,
                                             int events_max) {
    std::vector<absl::Status> out;
    out.reserve(requests.size());
    for (const SaveRequest& r : requests) {
      out.push_back(Save(r.table_id, r.owner, r.state, r.new_events, events_max));
    }
    return out;
  }
  virtual absl::StatusOr<StoredTableBytes> Load(std::string_view table_id) = 0;
  // Fenced delete of every key of the table and its index entry.
  virtual absl::Status Remove(std::string_view table_id, const Owner& owner) = 0;
};

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_TABLE_STORE_H_
