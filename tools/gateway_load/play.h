// courtpiece-load --mode=play: players that play whole games through the gateway at human
// pace (docs/load.md). Every group of 4 signs in (GuestLogin over HTTP JSON), the first
// creates a table (CreateTable), the other three find it (ResolveCode), all four open their
// Play stream (a mix of WebSocket and gRPC) and the three `join`; the host sends `start_now`
// once the table is full; then each seat plays its turns after a think time with SeatBrain
// (brain.h). When a game ends the table plays on: the next game starts by itself
// (auto_start, 7 s), the same four stay seated, so the load stays steady. A stream that ends
// UNAVAILABLE (or is lost) is reopened with open{table, last_seq}. At the end every seated
// player sends `leave` (a bot finishes a round in play, so the pots empty) and closes.
// All asynchronous: the streams and the players' timers on one io_context run by
// `io_threads` threads, a strand per player; the sign-in / create / resolve calls on
// `setup_threads` blocking HTTP clients, the groups spread over `ramp_seconds`.
// Thread-safety: RunPlay is called once, from main.
#ifndef COURTPIECE_TOOLS_GATEWAY_LOAD_PLAY_H_
#define COURTPIECE_TOOLS_GATEWAY_LOAD_PLAY_H_

#include <cstdint>
#include <string>

namespace courtpiece::gateway_load {

struct PlayConfig {
  std::string http_host;
  uint16_t http_port = 0;
  std::string grpc_target;    // the gateway's gRPC HOST:PORT
  int players = 4;            // a multiple of 4
  double grpc_share = 0.5;    // the share of players on gRPC, the rest on WebSocket
  int think_ms = 1500;        // think time per move ...
  double think_jitter = 0.5;  // ... times a uniform factor in [1 - jitter, 1 + jitter]
  int ramp_seconds = 60;
  int seconds = 120;  // the whole run, the ramp included
  int report_seconds = 30;
  std::string game_options = R"({"game":"classic"})";
  int64_t bet_coins = 25;
  int turn_time_ms = 30'000;
  int io_threads = 1;
  int setup_threads = 4;
  int grpc_channels = 0;     // TCP connections of the gRPC players; 0: one each, as phones have
  int grpc_queues = 2;       // completion queues (a thread each) of the gRPC streams
  std::string service_pids;  // "name:pid,name:pid"
  std::string service_pids_file;  // the same, one "name:pid" a line; read at every report
  int drain_seconds = 30;         // after the run: how long the leaves and closes may take
};

// 0: every player got seated, moves were played and no seq check failed; 1 otherwise.
int RunPlay(const PlayConfig& config);

}  // namespace courtpiece::gateway_load

#endif  // COURTPIECE_TOOLS_GATEWAY_LOAD_PLAY_H_
