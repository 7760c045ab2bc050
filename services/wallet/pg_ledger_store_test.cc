// Integration tests of the Ledger on the real PostgreSQL store (COURTPIECE_TEST_PG_URL):
// a fresh database per test, migrated with services/wallet/migrations.
#include "services/wallet/pg_ledger_store.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/log.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/common/status_macros.h"
#include "courtpiece/common/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/server_context.h"
#include "gtest/gtest.h"
#include "services/wallet/audit.h"
#include "services/wallet/batching_ledger_store.h"
#include "services/wallet/ledger.h"
#include "services/wallet/ledger_requests_for_test.h"
#include "services/wallet/server.h"
#include "services/wallet/wallet_test_util.h"

namespace courtpiece::wallet {
namespace {

using ::courtpiece::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using C = absl::StatusCode;
using ::courtpiece::wallet::testing::CourtStake;
using ::courtpiece::wallet::testing::FourStakes;
using ::courtpiece::wallet::testing::PayoutToAlice;
using ::courtpiece::wallet::testing::Stakes;
using testing::Exec;
using testing::QueryInt;

constexpr char kAppName[] = "wallet-store-test";

class PgLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db = testing::CreateWalletDatabase();
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    storage::PgPoolOptions options = db_->PoolOptions();
    options.size_max = 16;
    options.application_name = kAppName;
    pool_ = std::make_unique<storage::PgPool>(options);
    store_ = std::make_unique<PgLedgerStore>(*pool_);
    ledger_options_.starting_grant = 1000;
    ledger_options_.house_shard_count = 4;
    ledger_ = std::make_unique<Ledger>(*store_, RealClock::Instance(), ledger_options_);
    ASSERT_TRUE(ledger_->Init(Deadline()).ok());
    for (const char* p : {"alice", "bob", "carol", "dave"}) {
      absl::StatusOr<OpenAccountResult> r = ledger_->OpenAccount(p, Deadline());
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_TRUE(r->created);
    }
  }

  static absl::Time Deadline() { return absl::Now() + absl::Seconds(10); }

  int64_t BalanceOf(absl::string_view account) {
    absl::StatusOr<int64_t> b = ledger_->GetBalance(account, Deadline());
    EXPECT_TRUE(b.ok()) << b.status();
    return b.value_or(-1);
  }

  void ExpectAuditOk() {
    absl::StatusOr<AuditReport> report = AuditLedger(*pool_);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->ok()) << report->problems.front();
    EXPECT_EQ(report->sum_of_balances, 0);
  }

  void HotAccountsStress();

  LedgerOptions ledger_options_;
  std::unique_ptr<storage::TestDatabase> db_;
  std::unique_ptr<storage::PgPool> pool_;
  std::unique_ptr<PgLedgerStore> store_;
  std::unique_ptr<BatchingLedgerStore> batching_;  // when a test sends through group commit
  std::unique_ptr<Ledger> ledger_;
};

