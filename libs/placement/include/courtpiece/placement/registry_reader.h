// Read-only lookups of the table tier's Redis registry (placement.h), for services that
// place tables without hosting them (the lobby) and for the table store itself.
//
// Contract: Unavailable / DeadlineExceeded when Redis is unreachable (RedisClient's codes);
// Internal for a reply of an unexpected shape (a corrupted key); ReadOwner answers NotFound
// ("unknown table <id>") when the table has no owner record (never created, or removed
// after it closed). Ids are not validated here (the callers do it before any I/O).
// Thread-safety: as the RedisClient passed in (RedisClient is thread-safe).
#ifndef COURTPIECE_PLACEMENT_REGISTRY_READER_H_
#define COURTPIECE_PLACEMENT_REGISTRY_READER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "courtpiece/placement/placement.h"
#include "courtpiece/storage/redis_client.h"

namespace courtpiece::placement {

// Every known instance id (SMEMBERS), sorted.
absl::StatusOr<std::vector<std::string>> ReadKnownInstances(storage::RedisClient& redis,
                                                            const RegistryKeys& keys);
// The known instances whose heartbeat key is alive, with their addresses, sorted by id.
// One GET per instance (the keys are in different Cluster slots).
absl::StatusOr<std::vector<InstanceInfo>> ReadLiveInstances(storage::RedisClient& redis,
                                                            const RegistryKeys& keys);
// The table's owner record (HMGET instance epoch).
absl::StatusOr<Owner> ReadOwner(storage::RedisClient& redis, const RegistryKeys& keys,
                                std::string_view table_id);
// ReadOwner of each id in one round trip (pipelined on the client's one connection): one
// answer per id, in order, each as ReadOwner gives it; an I/O failure is every answer's.
std::vector<absl::StatusOr<Owner>> ReadOwners(storage::RedisClient& redis, const RegistryKeys& keys,
                                              const std::vector<std::string>& table_ids);

}  // namespace courtpiece::placement

#endif  // COURTPIECE_PLACEMENT_REGISTRY_READER_H_
