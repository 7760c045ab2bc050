// Group commit (BatchingLedgerStore) on the in-memory store: batches form from the
// transfers that arrive while one is being committed, every transfer keeps its own outcome,
// a failed batch fails every item (and the Ledger's retry with the key replays), deadlines.
// No sleeps: a gate in front of the fake store holds a batch "in commit" while the test
// queues more transfers, and the test waits on the batcher's queue, not on time.
#include "services/wallet/batching_ledger_store.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/wallet/account_id.h"
#include "services/wallet/fake_ledger_store.h"
#include "services/wallet/ledger.h"

namespace courtpiece::wallet {
namespace {

using ::courtpiece::common::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

// Holds every ApplyBatch while closed, so a batch stays "in commit".
class GatedStore final : public LedgerStore {
 public:
  explicit GatedStore(LedgerStore& inner) : inner_(inner) {}

  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = false;
    changed_.notify_all();
  }
  // Blocks until `count` ApplyBatch calls are held at the gate.
  void WaitUntilHeld(int count) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return held_ == count; });
  }

  absl::Status EnsureHouseShards(int shard_count, absl::Time deadline) override {
    return inner_.EnsureHouseShards(shard_count, deadline);
  }
  absl::StatusOr<AppliedTransfer> Apply(const TransferRecord& t, absl::Time deadline) override {
    return inner_.Apply(t, deadline);
  }
  absl::StatusOr<std::vector<PotSummary>> ListPots(absl::string_view after, int limit,
                                                   absl::Time deadline) override {
    return inner_.ListPots(after, limit, deadline);
  }
  absl::StatusOr<std::vector<AccountBalance>> PotPayers(absl::string_view pot,
                                                        absl::Time deadline) override {
    return inner_.PotPayers(pot, deadline);
  }
  absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> ApplyBatch(
      const std::vector<const TransferRecord*>& transfers, absl::Time deadline) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++held_;
      changed_.notify_all();
      changed_.wait(lock, [&] { return !closed_; });
      --held_;
    }
    return inner_.ApplyBatch(transfers, deadline);
  }
  absl::StatusOr<int64_t> Balance(absl::string_view account_id, absl::Time deadline) override {
    return inner_.Balance(account_id, deadline);
  }
  absl::StatusOr<std::vector<LedgerEntry>> History(absl::string_view account_id,
                                                   int64_t before_entry_id, int limit,
                                                   absl::Time deadline) override {
    return inner_.History(account_id, before_entry_id, limit, deadline);
  }

 private:
  LedgerStore& inner_;
  std::mutex mu_;
  std::condition_variable changed_;
  bool closed_ = false;  // guarded by mu_
  int held_ = 0;         // guarded by mu_
};

TransferRequest Pay(std::string key, std::string from, std::string to, int64_t amount) {
  return {std::move(key),
          {{std::move(from), Side::kDebit, amount}, {std::move(to), Side::kCredit, amount}},
          {"t1", 1, "test"}};
}

class BatchingTest : public ::testing::Test {
 protected:
  void Start(BatchOptions batch_options, int store_attempts_max = 3) {
    ASSERT_TRUE(BatchingLedgerStore::ValidateOptions(batch_options).ok());
    batching_ = std::make_unique<BatchingLedgerStore>(gate_, clock_, batch_options);
    LedgerOptions o;
    o.starting_grant = 1000;
    o.house_shard_count = 4;
    o.store_attempts_max = store_attempts_max;
    ledger_ = std::make_unique<Ledger>(*batching_, clock_, o);
    ASSERT_TRUE(ledger_->Init(Deadline()).ok());
    for (const char* p : {"alice", "bob", "carol"}) {
      ASSERT_TRUE(ledger_->OpenAccount(p, Deadline()).ok());
    }
    ASSERT_THAT(store_.BatchSizes(), ElementsAre(1, 1, 1));  // the three grants
  }

  absl::Time Deadline() const { return clock_.Now() + absl::Seconds(5); }

  int64_t BalanceOf(absl::string_view account) {
    absl::StatusOr<int64_t> b = ledger_->GetBalance(account, Deadline());
    EXPECT_TRUE(b.ok()) << b.status();
    return b.value_or(-1);
  }