// Migration 0004: apply_transfers never scans a whole table. On this fresh (small) ledger
// PL/pgSQL's generic plans, used from a connection's sixth call on, would scan accounts and
// transfers in full (and keep doing so as they grow). One transaction, so that
// pg_stat_xact_user_tables counts exactly its own scans.
TEST_F(PgLedgerTest, ApplyTransfersUsesNoSequentialScanPastItsFirstCalls) {
  constexpr int kCalls = 12;  // past the five custom plans PL/pgSQL tries first
  int64_t seq_scans = -1;
  int64_t index_scans = -1;
  absl::Status s = pool_->Run([&](storage::PgTransaction& tx) -> absl::Status {
    for (int i = 0; i < kCalls; ++i) {
      ASSIGN_OR_RETURN(
          storage::PgRow row,
          tx.ExecOneRow("SELECT count(*) FROM wallet.apply_transfers(ARRAY[$1::text], "
                        "ARRAY['fp'], ARRAY[''], ARRAY[0::bigint], ARRAY[''], ARRAY[1, 1], "
                        "ARRAY['player:alice', 'player:bob'], ARRAY[-1, 1]::bigint[], "
                        "ARRAY[false, false])",
                        {absl::StrCat("scan-", i)}));
      ASSIGN_OR_RETURN(int64_t rows, row.Int64(0));
      if (rows != 2) return absl::InternalError(absl::StrCat("call ", i, ": ", rows, " rows"));
    }
    ASSIGN_OR_RETURN(storage::PgRow scans,
                     tx.ExecOneRow("SELECT coalesce(sum(seq_scan), 0)::bigint, "
                                   "coalesce(sum(idx_scan), 0)::bigint "
                                   "FROM pg_stat_xact_user_tables WHERE schemaname = 'wallet' "
                                   "AND relname IN ('accounts', 'transfers', 'entries')"));
    ASSIGN_OR_RETURN(seq_scans, scans.Int64(0));
    ASSIGN_OR_RETURN(index_scans, scans.Int64(1));
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(seq_scans, 0);
  EXPECT_GT(index_scans, 0);  // the counters do count this transaction's scans
  EXPECT_EQ(BalanceOf("player:alice"), 1000 - kCalls);
  EXPECT_EQ(BalanceOf("player:bob"), 1000 + kCalls);
  ExpectAuditOk();
}

// A statement timeout inside apply_transfer (bob's row is held by another transaction):
// the client's status is DEADLINE_EXCEEDED with a fixed message (no SQL, no Postgres
// text), the log line has the details, and nothing moved.
TEST_F(PgLedgerTest, StatementTimeoutReachesTheClientWithoutDatabaseText) {
  storage::PgPoolOptions options = db_->PoolOptions();
  options.statement_timeout_ms = 300;
  options.application_name = kAppName;
  storage::PgPool short_pool(options);
  PgLedgerStore short_store(short_pool);
  Ledger ledger(short_store, RealClock::Instance(), ledger_options_);
  std::mutex log_mu;
  std::vector<std::string> log_lines;
  common::Logger log("wallet", common::LogLevel::kInfo, [&](std::string_view line) {
    std::lock_guard<std::mutex> lock(log_mu);
    log_lines.emplace_back(line);
  });
  common::Metrics metrics("wallet");
  WalletService service(ledger, RealClock::Instance(), absl::Seconds(30), metrics, log);

  absl::Notification locked;
  absl::Notification release;
  std::thread holder([&] {
    absl::Status held = pool_->Run([&](storage::PgTransaction& tx) -> absl::Status {
      RETURN_IF_ERROR(
          tx.Exec("UPDATE wallet.accounts SET balance = balance WHERE id = 'player:bob'").status());
      locked.Notify();
      release.WaitForNotification();
      return absl::OkStatus();
    });
    EXPECT_TRUE(held.ok()) << held;
  });
  locked.WaitForNotification();
  v1::TransferRequest request;
  request.set_idempotency_key("timeout-1");
  for (const auto& [account, side] :
       {std::pair{"player:alice", v1::SIDE_DEBIT}, std::pair{"player:bob", v1::SIDE_CREDIT}}) {
    v1::Leg* leg = request.add_legs();
    leg->set_account_id(account);
    leg->set_side(side);
    leg->set_amount(5);
  }
  v1::TransferResponse response;
  grpc::ServerContext context;
  const grpc::Status status = service.Transfer(&context, &request, &response);
  release.Notify();
  holder.join();

  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(status.error_message(),
            "deadline exceeded before the server finished; the call may or may not have taken "
            "effect");
  std::lock_guard<std::mutex> lock(log_mu);
  ASSERT_EQ(log_lines.size(), 1u);
  EXPECT_THAT(log_lines[0], HasSubstr("\"rpc\":\"Transfer\""));
  EXPECT_THAT(log_lines[0], HasSubstr("57014"));
  EXPECT_THAT(log_lines[0], HasSubstr("statement timeout"));
  EXPECT_THAT(log_lines[0], HasSubstr("apply_transfer"));
  EXPECT_EQ(BalanceOf("player:alice"), 1000);
  EXPECT_EQ(BalanceOf("player:bob"), 1000);
  EXPECT_EQ(*QueryInt(*pool_,
                      "SELECT count(*) FROM wallet.transfers WHERE idempotency_key = 'timeout-1'"),
            0);
  ExpectAuditOk();
}

// A reason with spaces goes through Postgres and comes back as sent.
// ListPots and PotPayers in SQL: the same round as the fake's test, plus the time of the
// pot's last entry.
TEST_F(PgLedgerTest, PotsAndTheirPayers) {
  const absl::Time before = absl::Now() - absl::Seconds(1);
  ASSERT_TRUE(ledger_->Transfer(Stakes("k1"), Deadline()).ok());
  ASSERT_TRUE(ledger_->Transfer(FourStakes(), Deadline()).ok());
  ASSERT_TRUE(ledger_->Transfer(CourtStake(), Deadline()).ok());
  absl::StatusOr<PotPage> first = ledger_->ListPots(1, "", Deadline());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->pots.size(), 1u);
  EXPECT_EQ(first->pots[0].account_id, "pot:t1:1");
  EXPECT_EQ(first->pots[0].balance, 100);
  EXPECT_EQ(first->next_cursor, "pot:t1:1");
  absl::StatusOr<PotPage> second = ledger_->ListPots(1, first->next_cursor, Deadline());
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->pots.size(), 1u);
  EXPECT_EQ(second->pots[0].account_id, "pot:t2:1");
  EXPECT_EQ(second->pots[0].balance, 100);
  EXPECT_GT(second->pots[0].last_entry_at, before);
  EXPECT_LE(second->pots[0].last_entry_at, absl::Now());
  EXPECT_TRUE(second->next_cursor.empty());

  absl::StatusOr<PotPayersResult> payers = ledger_->PotPayers("pot:t2:1", Deadline());
  ASSERT_TRUE(payers.ok()) << payers.status();
  EXPECT_EQ(payers->balance, 100);
  EXPECT_THAT(payers->payers,
              ElementsAre(AccountBalance{"house", 30}, AccountBalance{"player:alice", 20},
                          AccountBalance{"player:bob", 30}, AccountBalance{"player:carol", 20}));

  ASSERT_TRUE(ledger_->Transfer(PayoutToAlice(), Deadline()).ok());
  absl::StatusOr<PotPage> after = ledger_->ListPots(0, "", Deadline());
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->pots.size(), 1u);
  EXPECT_EQ(after->pots[0].account_id, "pot:t1:1");
  payers = ledger_->PotPayers("pot:t2:1", Deadline());
  ASSERT_TRUE(payers.ok());
  EXPECT_EQ(payers->balance, 0);
  EXPECT_THAT(payers->payers,
              ElementsAre(AccountBalance{"house", 30}, AccountBalance{"player:alice", -80},
                          AccountBalance{"player:bob", 30}, AccountBalance{"player:carol", 20}));
  EXPECT_THAT(ledger_->PotPayers("pot:nope:1", Deadline()), StatusIs(C::kNotFound));
  ExpectAuditOk();
}

TEST_F(PgLedgerTest, ReasonWithSpacesRoundTrips) {
  TransferRequest r = Stakes("k-spaces");
  r.metadata.reason = " stakes: round 1 (two bots) ";
  ASSERT_TRUE(ledger_->Transfer(r, Deadline()).ok());
  absl::StatusOr<HistoryPage> page = ledger_->History("player:alice", 1, "", Deadline());
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->entries.size(), 1u);
  EXPECT_EQ(page->entries[0].metadata.reason, " stakes: round 1 (two bots) ");
}

