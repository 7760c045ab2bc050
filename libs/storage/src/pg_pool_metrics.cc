#include "courtpiece/storage/pg_pool_metrics.h"

namespace courtpiece::storage {

void SetPoolGauges(const PgPool& pool, common::GaugeFamily& gauge) {
  gauge.WithLabels({{"state", "in_use"}}).Set(pool.in_use());
  gauge.WithLabels({{"state", "open"}}).Set(pool.open());
  gauge.WithLabels({{"state", "waiting"}}).Set(pool.waiting());
  gauge.WithLabels({{"state", "size_max"}}).Set(pool.options().size_max);
}

}  // namespace courtpiece::storage
