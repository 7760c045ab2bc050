#include "services/wallet/ledger.h"

#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/wallet/fake_ledger_store.h"
#include "services/wallet/ledger_requests_for_test.h"

namespace courtpiece::wallet {
namespace {

using ::courtpiece::common::StatusIs;
using ::courtpiece::wallet::testing::CourtStake;
using ::courtpiece::wallet::testing::FourStakes;
using ::courtpiece::wallet::testing::PayoutToAlice;
using ::courtpiece::wallet::testing::Stakes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class LedgerTest : public ::testing::Test {
 protected:
  LedgerTest() : ledger_(store_, clock_, Options()) {}

  static LedgerOptions Options() {
    LedgerOptions o;
    o.starting_grant = 1000;
    o.house_shard_count = 4;
    return o;
  }

  void SetUp() override {
    ASSERT_TRUE(ledger_.Init(Deadline()).ok());
    for (const char* p : {"alice", "bob", "carol"}) {
      ASSERT_TRUE(ledger_.OpenAccount(p, Deadline()).ok());
    }
  }

  absl::Time Deadline() const { return clock_.Now() + absl::Seconds(5); }

  int64_t BalanceOf(absl::string_view account) {
    absl::StatusOr<int64_t> b = ledger_.GetBalance(account, Deadline());
    EXPECT_TRUE(b.ok()) << b.status();
    return b.value_or(-1);
  }

  // Asserts nothing moved since SetUp.
  void ExpectUntouched() {
    EXPECT_EQ(BalanceOf("player:alice"), 1000);
    EXPECT_EQ(BalanceOf("player:bob"), 1000);
    EXPECT_EQ(BalanceOf("player:carol"), 1000);
    EXPECT_EQ(BalanceOf("house"), -3000);
    EXPECT_EQ(store_.TransferCount(), 3);
  }

  absl::StatusOr<TransferResult> Move(TransferRequest request) {
    return ledger_.Transfer(request, Deadline());
  }

  FakeClock clock_;
  FakeLedgerStore store_;
  Ledger ledger_;
};

TEST_F(LedgerTest, OpenAccountGrantsOnceFromTheHouse) {
  absl::StatusOr<OpenAccountResult> again = ledger_.OpenAccount("alice", Deadline());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->account_id, "player:alice");
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->balance, 1000);
  absl::StatusOr<OpenAccountResult> dave = ledger_.OpenAccount("dave", Deadline());
  ASSERT_TRUE(dave.ok());
  EXPECT_TRUE(dave->created);
  EXPECT_EQ(dave->balance, 1000);
  EXPECT_EQ(BalanceOf("house"), -4000);
  EXPECT_EQ(store_.SumOfBalances(), 0);
}

