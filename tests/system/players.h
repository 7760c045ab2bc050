// People at tables through a Suite's gateway, for system tests: sign-in (gRPC or HTTP JSON),
// a table created by its host and found by its code, four scripted players (even seats on
// gRPC, odd on a WebSocket), and the checks every system test makes afterwards (complete
// event streams, coins as the round results imply, stats as the lobby keeps them).
// Thread-safety: one test thread; the scripted players run in their own threads.
#ifndef COURTPIECE_TESTS_SYSTEM_PLAYERS_H_
#define COURTPIECE_TESTS_SYSTEM_PLAYERS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/client/v1/client.grpc.pb.h"
#include "courtpiece/table/v1/table_service.pb.h"
#include "services/gateway/testing/scripted_player.h"
#include "tests/system/suite.h"

namespace courtpiece::system_test {

inline constexpr int64_t kBet = 25;
inline constexpr absl::Duration kRpc = absl::Seconds(5);

struct Player {
  std::string name;
  bool web = false;
  client::v1::Session session;
  std::unique_ptr<gateway::testing::ScriptedPlayer> play;
  int64_t coins_before = 0;

  // The events as the table service's messages (the client API mirrors them).
  std::vector<table::v1::TableEvent> Events() const;
};

struct Game {
  std::string name, options;
  client::v1::TableRef ref;
  std::vector<std::unique_ptr<Player>> players;  // players[0] is the host, at seat 0
};

struct SeatOptions {
  bool auto_reconnect = true;      // clients resume by themselves when a stream ends
  bool leave_at_game_over = true;  // so no second game stakes coins
  bool start = true;               // the host sends start_now and every player Start()s
};

absl::Status Login(const Suite& suite, Player& p);
// A call's context: deadline kRpc and `p`'s bearer token.
std::unique_ptr<grpc::ClientContext> As(const Player& p);
absl::StatusOr<int64_t> CoinsOf(const Suite& suite, const Player& p);
absl::StatusOr<client::v1::StatsResponse> StatsOf(const Suite& suite, const Player& p);

// Four players sign in (names <name>P0..P3), P0 creates the table (bet kBet, turn 30 s),
// each finds it by its code and sits; with options.start the host starts it.
absl::StatusOr<std::unique_ptr<Game>> SeatGame(const Suite& suite, const std::string& name,
                                               const std::string& game_options,
                                               SeatOptions options = {});

// gtest checks (EXPECT_*), each message naming the game and player:
// every stream: seqs strictly increasing per view, no fault, every trick after four cards,
// the same tricks seen by every seat.
void ExpectCompleteStreams(const Game& g);
// Each player's balance = coins_before + what the host's round results imply (waits up to
// 20 s for the last payout). `skip_seat`: a seat whose player is checked by the caller.
void ExpectCoins(const Suite& suite, const Game& g, int skip_seat = -1);
// The game_over's winning team on `p`'s stream, -2 when none.
int WinningTeam(const Player& p);
// Waits (up to 20 s) until the lobby's stats of `p` for `game` are exactly
// played/won/lost/quits and the totals agree; EXPECTs it.
void ExpectStats(const Suite& suite, const Player& p, const std::string& game, int64_t played,
                 int64_t won, int64_t lost, int64_t quits);
// The audit is clean and every pot empty (waits up to 20 s for late payouts).
void ExpectAuditClean(const Suite& suite);

// How `p`'s last stream ended ("running" while it runs), for failure messages.
std::string EndOf(const Player& p);
// What explains a coin mismatch: timeouts, bot driving, absences, resumes on one stream.
std::string TimeoutsAndAbsences(const Player& p);

}  // namespace courtpiece::system_test

#endif  // COURTPIECE_TESTS_SYSTEM_PLAYERS_H_
