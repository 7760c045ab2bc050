// A player that plays whole games through the gateway, over either transport
// (play_transport.h: WebSocket JSON or gRPC), as a real client would, without knowing the
// rules: the table decides what is legal.
//
//   ScriptedPlayer p("ann", [&] { return DialWs(...); });   // a Dialer: a fresh connection
//   p.Open(table_id);            // dial, open{table_id, 0}, wait for `opened`
//   p.Join();                    // `join` until seated (when opened.seat is -1)
//   p.Start();                   // plays in its own thread ...
//   p.WaitGameOver(absl::Minutes(3));
//   EXPECT_TRUE(p.CheckSeqs().ok());  // no event seq doubled or out of order
//
// The brain: keeps its seat's hand from `hand` (and `cards`) events (replacing it) and drops
// a card when `played` shows it played; a `turn` event naming its seat makes that turn due
// (remembered by the turn event's seq, so a turn is taken once, also across reconnects);
// for a due turn it tries candidates in order until one is answered OK: in the call phase
// (hand detail "first_five") call S, H, D, C then hide each card; else play the led suit's
// cards first, then the others, then ask, show, hide each card. A refusal INVALID_ARGUMENT /
// FAILED_PRECONDITION moves to the next candidate ("not your turn" / "no round in play"
// ends the turn); UNAVAILABLE (the gateway is moving the table) and RESOURCE_EXHAUSTED
// (rate limit) retry the turn later (200 ms / 1 s); any other code is a fault. Commands are
// paced under `commands_per_second`.
// Seqs: every event's seq is recorded per view: a view starts at each `opened` (resumed or
// not); CheckSeqs says whether every view's seqs strictly increase and a resumed view
// (opened.resumed, or the gateway's own resume between notices "reconnecting" and
// "reconnected") goes on above the previous one: no event doubled, none out of order. Lost
// events are seen by comparing across players the events every seat gets (turn, trick, ...;
// each seat's copy has its own seq, so compare their seats / details, not seqs).
// Reconnect: Reconnect() (or DropConnection() while Start()ed) drops the stream, dials again
// and opens with open{table_id, last_seq}; with auto_reconnect, a stream that ends
// UNAVAILABLE is reopened the same way (backoff 50 ms doubling to 1 s, for at most
// reconnect_timeout).
// Thread-safety: the synchronous calls (Open, Send, Join, Step, PlayUntil, Reconnect) from
// one thread at a time and not while Start()ed; observers (seat, hand, events, ...) and
// DropConnection, Stop, WaitUntil from any thread.
#ifndef COURTPIECE_SERVICES_GATEWAY_TESTING_SCRIPTED_PLAYER_H_
#define COURTPIECE_SERVICES_GATEWAY_TESTING_SCRIPTED_PLAYER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/client/v1/client.pb.h"
#include "grpcpp/channel.h"
#include "services/gateway/testing/play_transport.h"
#include "services/gateway/testing/ws_play_client.h"

namespace courtpiece::gateway::testing {

struct ScriptedPlayerOptions {
  std::string player_id;            // to recognise its own `seated` event; may stay ""
  double commands_per_second = 10;  // under the gateway's 20/s bucket; 0: no pacing
  absl::Duration command_timeout = absl::Seconds(10);
  absl::Duration open_timeout = absl::Seconds(10);
  bool auto_reconnect = true;  // a stream ending UNAVAILABLE: dial again, resume
  absl::Duration reconnect_timeout = absl::Seconds(30);
  bool leave_at_game_over = false;  // send `leave` after `game_over`
  std::string open_access_token;    // put in every open (a browser's WebSocket); "" none
};

// One view of the table: the events received after one `opened`.
struct SeqView {
  bool resumed = false;        // opened.resumed (or the gateway's own resume, `reconnected`)
  std::vector<uint64_t> seqs;  // in order of arrival
};

class ScriptedPlayer {
 public:
  using Dialer = std::function<absl::StatusOr<std::unique_ptr<PlayTransport>>()>;

  ScriptedPlayer(std::string name, Dialer dial, ScriptedPlayerOptions options = {});
  ~ScriptedPlayer();  // Stop()s and cancels the stream
  ScriptedPlayer(const ScriptedPlayer&) = delete;
  ScriptedPlayer& operator=(const ScriptedPlayer&) = delete;

