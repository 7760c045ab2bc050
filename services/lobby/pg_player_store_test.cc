// Integration tests of PgPlayerStore (and Accounts on it) on real Postgres
// (COURTPIECE_TEST_PG_URL), a fresh database per test.
#include "services/lobby/pg_player_store.h"

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/auth/keys.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/common/status_macros.h"
#include "courtpiece/storage/testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/lobby/accounts.h"
#include "services/lobby/fake_wallet_port.h"

namespace courtpiece::lobby {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<int64_t> QueryInt(storage::PgPool& pool, const std::string& sql,
                                 std::vector<storage::PgParam> params = {}) {
  int64_t value = 0;
  absl::Status s = pool.Run([&](storage::PgTransaction& tx) -> absl::Status {
    ASSIGN_OR_RETURN(storage::PgRow row, tx.ExecOneRow(sql, params));
    ASSIGN_OR_RETURN(value, row.Int64(0));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return value;
}

class PgPlayerStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db = storage::TestDatabase::Create(
        {.migrations = {
             {"lobby", ::courtpiece::common::SourceDir() + "/services/lobby/migrations"}}});
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    storage::PgPoolOptions options = db_->PoolOptions();
    options.size_max = 16;
    pool_ = std::make_unique<storage::PgPool>(options);
    store_ = std::make_unique<PgPlayerStore>(*pool_);
  }

  int64_t Count(const std::string& sql) {
    absl::StatusOr<int64_t> n = QueryInt(*pool_, sql);
    EXPECT_TRUE(n.ok()) << n.status();
    return n.value_or(-1);
  }

  absl::Time Deadline() const { return absl::Now() + absl::Seconds(10); }

  std::unique_ptr<storage::TestDatabase> db_;
  std::unique_ptr<storage::PgPool> pool_;
  std::unique_ptr<PgPlayerStore> store_;
  const absl::Time now_ = absl::FromUnixMillis(1'800'000'000'123);
};

TEST_F(PgPlayerStoreTest, SignInCreatesThenFindsAndStoresOnlyTheHash) {
  const std::string hash = auth::SecretHash("courtpiece-device-v1", std::string(40, 'd'));
  absl::StatusOr<SignInResult> first =
      store_->SignIn(hash, {.player_id = "p-1", .display_name = "علی", .avatar_id = 3},
                     std::nullopt, now_, Deadline());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->player.player_id, "p-1");
  EXPECT_EQ(first->player.display_name, "علی");
  EXPECT_EQ(first->player.avatar_id, 3);
  EXPECT_EQ(first->player.role, auth::Role::kPlayer);
  EXPECT_FALSE(first->player.wallet_opened);
  EXPECT_EQ(first->player.created_at, now_);
  absl::StatusOr<SignInResult> again =
      store_->SignIn(hash, {.player_id = "p-2", .display_name = "Other"}, std::nullopt,
                     now_ + absl::Hours(1), Deadline());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->player.player_id, "p-1");
  EXPECT_EQ(again->player.display_name, "علی");
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.players"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.devices WHERE length(secret_hash) = 32 AND "
                  "last_login_at = timestamptz 'epoch' + 1800003600123 * interval '1 ms'"),
            1);
  // A candidate id that is taken: AlreadyExists, nothing written.
  absl::StatusOr<SignInResult> clash =
      store_->SignIn(auth::SecretHash("courtpiece-device-v1", std::string(40, 'e')),
                     {.player_id = "p-1", .display_name = "Clash"}, std::nullopt, now_, Deadline());
  EXPECT_EQ(clash.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.devices"), 1);
}

TEST_F(PgPlayerStoreTest, ConcurrentSignInsOfOneDeviceMakeOnePlayer) {
  const std::string hash = auth::SecretHash("courtpiece-device-v1", std::string(40, 'c'));
  constexpr int kThreads = 12;
  std::vector<absl::StatusOr<SignInResult>> results(kThreads);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      results[i] =
          store_->SignIn(hash, {.player_id = absl::StrCat("p-", i), .display_name = "Racer"},
                         std::nullopt, now_, Deadline());
    });
  }
  go = true;
  for (std::thread& t : threads) t.join();
  std::set<std::string> ids;
  int created = 0;
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status();
    ids.insert(r->player.player_id);
    created += r->created ? 1 : 0;
  }
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(created, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.players"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.devices"), 1);
}