TEST_F(PgLedgerTest, OpenAccountIsIdempotentPerPlayer) {
  absl::StatusOr<OpenAccountResult> again = ledger_->OpenAccount("alice", Deadline());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->balance, 1000);
  EXPECT_EQ(BalanceOf("house"), -4000);
  ExpectAuditOk();
}

TEST_F(PgLedgerTest, TransferThenReplayReturnsTheFirstResult) {
  absl::StatusOr<TransferResult> first = ledger_->Transfer(Stakes("k1"), Deadline());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->replayed);
  EXPECT_EQ(
      first->balances_after,
      (std::vector<AccountBalance>{{"player:alice", 975}, {"player:bob", 975}, {"pot:t1:1", 100}}));
  absl::StatusOr<TransferResult> again = ledger_->Transfer(Stakes("k1"), Deadline());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->transfer_id, first->transfer_id);
  EXPECT_EQ(again->balances_after, first->balances_after);
  EXPECT_EQ(again->created_at, first->created_at);
  EXPECT_EQ(BalanceOf("player:alice"), 975);
  EXPECT_EQ(BalanceOf("house"), -4050);
  ExpectAuditOk();
}

TEST_F(PgLedgerTest, SameKeyDifferentRequestIsAlreadyExists) {
  ASSERT_TRUE(ledger_->Transfer(Stakes("k1"), Deadline()).ok());
  TransferRequest other = Stakes("k1");
  other.metadata.reason = "other";
  EXPECT_THAT(ledger_->Transfer(other, Deadline()), StatusIs(C::kAlreadyExists));
  EXPECT_EQ(BalanceOf("pot:t1:1"), 100);
  ExpectAuditOk();
}

TEST_F(PgLedgerTest, OverdraftRollsBackEverything) {
  TransferRequest r{"k-over",
                    {{"player:alice", Side::kDebit, 10},
                     {"player:bob", Side::kDebit, 2000},
                     {"pot:t1:1", Side::kCredit, 2010}},
                    {"t1", 1, "stakes"}};
  EXPECT_THAT(ledger_->Transfer(r, Deadline()),
              StatusIs(C::kFailedPrecondition, HasSubstr("player:bob")));
  EXPECT_EQ(BalanceOf("player:alice"), 1000);  // debited before bob's leg, rolled back
  EXPECT_THAT(ledger_->GetBalance("pot:t1:1", Deadline()), StatusIs(C::kNotFound));
  EXPECT_EQ(*QueryInt(*pool_, "SELECT count(*) FROM wallet.transfers WHERE idempotency_key = $1",
                      {"k-over"}),
            0);
  ExpectAuditOk();
}

TEST_F(PgLedgerTest, UnknownAccountsAreNotFound) {
  TransferRequest r{"k", {{"player:zed", Side::kCredit, 5}, {"player:bob", Side::kDebit, 5}}, {}};
  EXPECT_THAT(ledger_->Transfer(r, Deadline()), StatusIs(C::kNotFound, HasSubstr("player:zed")));
  r.legs = {{"pot:t9:3", Side::kDebit, 5}, {"player:bob", Side::kCredit, 5}};
  EXPECT_THAT(ledger_->Transfer(r, Deadline()), StatusIs(C::kNotFound, HasSubstr("pot:t9:3")));
  EXPECT_EQ(BalanceOf("player:bob"), 1000);
  ExpectAuditOk();
}

TEST_F(PgLedgerTest, HistoryPagesNewestFirstAndCoversEveryHouseShard) {
  ASSERT_TRUE(ledger_->Transfer(Stakes("k1"), Deadline()).ok());
  absl::StatusOr<HistoryPage> page = ledger_->History("player:alice", 1, "", Deadline());
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->entries.size(), 1u);
  EXPECT_EQ(page->entries[0].amount, -25);
  EXPECT_EQ(page->entries[0].balance_after, 975);
  EXPECT_EQ(page->entries[0].idempotency_key, "k1");
  EXPECT_EQ(page->entries[0].metadata.table_id, "t1");
  absl::StatusOr<HistoryPage> next =
      ledger_->History("player:alice", 1, page->next_cursor, Deadline());
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_EQ(next->entries.size(), 1u);
  EXPECT_EQ(next->entries[0].amount, 1000);
  EXPECT_TRUE(next->next_cursor.empty());
  absl::StatusOr<HistoryPage> house = ledger_->History("house", 100, "", Deadline());
  ASSERT_TRUE(house.ok()) << house.status();
  EXPECT_EQ(house->entries.size(), 5u);  // four grants, one bot stake
}

TEST_F(PgLedgerTest, LedgerIsAppendOnly) {
  ASSERT_TRUE(ledger_->Transfer(Stakes("k1"), Deadline()).ok());
  EXPECT_FALSE(Exec(*pool_, "UPDATE wallet.entries SET amount = amount + 1").ok());
  EXPECT_FALSE(Exec(*pool_, "DELETE FROM wallet.entries").ok());
  EXPECT_FALSE(Exec(*pool_, "DELETE FROM wallet.transfers").ok());
  EXPECT_FALSE(Exec(*pool_, "TRUNCATE wallet.entries CASCADE").ok());
  EXPECT_FALSE(Exec(*pool_, "UPDATE wallet.transfers SET reason = 'x'").ok());
  EXPECT_EQ(*QueryInt(*pool_, "SELECT count(*) FROM wallet.entries"), 12);
  ExpectAuditOk();
}