  // Starts `request` on a thread of its own, into `results[slot]`.
  void Send(TransferRequest request, size_t slot, absl::Time deadline) {
    threads_.emplace_back([this, request = std::move(request), slot, deadline] {
      absl::StatusOr<TransferResult> r = ledger_->Transfer(request, deadline);
      std::lock_guard<std::mutex> lock(results_mu_);
      results_[slot] = std::move(r);
    });
  }
  void Send(TransferRequest request, size_t slot) { Send(std::move(request), slot, Deadline()); }

  // Closes the gate and sends a first transfer whose batch is then held "in commit".
  void HoldABatch() {
    gate_.Close();
    Send(Pay("blocker", "player:carol", "player:bob", 1), 0);
    gate_.WaitUntilHeld(1);
  }

  void JoinAll() {
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  FakeClock clock_;
  FakeLedgerStore store_;
  GatedStore gate_{store_};
  std::unique_ptr<BatchingLedgerStore> batching_;
  std::unique_ptr<Ledger> ledger_;
  std::vector<std::thread> threads_;
  std::mutex results_mu_;
  std::vector<absl::StatusOr<TransferResult>> results_ =
      std::vector<absl::StatusOr<TransferResult>>(16);
};

TEST_F(BatchingTest, TransfersArrivingDuringACommitShareOneBatch) {
  Start({.transfers_max = 32});
  HoldABatch();
  for (int i = 1; i <= 5; ++i) {
    Send(Pay(absl::StrCat("k", i), "player:alice", "player:bob", 10), i);
  }
  batching_->WaitUntilQueuedForTest(5);
  gate_.Open();
  JoinAll();
  EXPECT_THAT(store_.BatchSizes(), ElementsAre(1, 1, 1, 1, 5));
  std::set<int64_t> ids;
  for (int i = 0; i <= 5; ++i) {
    ASSERT_TRUE(results_[i].ok()) << i << " " << results_[i].status();
    EXPECT_FALSE(results_[i]->replayed);
    ids.insert(results_[i]->transfer_id);
  }
  EXPECT_EQ(ids.size(), 6u);
  EXPECT_EQ(BalanceOf("player:alice"), 950);
  EXPECT_EQ(BalanceOf("player:bob"), 1051);
  EXPECT_EQ(BalanceOf("player:carol"), 999);
  EXPECT_EQ(store_.SumOfBalances(), 0);
}

// One batch holding: an applied transfer, an overdraft, an unknown account, a replay of
// the first (same key, same request) and the first's key with another request. Each gets
// exactly what it would get alone; the refused ones move nothing.
TEST_F(BatchingTest, OutcomesStayPerTransferInsideOneBatch) {
  Start({.transfers_max = 32});
  HoldABatch();
  TransferRequest same_as_k1 = Pay("k1", "player:alice", "player:bob", 100);
  std::swap(same_as_k1.legs[0], same_as_k1.legs[1]);  // legs reordered: the same request
  const std::vector<TransferRequest> requests = {
      Pay("k1", "player:alice", "player:bob", 100), Pay("k2", "player:carol", "player:bob", 5000),
      Pay("k3", "player:zed", "player:bob", 1),     same_as_k1,
      Pay("k1", "player:alice", "player:bob", 101), Pay("k4", "player:alice", "player:carol", 7),
  };
  for (size_t i = 0; i < requests.size(); ++i) {
    Send(requests[i], i + 1);
    batching_->WaitUntilQueuedForTest(static_cast<int>(i) + 1);  // queue order = send order
  }
  gate_.Open();
  JoinAll();
  EXPECT_THAT(store_.BatchSizes(), ElementsAre(1, 1, 1, 1, 6));
  ASSERT_TRUE(results_[1].ok()) << results_[1].status();
  EXPECT_FALSE(results_[1]->replayed);
  EXPECT_THAT(results_[2], StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(results_[3], StatusIs(absl::StatusCode::kNotFound));
  ASSERT_TRUE(results_[4].ok()) << results_[4].status();
  EXPECT_TRUE(results_[4]->replayed);
  EXPECT_EQ(results_[4]->transfer_id, results_[1]->transfer_id);
  EXPECT_EQ(results_[4]->created_at, results_[1]->created_at);
  EXPECT_EQ(results_[4]->balances_after, results_[1]->balances_after);
  EXPECT_THAT(results_[5], StatusIs(absl::StatusCode::kAlreadyExists));
  ASSERT_TRUE(results_[6].ok()) << results_[6].status();
  EXPECT_EQ(BalanceOf("player:alice"), 1000 - 100 - 7);
  EXPECT_EQ(BalanceOf("player:bob"), 1000 + 100 + 1);
  EXPECT_EQ(BalanceOf("player:carol"), 1000 - 1 + 7);
  EXPECT_EQ(store_.TransferCount(), 3 + 3);  // grants, blocker, k1, k4
  EXPECT_EQ(store_.SumOfBalances(), 0);
}

// The whole batch fails (connection lost before commit): every item is Unavailable, nothing
// moved; each client's retry with its key then applies it once.
TEST_F(BatchingTest, AFailedBatchFailsEveryItemAndRetriesApplyOnce) {
  Start({.transfers_max = 32}, /*store_attempts_max=*/1);
  HoldABatch();
  Send(Pay("k1", "player:alice", "player:bob", 10), 1);
  Send(Pay("k2", "player:alice", "player:carol", 20), 2);
  batching_->WaitUntilQueuedForTest(2);
  store_.FailNext(2, absl::UnavailableError("connection lost (injected)"));
  gate_.Open();
  JoinAll();
  EXPECT_THAT(store_.BatchSizes(), ElementsAre(1, 1, 1, 1, 2));
  for (int i = 0; i <= 2; ++i) {
    EXPECT_THAT(results_[i], StatusIs(absl::StatusCode::kUnavailable)) << i;
  }
  EXPECT_EQ(store_.TransferCount(), 3);
  EXPECT_EQ(BalanceOf("player:alice"), 1000);

  absl::StatusOr<TransferResult> retry1 =
      ledger_->Transfer(Pay("k1", "player:alice", "player:bob", 10), Deadline());
  absl::StatusOr<TransferResult> retry2 =
      ledger_->Transfer(Pay("k2", "player:alice", "player:carol", 20), Deadline());
  ASSERT_TRUE(retry1.ok() && retry2.ok());
  EXPECT_FALSE(retry1->replayed);
  EXPECT_EQ(BalanceOf("player:alice"), 970);
  EXPECT_EQ(store_.SumOfBalances(), 0);
}

// The batch commits but its reply is lost: every item is retried by the Ledger with its
// key and replays the committed result; nothing moves twice.
TEST_F(BatchingTest, ALostBatchReplyIsRetriedAndReplayed) {
  Start({.transfers_max = 32});
  HoldABatch();
  Send(Pay("k1", "player:alice", "player:bob", 10), 1);
  Send(Pay("k2", "player:alice", "player:carol", 20), 2);
  batching_->WaitUntilQueuedForTest(2);
  store_.LoseNextReplies(2);
  gate_.Open();
  JoinAll();
  for (int i = 0; i <= 2; ++i) {
    ASSERT_TRUE(results_[i].ok()) << i << " " << results_[i].status();
    EXPECT_TRUE(results_[i]->replayed) << i;
  }
  EXPECT_EQ(store_.TransferCount(), 3 + 3);
  EXPECT_EQ(BalanceOf("player:alice"), 970);
  EXPECT_EQ(BalanceOf("player:bob"), 1011);
  EXPECT_EQ(BalanceOf("player:carol"), 1019);
}

TEST_F(BatchingTest, ATransferWhoseDeadlinePassesWhileQueuedIsNotSent) {
  Start({.transfers_max = 32});
  HoldABatch();
  Send(Pay("late", "player:alice", "player:bob", 10), 1, clock_.Now() + absl::Seconds(1));
  Send(Pay("on-time", "player:alice", "player:carol", 20), 2);
  batching_->WaitUntilQueuedForTest(2);
  clock_.Advance(absl::Seconds(2));
  gate_.Open();
  JoinAll();
  ASSERT_TRUE(results_[0].ok()) << results_[0].status();
  EXPECT_THAT(results_[1], StatusIs(absl::StatusCode::kDeadlineExceeded));
  ASSERT_TRUE(results_[2].ok()) << results_[2].status();
  EXPECT_THAT(store_.ReceivedKeys(), Not(Contains("late")));
  EXPECT_THAT(store_.ReceivedKeys(), Contains("on-time"));
  EXPECT_EQ(BalanceOf("player:alice"), 980);
  EXPECT_EQ(BalanceOf("player:bob"), 1001);
}

TEST_F(BatchingTest, BatchesHoldAtMostTransfersMax) {
  Start({.transfers_max = 2, .wait_max = absl::Milliseconds(100)});
  HoldABatch();
  for (int i = 1; i <= 5; ++i) {
    Send(Pay(absl::StrCat("k", i), "player:alice", "player:bob", 1), i);
    batching_->WaitUntilQueuedForTest(i);
  }
  gate_.Open();
  JoinAll();
  // A leader finding a full queue does not wait out wait_max; the last one took the rest.
  EXPECT_THAT(store_.BatchSizes(), ElementsAre(1, 1, 1, 1, 2, 2, 1));
  for (int i = 0; i <= 5; ++i) EXPECT_TRUE(results_[i].ok()) << i;
  EXPECT_EQ(BalanceOf("player:alice"), 995);
}

TEST_F(BatchingTest, BatchesInFlightMaxLetsAnotherBatchCommitAlongside) {
  Start({.transfers_max = 32, .batches_in_flight_max = 2});
  HoldABatch();  // carol -> bob
  Send(Pay("k1", "player:alice", "house", 10), 1);
  gate_.WaitUntilHeld(2);  // the second batch is being committed beside the first
  Send(Pay("k2", "player:alice", "house", 10), 2);
  batching_->WaitUntilQueuedForTest(1);  // a third has to wait
  gate_.Open();
  JoinAll();
  EXPECT_THAT(store_.BatchSizes(), ElementsAre(1, 1, 1, 1, 1, 1));
  for (int i = 0; i <= 2; ++i) EXPECT_TRUE(results_[i].ok()) << i;
  EXPECT_EQ(BalanceOf("player:alice"), 980);
}

// Batches in flight together never share an account: a transfer touching an account of
// the batch in flight waits (so does a later one sharing an account with it: arrival order
// per account), while a transfer on other accounts goes ahead in a batch of its own.
TEST_F(BatchingTest, ATransferOnAnAccountInFlightWaitsAndKeepsItsOrder) {
  Start({.transfers_max = 32, .batches_in_flight_max = 2});
  ASSERT_TRUE(ledger_->OpenAccount("dave", Deadline()).ok());
  HoldABatch();                                          // carol -> bob, in flight
  Send(Pay("kc", "player:alice", "player:bob", 10), 1);  // bob is in flight
  batching_->WaitUntilQueuedForTest(1);
  Send(Pay("kd", "player:alice", "player:dave", 5), 2);  // alice is behind kc
  batching_->WaitUntilQueuedForTest(2);
  // A transfer sharing an account (dave) with the waiting kd would wait too; this one
  // shares none.
  Send(Pay("ke", "house", "pot:t1:1", 7), 3);  // free accounts: goes now, overtaking
  gate_.WaitUntilHeld(2);
  batching_->WaitUntilQueuedForTest(2);  // kc and kd still wait
  gate_.Open();
  JoinAll();
  // The gate releases the two held batches together, so ke's may reach the store before
  // or after the blocker's and kc+kd's; kc and kd went together once bob was free, in
  // arrival order, after the blocker.
  const std::vector<int> sizes = store_.BatchSizes();
  ASSERT_EQ(sizes.size(), 7u);
  EXPECT_THAT(std::vector<int>(sizes.begin() + 4, sizes.end()),
              ::testing::UnorderedElementsAre(1, 1, 2));
  const std::vector<std::string> keys = store_.ReceivedKeys();
  ASSERT_EQ(keys.size(), 8u);
  const auto at = [&](const std::string& key) { return std::find(keys.begin(), keys.end(), key); };
  EXPECT_LT(at("blocker"), at("kc"));
  EXPECT_EQ(at("kc") + 1, at("kd"));
  EXPECT_NE(at("ke"), keys.end());
  for (int i = 0; i <= 3; ++i) EXPECT_TRUE(results_[i].ok()) << i << " " << results_[i].status();
  EXPECT_EQ(BalanceOf("player:alice"), 985);
  EXPECT_EQ(BalanceOf("player:bob"), 1011);
  EXPECT_EQ(BalanceOf("player:dave"), 1005);
  EXPECT_EQ(BalanceOf("pot:t1:1"), 7);
  EXPECT_EQ(BalanceOf("house"), -4007);
}

// The house may be posted on any of its shards: a transfer whose shard (from its key) is
// held by a batch in flight is sent on a free shard beside it, instead of waiting.
TEST_F(BatchingTest, AHouseShardInFlightMovesTheTransferToAFreeShard) {
  Start({.transfers_max = 32, .batches_in_flight_max = 2});
  gate_.Close();
  Send(Pay("blocker", "player:carol", "house", 1), 0);
  gate_.WaitUntilHeld(1);
  // A key whose own shard (of the 4) is the blocker's.
  std::string key;
  for (int i = 0; key.empty() && i < 1000; ++i) {
    const std::string k = absl::StrCat("k", i);
    if (StableHash(k) % 4 == StableHash("blocker") % 4) key = k;
  }
  ASSERT_FALSE(key.empty());
  Send(Pay(key, "player:alice", "house", 10), 1);
  gate_.WaitUntilHeld(2);  // committing beside the blocker, not waiting for it
  gate_.Open();
  JoinAll();
  for (int i = 0; i <= 1; ++i) EXPECT_TRUE(results_[i].ok()) << i << " " << results_[i].status();
  EXPECT_THAT(store_.BatchSizes(), ElementsAre(1, 1, 1, 1, 1));
  const std::string blocker_shard = HouseShardId(static_cast<int>(StableHash("blocker") % 4));
  const std::string free_shard = HouseShardId(blocker_shard == "house:0" ? 1 : 0);
  absl::StatusOr<std::vector<LedgerEntry>> house = store_.History("house", 0, 100, Deadline());
  ASSERT_TRUE(house.ok()) << house.status();
  std::map<int64_t, std::string> shard_by_amount;
  for (const LedgerEntry& e : *house) shard_by_amount[e.amount] = e.account_id;
  EXPECT_EQ(shard_by_amount[1], blocker_shard);
  EXPECT_EQ(shard_by_amount[10], free_shard);
  EXPECT_EQ(BalanceOf("house"), -3000 + 11);
  EXPECT_EQ(BalanceOf("player:alice"), 990);
  // A replay of the moved transfer is found by its key: nothing is applied twice.
  absl::StatusOr<TransferResult> again =
      ledger_->Transfer(Pay(key, "player:alice", "house", 10), Deadline());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(BalanceOf("player:alice"), 990);
}

TEST(BatchOptionsTest, OutOfRangeIsInvalidArgument) {
  EXPECT_TRUE(BatchingLedgerStore::ValidateOptions({}).ok());
  EXPECT_TRUE(
      BatchingLedgerStore::ValidateOptions(
          {.transfers_max = 1000, .wait_max = absl::Milliseconds(100), .batches_in_flight_max = 64})
          .ok());
  for (BatchOptions bad :
       {BatchOptions{.transfers_max = 0}, BatchOptions{.transfers_max = 1001},
        BatchOptions{.wait_max = absl::Microseconds(-1)},
        BatchOptions{.wait_max = absl::Milliseconds(101)}, BatchOptions{.batches_in_flight_max = 0},
        BatchOptions{.batches_in_flight_max = 65}}) {
    EXPECT_THAT(BatchingLedgerStore::ValidateOptions(bad),
                StatusIs(absl::StatusCode::kInvalidArgument));
  }
}

}  // namespace
}  // namespace courtpiece::wallet