TEST_F(PgPlayerStoreTest, ConcurrentGuestLoginsOfOneDevicePayOneGrant) {
  FakeClock clock(absl::Now());
  auth::TokenSigner signer(auth::SigningKey::Generate("k1"), clock);
  FakeWalletPort wallet(1000);
  Accounts accounts(*store_, wallet, signer, clock, {});
  constexpr int kThreads = 12;
  std::vector<absl::StatusOr<Session>> sessions(kThreads);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  const std::string device(64, 'x');
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      sessions[i] = accounts.GuestLogin(device, "Racer", absl::Now() + absl::Seconds(10));
    });
  }
  go = true;
  for (std::thread& t : threads) t.join();
  std::set<std::string> ids;
  for (const auto& s : sessions) {
    ASSERT_TRUE(s.ok()) << s.status();
    ids.insert(s->player_id);
  }
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(wallet.grants_paid(), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.players WHERE wallet_opened"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.refresh_tokens"), kThreads);
}

TEST_F(PgPlayerStoreTest, RefreshTokensAreSingleUseAndExpire) {
  ASSERT_TRUE(store_
                  ->SignIn(std::string(32, 'h'), {.player_id = "p-1", .display_name = "Ali"},
                           std::nullopt, now_, Deadline())
                  .ok());
  const std::string t1(32, '1'), t2(32, '2'), t3(32, '3');
  absl::StatusOr<PlayerRecord> issued = store_->IssueRefreshToken(
      {.token_hash = t1, .player_id = "p-1", .expires_at = now_ + absl::Hours(1)}, true, now_,
      Deadline());
  ASSERT_TRUE(issued.ok()) << issued.status();
  EXPECT_TRUE(issued->wallet_opened);
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.players WHERE wallet_opened"), 1);
  EXPECT_EQ(
      store_
          ->IssueRefreshToken(
              {.token_hash = t3, .player_id = "p-nobody", .expires_at = now_ + absl::Hours(1)},
              false, now_, Deadline())
          .status()
          .code(),
      absl::StatusCode::kNotFound);

  absl::StatusOr<PlayerRecord> rotated = store_->RotateRefreshToken(
      t1, {.token_hash = t2, .player_id = "", .expires_at = now_ + absl::Hours(2)},
      now_ + absl::Minutes(1), Deadline());
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  EXPECT_EQ(rotated->player_id, "p-1");
  absl::StatusOr<PlayerRecord> reused = store_->RotateRefreshToken(
      t1, {.token_hash = t3, .player_id = "", .expires_at = now_ + absl::Hours(2)},
      now_ + absl::Minutes(2), Deadline());
  EXPECT_EQ(reused.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(reused.status().message()), HasSubstr("used"));
  EXPECT_THAT(std::string(store_
                              ->RotateRefreshToken(t3,
                                                   {.token_hash = std::string(32, '4'),
                                                    .player_id = "",
                                                    .expires_at = now_ + absl::Hours(2)},
                                                   now_, Deadline())
                              .status()
                              .message()),
              HasSubstr("unknown"));
  absl::StatusOr<PlayerRecord> expired = store_->RotateRefreshToken(
      t2, {.token_hash = t3, .player_id = "", .expires_at = now_ + absl::Hours(5)},
      now_ + absl::Hours(2), Deadline());
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(expired.status().message()), HasSubstr("expired"));
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.refresh_tokens"), 2);
  // Issuing drops the player's expired tokens.
  ASSERT_TRUE(store_
                  ->IssueRefreshToken(
                      {.token_hash = t3, .player_id = "p-1", .expires_at = now_ + absl::Hours(30)},
                      false, now_ + absl::Hours(3), Deadline())
                  .ok());
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.refresh_tokens"), 1);
}

