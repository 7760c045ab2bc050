// A synchronous, scripted Play client for the table service's end-to-end tests, and an
// "auto player" that plays legal moves over it without knowing the rules.
//
//   PlayClient c("127.0.0.1:7002", "ann");
//   absl::StatusOr<table::v1::Opened> o = c.Open("t1", /*last_seq=*/0, absl::Seconds(5));
//   absl::StatusOr<table::v1::CommandResult> r = c.Send(JoinCommand(), absl::Seconds(5));
//   c.messages();        // every message received, in order (Opened, events, results...)
//   c.WaitEnd(absl::Seconds(5));  // how the stream ended: status + "courtpiece-owner-addr"
//
// A reader thread collects every message the server sends; the caller's thread writes. A
// client opens at most one stream in its life (a reconnect is a new PlayClient).
//
// AutoPlayer: tracks its hand from "hand" events (replacing it) and drops its own cards on
// "played"; when a "turn" event names its seat it tries candidate moves in a fixed order
// (call S/H/D/C, play each card of its hand with the led suit first, hide each card, ask,
// show) until one is answered OK, paced under `commands_per_second`. It never learns the
// rules: the service decides what is legal.
//
// Thread-safety: every method of both classes is safe from any thread.
#ifndef COURTPIECE_SERVICES_TABLE_TESTING_PLAY_CLIENT_H_
#define COURTPIECE_SERVICES_TABLE_TESTING_PLAY_CLIENT_H_

#include <atomic>
#include <chrono>
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
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace courtpiece::table_service::testing {

// How a Play stream ended.
struct StreamEnd {
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string message;
  std::string owner_addr;  // trailing metadata "courtpiece-owner-addr", "" when absent
};

class PlayClient {
 public:
  // `player` empty: no "courtpiece-player-id" metadata at all.
  PlayClient(std::string address, std::string player);
  ~PlayClient();  // cancels the stream if open and joins the reader
  PlayClient(const PlayClient&) = delete;
  PlayClient& operator=(const PlayClient&) = delete;

  // Starts the stream, sends `open`, waits for Opened. If the stream ends first, the
  // status of its end (e.g. NOT_FOUND); DeadlineExceeded when nothing came in time.
  absl::StatusOr<table::v1::Opened> Open(const std::string& table_id, uint64_t last_seq,
                                         absl::Duration timeout);
  // Starts the stream and writes `first` as the first message, without waiting.
  bool Start(const table::v1::PlayRequest& first);
  // Sends `command` with a fresh command_id (any id set is replaced) and waits for its
  // result. DeadlineExceeded without an answer in time; Unavailable if the stream ended.
  absl::StatusOr<table::v1::CommandResult> Send(table::v1::TableCommand command,
                                                absl::Duration timeout);
  // Writes any message as it is (for malformed input); false when the stream is closed.
  bool Write(const table::v1::PlayRequest& request);
  uint64_t NextCommandId();

  // Every message received so far, in order.
  std::vector<table::v1::PlayResponse> messages() const;
  size_t message_count() const;
  // Waits until `done(messages)` holds, the stream ends or `timeout` passes; returns
  // whether `done` held.
  bool WaitFor(const std::function<bool(const std::vector<table::v1::PlayResponse>&)>& done,
               absl::Duration timeout) const;
  // Waits for an event of `type` (after message index `from`); its index, or nullopt.
  std::optional<size_t> WaitForEvent(const std::string& type, absl::Duration timeout,
                                     size_t from = 0) const;
  // The largest event seq received (0 for none).
  uint64_t last_seq() const;
  // How the stream ended, once it has (waits up to `timeout`).
  std::optional<StreamEnd> WaitEnd(absl::Duration timeout) const;
  bool ended() const;
  // Ends the stream from the client side (a disconnect for the table).
  void Cancel();

  const std::string& player() const { return player_; }
  const std::string& address() const { return address_; }

 private:
  void ReadLoop();

  const std::string address_, player_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<table::v1::TableService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<table::v1::PlayRequest, table::v1::PlayResponse>>
      stream_;
  std::thread reader_;
  std::mutex write_mu_;
  bool writes_closed_ = false;  // guarded by write_mu_
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<table::v1::PlayResponse> messages_;  // guarded by mu_
  std::optional<StreamEnd> end_;                   // guarded by mu_
  uint64_t next_command_id_ = 1;                   // guarded by mu_
  uint64_t last_seq_ = 0;                          // guarded by mu_
};

struct AutoPlayerOptions {
  double commands_per_second = 15;  // stay under the service's per-stream limit
  absl::Duration command_timeout = absl::Seconds(10);
  bool leave_at_game_over = true;  // send `leave` after "game_over" (free between games)
};

class AutoPlayer {
 public:
  // Plays on `client` (already opened, seated or about to be) from message index `from`.
  AutoPlayer(PlayClient& client, AutoPlayerOptions options = {}, size_t from = 0);
  ~AutoPlayer();  // stops and joins
  AutoPlayer(const AutoPlayer&) = delete;
  AutoPlayer& operator=(const AutoPlayer&) = delete;

  void Stop();
  // Goes on playing on `client` (a reconnect: a new stream, maybe on another instance),
  // keeping what it knows (its seat, hand, the trick), from message index `from`.
  void Switch(PlayClient& client, size_t from = 0);
  // Waits until it has seen "game_over" (and left, when asked to) or the stream ended.
  bool WaitGameOver(absl::Duration timeout) const;
  bool game_over() const;
  int moves_ok() const;
  int moves_refused() const;  // candidates the service refused (not counted as faults)
  // Unexpected answers (anything but OK and the game's own refusals), for assertions.
  std::vector<std::string> faults() const;

 private:
  void Run();
  void Handle(const table::v1::PlayResponse& message, size_t index);
  void TakeTurn(size_t index, bool retry = false);
  void Leave();
  bool Try(table::v1::TableCommand command, bool* stop);
  void Pace();

  void StartThread();

  PlayClient* client_;
  const AutoPlayerOptions options_;
  size_t next_ = 0;
  int seat_ = -1;
  std::vector<std::string> hand_;
  bool left_ = false;
  bool turn_pending_ = false;  // a turn interrupted by the end of its stream
  bool calling_ = false;       // the last hand was the first five (the call phase)
  std::string led_suit_;       // suit of the current trick's first face-up card
  std::chrono::steady_clock::time_point last_send_{};
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool game_over_ = false;  // guarded by mu_
  int moves_ok_ = 0, moves_refused_ = 0;
  std::vector<std::string> faults_;  // guarded by mu_
  std::thread thread_;
};

// Small builders for commands.
table::v1::TableCommand MakeCommand(const std::string& type);
table::v1::TableCommand MakeMove(const std::string& move, const std::string& card);

// What the `round_result` events among `events` (one seat's stream) imply for each seat's
// coins at a table of four people betting `bet_coins`: per round the winning team's seats
// gain the bet and the others lose it, twice for a Court kind (court, goon_court, kot,
// four_point, six_point); a draw (team -1) refunds. Index = seat. `rounds` gets the count.
std::vector<int64_t> CoinDeltasBySeat(const std::vector<table::v1::TableEvent>& events,
                                      int64_t bet_coins, int* rounds);

}  // namespace courtpiece::table_service::testing

#endif  // COURTPIECE_SERVICES_TABLE_TESTING_PLAY_CLIENT_H_
