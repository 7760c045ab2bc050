#include "tests/system/players.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_status.h"
#include "gtest/gtest.h"
#include "services/table/testing/play_client.h"

namespace courtpiece::system_test {

namespace cv1 = ::courtpiece::client::v1;
namespace pb = ::courtpiece::table::v1;
using gateway::testing::ScriptedPlayer;
using gateway::testing::ScriptedPlayerOptions;

namespace {

absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

}  // namespace

std::vector<pb::TableEvent> Player::Events() const {
  std::vector<pb::TableEvent> out;
  for (const cv1::TableEvent& e : play->events()) {
    pb::TableEvent copy;
    copy.ParseFromString(e.SerializeAsString());
    out.push_back(std::move(copy));
  }
  return out;
}

absl::Status Login(const Suite& suite, Player& p) {
  cv1::GuestLoginRequest request;
  request.set_device_secret(absl::StrCat("device-", p.name, "-0123456789abcdef0123456789"));
  request.set_display_name(p.name);
  if (p.web) {
    absl::StatusOr<cv1::Session> session =
        suite.NewHttp()->Call<cv1::Session>("GuestLogin", request);
    if (!session.ok()) return session.status();
    p.session = *session;
    return absl::OkStatus();
  }
  grpc::ClientContext context;
  common::SetTimeout(context, kRpc);
  return FromGrpc(suite.NewClient()->GuestLogin(&context, request, &p.session));
}

std::unique_ptr<grpc::ClientContext> As(const Player& p) {
  auto context = std::make_unique<grpc::ClientContext>();
  common::SetTimeout(*context, kRpc);
  context->AddMetadata("authorization", "Bearer " + p.session.access_token());
  return context;
}

absl::StatusOr<int64_t> CoinsOf(const Suite& suite, const Player& p) {
  cv1::Profile profile;
  absl::Status s =
      FromGrpc(suite.NewClient()->GetProfile(As(p).get(), cv1::GetProfileRequest(), &profile));
  if (!s.ok()) return s;
  return profile.coins();
}

absl::StatusOr<cv1::StatsResponse> StatsOf(const Suite& suite, const Player& p) {
  cv1::StatsResponse stats;
  absl::Status s =
      FromGrpc(suite.NewClient()->GetStats(As(p).get(), cv1::GetStatsRequest(), &stats));
  if (!s.ok()) return s;
  return stats;
}

absl::StatusOr<std::unique_ptr<Game>> SeatGame(const Suite& suite, const std::string& name,
                                               const std::string& game_options,
                                               SeatOptions options) {
  auto game = std::make_unique<Game>();
  game->name = name;
  game->options = game_options;
  for (int i = 0; i < 4; ++i) {
    auto p = std::make_unique<Player>();
    p->name = absl::StrCat(name, "P", i);
    p->web = i % 2 == 1;
    if (absl::Status s = Login(suite, *p); !s.ok()) return s;
    absl::StatusOr<int64_t> coins = CoinsOf(suite, *p);
    if (!coins.ok()) return coins.status();
    p->coins_before = *coins;
    game->players.push_back(std::move(p));
  }
  cv1::CreateTableRequest create;
  create.set_request_id("table-" + name);
  create.mutable_options()->set_game_options(game_options);
  create.mutable_options()->set_bet_coins(kBet);
  // The longest turn (30 s): on a loaded CI machine a client must never time out.
  create.mutable_options()->set_turn_time_ms(30'000);
  absl::Status created =
      FromGrpc(suite.NewClient()->CreateTable(As(*game->players[0]).get(), create, &game->ref));
  if (!created.ok()) return created;
  for (auto& p : game->players) {
    cv1::ResolveCodeRequest resolve;
    resolve.set_code(game->ref.code());
    cv1::TableRef found;
    absl::Status s = FromGrpc(suite.NewClient()->ResolveCode(As(*p).get(), resolve, &found));
    if (!s.ok()) return s;
    ScriptedPlayerOptions po;
    po.player_id = p->session.player_id();
    po.commands_per_second = 15;
    po.auto_reconnect = options.auto_reconnect;
    po.leave_at_game_over = options.leave_at_game_over;
    po.reconnect_timeout = absl::Seconds(60);
    if (p->web) po.open_access_token = p->session.access_token();
    p->play = std::make_unique<ScriptedPlayer>(
        p->name, p->web ? suite.WebSocketDialer() : suite.GrpcDialer(p->session.access_token()),
        po);
    absl::StatusOr<cv1::Opened> opened = p->play->Open(found.table_id());
    if (!opened.ok()) return opened.status();
    if (opened->seat() < 0) {
      if (absl::Status joined = p->play->Join(); !joined.ok()) return joined;
    }
    if (p->play->seat() < 0) return absl::InternalError(p->name + " is not seated");
  }
  if (!options.start) return game;
  cv1::TableCommand start_now;
  start_now.set_type("start_now");
  absl::StatusOr<cv1::CommandResult> start = game->players[0]->play->Send(start_now);
  if (!start.ok()) return start.status();
  if (start->code() != 0) return absl::InternalError("start_now: " + start->message());
  for (auto& p : game->players) p->play->Start();
  return game;
}

void ExpectCompleteStreams(const Game& g) {
  std::vector<std::vector<std::string>> tricks;
  for (const auto& p : g.players) {
    EXPECT_TRUE(p->play->CheckSeqs().ok())
        << g.name << " " << p->name << ": " << p->play->CheckSeqs();
    EXPECT_TRUE(p->play->faults().empty())
        << g.name << " " << p->name << ": " << p->play->faults().front();
    int played = 0;
    std::vector<std::string> mine;
    for (const pb::TableEvent& e : p->Events()) {
      if (e.type() == "round_started") played = 0;
      if (e.type() == "played") ++played;
      if (e.type() == "trick") {
        EXPECT_EQ(played, 4) << g.name << " " << p->name << " trick at seq " << e.seq();
        played = 0;
        // Seqs differ per seat (each seat's copy has its own): compare content.
        mine.push_back(absl::StrCat(e.seat(), ":", e.value(), ":", e.detail()));
      }
    }
    EXPECT_FALSE(mine.empty()) << g.name << " " << p->name;
    tricks.push_back(std::move(mine));
  }
  for (size_t i = 1; i < tricks.size(); ++i) {
    EXPECT_EQ(tricks[i], tricks[0])
        << g.name << " " << g.players[i]->name << ": " << TimeoutsAndAbsences(*g.players[i]);
  }
}

std::string TimeoutsAndAbsences(const Player& p) {
  std::string out;
  for (const pb::TableEvent& e : p.Events()) {
    if (e.type() == "timeout" || e.type() == "bot_driving" || e.type() == "away" ||
        e.type() == "presence" || e.type() == "back") {
      absl::StrAppend(&out, e.type(), "(seat ", e.seat(), " ", e.detail(), ") ");
    }
  }
  for (const cv1::Opened& o : p.play->opens()) {
    absl::StrAppend(&out, "opened(resumed ", o.resumed(), ") ");
  }
  return out.empty() ? "no timeouts or absences seen" : out;
}

void ExpectCoins(const Suite& suite, const Game& g, int skip_seat) {
  int rounds = 0;
  const std::vector<int64_t> delta =
      table_service::testing::CoinDeltasBySeat(g.players[0]->Events(), kBet, &rounds);
  EXPECT_GE(rounds, 1) << g.name;
  for (const auto& p : g.players) {
    const int seat = p->play->seat();
    if (seat == skip_seat) continue;
    ASSERT_GE(seat, 0) << g.name << " " << p->name;
    const int64_t want = p->coins_before + delta[seat];
    absl::StatusOr<int64_t> coins = CoinsOf(suite, *p);
    for (absl::Time until = absl::Now() + absl::Seconds(20);
         (!coins.ok() || *coins != want) && absl::Now() < until; coins = CoinsOf(suite, *p)) {
      absl::SleepFor(absl::Milliseconds(200));
    }
    ASSERT_TRUE(coins.ok()) << coins.status();
    EXPECT_EQ(*coins, want) << g.name << " " << p->name << " at seat " << seat << ": "
                            << TimeoutsAndAbsences(*g.players[0]);
  }
}

namespace {

std::string LastEvents(const Player& p, size_t n) {
  const std::vector<pb::TableEvent> events = p.Events();
  std::string out;
  for (size_t i = events.size() > n ? events.size() - n : 0; i < events.size(); ++i) {
    absl::StrAppend(&out, events[i].seq(), ":", events[i].type(), "(", events[i].seat(), " ",
                    events[i].detail(), ") ");
  }
  return out;
}

}  // namespace

std::string EndOf(const Player& p) {
  const std::optional<gateway::testing::StreamEnd> end = p.play->end();
  if (!end.has_value()) return "running";
  return absl::StrCat(p.play->ended() ? "ended for good: " : "ended: ", end->status.ToString(),
                      " ws ", end->ws_close_code, " ", end->ws_reason, "; reconnects ",
                      p.play->reconnects(), "; last events: ", LastEvents(p, 10));
}

int WinningTeam(const Player& p) {
  for (const pb::TableEvent& e : p.Events()) {
    if (e.type() == "game_over") return e.seat();
  }
  return -2;
}

void ExpectStats(const Suite& suite, const Player& p, const std::string& game, int64_t played,
                 int64_t won, int64_t lost, int64_t quits) {
  auto matches = [&](const cv1::GameTypeStats& s) {
    return s.played() == played && s.won() == won && s.lost() == lost && s.quits() == quits;
  };
  absl::StatusOr<cv1::StatsResponse> stats;
  for (absl::Time until = absl::Now() + absl::Seconds(20);;
       absl::SleepFor(absl::Milliseconds(200))) {
    stats = StatsOf(suite, p);
    if (stats.ok() && stats->by_game_size() == 1 && stats->by_game(0).game() == game &&
        matches(stats->by_game(0)) && matches(stats->total())) {
      return;
    }
    if (absl::Now() >= until) break;
  }
  ASSERT_TRUE(stats.ok()) << p.name << ": " << stats.status();
  ADD_FAILURE() << p.name << " wants " << game << " played " << played << " won " << won << " lost "
                << lost << " quits " << quits << "; the lobby has " << stats->DebugString();
}

void ExpectAuditClean(const Suite& suite) {
  absl::StatusOr<AuditResult> audit;
  for (absl::Time until = absl::Now() + absl::Seconds(20);;
       absl::SleepFor(absl::Milliseconds(250))) {
    audit = suite.Audit();
    if ((audit.ok() && audit->ok()) || absl::Now() >= until) break;
  }
  ASSERT_TRUE(audit.ok()) << audit.status();
  EXPECT_TRUE(audit->ok()) << audit->ToString();
  EXPECT_EQ(audit->ledger.sum_of_balances, 0);
}

}  // namespace courtpiece::system_test
