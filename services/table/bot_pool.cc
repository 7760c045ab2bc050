#include "services/table/bot_pool.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "courtpiece/common/check.h"

namespace courtpiece::table_service {

ThreadBotPool::ThreadBotPool(BotPoolOptions options, Clock& clock)
    : options_(options), clock_(clock) {
  COURTPIECE_CHECK(options.threads >= 1 && options.threads <= 64, "1..64 bot threads");
  COURTPIECE_CHECK(options.queue_max >= 1 && options.queue_max <= 1'000'000,
                   "1..1000000 queued bot jobs");
  threads_.reserve(static_cast<size_t>(options.threads));
  for (int i = 0; i < options.threads; ++i) threads_.emplace_back([this] { Run(); });
}

ThreadBotPool::~ThreadBotPool() { Stop(); }

bool ThreadBotPool::Submit(std::unique_ptr<table::BotJob> job, absl::Time deadline, Done done) {
  COURTPIECE_CHECK(job != nullptr, "a bot job");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || static_cast<int>(queue_.size()) >= options_.queue_max) return false;
    queue_.push_back({std::move(job), deadline, std::move(done)});
  }
  cv_.notify_one();
  return true;
}

void ThreadBotPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ && threads_.empty()) return;
    stop_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

int64_t ThreadBotPool::QueueDepth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(queue_.size());
}

void ThreadBotPool::Run() {
  // Below the table workers (Linux: nice is per thread): commands and timers win the CPU,
  // and searches starved past their deadline give way to the heuristic.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), options_.nice);
  for (;;) {
    Queued q;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      q = std::move(queue_.front());
      queue_.pop_front();
    }
    if (clock_.Now() >= q.deadline) {
      expired_.fetch_add(1);  // its table played the heuristic already
      continue;
    }
    table::Move move = q.job->Run();
    q.done(std::move(move));
  }
}

bool InlineBotRunner::Submit(std::unique_ptr<table::BotJob> job, absl::Time deadline, Done done) {
  (void)deadline;
  COURTPIECE_CHECK(job != nullptr, "a bot job");
  if (stopped_.load()) return false;
  done(job->Run());
  return true;
}

}  // namespace courtpiece::table_service
