#include "services/gateway/upstream.h"

#include <algorithm>
#include <utility>

namespace courtpiece::gateway {

ThreadScheduler::ThreadScheduler(int threads) {
  for (int i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this] { Run(); });
}

ThreadScheduler::~ThreadScheduler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    tasks_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

Scheduler::TaskId ThreadScheduler::After(absl::Duration delay, std::function<void()> fn) {
  const auto due = Steady::now() + absl::ToChronoNanoseconds(std::max(delay, absl::ZeroDuration()));
  TaskId id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_id_++;
    if (stop_) return id;
    tasks_.emplace(due, std::make_pair(id, std::move(fn)));
  }
  cv_.notify_all();
  return id;
}

void ThreadScheduler::Cancel(TaskId id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
    if (it->second.first == id) {
      tasks_.erase(it);
      return;
    }
  }
}

void ThreadScheduler::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (tasks_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const auto due = tasks_.begin()->first;
    if (due > Steady::now()) {
      cv_.wait_until(lock, due);
      continue;
    }
    std::function<void()> fn = std::move(tasks_.begin()->second.second);
    tasks_.erase(tasks_.begin());
    lock.unlock();
    fn();
    lock.lock();
  }
}

}  // namespace courtpiece::gateway