  // --- synchronous use --------------------------------------------------------------------
  // Dials, sends open{table_id, last_seq}, waits for `opened`. A stream that ends first:
  // its status (NOT_FOUND, UNAUTHENTICATED, ...).
  absl::StatusOr<client::v1::Opened> Open(const std::string& table_id, uint64_t last_seq = 0);
  // Sends `command` with a fresh command_id and waits for its result, handling every other
  // message meanwhile (events update the view; turns are not taken here).
  absl::StatusOr<client::v1::CommandResult> Send(client::v1::TableCommand command);
  // `join` (retried on UNAVAILABLE); OK once seated.
  absl::Status Join();
  // Takes a due turn, then handles at most one message (waiting up to `timeout`). A stream
  // end: reconnects when it should (see above), else answers the end's status (OUT_OF_RANGE
  // "the stream ended (OK)" for a normal end, so a loop stops) and stays ended; end() has
  // the end itself.
  absl::Status Step(absl::Duration timeout);
  // Step()s until `done()` holds (OK), the stream ended for good (its status) or `timeout`
  // (DEADLINE_EXCEEDED).
  absl::Status PlayUntil(const std::function<bool()>& done, absl::Duration timeout);
  // Drops the stream, dials again, open{table_id, last_seq}, waits for `opened`.
  absl::Status Reconnect();
  // Ends the stream from the client's side.
  void Disconnect();

  // --- in its own thread --------------------------------------------------------------------
  void Start();  // Step()s until Stop() or the stream ends for good
  void Stop();
  void DropConnection();  // the thread drops its stream and Reconnect()s (client-side resume)
  bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout) const;
  bool WaitGameOver(absl::Duration timeout, int games = 1) const;

  // --- what it saw (copies) -----------------------------------------------------------------
  const std::string& name() const { return name_; }
  int seat() const;
  std::vector<std::string> hand() const;
  uint64_t last_seq() const;
  int games_over() const;
  bool left() const;  // a `leave` of leave_at_game_over was accepted
  int moves_ok() const;
  int moves_refused() const;
  int reconnects() const;
  std::vector<std::string> faults() const;             // unexpected answers, for assertions
  std::vector<client::v1::TableEvent> events() const;  // every event, every stream, in order
  std::vector<uint64_t> EventSeqs(const std::string& type) const;
  std::vector<SeqView> views() const;
  std::vector<client::v1::Opened> opens() const;
  std::vector<client::v1::Notice> notices() const;
  std::vector<client::v1::CommandResult> results() const;
  std::optional<StreamEnd> end() const;  // how the last stream ended, while ended
  bool ended() const;
  absl::Status CheckSeqs() const;

  // The candidate moves for a due turn (exposed for tests of the brain).
  static std::vector<client::v1::TableCommand> Candidates(const std::vector<std::string>& hand,
                                                          bool calling,
                                                          const std::string& led_suit);

 private:
  void Handle(const client::v1::PlayResponse& message);
  void HandleEvent(const client::v1::TableEvent& e);
  absl::Status OnStreamEnd();
  absl::StatusOr<client::v1::Opened> OpenOn(uint64_t last_seq);
  void MaybeAct();
  void Pace();
  absl::StatusOr<client::v1::CommandResult> SendLocked(client::v1::TableCommand command);
  void Fault(std::string what);

  const std::string name_;
  const Dialer dial_;
  const ScriptedPlayerOptions options_;

  // Touched by the stepping thread only.
  std::unique_ptr<PlayTransport> transport_;
  std::string table_id_;
  uint64_t next_command_id_ = 1;
  absl::Time last_send_ = absl::InfinitePast();
  absl::Time act_not_before_ = absl::InfinitePast();
  bool leave_due_ = false;

  std::atomic<bool> stop_{false};
  std::atomic<bool> drop_{false};
  std::thread thread_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  // Guarded by mu_.
  int seat_ = -1;
  std::vector<std::string> hand_;
  bool calling_ = false;
  std::string led_suit_;
  uint64_t turn_seq_ = 0;       // the seq of the due turn naming this seat, 0 for none
  uint64_t done_turn_seq_ = 0;  // the last turn taken
  uint64_t last_seq_ = 0;
  bool gateway_resuming_ = false;  // between notices "reconnecting" and "reconnected"
  bool left_ = false;
  int games_over_ = 0, moves_ok_ = 0, moves_refused_ = 0, reconnects_ = 0;
  std::vector<std::string> faults_;
  std::vector<client::v1::TableEvent> events_;
  std::vector<SeqView> views_;
  std::vector<client::v1::Opened> opens_;
  std::vector<client::v1::Notice> notices_;
  std::vector<client::v1::CommandResult> results_;
  std::optional<StreamEnd> end_;
};

// Dialers for the two transports: each call makes a new connection.
ScriptedPlayer::Dialer WebSocketDialer(WsOptions options);
ScriptedPlayer::Dialer GrpcDialer(std::shared_ptr<grpc::Channel> channel,
                                  std::string authorization);

}  // namespace courtpiece::gateway::testing

#endif  // COURTPIECE_SERVICES_GATEWAY_TESTING_SCRIPTED_PLAYER_H_
