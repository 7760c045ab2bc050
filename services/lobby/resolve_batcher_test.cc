// ResolveBatcher on a scripted resolve function: batches, order, the queue's bound, and the
// answers still owed when it is destroyed.
#include "services/lobby/resolve_batcher.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace courtpiece::lobby {
namespace {

// Answers "t-<input>" for every input but "bad" (InvalidArgument); can hold a batch until
// released, and records the size of each batch.
class ScriptedResolve {
 public:
  ResolveBatcher::ResolveFn Fn() {
    return [this](const std::vector<std::string>& in) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        sizes_.push_back(static_cast<int>(in.size()));
        ++entered_;
        cv_.notify_all();
        cv_.wait(lock, [this] { return !hold_; });
      }
      std::vector<absl::StatusOr<TableRef>> out;
      for (const std::string& code : in) {
        if (code == "bad") {
          out.push_back(absl::InvalidArgumentError("bad code"));
        } else {
          TableRef ref;
          ref.table_id = "t-" + code;
          out.push_back(ref);
        }
      }
      return out;
    };
  }
  void Hold(bool hold) {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = hold;
    cv_.notify_all();
  }
  void AwaitEntered(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return entered_ >= n; });
  }
  std::vector<int> sizes() {
    std::lock_guard<std::mutex> lock(mu_);
    return sizes_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false;
  int entered_ = 0;
  std::vector<int> sizes_;
};

const absl::Time kNever = absl::InfiniteFuture();

// Collects the answers by input.
struct Answers {
  std::mutex mu;
  std::vector<std::pair<std::string, absl::StatusOr<TableRef>>> got;
  ResolveBatcher::Done For(std::string code) {
    return [this, code](absl::StatusOr<TableRef> r) {
      std::lock_guard<std::mutex> lock(mu);
      got.emplace_back(code, std::move(r));
    };
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return got.size();
  }
  // Every answer is "t-<code>", but the codes of `errors`, which failed with their code.
  void ExpectEach(const std::map<std::string, absl::StatusCode>& errors) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [code, r] : got) {
      auto error = errors.find(code);
      if (error != errors.end()) {
        EXPECT_EQ(r.status().code(), error->second) << code;
      } else {
        ASSERT_TRUE(r.ok()) << code << ": " << r.status();
        EXPECT_EQ(r->table_id, "t-" + code);
      }
    }
  }
};

TEST(ResolveBatcher, RequestsWaitingTogetherAreOneBatchAndEachGetsItsOwnAnswer) {
  ScriptedResolve resolve;
  Answers answers;
  resolve.Hold(true);
  {
    ResolveBatcher batcher(resolve.Fn(), {.threads = 1, .batch_max = 4, .queue_max = 100});
    ASSERT_TRUE(batcher.Submit("first", kNever, answers.For("first")));
    resolve.AwaitEntered(1);  // the thread holds a batch of one; ten more wait meanwhile
    for (int i = 0; i < 9; ++i) {
      const std::string code = "c" + std::to_string(i);
      ASSERT_TRUE(batcher.Submit(code, kNever, answers.For(code)));
    }
    ASSERT_TRUE(batcher.Submit("bad", kNever, answers.For("bad")));
    resolve.Hold(false);
  }  // the destructor answers everything still waiting
  EXPECT_EQ(resolve.sizes(), (std::vector<int>{1, 4, 4, 2}));
  ASSERT_EQ(answers.size(), 11u);
  answers.ExpectEach({{"bad", absl::StatusCode::kInvalidArgument}});
}

TEST(ResolveBatcher, AFullQueueRefusesAndQueuesNothing) {
  ScriptedResolve resolve;
  Answers answers;
  resolve.Hold(true);
  {
    ResolveBatcher batcher(resolve.Fn(), {.threads = 1, .batch_max = 2, .queue_max = 3});
    ASSERT_TRUE(batcher.Submit("a", kNever, answers.For("a")));
    resolve.AwaitEntered(1);
    EXPECT_TRUE(batcher.Submit("b", kNever, answers.For("b")));
    EXPECT_TRUE(batcher.Submit("c", kNever, answers.For("c")));
    EXPECT_TRUE(batcher.Submit("d", kNever, answers.For("d")));
    bool called = false;
    EXPECT_FALSE(batcher.Submit("e", kNever, [&](absl::StatusOr<TableRef>) { called = true; }));
    resolve.Hold(false);
    while (answers.size() < 4) std::this_thread::yield();
    EXPECT_FALSE(called);
    EXPECT_EQ(batcher.requests(), 4);
    EXPECT_EQ(batcher.batches(), 3);                             // a, then b c, then d
    EXPECT_TRUE(batcher.Submit("e", kNever, answers.For("e")));  // room again
  }
  EXPECT_EQ(answers.size(), 5u);
}

TEST(ResolveBatcher, ARequestWhoseDeadlinePassedWhileItWaitedIsAnsweredWithoutResolving) {
  ScriptedResolve resolve;
  Answers answers;
  resolve.Hold(true);
  {
    ResolveBatcher batcher(resolve.Fn(), {.threads = 1, .batch_max = 8, .queue_max = 100});
    ASSERT_TRUE(batcher.Submit("first", kNever, answers.For("first")));
    resolve.AwaitEntered(1);
    ASSERT_TRUE(batcher.Submit("late", absl::Now() - absl::Seconds(1), answers.For("late")));
    ASSERT_TRUE(batcher.Submit("soon", absl::Now() + absl::Milliseconds(50), answers.For("soon")));
    ASSERT_TRUE(batcher.Submit("fine", kNever, answers.For("fine")));
    absl::SleepFor(absl::Milliseconds(100));  // "soon" expires while the thread is held
    resolve.Hold(false);
    while (answers.size() < 4) std::this_thread::yield();
    EXPECT_EQ(batcher.expired(), 2);
    EXPECT_EQ(batcher.requests(), 2);  // first, fine
  }
  EXPECT_EQ(resolve.sizes(), (std::vector<int>{1, 1}));
  answers.ExpectEach({{"late", absl::StatusCode::kDeadlineExceeded},
                      {"soon", absl::StatusCode::kDeadlineExceeded}});
}

TEST(ResolveBatcher, ManyThreadsSubmittingAtOnceGetEveryAnswerExactlyOnce) {
  ScriptedResolve resolve;
  Answers answers;
  {
    ResolveBatcher batcher(resolve.Fn(), {.threads = 3, .batch_max = 16, .queue_max = 10'000});
    std::vector<std::thread> submitters;
    std::atomic<int> refused{0};
    for (int t = 0; t < 8; ++t) {
      submitters.emplace_back([&, t] {
        for (int i = 0; i < 500; ++i) {
          const std::string code = std::to_string(t) + "-" + std::to_string(i);
          if (!batcher.Submit(code, kNever, answers.For(code))) refused.fetch_add(1);
        }
      });
    }
    for (std::thread& t : submitters) t.join();
    EXPECT_EQ(refused.load(), 0);
  }
  ASSERT_EQ(answers.size(), 4000u);
  std::set<std::string> seen;
  for (auto& [code, r] : answers.got) {
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->table_id, "t-" + code);
    seen.insert(code);
  }
  EXPECT_EQ(seen.size(), 4000u);
  int total = 0;
  for (int n : resolve.sizes()) {
    EXPECT_GE(n, 1);
    EXPECT_LE(n, 16);
    total += n;
  }
  EXPECT_EQ(total, 4000);
}

}  // namespace
}  // namespace courtpiece::lobby