// Migration 0005: the references of entries are checked per statement (triggers) instead of
// per row (foreign keys), with the same guarantees: an entry names an existing account and
// transfer, and no referenced row goes away. Each refusal changes nothing.
TEST_F(PgLedgerTest, EntriesReferencesHoldWithoutForeignKeys) {
  ASSERT_TRUE(ledger_->Transfer(Stakes("k1"), Deadline()).ok());
  const std::string transfer_id = absl::StrCat(*QueryInt(*pool_,
                                                         "SELECT id FROM wallet.transfers "
                                                         "WHERE idempotency_key = 'k1'"));
  const int64_t entries_before = *QueryInt(*pool_, "SELECT count(*) FROM wallet.entries");
  ASSERT_EQ(entries_before, 12);  // four grants of two entries, one stake of four
  constexpr char kMissing[] = "an entry names a missing account or transfer";

  // A missing account; a missing transfer; one bad row among good ones.
  EXPECT_THAT(Exec(*pool_,
                   "INSERT INTO wallet.entries (transfer_id, account_id, amount, "
                   "balance_after) VALUES ($1::bigint, 'player:nobody', 5, 5)",
                   {transfer_id}),
              StatusIs(C::kFailedPrecondition, HasSubstr(kMissing)));
  EXPECT_THAT(Exec(*pool_,
                   "INSERT INTO wallet.entries (transfer_id, account_id, amount, "
                   "balance_after) VALUES (987654321, 'player:alice', 5, 5)"),
              StatusIs(C::kFailedPrecondition, HasSubstr(kMissing)));
  EXPECT_THAT(Exec(*pool_,
                   "INSERT INTO wallet.entries (transfer_id, account_id, amount, "
                   "balance_after) VALUES ($1::bigint, 'player:carol', 5, 5), "
                   "($1::bigint, 'player:ghost', -5, -5)",
                   {transfer_id}),
              StatusIs(C::kFailedPrecondition, HasSubstr(kMissing)));
  EXPECT_EQ(*QueryInt(*pool_, "SELECT count(*) FROM wallet.entries"), entries_before);

  // An account with entries is never deleted, renamed or truncated away; one without
  // entries (as apply_transfers' phase 4 deletes) may be deleted.
  EXPECT_THAT(Exec(*pool_, "DELETE FROM wallet.accounts WHERE id = 'player:alice'"),
              StatusIs(C::kFailedPrecondition, HasSubstr("an account with entries")));
  EXPECT_THAT(Exec(*pool_,
                   "UPDATE wallet.accounts SET id = 'player:zed' "
                   "WHERE id = 'player:alice'"),
              StatusIs(C::kInternal, HasSubstr("UPDATE refused")));
  EXPECT_THAT(Exec(*pool_, "TRUNCATE wallet.accounts CASCADE"),
              StatusIs(C::kInternal, HasSubstr("TRUNCATE refused")));
  EXPECT_EQ(*QueryInt(*pool_, "SELECT count(*) FROM wallet.accounts WHERE id = 'player:alice'"), 1);
  ASSERT_TRUE(
      Exec(*pool_, "INSERT INTO wallet.accounts (id, kind) VALUES ('pot:empty', 'pot')").ok());
  EXPECT_TRUE(Exec(*pool_, "DELETE FROM wallet.accounts WHERE id = 'pot:empty'").ok());
  EXPECT_EQ(*QueryInt(*pool_, "SELECT count(*) FROM wallet.accounts WHERE id = 'pot:empty'"), 0);
  EXPECT_EQ(BalanceOf("player:alice"), 1000 - 25);
  ExpectAuditOk();
}

TEST_F(PgLedgerTest, AuditFindsATamperedBalance) {
  ASSERT_TRUE(Exec(*pool_,
                   "UPDATE wallet.accounts SET balance = balance + 7 "
                   "WHERE id = 'player:carol'")
                  .ok());
  absl::StatusOr<AuditReport> report = AuditLedger(*pool_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok());
  EXPECT_EQ(report->sum_of_balances, 7);
  ASSERT_GE(report->problems.size(), 2u);
  EXPECT_THAT(report->problems[0], HasSubstr("player:carol 1007 1000"));
}

// An entry written with the triggers off (session_replication_role = replica, as a bulk
// restore would) naming an account that does not exist: the audit names it.
TEST_F(PgLedgerTest, AuditFindsAnEntryNamingAMissingAccount) {
  ASSERT_TRUE(ledger_->Transfer(Stakes("k1"), Deadline()).ok());
  absl::Status s = pool_->Run([&](storage::PgTransaction& tx) -> absl::Status {
    RETURN_IF_ERROR(tx.Exec("SET LOCAL session_replication_role = replica").status());
    return tx
        .Exec(
            "INSERT INTO wallet.entries (transfer_id, account_id, amount, balance_after) "
            "SELECT id, 'player:ghost', 1, 1 FROM wallet.transfers "
            "WHERE idempotency_key = 'k1'")
        .status();
  });
  ASSERT_TRUE(s.ok()) << s;
  absl::StatusOr<AuditReport> report = AuditLedger(*pool_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok());
  bool named = false;
  for (const std::string& problem : report->problems) {
    if (absl::StrContains(problem, "entry naming a missing account or transfer") &&
        absl::StrContains(problem, "player:ghost")) {
      named = true;
    }
  }
  EXPECT_TRUE(named) << absl::StrJoin(report->problems, "\n");
}