TEST_F(PgPlayerStoreTest, AReturningDeviceGetsItsRefreshTokenInTheSameStatement) {
  const std::string hash(32, 'h');
  const RefreshTokenRecord token{
      .token_hash = std::string(32, 't'), .player_id = "", .expires_at = now_ + absl::Hours(1)};
  absl::StatusOr<SignInResult> created =
      store_->SignIn(hash, {.player_id = "p-1", .display_name = "Ali"}, token, now_, Deadline());
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_FALSE(created->refresh_issued);  // a new player: the wallet comes first
  absl::StatusOr<SignInResult> not_open =
      store_->SignIn(hash, {.player_id = "p-2", .display_name = "Ali"}, token, now_, Deadline());
  ASSERT_TRUE(not_open.ok());
  EXPECT_FALSE(not_open->refresh_issued);  // the wallet account is not open yet
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.refresh_tokens"), 0);
  ASSERT_TRUE(store_
                  ->IssueRefreshToken({.token_hash = std::string(32, 'o'),
                                       .player_id = "p-1",
                                       .expires_at = now_ + absl::Minutes(1)},
                                      true, now_, Deadline())
                  .ok());
  absl::StatusOr<SignInResult> returning =
      store_->SignIn(hash, {.player_id = "p-3", .display_name = "Ali"}, token,
                     now_ + absl::Minutes(5), Deadline());
  ASSERT_TRUE(returning.ok()) << returning.status();
  EXPECT_TRUE(returning->refresh_issued);
  EXPECT_FALSE(returning->created);
  EXPECT_EQ(returning->player.player_id, "p-1");
  // The expired token ('o') was dropped, the new one stored.
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.refresh_tokens"), 1);
  EXPECT_TRUE(store_
                  ->RotateRefreshToken(std::string(32, 't'),
                                       {.token_hash = std::string(32, 'u'),
                                        .player_id = "",
                                        .expires_at = now_ + absl::Hours(2)},
                                       now_ + absl::Minutes(6), Deadline())
                  .ok());
}

TEST_F(PgPlayerStoreTest, ConcurrentRefreshesWithOneTokenSucceedOnce) {
  ASSERT_TRUE(store_
                  ->SignIn(std::string(32, 'h'), {.player_id = "p-1", .display_name = "Ali"},
                           std::nullopt, now_, Deadline())
                  .ok());
  ASSERT_TRUE(store_
                  ->IssueRefreshToken({.token_hash = std::string(32, 'o'),
                                       .player_id = "p-1",
                                       .expires_at = now_ + absl::Hours(1)},
                                      true, now_, Deadline())
                  .ok());
  constexpr int kThreads = 8;
  std::atomic<int> ok{0}, unauthenticated{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      absl::StatusOr<PlayerRecord> r = store_->RotateRefreshToken(
          std::string(32, 'o'),
          {.token_hash = std::string(31, 'n') + static_cast<char>('a' + i),
           .player_id = "",
           .expires_at = now_ + absl::Hours(2)},
          now_, Deadline());
      if (r.ok()) ++ok;
      if (r.status().code() == absl::StatusCode::kUnauthenticated) ++unauthenticated;
    });
  }
  go = true;
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(unauthenticated.load(), kThreads - 1);
  EXPECT_EQ(Count("SELECT count(*) FROM lobby.refresh_tokens WHERE used_at IS NULL"), 1);
}

