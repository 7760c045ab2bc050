// The searching bots' pool (bot_pool.h) with real threads, and the host handing a table's
// bot turns to a runner (table_host.h): answered, refused by a full pool, answered late.
#include "services/table/bot_pool.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "courtpiece/table/rules_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/table/fake_ports.h"
#include "services/table/fake_table_store.h"
#include "services/table/table_host.h"

namespace courtpiece::table_service {
namespace {

namespace pb = ::courtpiece::table::v1;

// A job that returns `card`, after `release` when given (holding its pool thread).
class CardJob final : public table::BotJob {
 public:
  explicit CardJob(std::string card, absl::Notification* release = nullptr,
                   absl::Notification* started = nullptr)
      : card_(std::move(card)), release_(release), started_(started) {}
  table::Move Run() override {
    if (started_ != nullptr) started_->Notify();
    if (release_ != nullptr) release_->WaitForNotification();
    return {.kind = table::MoveKind::kPlay, .card = card_};
  }

 private:
  std::string card_;
  absl::Notification* release_;
  absl::Notification* started_;
};

TEST(ThreadBotPool, RunsAJobAndAnswersOnItsThread) {
  FakeClock clock(absl::FromUnixSeconds(1'800'000'000));
  ThreadBotPool pool({.threads = 2, .queue_max = 4}, clock);
  absl::Notification answered;
  table::Move got;
  ASSERT_TRUE(pool.Submit(std::make_unique<CardJob>("AS"), clock.Now() + absl::Seconds(1),
                          [&](table::Move m) {
                            got = m;
                            answered.Notify();
                          }));
  ASSERT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(got.card, "AS");
  EXPECT_EQ(pool.Expired(), 0);
}

TEST(ThreadBotPool, AFullQueueRefusesAndAJobPastItsDeadlineIsDroppedUnrun) {
  FakeClock clock(absl::FromUnixSeconds(1'800'000'000));
  ThreadBotPool pool({.threads = 1, .queue_max = 2}, clock);
  absl::Notification release, started, first_done;
  int late_answers = 0;
  ASSERT_TRUE(pool.Submit(std::make_unique<CardJob>("2C", &release, &started),
                          clock.Now() + absl::Seconds(10),
                          [&](table::Move) { first_done.Notify(); }));
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(30)));  // holds the thread
  std::mutex mu;
  ASSERT_TRUE(pool.Submit(std::make_unique<CardJob>("3C"), clock.Now() + absl::Seconds(1),
                          [&](table::Move) {
                            std::lock_guard<std::mutex> lock(mu);
                            ++late_answers;
                          }));
  ASSERT_TRUE(pool.Submit(std::make_unique<CardJob>("4C"), clock.Now() + absl::Seconds(1),
                          [&](table::Move) {
                            std::lock_guard<std::mutex> lock(mu);
                            ++late_answers;
                          }));
  EXPECT_EQ(pool.QueueDepth(), 2);
  EXPECT_FALSE(pool.Submit(std::make_unique<CardJob>("5C"), clock.Now() + absl::Seconds(1),
                           [](table::Move) {}));  // full
  clock.Advance(absl::Seconds(2));  // both queued jobs' deadlines pass while they wait
  release.Notify();
  ASSERT_TRUE(first_done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  // The thread then takes the two queued jobs and drops them (not Stop: it would clear them).
  for (int i = 0; i < 30'000 && pool.Expired() < 2; ++i) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(pool.Expired(), 2);
  EXPECT_EQ(pool.QueueDepth(), 0);
  pool.Stop();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(late_answers, 0);
}

TEST(ThreadBotPool, StopDropsTheQueueAndLaterSubmitsAreRefused) {
  FakeClock clock(absl::FromUnixSeconds(1'800'000'000));
  ThreadBotPool pool({.threads = 1, .queue_max = 8}, clock);
  absl::Notification release, started;
  ASSERT_TRUE(pool.Submit(std::make_unique<CardJob>("2C", &release, &started),
                          clock.Now() + absl::Seconds(10), [](table::Move) {}));
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  bool queued_ran = false;
  ASSERT_TRUE(pool.Submit(std::make_unique<CardJob>("3C"), clock.Now() + absl::Seconds(10),
                          [&](table::Move) { queued_ran = true; }));
  std::thread stopper([&] { pool.Stop(); });
  // Stop empties the queue as it begins (under the pool's lock): then the running job ends.
  for (int i = 0; i < 30'000 && pool.QueueDepth() > 0; ++i) absl::SleepFor(absl::Milliseconds(1));
  ASSERT_EQ(pool.QueueDepth(), 0);
  release.Notify();
  stopper.join();
  EXPECT_FALSE(queued_ran);
  EXPECT_FALSE(pool.Submit(std::make_unique<CardJob>("4C"), clock.Now() + absl::Seconds(10),
                           [](table::Move) {}));
}

// Holds jobs until the test runs them; refuses past `capacity`.
class ManualBotRunner final : public BotRunner {
 public:
  bool Submit(std::unique_ptr<table::BotJob> job, absl::Time, Done done) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<int>(jobs_.size()) >= capacity) return false;
    jobs_.push_back({std::move(job), std::move(done)});
    ++submitted;
    return true;
  }
  void Stop() override {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.clear();
  }
  int64_t QueueDepth() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(jobs_.size());
  }
  int64_t Expired() const override { return 0; }
  // Runs the oldest job and answers with its move; false when none waits.
  bool RunNext() {
    Held h;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (jobs_.empty()) return false;
      h = std::move(jobs_.front());
      jobs_.erase(jobs_.begin());
    }
    h.done(h.job->Run());
    return true;
  }
  int capacity = 1000;
  int submitted = 0;

 private:
  struct Held {
    std::unique_ptr<table::BotJob> job;
    Done done;
  };
  mutable std::mutex mu_;
  std::vector<Held> jobs_;
};

class CountingMetrics final : public HostMetrics {
 public:
  void Command(std::string_view, absl::StatusCode) override {}
  void Save(size_t, absl::StatusCode) override {}
  void EffectSent(std::string_view, absl::StatusCode) override {}
  void TableClaimed() override {}
  void BotMove(std::string_view level, std::string_view outcome) override {
    std::lock_guard<std::mutex> lock(mu);
    moves[std::string(level) + "/" + std::string(outcome)]++;
  }
  int Count(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu);
    return moves.count(key) ? moves[key] : 0;
  }
  std::mutex mu;
  std::map<std::string, int> moves;
};

class NullSink final : public StreamSink {
 public:
  bool Send(const pb::PlayResponse&) override { return true; }
  void Finish(const absl::Status&) override {}
};

// A strong table whose host starts it with three bots and leaves in the first round: every
// turn of the round is then a searching bot's (the bots' at strong, the host's seat at the
// timeout level), handed to the runner.
class HostBots : public ::testing::Test {
 protected:
  HostBots() : store(clock), wallet(clock), records(clock), seeds("master", "inst-a") {
    wallet.SetBalance("player:host", 1000);
    wallet.SetBalance("house", 0);
  }
  void StartAndLeave() {
    HostOptions o;
    o.instance_id = "inst-a";
    o.instance_addr = "inst-a:7002";
    o.workers = 2;
    o.start_threads = false;
    host = std::make_unique<TableHost>(o, clock, store, wallet, records, engines, seeds, &metrics,
                                       &runner);
    ASSERT_TRUE(host->Start().ok());
    pb::CreateTableRequest r;
    r.set_table_id("t1");
    r.set_host_player("host");
    r.set_bet_coins(100);
    r.set_turn_time_ms(5'000);
    r.set_game_options(R"({"game":"classic","target":1})");
    r.set_code("123456");
    r.set_bot_level("strong");
    std::optional<absl::StatusOr<pb::CreateTableResponse>> created;
    host->CreateTable(r, [&](absl::StatusOr<pb::CreateTableResponse> v) { created = v; });
    host->Poll();
    ASSERT_TRUE(created.has_value() && created->ok());
    EXPECT_EQ((*created)->table().bot_level(), "strong");
    pb::OpenTable open;
    open.set_table_id("t1");
    stream = host->Open("host", open, std::make_shared<NullSink>());
    host->Poll();
    pb::TableCommand start;
    start.set_command_id(1);
    start.set_type("start_now");
    host->Command(stream, start);
    host->Poll();
    clock.Advance(absl::Milliseconds(table::kCountInMs));
    host->Poll();  // the count-in ends, the stake is taken, the round is dealt
    pb::TableCommand leave;
    leave.set_command_id(2);
    leave.set_type("leave");
    host->Command(stream, leave);
    host->Poll();
  }
  bool RoundRecorded() { return records.rounds().count("t1:round:1") == 1; }

  FakeClock clock{absl::FromUnixSeconds(1'800'000'000)};
  FakeTableStore store;
  FakeWalletPort wallet;
  FakeRecordsPort records;
  table::RulesEngineFactory engines;
  table::DeterministicSeedSource seeds;
  CountingMetrics metrics;
  ManualBotRunner runner;
  std::unique_ptr<TableHost> host;
  uint64_t stream = 0;
};

TEST_F(HostBots, EachTurnWaitsForTheRunnerAndItsAnswerIsPlayed) {
  StartAndLeave();
  int answered = 0;
  for (int guard = 0; guard < 200 && !RoundRecorded(); ++guard) {
    ASSERT_EQ(runner.QueueDepth(), 1) << "one turn at a time, handed over once";
    ASSERT_TRUE(runner.RunNext());
    ++answered;
    host->Poll();  // the answer's task: played, saved, the next turn handed over
  }
  EXPECT_TRUE(RoundRecorded());
  EXPECT_GE(answered, 29);  // the call and seven tricks at least
  EXPECT_EQ(runner.submitted, answered);
  EXPECT_EQ(metrics.Count("strong/searched") + metrics.Count("normal/searched"), answered);
  EXPECT_GT(metrics.Count("strong/searched"), 0);
  EXPECT_GT(metrics.Count("normal/searched"), 0);  // the host's seat, played for them
  EXPECT_EQ(metrics.Count("strong/late") + metrics.Count("normal/late"), 0);
}

TEST_F(HostBots, AFullPoolPlaysTheHeuristicAtOnce) {
  runner.capacity = 0;
  StartAndLeave();  // no clock advance after the leave: the whole round plays at once
  EXPECT_TRUE(RoundRecorded());
  EXPECT_EQ(runner.submitted, 0);
  EXPECT_GE(metrics.Count("strong/pool_full") + metrics.Count("normal/pool_full"), 29);
}

TEST_F(HostBots, AnAnswerAfterTheBudgetIsLateAndTheHeuristicHasPlayed) {
  StartAndLeave();
  ASSERT_EQ(runner.QueueDepth(), 1);
  clock.Advance(absl::Milliseconds(table::kBotBudgetStrongMs));
  host->Poll();  // the deadline: the heuristic plays; the next turn is handed over
  ASSERT_EQ(runner.QueueDepth(), 2);
  ASSERT_TRUE(runner.RunNext());  // the first, late
  host->Poll();
  EXPECT_EQ(metrics.Count("strong/late") + metrics.Count("normal/late"), 1);
  ASSERT_TRUE(runner.RunNext());  // the second, on time
  host->Poll();
  EXPECT_EQ(metrics.Count("strong/searched") + metrics.Count("normal/searched"), 1);
}

}  // namespace
}  // namespace courtpiece::table_service