TEST_F(PgLedgerTest, ConcurrentSameKeyMovesOnce) {
  std::atomic<int> applied = 0;
  std::atomic<int> replayed = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([&] {
      absl::StatusOr<TransferResult> r = ledger_->Transfer(Stakes("same"), Deadline());
      ASSERT_TRUE(r.ok()) << r.status();
      ++(r->replayed ? replayed : applied);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(applied, 1);
  EXPECT_EQ(replayed, 11);
  EXPECT_EQ(BalanceOf("pot:t1:1"), 100);
  EXPECT_EQ(BalanceOf("player:alice"), 975);
  ExpectAuditOk();
}

// ---- Group commit: wallet.apply_transfers through PgLedgerStore::ApplyBatch ----

// A validated record as the Ledger would build it (stored ids; credited accounts in
// `creates` are created when missing).
TransferRecord Record(std::string key, std::vector<Posting> postings,
                      std::vector<std::string> creates = {}, std::string reason = "batch") {
  TransferRecord r;
  r.idempotency_key = key;
  r.metadata = {"t1", 1, std::move(reason)};
  r.fingerprint = absl::StrCat("test|", r.metadata.reason);
  for (const Posting& p : postings) absl::StrAppend(&r.fingerprint, "|", p.account_id, p.amount);
  r.postings = std::move(postings);
  r.create_if_missing = std::move(creates);
  return r;
}

std::vector<const TransferRecord*> Items(const std::vector<TransferRecord>& records) {
  std::vector<const TransferRecord*> out;
  for (const TransferRecord& r : records) out.push_back(&r);
  return out;
}

int64_t TransfersWithKey(storage::PgPool& pool, const std::string& key) {
  return *QueryInt(pool, "SELECT count(*) FROM wallet.transfers WHERE idempotency_key = $1", {key});
}

// An overdraft in the middle of a batch refuses that item only: the items around it apply,
// the refused one leaves no transfers row.
TEST_F(PgLedgerTest, OverdraftInTheMiddleOfABatchRefusesOnlyThatItem) {
  const std::vector<TransferRecord> batch = {
      Record("b1", {{"player:alice", -10}, {"player:bob", 10}}),
      Record("b2", {{"player:carol", -5000}, {"player:bob", 5000}}),
      Record("b3", {{"player:bob", -3}, {"player:alice", 3}}),
  };
  absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> results =
      store_->ApplyBatch(Items(batch), Deadline());
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 3u);
  ASSERT_TRUE((*results)[0].ok()) << (*results)[0].status();
  EXPECT_THAT((*results)[1],
              StatusIs(C::kFailedPrecondition, "account player:carol would go below zero"));
  ASSERT_TRUE((*results)[2].ok()) << (*results)[2].status();
  EXPECT_FALSE((*results)[0]->replayed);
  EXPECT_THAT((*results)[0]->balances_after,
              ::testing::ElementsAre(AccountBalance{"player:alice", 990},
                                     AccountBalance{"player:bob", 1010}));
  EXPECT_THAT((*results)[2]->balances_after,
              ::testing::ElementsAre(AccountBalance{"player:alice", 993},
                                     AccountBalance{"player:bob", 1007}));
  EXPECT_EQ(BalanceOf("player:alice"), 993);
  EXPECT_EQ(BalanceOf("player:bob"), 1007);
  EXPECT_EQ(BalanceOf("player:carol"), 1000);
  EXPECT_EQ(TransfersWithKey(*pool_, "b2"), 0);
  ExpectAuditOk();
}

// The same key twice in one batch (same request) applies once and the second replays the
// first's result; the key with another request in the same batch is AlreadyExists.
TEST_F(PgLedgerTest, SameKeyTwiceInOneBatchAppliesOnce) {
  const TransferRecord stake =
      Record("s1", {{"player:alice", -25}, {"house:0", -75}, {"pot:t1:1", 100}}, {"pot:t1:1"});
  const TransferRecord other = Record("s1", {{"player:alice", -26}, {"player:bob", 26}});
  const std::vector<TransferRecord> batch = {stake, stake, other};
  absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> results =
      store_->ApplyBatch(Items(batch), Deadline());
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_TRUE((*results)[0].ok()) << (*results)[0].status();
  ASSERT_TRUE((*results)[1].ok()) << (*results)[1].status();
  EXPECT_FALSE((*results)[0]->replayed);
  EXPECT_TRUE((*results)[1]->replayed);
  EXPECT_EQ((*results)[1]->transfer_id, (*results)[0]->transfer_id);
  EXPECT_EQ((*results)[1]->created_at, (*results)[0]->created_at);
  EXPECT_EQ((*results)[1]->balances_after, (*results)[0]->balances_after);
  EXPECT_THAT((*results)[2], StatusIs(C::kAlreadyExists));
  EXPECT_EQ(TransfersWithKey(*pool_, "s1"), 1);
  EXPECT_EQ(BalanceOf("pot:t1:1"), 100);
  EXPECT_EQ(BalanceOf("player:alice"), 975);
  EXPECT_EQ(BalanceOf("player:bob"), 1000);
  ExpectAuditOk();
}

TEST_F(PgLedgerTest, KeyReplayAcrossBatchesReturnsTheFirstResult) {
  const TransferRecord first = Record("r1", {{"player:alice", -10}, {"player:bob", 10}});
  const TransferRecord next = Record("r2", {{"player:bob", -4}, {"player:carol", 4}});
  absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> one =
      store_->ApplyBatch({&first}, Deadline());
  ASSERT_TRUE(one.ok() && (*one)[0].ok());
  absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> two =
      store_->ApplyBatch({&next, &first}, Deadline());
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_TRUE((*two)[0].ok() && (*two)[1].ok());
  EXPECT_FALSE((*two)[0]->replayed);
  EXPECT_TRUE((*two)[1]->replayed);
  EXPECT_EQ((*two)[1]->transfer_id, (*one)[0]->transfer_id);
  EXPECT_EQ((*two)[1]->created_at, (*one)[0]->created_at);
  EXPECT_THAT((*two)[1]->balances_after,
              ::testing::ElementsAre(AccountBalance{"player:alice", 990},
                                     AccountBalance{"player:bob", 1010}));
  EXPECT_EQ(BalanceOf("player:alice"), 990);
  EXPECT_EQ(BalanceOf("player:bob"), 1006);
  ExpectAuditOk();
}

// A pot first credited by a later item of the batch is still unknown to an earlier item
// that debits it (items run in key order: "a" before "b"), and a refused item that would
// have created a pot leaves no pot behind.
TEST_F(PgLedgerTest, PotsCreatedInABatchExistOnlyThroughAppliedItems) {
  const std::vector<TransferRecord> batch = {
      Record("b-credit", {{"player:alice", -30}, {"pot:t9:1", 30}}, {"pot:t9:1"}),
      Record("a-debit", {{"pot:t9:1", -5}, {"player:bob", 5}}),
      Record("c-refused", {{"player:carol", -5000}, {"pot:t8:1", 5000}}, {"pot:t8:1"}),
  };
  absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> results =
      store_->ApplyBatch(Items(batch), Deadline());
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_TRUE((*results)[0].ok()) << (*results)[0].status();
  EXPECT_THAT((*results)[1], StatusIs(C::kNotFound, "unknown account pot:t9:1"));
  EXPECT_THAT((*results)[2], StatusIs(C::kFailedPrecondition));
  EXPECT_EQ(BalanceOf("pot:t9:1"), 30);
  EXPECT_EQ(*QueryInt(*pool_, "SELECT count(*) FROM wallet.accounts WHERE id = 'pot:t8:1'"), 0);
  EXPECT_EQ(BalanceOf("player:bob"), 1000);
  ExpectAuditOk();
}

// A batch where every item applies goes through apply_transfers' fast path: items apply in
// key order (m1 before m2, whatever the arrival order), each balance_after is the running
// balance, and a pot created by the batch is credited by it.
TEST_F(PgLedgerTest, AllAppliedBatchKeepsRunningBalancesInKeyOrder) {
  const int64_t house1 =
      *QueryInt(*pool_, "SELECT balance FROM wallet.accounts WHERE id = 'house:1'");
  const std::vector<TransferRecord> batch = {
      Record("m2", {{"player:alice", -10}, {"player:bob", 10}}),
      Record("m1", {{"player:alice", -990}, {"player:carol", 990}}),
      Record("m3", {{"player:carol", -90}, {"house:1", -10}, {"pot:t5:1", 100}}, {"pot:t5:1"}),
  };
  absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> results =
      store_->ApplyBatch(Items(batch), Deadline());
  ASSERT_TRUE(results.ok()) << results.status();
  for (const auto& r : *results) ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*results)[1]->balances_after,
              ::testing::ElementsAre(AccountBalance{"player:alice", 10},
                                     AccountBalance{"player:carol", 1990}));
  EXPECT_THAT((*results)[0]->balances_after,
              ::testing::ElementsAre(AccountBalance{"player:alice", 0},
                                     AccountBalance{"player:bob", 1010}));
  EXPECT_THAT((*results)[2]->balances_after,
              ::testing::ElementsAre(AccountBalance{"house:1", house1 - 10},
                                     AccountBalance{"player:carol", 1900},
                                     AccountBalance{"pot:t5:1", 100}));
  EXPECT_LT((*results)[1]->transfer_id, (*results)[0]->transfer_id);
  EXPECT_LT((*results)[0]->transfer_id, (*results)[2]->transfer_id);
  EXPECT_EQ(BalanceOf("player:alice"), 0);
  ExpectAuditOk();
}

