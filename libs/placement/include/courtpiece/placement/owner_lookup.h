// The address of a table's live owner: the interface the gateway's relay and the moderation
// service's table port use. The real one is RedisOwnerLookup (redis_owner_lookup.h).
//
// Contract: Lookup answers the host:port of the table's live owner; NOT_FOUND "unknown table
// <id>" (no owner record); UNAVAILABLE when the owner is not live (its heartbeat expired: a
// survivor will claim the table, the caller retries) or the registry is unreachable.
// Thread-safety: implementations are thread-safe.
#ifndef COURTPIECE_PLACEMENT_OWNER_LOOKUP_H_
#define COURTPIECE_PLACEMENT_OWNER_LOOKUP_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace courtpiece::placement {

class OwnerLookup {
 public:
  virtual ~OwnerLookup() = default;
  virtual absl::StatusOr<std::string> Lookup(std::string_view table_id) = 0;
};

}  // namespace courtpiece::placement

#endif  // COURTPIECE_PLACEMENT_OWNER_LOOKUP_H_
