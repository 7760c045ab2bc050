#include "services/gateway/live_calls.h"

#include <vector>

namespace courtpiece::gateway {

uint64_t LiveCalls::Started(std::function<void()> cancel) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t id = next_id_++;
  running_.emplace(id, std::move(cancel));
  return id;
}

void LiveCalls::Finished(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  running_.erase(id);
  if (running_.empty()) finished_.notify_all();
}

int LiveCalls::CancelAndWait(absl::Duration timeout) {
  std::vector<std::function<void()>> cancels;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancels.reserve(running_.size());
    for (const auto& [id, cancel] : running_) cancels.push_back(cancel);
  }
  // Outside the lock: a cancel may run the call's OnDone (and so Finished) on this thread.
  for (const std::function<void()>& cancel : cancels) cancel();
  std::unique_lock<std::mutex> lock(mu_);
  finished_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] { return running_.empty(); });
  return static_cast<int>(running_.size());
}

int LiveCalls::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(running_.size());
}

}  // namespace courtpiece::gateway
