#include "services/moderation/retention.h"

namespace courtpiece::moderation {

Retention::Retention(ModerationStore& store, const Clock& clock, RetentionOptions options)
    : store_(store), clock_(clock), options_(options) {}

absl::StatusOr<PurgeRun> Retention::RunOnce(absl::Time deadline) {
  const absl::Time now = clock_.Now();
  if (now >= deadline) return absl::DeadlineExceededError("the purge's deadline passed");
  absl::StatusOr<PurgeResult> result = store_.Purge(now, options_.purge_batch_max, deadline);
  if (!result.ok()) return result.status();
  const int64_t purged = result->notes_deleted + result->audio_deleted;
  return PurgeRun{.result = *result, .drained = purged < options_.purge_batch_max};
}

}  // namespace courtpiece::moderation
