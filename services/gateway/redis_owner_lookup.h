// The gateway's name for the real OwnerLookup, which lives in libs/placement (the
// moderation service uses it too).
#ifndef COURTPIECE_SERVICES_GATEWAY_REDIS_OWNER_LOOKUP_H_
#define COURTPIECE_SERVICES_GATEWAY_REDIS_OWNER_LOOKUP_H_

#include "courtpiece/placement/redis_owner_lookup.h"
#include "services/gateway/upstream.h"

namespace courtpiece::gateway {

using RedisOwnerLookup = placement::RedisOwnerLookup;

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_REDIS_OWNER_LOOKUP_H_
