// Retention (RULES.md §5.5, docs/moderation.md "Retention"): one purge run deletes at most
// `purge_batch_max` notes whose keep_until has passed (unreported ones whole, reported ones
// lose their audio and keep their metadata). main.cc runs it every purge interval on its own
// thread; the caller records the result (metrics).
//
// Contract: RunOnce answers what the store purged, or the store's status (UNAVAILABLE,
// DEADLINE_EXCEEDED); a run that fails changes nothing (one transaction). `drained` says the
// run found fewer than the batch bound (nothing else is due now).
// Thread-safety: thread-safe (no state of its own).
#ifndef COURTPIECE_SERVICES_MODERATION_RETENTION_H_
#define COURTPIECE_SERVICES_MODERATION_RETENTION_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "services/moderation/moderation_store.h"

namespace courtpiece::moderation {

struct RetentionOptions {
  int purge_batch_max = 1000;  // notes per run
};

struct PurgeRun {
  PurgeResult result;
  bool drained = false;  // fewer than purge_batch_max notes were due
};

class Retention {
 public:
  // Every reference must outlive the Retention.
  Retention(ModerationStore& store, const Clock& clock, RetentionOptions options);

  absl::StatusOr<PurgeRun> RunOnce(absl::Time deadline);

  const RetentionOptions& options() const { return options_; }

 private:
  ModerationStore& store_;
  const Clock& clock_;
  const RetentionOptions options_;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_RETENTION_H_
