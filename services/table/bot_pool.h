// Searching bots off the table workers (docs/table-service.md "Bot pool", docs/bots.md).
//
// A table that waits for a searching bot's move (table::Table::PendingBotTurn) hands its
// job (a copy of one seat's view, table::BotJob) to a BotRunner. The runner answers on its
// own thread through `done`; the host posts that back to the table's worker, which feeds it
// to the table (OnBotMove) only if the table still waits for that turn. The table never
// waits past the turn's deadline: then its heuristic plays, and a late answer is ignored.
//
// Bounds: `threads` searching threads, at most `queue_max` jobs waiting; Submit refuses past
// it (the host then plays the heuristic at once), and a job still waiting at its deadline
// is dropped unrun (its table has played the heuristic by then).
//
// Thread-safety: every method may be called from any thread.
#ifndef COURTPIECE_SERVICES_TABLE_BOT_POOL_H_
#define COURTPIECE_SERVICES_TABLE_BOT_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/table/engine.h"

namespace courtpiece::table_service {

class BotRunner {
 public:
  virtual ~BotRunner() = default;
  using Done = std::function<void(table::Move)>;
  // Queues `job` (not null). false: the queue is full, `done` is never called. A job still
  // queued at `deadline` is dropped and `done` never called. `done` runs on a pool thread
  // (an inline runner: on the caller's).
  virtual bool Submit(std::unique_ptr<table::BotJob> job, absl::Time deadline, Done done) = 0;
  // Drops the queued jobs and joins the threads (a running job finishes and answers first).
  // Submit after Stop refuses.
  virtual void Stop() = 0;
  virtual int64_t QueueDepth() const = 0;
  // Jobs dropped unrun because their deadline passed in the queue.
  virtual int64_t Expired() const = 0;
};

struct BotPoolOptions {
  int threads = 1;       // 1..64
  int queue_max = 1024;  // 1..1'000'000 jobs waiting
  int nice = 5;          // the threads' niceness (0..19), above the table workers'
};

class ThreadBotPool final : public BotRunner {
 public:
  ThreadBotPool(BotPoolOptions options, Clock& clock);
  ~ThreadBotPool() override;
  ThreadBotPool(const ThreadBotPool&) = delete;
  ThreadBotPool& operator=(const ThreadBotPool&) = delete;

  bool Submit(std::unique_ptr<table::BotJob> job, absl::Time deadline, Done done) override;
  void Stop() override;
  int64_t QueueDepth() const override;
  int64_t Expired() const override { return expired_.load(); }

 private:
  struct Queued {
    std::unique_ptr<table::BotJob> job;
    absl::Time deadline;
    Done done;
  };
  void Run();

  const BotPoolOptions options_;
  Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Queued> queue_;  // guarded by mu_
  bool stop_ = false;         // guarded by mu_
  std::atomic<int64_t> expired_{0};
  std::vector<std::thread> threads_;
};

// Runs each job inside Submit, on the caller's thread (a host without threads: unit tests
// that drive TableHost::Poll). Never refuses; nothing expires.
class InlineBotRunner final : public BotRunner {
 public:
  bool Submit(std::unique_ptr<table::BotJob> job, absl::Time deadline, Done done) override;
  void Stop() override { stopped_ = true; }
  int64_t QueueDepth() const override { return 0; }
  int64_t Expired() const override { return 0; }

 private:
  std::atomic<bool> stopped_{false};
};

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_BOT_POOL_H_