TEST_F(LedgerTest, OpenAccountRefusesBadPlayerId) {
  for (const char* bad : {"", "a:b", "with space", "x/y"}) {
    EXPECT_EQ(ledger_.OpenAccount(bad, Deadline()).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(ledger_.OpenAccount(std::string(65, 'a'), Deadline()).status().code(),
            absl::StatusCode::kInvalidArgument);
  ExpectUntouched();
}

TEST_F(LedgerTest, TransferMovesEveryLegAtomically) {
  absl::StatusOr<TransferResult> r = Move(Stakes("k1"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->replayed);
  EXPECT_THAT(r->balances_after,
              ElementsAre(AccountBalance{"player:alice", 975}, AccountBalance{"player:bob", 975},
                          AccountBalance{"pot:t1:1", 100}));
  EXPECT_EQ(BalanceOf("house"), -3050);
  EXPECT_EQ(BalanceOf("pot:t1:1"), 100);
  EXPECT_EQ(store_.SumOfBalances(), 0);
}

TEST_F(LedgerTest, SameKeySameRequestReplaysFirstResult) {
  absl::StatusOr<TransferResult> first = Move(Stakes("k1"));
  ASSERT_TRUE(first.ok());
  TransferRequest reordered = Stakes("k1");
  std::swap(reordered.legs[0], reordered.legs[3]);
  absl::StatusOr<TransferResult> again = Move(reordered);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->transfer_id, first->transfer_id);
  EXPECT_EQ(again->balances_after, first->balances_after);
  EXPECT_EQ(BalanceOf("player:alice"), 975);
  EXPECT_EQ(BalanceOf("pot:t1:1"), 100);
}

TEST_F(LedgerTest, SameKeyDifferentRequestIsAlreadyExists) {
  ASSERT_TRUE(Move(Stakes("k1")).ok());
  TransferRequest other = Stakes("k1");
  other.metadata.round = 2;
  EXPECT_EQ(Move(other).status().code(), absl::StatusCode::kAlreadyExists);
  other = Stakes("k1");
  other.legs[0].amount = 24;
  other.legs[2].amount = 51;
  EXPECT_EQ(Move(other).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(BalanceOf("player:alice"), 975);
  EXPECT_EQ(BalanceOf("pot:t1:1"), 100);
}

TEST_F(LedgerTest, OverdraftIsFailedPreconditionAndMovesNothing) {
  TransferRequest r{
      "k-over", {{"player:alice", Side::kDebit, 1001}, {"player:bob", Side::kCredit, 1001}}, {}};
  absl::StatusOr<TransferResult> result = Move(r);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("player:alice"));
  ExpectUntouched();
  // A refused key leaves no trace: the same key works once the request is valid.
  r.legs[0].amount = r.legs[1].amount = 1000;
  ASSERT_TRUE(Move(r).ok());
  EXPECT_EQ(BalanceOf("player:alice"), 0);
}

TEST_F(LedgerTest, HouseMayGoBelowZero) {
  TransferRequest r{
      "k-house", {{"house", Side::kDebit, 5000}, {"player:bob", Side::kCredit, 5000}}, {}};
  ASSERT_TRUE(Move(r).ok());
  EXPECT_EQ(BalanceOf("house"), -8000);
  EXPECT_EQ(BalanceOf("player:bob"), 6000);
}

TEST_F(LedgerTest, UnknownAccountsAreNotFound) {
  TransferRequest r{"k", {{"player:zed", Side::kDebit, 1}, {"player:bob", Side::kCredit, 1}}, {}};
  EXPECT_EQ(Move(r).status().code(), absl::StatusCode::kNotFound);
  r.legs = {{"player:bob", Side::kDebit, 1}, {"player:zed", Side::kCredit, 1}};
  EXPECT_EQ(Move(r).status().code(), absl::StatusCode::kNotFound);
  r.legs = {{"pot:t9:1", Side::kDebit, 1}, {"player:bob", Side::kCredit, 1}};
  EXPECT_EQ(Move(r).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ledger_.GetBalance("player:zed", Deadline()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ledger_.History("player:zed", 10, "", Deadline()).status().code(),
            absl::StatusCode::kNotFound);
  ExpectUntouched();
}

TEST_F(LedgerTest, MalformedTransfersAreInvalidArgument) {
  auto base = [] {
    return TransferRequest{
        "k", {{"player:alice", Side::kDebit, 10}, {"player:bob", Side::kCredit, 10}}, {}};
  };
  std::vector<std::pair<std::string, TransferRequest>> cases;
  cases.push_back({"missing key", base()});
  cases.back().second.idempotency_key = "";
  cases.push_back({"long key", base()});
  cases.back().second.idempotency_key = std::string(129, 'k');
  cases.push_back({"key with space", base()});
  cases.back().second.idempotency_key = "a b";
  cases.push_back({"reserved key", base()});
  cases.back().second.idempotency_key = "wallet:open-account:player:alice";
  cases.push_back({"zero amount", base()});
  cases.back().second.legs[0].amount = cases.back().second.legs[1].amount = 0;
  cases.push_back({"negative amount", base()});
  cases.back().second.legs[0].amount = cases.back().second.legs[1].amount = -10;
  cases.push_back({"huge amount", base()});
  cases.back().second.legs[0].amount = cases.back().second.legs[1].amount = 1'000'000'000'001;
  cases.push_back({"not summing to zero", base()});
  cases.back().second.legs[1].amount = 11;
  cases.push_back({"one leg", base()});
  cases.back().second.legs.pop_back();
  cases.push_back({"no side", base()});
  cases.back().second.legs[0].side = Side::kUnspecified;
  cases.push_back({"account twice", base()});
  cases.back().second.legs[1].account_id = "player:alice";
  cases.push_back({"malformed account", base()});
  cases.back().second.legs[1].account_id = "bob";
  cases.push_back({"house shard named", base()});
  cases.back().second.legs[1].account_id = "house:1";
  cases.push_back({"pot round not canonical", base()});
  cases.back().second.legs[1].account_id = "pot:t1:01";
  cases.push_back({"negative round", base()});
  cases.back().second.metadata.round = -1;
  cases.push_back({"bad table id", base()});
  cases.back().second.metadata.table_id = "t 1";
  cases.push_back({"long reason", base()});
  cases.back().second.metadata.reason = std::string(65, 'r');
  TransferRequest oversize = base();
  oversize.legs = {{"player:alice", Side::kDebit, 16}};
  for (int i = 0; i < 16; ++i) {
    oversize.legs.push_back({"pot:t1:" + std::to_string(i), Side::kCredit, 1});
  }
  cases.push_back({"17 legs", oversize});
  for (const auto& [name, request] : cases) {
    EXPECT_EQ(Move(request).status().code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(store_.ApplyCalls(), 3);  // only SetUp's grants reached the store
  ExpectUntouched();
}

// The exact alphabet and length limits of keys and reasons, at their edges.
TEST_F(LedgerTest, KeyAndReasonEdges) {
  auto with = [](std::string key, std::string reason) {
    return TransferRequest{std::move(key),
                           {{"player:alice", Side::kDebit, 1}, {"player:bob", Side::kCredit, 1}},
                           {"t1", 1, std::move(reason)}};
  };
  const std::string key_error =
      "idempotency key must be 1..128 characters of printable ASCII without space (0x21..0x7E)";
  const std::string reason_error =
      "reason must be 0..64 characters of printable ASCII, space included (0x20..0x7E)";
  // Accepted: the edges of each alphabet and length.
  const std::string all_key_chars = "!\"#$%&'()*+,-./0123456789:;<=>?@[\\]^_`{|}~";
  std::vector<TransferRequest> accepted = {
      with("k", ""),                                      // shortest key, empty reason
      with(std::string(128, 'k'), std::string(64, 'r')),  // longest key and reason
      with(all_key_chars, "pay out: round 3, seat #2 (bot)"),
      with("k-space-edges", " leading and trailing spaces "),
      with("k-tilde", "~ and ! are the edges"),
  };
  int64_t moved = 0;
  for (const TransferRequest& r : accepted) {
    absl::StatusOr<TransferResult> result = Move(r);
    EXPECT_TRUE(result.ok()) << r.idempotency_key << ": " << result.status();
    moved += result.ok() ? 1 : 0;
  }
  EXPECT_EQ(BalanceOf("player:alice"), 1000 - moved);
  // Refused, with the exact message, and nothing moves.
  const int applied = store_.ApplyCalls();
  const std::vector<std::pair<TransferRequest, std::string>> refused = {
      {with("", "x"), "idempotency key is required"},
      {with(std::string(129, 'k'), "x"), key_error},
      {with("a b", "x"), key_error},
      {with(" k", "x"), key_error},
      {with("k\t", "x"), key_error},
      {with("k\x7f", "x"), key_error},
      {with("k\xc3\xa9", "x"), key_error},  // UTF-8 e-acute
      {with("k-long-reason", std::string(65, 'r')), reason_error},
      {with("k-tab", "a\tb"), reason_error},
      {with("k-newline", "a\nb"), reason_error},
      {with("k-del", "a\x7f"), reason_error},
      {with("k-utf8", "caf\xc3\xa9"), reason_error},
      {with("k-nul", std::string("a\0b", 3)), reason_error},
  };
  for (const auto& [request, message] : refused) {
    EXPECT_THAT(Move(request).status(), StatusIs(absl::StatusCode::kInvalidArgument, message))
        << request.idempotency_key;
  }
  EXPECT_EQ(store_.ApplyCalls(), applied);  // none reached the store
  EXPECT_EQ(BalanceOf("player:alice"), 1000 - moved);
}

TEST_F(LedgerTest, SixteenLegsAreAllowed) {
  TransferRequest r{"k16", {{"player:alice", Side::kDebit, 15}}, {}};
  for (int i = 0; i < 15; ++i) r.legs.push_back({"pot:t1:" + std::to_string(i), Side::kCredit, 1});
  ASSERT_TRUE(Move(r).ok());
  EXPECT_EQ(BalanceOf("player:alice"), 985);
  EXPECT_EQ(BalanceOf("pot:t1:14"), 1);
}

TEST_F(LedgerTest, LostReplyIsRetriedAndMovesOnce) {
  store_.LoseNextReplies(1);
  absl::StatusOr<TransferResult> r = Move(Stakes("k1"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->replayed);  // the first attempt committed; the retry found it
  EXPECT_EQ(BalanceOf("player:alice"), 975);
  EXPECT_EQ(BalanceOf("pot:t1:1"), 100);
  EXPECT_EQ(store_.TransferCount(), 4);
}

TEST_F(LedgerTest, TransientErrorsAreRetriedWithABound) {
  store_.FailNext(2, absl::AbortedError("serialization failure"));
  ASSERT_TRUE(Move(Stakes("k1")).ok());
  store_.FailNext(3, absl::UnavailableError("down"));
  EXPECT_EQ(Move(Stakes("k2")).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(BalanceOf("pot:t1:1"), 100);
}

TEST_F(LedgerTest, PassedDeadlineIsDeadlineExceeded) {
  EXPECT_EQ(ledger_.Transfer(Stakes("k1"), clock_.Now()).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  ExpectUntouched();
}

TEST_F(LedgerTest, ConcurrentSameKeyMovesOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> replays = 0;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      absl::StatusOr<TransferResult> r = Move(Stakes("same"));
      ASSERT_TRUE(r.ok());
      if (r->replayed) ++replays;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(replays, 7);
  EXPECT_EQ(BalanceOf("pot:t1:1"), 100);
  EXPECT_EQ(BalanceOf("player:alice"), 975);
}

TEST_F(LedgerTest, HistoryPagesNewestFirst) {
  ASSERT_TRUE(Move(Stakes("k1")).ok());
  TransferRequest payout{"k2",
                         {{"pot:t1:1", Side::kDebit, 100}, {"player:alice", Side::kCredit, 100}},
                         {"t1", 1, "payout"}};
  ASSERT_TRUE(Move(payout).ok());
  absl::StatusOr<HistoryPage> page = ledger_.History("player:alice", 2, "", Deadline());
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->entries.size(), 2u);
  EXPECT_EQ(page->entries[0].amount, 100);
  EXPECT_EQ(page->entries[0].balance_after, 1075);
  EXPECT_EQ(page->entries[0].metadata.reason, "payout");
  EXPECT_EQ(page->entries[1].amount, -25);
  ASSERT_FALSE(page->next_cursor.empty());
  absl::StatusOr<HistoryPage> last =
      ledger_.History("player:alice", 2, page->next_cursor, Deadline());
  ASSERT_TRUE(last.ok());
  ASSERT_EQ(last->entries.size(), 1u);
  EXPECT_EQ(last->entries[0].amount, 1000);
  EXPECT_EQ(last->entries[0].metadata.reason, "starting_grant");
  EXPECT_TRUE(last->next_cursor.empty());
  EXPECT_EQ(ledger_.History("player:alice", 2, "garbage", Deadline()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger_.History("player:alice", 101, "", Deadline()).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<HistoryPage> house = ledger_.History("house", 100, "", Deadline());
  ASSERT_TRUE(house.ok());
  EXPECT_EQ(house->entries.size(), 4u);  // three grants and one bot stake
}

// ListPots and PotPayers over a round's stakes, court stake and payout.
TEST_F(LedgerTest, PotsAndTheirPayers) {
  ASSERT_TRUE(Move(Stakes("k1")).ok());
  ASSERT_TRUE(Move(FourStakes()).ok());
  ASSERT_TRUE(Move(CourtStake()).ok());
  absl::StatusOr<PotPage> all = ledger_.ListPots(0, "", Deadline());
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->pots.size(), 2u);
  EXPECT_EQ(all->pots[0].account_id, "pot:t1:1");
  EXPECT_EQ(all->pots[0].balance, 100);
  EXPECT_EQ(all->pots[1].account_id, "pot:t2:1");
  EXPECT_EQ(all->pots[1].balance, 100);
  EXPECT_TRUE(all->next_cursor.empty());
  absl::StatusOr<PotPage> first = ledger_.ListPots(1, "", Deadline());
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->pots.size(), 1u);
  EXPECT_EQ(first->pots[0].account_id, "pot:t1:1");
  EXPECT_EQ(first->next_cursor, "pot:t1:1");
  absl::StatusOr<PotPage> second = ledger_.ListPots(1, first->next_cursor, Deadline());
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->pots.size(), 1u);
  EXPECT_EQ(second->pots[0].account_id, "pot:t2:1");
  EXPECT_TRUE(second->next_cursor.empty());

  absl::StatusOr<PotPayersResult> payers = ledger_.PotPayers("pot:t2:1", Deadline());
  ASSERT_TRUE(payers.ok()) << payers.status();
  EXPECT_EQ(payers->balance, 100);
  EXPECT_THAT(payers->payers,
              ElementsAre(AccountBalance{"house", 30}, AccountBalance{"player:alice", 20},
                          AccountBalance{"player:bob", 30}, AccountBalance{"player:carol", 20}));

  ASSERT_TRUE(Move(PayoutToAlice()).ok());
  absl::StatusOr<PotPage> after = ledger_.ListPots(0, "", Deadline());
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->pots.size(), 1u);
  EXPECT_EQ(after->pots[0].account_id, "pot:t1:1");
  payers = ledger_.PotPayers("pot:t2:1", Deadline());
  ASSERT_TRUE(payers.ok());
  EXPECT_EQ(payers->balance, 0);
  EXPECT_THAT(payers->payers,
              ElementsAre(AccountBalance{"house", 30}, AccountBalance{"player:alice", -80},
                          AccountBalance{"player:bob", 30}, AccountBalance{"player:carol", 20}));
}

TEST_F(LedgerTest, PotQueriesRefuseBadInput) {
  EXPECT_THAT(ledger_.PotPayers("player:alice", Deadline()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a pot id")));
  EXPECT_THAT(ledger_.PotPayers("pot:t1:01", Deadline()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ledger_.PotPayers("pot:nope:1", Deadline()), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(ledger_.ListPots(0, "garbage", Deadline()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cursor")));
  EXPECT_THAT(ledger_.ListPots(101, "", Deadline()), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ledger_.ListPots(-1, "", Deadline()), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(LedgerOptionsTest, RejectsOutOfRange) {
  LedgerOptions o;
  EXPECT_TRUE(Ledger::ValidateOptions(o).ok());
  o.starting_grant = 0;
  EXPECT_EQ(Ledger::ValidateOptions(o).code(), absl::StatusCode::kInvalidArgument);
  o = LedgerOptions();
  o.house_shard_count = 0;
  EXPECT_EQ(Ledger::ValidateOptions(o).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace courtpiece::wallet