// Overdraft is judged after each item in key order, not on the batch's net: n1 would take
// alice below zero before n2 pays her, so n1 is refused (and n2 applies).
TEST_F(PgLedgerTest, OverdraftIsJudgedItemByItemNotOnTheBatchNet) {
  const std::vector<TransferRecord> batch = {
      Record("n2", {{"player:bob", -600}, {"player:alice", 600}}),
      Record("n1", {{"player:alice", -1500}, {"player:carol", 1500}}),
  };
  absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> results =
      store_->ApplyBatch(Items(batch), Deadline());
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_TRUE((*results)[0].ok()) << (*results)[0].status();
  EXPECT_THAT((*results)[1],
              StatusIs(C::kFailedPrecondition, "account player:alice would go below zero"));
  EXPECT_EQ(BalanceOf("player:alice"), 1600);
  EXPECT_EQ(BalanceOf("player:carol"), 1000);
  ExpectAuditOk();
}

// Keys, fingerprints and reasons travel as array literals: quotes, backslashes, commas and
// braces must arrive as sent.
TEST_F(PgLedgerTest, BatchTextWithQuotesAndBackslashesRoundTrips) {
  const TransferRecord r = Record(R"(k"1\,{x})", {{"player:alice", -1}, {"player:bob", 1}}, {},
                                  R"(a "quoted" \ reason, {braces})");
  absl::StatusOr<std::vector<absl::StatusOr<AppliedTransfer>>> results =
      store_->ApplyBatch({&r}, Deadline());
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_TRUE((*results)[0].ok()) << (*results)[0].status();
  EXPECT_EQ(*QueryInt(*pool_,
                      "SELECT count(*) FROM wallet.transfers WHERE idempotency_key = $1 AND "
                      "reason = $2 AND fingerprint = $3",
                      {r.idempotency_key, r.metadata.reason, r.fingerprint}),
            1);
}

