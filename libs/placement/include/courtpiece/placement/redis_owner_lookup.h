// RedisOwnerLookup: the real OwnerLookup (owner_lookup.h) over the table tier's Redis
// registry (registry_reader.h): the table's owner record (ReadOwner), then the owner's
// address from its heartbeat key (InstanceKey), which expires when the instance dies.
//
// Contract: NOT_FOUND "unknown table <id>" (no owner record); UNAVAILABLE when the owner's
// heartbeat key is gone ("owner <instance> of table <id> is not live": a survivor will claim
// the table, the caller retries) or Redis fails in any way (its message kept).
// Thread-safety: as the RedisClient (thread-safe; one connection: lookups serialize on it).
#ifndef COURTPIECE_PLACEMENT_REDIS_OWNER_LOOKUP_H_
#define COURTPIECE_PLACEMENT_REDIS_OWNER_LOOKUP_H_

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "courtpiece/placement/owner_lookup.h"
#include "courtpiece/placement/placement.h"
#include "courtpiece/storage/redis_client.h"

namespace courtpiece::placement {

class RedisOwnerLookup final : public OwnerLookup {
 public:
  // `redis` must outlive the lookup; `keys`: the table tier's prefix ("cp:").
  RedisOwnerLookup(storage::RedisClient& redis, RegistryKeys keys)
      : redis_(redis), keys_(std::move(keys)) {}

  absl::StatusOr<std::string> Lookup(std::string_view table_id) override;

 private:
  storage::RedisClient& redis_;
  const RegistryKeys keys_;
};

}  // namespace courtpiece::placement

#endif  // COURTPIECE_PLACEMENT_REDIS_OWNER_LOOKUP_H_
