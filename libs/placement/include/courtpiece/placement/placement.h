// Where a table lives: the table tier's registry in Redis (instances and their addresses,
// one owner record per table) and the rendezvous hash that picks a table's instance.
// Shared by the table service (which writes the registry) and the lobby (which reads it to
// place new tables and to find a table's owner). Key layout: docs/table-service.md.
//
//   RegistryKeys keys("cp:");
//   keys.OwnerKey("t-1");                      // "cp:{t-1}:owner" (hash: instance, epoch)
//   std::string id = PickOwner("t-1", live);   // the same answer on every caller
//
// Thread-safety: value types and pure functions.
#ifndef COURTPIECE_PLACEMENT_PLACEMENT_H_
#define COURTPIECE_PLACEMENT_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace courtpiece::placement {

// A live table instance: its id and the host:port of its gRPC server.
struct InstanceInfo {
  std::string id;    // 1..64 chars of [A-Za-z0-9_.-]
  std::string addr;  // host:port of its gRPC server
  bool operator==(const InstanceInfo&) const = default;
};

// A table's owner record.
struct Owner {
  std::string instance;
  int64_t epoch = 0;  // 1 at creation, +1 per claim
  bool operator==(const Owner&) const = default;
};

// The registry's key names under a prefix ("cp:" in production; tests pass a private one).
// Keys of one table share the hash tag {<table_id>} (one Redis Cluster slot).
class RegistryKeys {
 public:
  explicit RegistryKeys(std::string prefix = "cp:") : prefix_(std::move(prefix)) {}
  const std::string& prefix() const { return prefix_; }

  std::string OwnerKey(std::string_view table_id) const;              // hash instance, epoch
  std::string StateKey(std::string_view table_id) const;              // HostedTable bytes
  std::string EventsKey(std::string_view table_id) const;             // list of StoredEvent
  std::string InstanceKey(std::string_view instance_id) const;        // addr, with a TTL
  std::string InstancesKey() const;                                   // set of known ids
  std::string InstanceTablesKey(std::string_view instance_id) const;  // set of its tables
  std::string TablesKey() const;                                      // set of every table

 private:
  std::string prefix_;
};

// FNV-1a of "a/b" with a final avalanche (splitmix64's finaliser).
uint64_t HashPair(std::string_view a, std::string_view b);

// Rendezvous hashing: the id of the instance (of `instances`) that should own `key` (a
// table id, or a job name): the highest HashPair(key, id), ties to the smaller id. Every
// caller with the same list agrees; removing an instance moves only its own keys. Empty
// for an empty list.
std::string PickOwner(std::string_view key, const std::vector<InstanceInfo>& instances);

}  // namespace courtpiece::placement

#endif  // COURTPIECE_PLACEMENT_PLACEMENT_H_
