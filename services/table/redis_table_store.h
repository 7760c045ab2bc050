// RedisTableStore: the TableStore on a real Redis server, through storage::RedisClient. Key
// layout and the reasons for it: docs/table-service.md ("Redis layout").
//
//   RedisTableStore store({.redis = *storage::ParseRedisAddr("127.0.0.1:6379"),
//                          .connections = 4});
//   ASSIGN_OR_RETURN(Owner owner, store.Create("t-1", "instance-a", state_bytes));
//   RETURN_IF_ERROR(store.Save("t-1", owner, new_state, {event_bytes}, 200));
//
// Contract (table_store.h, plus):
//  - Create, Claim, Save, Remove and Load are each one Lua script over the table's own keys
//    (owner, state, events; one hash slot): the owner check and the write are atomic, so a
//    fenced writer writes nothing. Script outcomes come back as values and are mapped to
//    the exact codes of table_store.h; no script raises a Redis error.
//  - The registry (cp:instance*, cp:tables) lives in other slots, so it is updated by plain
//    commands around the script, never inside it (Redis Cluster refuses cross-slot scripts):
//    a table is added to an index BEFORE the script that makes it true and removed AFTER.
//    A crash in between leaves an index that names too much, never too little; readers
//    check GetOwner (the truth). Failures of the after-script index clean-up are ignored
//    (the call's outcome is the script's). A caller's own index entry is undone after a
//    lost Claim or an AlreadyExists only when this call added it. Known gap: a removal
//    racing a claim of the same table by the instance it is removed from (a former owner
//    re-claiming the table at the very moment it is claimed away) can leave that owner's
//    index without the table; the host never claims a table it just lost, and GetOwner
//    and AllTables still name it.
//  - Bad input (ids, epochs, events_max, ttl) -> InvalidArgument before any I/O.
//  - Every call is a few commands (at most four), each bounded by the client's
//    command_timeout_ms plus its reconnect attempts (storage::RedisOptions). I/O failure ->
//    Unavailable, timeout -> DeadlineExceeded: the write may or may not have happened.
//
// Thread-safety: thread-safe. The store owns `connections` RedisClients (one connection
// each) and hands them out round-robin per call, so up to that many calls run in parallel.
#ifndef COURTPIECE_SERVICES_TABLE_REDIS_TABLE_STORE_H_
#define COURTPIECE_SERVICES_TABLE_REDIS_TABLE_STORE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "courtpiece/placement/placement.h"
#include "courtpiece/storage/redis_client.h"
#include "services/table/table_store.h"

namespace courtpiece::table_service {

struct RedisTableStoreOptions {
  storage::RedisOptions redis;     // server, db, timeouts of every command
  int connections = 4;             // RedisClients in the pool (>= 1), used round-robin
  std::string key_prefix = "cp:";  // every key starts with it; tests pass a private one
};

class RedisTableStore final : public TableStore {
 public:
  // Does not connect; the first call does. CHECKs connections >= 1.
  explicit RedisTableStore(RedisTableStoreOptions options);

  absl::Status Heartbeat(const InstanceInfo& self, int64_t ttl_ms) override;
  absl::Status Deregister(std::string_view instance_id) override;
  absl::StatusOr<std::vector<InstanceInfo>> LiveInstances() override;
  absl::StatusOr<std::vector<std::string>> KnownInstances() override;
  absl::Status Forget(std::string_view instance_id) override;

  absl::StatusOr<Owner> Create(std::string_view table_id, std::string_view instance,
                               std::string_view state) override;
  absl::StatusOr<Owner> GetOwner(std::string_view table_id) override;
  absl::StatusOr<Owner> Claim(std::string_view table_id, std::string_view instance,
                              int64_t expected_epoch) override;
  absl::StatusOr<std::vector<std::string>> TablesOf(std::string_view instance_id) override;
  absl::StatusOr<std::vector<std::string>> AllTables() override;

  absl::Status Save(std::string_view table_id, const Owner& owner, std::string_view state,
                    const std::vector<std::string>& new_events, int events_max) override;
  std::vector<absl::Status> SaveMany(const std::vector<SaveRequest>& requests,
                                     int events_max) override;
  absl::StatusOr<StoredTableBytes> Load(std::string_view table_id) override;
  absl::Status Remove(std::string_view table_id, const Owner& owner) override;

  // Key names (docs/table-service.md; libs/placement), public for tests and operators' tools.
  std::string OwnerKey(std::string_view table_id) const { return keys_.OwnerKey(table_id); }
  std::string StateKey(std::string_view table_id) const { return keys_.StateKey(table_id); }
  std::string EventsKey(std::string_view table_id) const { return keys_.EventsKey(table_id); }
  std::string InstanceKey(std::string_view instance_id) const {
    return keys_.InstanceKey(instance_id);
  }
  std::string InstancesKey() const { return keys_.InstancesKey(); }
  std::string InstanceTablesKey(std::string_view instance_id) const {
    return keys_.InstanceTablesKey(instance_id);
  }
  std::string TablesKey() const { return keys_.TablesKey(); }

  int connections() const { return static_cast<int>(clients_.size()); }

 private:
  storage::RedisClient& Client();

  const placement::RegistryKeys keys_;
  std::vector<std::unique_ptr<storage::RedisClient>> clients_;
  std::atomic<uint64_t> next_client_{0};
};

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_REDIS_TABLE_STORE_H_
