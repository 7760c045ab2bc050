// hiredis glue shared by the storage sources and their tests; never included by callers.
#ifndef COURTPIECE_STORAGE_SRC_REDIS_INTERNAL_H_
#define COURTPIECE_STORAGE_SRC_REDIS_INTERNAL_H_

#include <hiredis/hiredis.h>

#include "absl/status/statusor.h"
#include "courtpiece/storage/redis_client.h"

namespace courtpiece::storage::internal {

// The reply tree, errors kept as kError values.
RedisReply FromHiredis(const redisReply& r);
// As FromHiredis, but a top-level error reply becomes RedisErrorToStatus.
absl::StatusOr<RedisReply> TopLevelReply(const redisReply& r);

}  // namespace courtpiece::storage::internal

#endif  // COURTPIECE_STORAGE_SRC_REDIS_INTERNAL_H_
