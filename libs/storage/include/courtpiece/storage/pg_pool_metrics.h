// The gauge every service with a Postgres pool exports: pg_pool_connections{state} with
// state = in_use, open, waiting and size_max, read from the pool when called (the services
// call it once a second).
#ifndef COURTPIECE_STORAGE_PG_POOL_METRICS_H_
#define COURTPIECE_STORAGE_PG_POOL_METRICS_H_

#include "courtpiece/common/metrics.h"
#include "courtpiece/storage/pg_pool.h"

namespace courtpiece::storage {

// Sets `gauge`'s four series from `pool` now. Thread-safe (the pool's counters are read
// under its lock).
void SetPoolGauges(const PgPool& pool, common::GaugeFamily& gauge);

}  // namespace courtpiece::storage

#endif  // COURTPIECE_STORAGE_PG_POOL_METRICS_H_