// Waits (bounded) until a backend of `application_name` other than `other_than` waits for
// a lock, and returns its pid (0 if none did). A terminated backend may still show as
// waiting for a moment, hence `other_than`.
int64_t WaitForLockWaiter(storage::PgPool& admin, const std::string& dbname,
                          const std::string& application_name, int64_t other_than) {
  for (int i = 0; i < 2000; ++i) {
    absl::StatusOr<int64_t> pid =
        QueryInt(admin,
                 "SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE datname = $1 AND "
                 "application_name = $2 AND wait_event_type = 'Lock' AND pid <> $3",
                 {dbname, application_name, other_than});
    if (!pid.ok()) return 0;
    if (*pid != 0) return *pid;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return 0;
}

// A batch whose backend is killed mid-statement (pg_terminate_backend while it waits for
// bob's row): every item of it is UNAVAILABLE, nothing moved; the clients' retries with
// their keys apply each once and the audit is clean.
TEST_F(PgLedgerTest, KilledBackendDuringABatchFailsEveryItemAndRetriesApplyOnce) {
  constexpr char kVictim[] = "wallet-batch-victim";
  storage::PgPoolOptions options = db_->PoolOptions();
  options.application_name = kVictim;
  storage::PgPool victim_pool(options);
  PgLedgerStore victim_store(victim_pool);
  BatchingLedgerStore batching(victim_store, RealClock::Instance(), BatchOptions{});
  LedgerOptions once = ledger_options_;
  once.store_attempts_max = 1;  // the client sees the batch's failure
  Ledger victim(batching, RealClock::Instance(), once);
  storage::PgPool admin({.url = db_->admin_url(), .size_max = 1});

  absl::Notification locked;
  absl::Notification release;
  std::thread holder([&] {
    absl::Status held = pool_->Run([&](storage::PgTransaction& tx) -> absl::Status {
      RETURN_IF_ERROR(
          tx.Exec("UPDATE wallet.accounts SET balance = balance WHERE id = 'player:bob'").status());
      locked.Notify();
      release.WaitForNotification();
      return absl::OkStatus();
    });
    EXPECT_TRUE(held.ok()) << held;
  });
  locked.WaitForNotification();
  const std::vector<TransferRequest> requests = {
      {"x1",
       {{"player:alice", Side::kDebit, 10}, {"player:bob", Side::kCredit, 10}},
       {"t1", 1, ""}},
      {"x2",
       {{"player:carol", Side::kDebit, 20}, {"player:bob", Side::kCredit, 20}},
       {"t1", 1, ""}},
      {"x3", {{"player:bob", Side::kDebit, 5}, {"player:dave", Side::kCredit, 5}}, {"t1", 1, ""}},
  };
  std::vector<absl::Status> statuses(requests.size());
  std::vector<std::thread> clients;
  clients.emplace_back([&] { statuses[0] = victim.Transfer(requests[0], Deadline()).status(); });
  const int64_t first = WaitForLockWaiter(admin, db_->name(), kVictim, 0);
  ASSERT_NE(first, 0) << "batch [x1] never waited for bob";
  for (size_t i = 1; i < requests.size(); ++i) {
    clients.emplace_back(
        [&, i] { statuses[i] = victim.Transfer(requests[i], Deadline()).status(); });
  }
  batching.WaitUntilQueuedForTest(2);  // x2 and x3 will be one batch
  EXPECT_EQ(*QueryInt(admin, "SELECT count(*) FROM pg_terminate_backend($1) t WHERE t", {first}),
            1);
  const int64_t second = WaitForLockWaiter(admin, db_->name(), kVictim, first);
  EXPECT_NE(second, 0) << "batch [x2, x3] never waited for bob";
  EXPECT_EQ(*QueryInt(admin, "SELECT count(*) FROM pg_terminate_backend($1) t WHERE t", {second}),
            1);
  for (std::thread& t : clients) t.join();
  release.Notify();
  holder.join();
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_THAT(statuses[i], StatusIs(C::kUnavailable)) << i;
    EXPECT_EQ(TransfersWithKey(*pool_, requests[i].idempotency_key), 0);
  }
  EXPECT_EQ(BalanceOf("player:bob"), 1000);

  // The clients retry with their keys (through group commit again): each applies once.
  for (const TransferRequest& r : requests) {
    absl::StatusOr<TransferResult> retried = victim.Transfer(r, Deadline());
    ASSERT_TRUE(retried.ok()) << retried.status();
    EXPECT_FALSE(retried->replayed);
    absl::StatusOr<TransferResult> again = victim.Transfer(r, Deadline());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(again->replayed);
  }
  EXPECT_EQ(BalanceOf("player:alice"), 990);
  EXPECT_EQ(BalanceOf("player:bob"), 1025);
  EXPECT_EQ(BalanceOf("player:carol"), 980);
  EXPECT_EQ(BalanceOf("player:dave"), 1005);
  ExpectAuditOk();
}

TEST(PgLedgerUnreachableTest, UnreachablePostgresIsUnavailable) {
  // Nothing listens on port 1: every connect is refused at once.
  storage::PgPool pool({.url = "postgresql://postgres@127.0.0.1:1/none", .size_max = 2});
  PgLedgerStore store(pool);
  Ledger ledger(store, RealClock::Instance(), LedgerOptions());
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  EXPECT_THAT(ledger.Transfer(Stakes("k1"), deadline), StatusIs(C::kUnavailable));
  EXPECT_THAT(ledger.GetBalance("house", deadline), StatusIs(C::kUnavailable));
  EXPECT_THAT(ledger.OpenAccount("zoe", deadline), StatusIs(C::kUnavailable));
}