TEST_F(PgPlayerStoreTest, ProfileReadsAndUpdates) {
  ASSERT_TRUE(store_
                  ->SignIn(std::string(32, 'h'), {.player_id = "p-1", .display_name = "Ali"},
                           std::nullopt, now_, Deadline())
                  .ok());
  absl::StatusOr<PlayerRecord> p =
      store_->UpdateProfile("p-1", std::nullopt, 9, now_ + absl::Minutes(1), Deadline());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->display_name, "Ali");
  EXPECT_EQ(p->avatar_id, 9);
  p = store_->UpdateProfile("p-1", std::string("राहुल"), std::nullopt, now_, Deadline());
  EXPECT_EQ(p->display_name, "राहुल");
  EXPECT_EQ(p->avatar_id, 9);
  EXPECT_EQ(store_->GetPlayer("p-1", Deadline())->display_name, "राहुल");
  EXPECT_EQ(store_->GetPlayer("p-2", Deadline()).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->UpdateProfile("p-2", std::string("X1"), std::nullopt, now_, Deadline())
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

TEST_F(PgPlayerStoreTest, GetPlayersReadsTheKnownOnesInByteOrder) {
  // Ids whose byte order differs from a locale's ("B" < "_" < "a" in bytes).
  const std::vector<std::string> ids = {"p-a", "p-B", "p_x", "p-a9"};
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(store_
                    ->SignIn(std::string(32, static_cast<char>('h' + i)),
                             {.player_id = ids[i],
                              .display_name = "N" + std::to_string(i),
                              .avatar_id = static_cast<int>(i) + 1},
                             std::nullopt, now_, Deadline())
                    .ok());
  }
  absl::StatusOr<std::vector<PlayerRecord>> got =
      store_->GetPlayers({"p-a", "bot-1", "p_x", "p-B", "p-nobody", "p-a9"}, Deadline());
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<std::string> order;
  for (const PlayerRecord& p : *got) order.push_back(p.player_id);
  EXPECT_EQ(order, (std::vector<std::string>{"p-B", "p-a", "p-a9", "p_x"}));
  EXPECT_EQ((*got)[1].display_name, "N0");
  EXPECT_EQ((*got)[1].avatar_id, 1);
  EXPECT_EQ((*got)[3].display_name, "N2");
  EXPECT_EQ((*got)[3].avatar_id, 3);
  EXPECT_EQ((*got)[0].created_at, now_);
  // No match, no ids, and ids that would split or break an unquoted array literal: empty.
  for (const std::vector<std::string>& none :
       {std::vector<std::string>{"bot-0", "bot-3"}, std::vector<std::string>{},
        std::vector<std::string>{"p-a,p-B"}, std::vector<std::string>{"{p-a}", "\"p-B\"", "\\"}}) {
    got = store_->GetPlayers(none, Deadline());
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(got->empty()) << none.size();
  }
}

TEST_F(PgPlayerStoreTest, GrantsAndRevokesAreAudited) {
  ASSERT_TRUE(store_
                  ->SignIn(std::string(32, 'h'), {.player_id = "p-1", .display_name = "Ali"},
                           std::nullopt, now_, Deadline())
                  .ok());
  ASSERT_TRUE(store_->SetRole("p-1", auth::Role::kAdmin, "ops-ann", "on call").ok());
  EXPECT_EQ(store_->GetPlayer("p-1", Deadline())->role, auth::Role::kAdmin);
  absl::Status twice = store_->SetRole("p-1", auth::Role::kAdmin, "ops-ann", "again");
  EXPECT_EQ(twice.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->SetRole("p-9", auth::Role::kAdmin, "ops", "x").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->SetRole("p-1", auth::Role::kPlayer, "ops", "").code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::vector<AdminEntry>> admins = store_->ListAdmins();
  ASSERT_TRUE(admins.ok()) << admins.status();
  ASSERT_EQ(admins->size(), 1u);
  EXPECT_EQ((*admins)[0].player_id, "p-1");
  EXPECT_EQ((*admins)[0].granted_by, "ops-ann");
  ASSERT_TRUE(store_->SetRole("p-1", auth::Role::kPlayer, "ops-ben", "rotation ended").ok());
  EXPECT_TRUE(store_->ListAdmins()->empty());
  absl::StatusOr<std::vector<AdminGrant>> grants = store_->ListGrants("p-1");
  ASSERT_TRUE(grants.ok());
  ASSERT_EQ(grants->size(), 2u);
  EXPECT_EQ((*grants)[0].action, "grant");
  EXPECT_EQ((*grants)[0].reason, "on call");
  EXPECT_EQ((*grants)[1].action, "revoke");
  EXPECT_EQ((*grants)[1].operator_name, "ops-ben");
  EXPECT_EQ((*grants)[1].reason, "rotation ended");
  absl::Status tamper = pool_->Run([](storage::PgTransaction& tx) {
    return tx.Exec("DELETE FROM lobby.admin_grants").status();
  });
  EXPECT_FALSE(tamper.ok());
  EXPECT_EQ(store_->ListGrants("")->size(), 2u);
}

}  // namespace
}  // namespace courtpiece::lobby
