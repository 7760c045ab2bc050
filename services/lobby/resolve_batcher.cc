#include "services/lobby/resolve_batcher.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "courtpiece/common/check.h"

namespace courtpiece::lobby {

ResolveBatcher::ResolveBatcher(ResolveFn resolve, ResolveBatchOptions options)
    : resolve_(std::move(resolve)), options_(options) {
  COURTPIECE_CHECK(options_.threads >= 1 && options_.threads <= ResolveBatchOptions::kThreadsMax,
                   "ResolveBatchOptions.threads out of range");
  COURTPIECE_CHECK(options_.batch_max >= 1 && options_.batch_max <= ResolveBatchOptions::kBatchMax,
                   "ResolveBatchOptions.batch_max out of range");
  COURTPIECE_CHECK(options_.queue_max >= 1 && options_.queue_max <= ResolveBatchOptions::kQueueMax,
                   "ResolveBatchOptions.queue_max out of range");
  threads_.reserve(options_.threads);
  for (int i = 0; i < options_.threads; ++i) threads_.emplace_back([this] { Run(); });
}

ResolveBatcher::~ResolveBatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  COURTPIECE_CHECK(queue_.empty(), "the batcher's threads answer everything before they end");
}

bool ResolveBatcher::Submit(std::string code_or_link, absl::Time deadline, Done done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    COURTPIECE_CHECK(!stopping_, "Submit after the batcher began to stop");
    if (static_cast<int>(queue_.size()) >= options_.queue_max) return false;
    queue_.push_back(Waiting{std::move(code_or_link), deadline, std::move(done)});
  }
  work_cv_.notify_one();
  return true;
}

int64_t ResolveBatcher::batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batches_;
}

int64_t ResolveBatcher::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

int64_t ResolveBatcher::expired() const {
  std::lock_guard<std::mutex> lock(mu_);
  return expired_;
}

void ResolveBatcher::Run() {
  std::vector<std::string> inputs;
  std::vector<Done> dones;
  std::vector<Done> expired;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing is left to answer
      const absl::Time now = absl::Now();
      while (!queue_.empty() && inputs.size() < static_cast<size_t>(options_.batch_max)) {
        Waiting& w = queue_.front();
        if (w.deadline <= now) {
          expired.push_back(std::move(w.done));
        } else {
          inputs.push_back(std::move(w.code_or_link));
          dones.push_back(std::move(w.done));
        }
        queue_.pop_front();
      }
      if (!inputs.empty()) ++batches_;
      requests_ += static_cast<int64_t>(inputs.size());
      expired_ += static_cast<int64_t>(expired.size());
    }
    for (Done& done : expired) {
      std::move(done)(absl::DeadlineExceededError("the call's deadline passed while it waited"));
    }
    if (!inputs.empty()) {
      std::vector<absl::StatusOr<TableRef>> answers = resolve_(inputs);
      COURTPIECE_CHECK(answers.size() == inputs.size(), "one answer per request");
      for (size_t i = 0; i < dones.size(); ++i) std::move(dones[i])(std::move(answers[i]));
    }
    inputs.clear();
    dones.clear();
    expired.clear();
  }
}

}  // namespace courtpiece::lobby