// Many workers move coins between a few hot accounts (four players, two shared pots, the
// house), each request sent twice with its key, while another thread keeps killing the
// store's Postgres backends. Every key must move coins exactly once: the final balances are
// exactly what the keys that succeeded add up to, and the audit passes.
TEST_F(PgLedgerTest, HotAccountsUnderRetriesAndKilledBackendsMoveEachKeyOnce) {
  HotAccountsStress();
}

// The same through group commit: batches of up to 8, four batches committing at once on
// the same hot rows (the house shards, two pots): they must neither deadlock nor lose or
// double a coin.
TEST_F(PgLedgerTest, HotAccountsInConcurrentBatchesMoveEachKeyOnce) {
  batching_ = std::make_unique<BatchingLedgerStore>(
      *store_, RealClock::Instance(), BatchOptions{.transfers_max = 8, .batches_in_flight_max = 4});
  ledger_ = std::make_unique<Ledger>(*batching_, RealClock::Instance(), ledger_options_);
  HotAccountsStress();
}

void PgLedgerTest::HotAccountsStress() {
  const std::vector<std::string> players = {"player:alice", "player:bob", "player:carol",
                                            "player:dave"};
  const std::vector<std::string> pots = {"pot:hot:0", "pot:hot:1"};
  constexpr int kWorkers = 8;
  constexpr int kTransfersPerWorker = 60;
  std::mutex mu;
  std::map<std::string, int64_t> expected;  // account -> net of successful keys
  int succeeded = 0;
  int transient_retries = 0;
  std::atomic<bool> stop = false;
  storage::PgPool admin({.url = db_->admin_url(), .size_max = 1});
  int64_t killed_total = 0;
  std::thread killer([&] {  // a few rounds of kills while the workers run
    for (int round = 0; round < 6 && !stop; ++round) {
      absl::SleepFor(absl::Milliseconds(150));
      absl::StatusOr<int64_t> killed = testing::TerminateBackends(admin, db_->name(), kAppName);
      ASSERT_TRUE(killed.ok()) << killed.status();
      killed_total += *killed;
    }
  });
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      std::mt19937 rng(1234 + w);
      for (int i = 0; i < kTransfersPerWorker; ++i) {
        const std::string& from_player = players[rng() % players.size()];
        const std::string& to_player = players[rng() % players.size()];
        const std::string& pot = pots[rng() % pots.size()];
        const int64_t amount = 1 + rng() % 40;
        TransferRequest r{absl::StrCat("w", w, ":", i), {}, {"hot", i, "mix"}};
        switch (rng() % 3) {
          case 0:  // a player and a bot stake into a hot pot
            r.legs = {{from_player, Side::kDebit, amount},
                      {"house", Side::kDebit, amount},
                      {pot, Side::kCredit, 2 * amount}};
            break;
          case 1:  // a hot pot pays a player and the house
            r.legs = {{pot, Side::kDebit, 2 * amount},
                      {to_player, Side::kCredit, amount},
                      {"house", Side::kCredit, amount}};
            break;
          default:  // player to player (skip self-transfers: an account may appear once)
            if (from_player == to_player) continue;
            r.legs = {{from_player, Side::kDebit, amount}, {to_player, Side::kCredit, amount}};
        }
        // Each request is sent twice with its key; transient failures are retried.
        bool ok = false;
        int64_t first_id = 0;
        int sends = 0;
        for (int attempt = 0; attempt < 40 && sends < 2; ++attempt) {
          absl::StatusOr<TransferResult> result = ledger_->Transfer(r, Deadline());
          if (absl::IsUnavailable(result.status()) || absl::IsAborted(result.status())) {
            std::lock_guard<std::mutex> lock(mu);
            ++transient_retries;
            continue;
          }
          ++sends;
          if (!result.ok()) {
            ASSERT_THAT(result, StatusIs(::testing::AnyOf(C::kFailedPrecondition, C::kNotFound)));
          } else if (ok) {
            EXPECT_TRUE(result->replayed);
            EXPECT_EQ(result->transfer_id, first_id);
          } else {
            ok = true;
            first_id = result->transfer_id;
          }
        }
        ASSERT_EQ(sends, 2);
        if (!ok) continue;
        std::lock_guard<std::mutex> lock(mu);
        ++succeeded;
        for (const Leg& leg : r.legs) {
          expected[leg.account_id] += leg.side == Side::kDebit ? -leg.amount : leg.amount;
        }
      }
    });
  }
  for (std::thread& t : workers) t.join();
  stop = true;
  killer.join();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_GT(succeeded, kWorkers * kTransfersPerWorker / 3);
  EXPECT_GT(killed_total, 0);
  ledger_.reset();
  batching_.reset();
  pool_ = std::make_unique<storage::PgPool>(db_->PoolOptions());  // no killed connections
  store_ = std::make_unique<PgLedgerStore>(*pool_);
  ledger_ = std::make_unique<Ledger>(*store_, RealClock::Instance(), ledger_options_);
  EXPECT_EQ(*QueryInt(*pool_,
                      "SELECT count(*) FROM wallet.transfers WHERE idempotency_key "
                      "~ '^w[0-9]+:'"),
            succeeded);
  for (const std::string& p : players) EXPECT_EQ(BalanceOf(p), 1000 + expected[p]) << p;
  for (const std::string& p : pots) {
    if (expected.count(p) > 0) {
      EXPECT_EQ(BalanceOf(p), expected[p]) << p;
    }
  }
  EXPECT_EQ(BalanceOf("house"), -4000 + expected["house"]);
  ExpectAuditOk();
  std::printf("succeeded=%d transient_retries=%d killed_backends=%lld\n", succeeded,
              transient_retries, static_cast<long long>(killed_total));
}

}  // namespace
}  // namespace courtpiece::wallet
