// The bot-driven clients of courtpiece-table-load: per table, four Play streams (players
// p<i>_<seat>) on the gRPC callback API, no thread per stream. Each stream keeps its seat's
// hand from `hand` events, knows it must act from `turn` events and tries candidate moves
// (the call's suits; cards of the led suit first) until one is accepted, as a real client
// would. A Driver thread ticks every table at a fixed rate and handles reconnects: a stream
// that ends asks GetTable on an instance (rotating), then reopens on the owner with the last
// seq it saw (resume).
// Thread-safety: every table has its own mutex; reactions and the driver take it.
#ifndef COURTPIECE_TOOLS_TABLE_LOAD_CLIENT_H_
#define COURTPIECE_TOOLS_TABLE_LOAD_CLIENT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "stats.h"

namespace courtpiece::table_load {

using Clock = std::chrono::steady_clock;

std::string GrpcCodeName(int code);

struct InstanceEndpoint {
  std::string addr;                                      // host:port of the gRPC server
  std::vector<std::shared_ptr<grpc::Channel>> channels;  // separate connections
  std::unique_ptr<table::v1::TableService::Stub> stub;   // on channels[0], unary calls
  std::vector<std::unique_ptr<table::v1::TableService::Stub>> stream_stubs;
};

struct LoadOptions {
  double actions_per_second = 1.0;  // per table
  int64_t bet_coins = 25;
  int64_t turn_time_ms = 30'000;
  std::string game_options = R"({"game":"classic","target":100})";
  std::string run_id = "r";    // prefix of table and player ids
  bool failover_mode = false;  // act at once after a reconnect
  // People per table (1..4, load mode): the host's start_now seats bots in the other seats,
  // which play at `bot_level` ("" = easy) on the service's search pool.
  int people = 4;
  std::string bot_level;
  // The players' streams as sessions of PlayMux streams (one per table connection, as a
  // gateway's), instead of a gRPC call each.
  bool mux = false;
};

// What the clients measured, shared by every table.
struct LoadStats {
  Samples command_latency;  // every command -> its result, microseconds
  Samples setup_latency;    // join / start_now
  Samples failover_answered, failover_accepted, failover_accepted_mid_round;
  // The first accepted move of tables that were between rounds at the kill (round over,
  // count-in or stake: no move can be accepted before the next deal), and of tables where a
  // turn timed out between the kill and that move (played for the seat on adoption).
  Samples failover_accepted_between_rounds, failover_accepted_after_timeout;
  Counts rejected;                       // move candidates refused, by code
  Counts stream_ends;                    // streams ended by the server, by code
  Counts notices;                        // Notice messages by type
  Counts setup_errors;                   // by step and code
  std::atomic<int64_t> actions{0};       // moves accepted
  std::atomic<int64_t> commands{0};      // commands answered
  std::atomic<int64_t> idle_ticks{0};    // nobody to act (count-in, staking, between rounds)
  std::atomic<int64_t> busy_ticks{0};    // the previous action still unanswered
  std::atomic<int64_t> no_candidate{0};  // every candidate refused
};

class MuxLink;
class PlayStream;
struct TableState;

class LoadClient {
 public:
  LoadClient(std::vector<InstanceEndpoint>* instances,
             std::shared_ptr<grpc::Channel> wallet_channel, LoadOptions options);
  ~LoadClient();  // Stop()s

  // Adds tables [first, first + count) owned by `instance` and sets them up (accounts,
  // CreateTable, four streams, three joins, start_now), at most `concurrency` at once, the
  // k-th (0-based) not before `ramp` * k / count from the call (zero: as fast as the
  // concurrency allows; a ramp spreads the tables' rounds, so their round ends do not come
  // in one wave). Returns when every one is ready or failed, or at `deadline`.
  void AddTables(int count, int instance, int concurrency, Clock::duration ramp,
                 Clock::time_point deadline);
  int tables() const { return static_cast<int>(tables_.size()); }
  int ready() const { return ready_.load(); }
  int failed() const { return failed_.load(); }
  // Tables whose four streams are open and that have seen a move accepted since `since`.
  int Steady(Clock::time_point since) const;
  // Tables with at least one move accepted since they became ready.
  int TablesWithActions() const;
  // The instance most tables' streams are on.
  int BusiestInstance() const;

  // Failover: every table starts waiting for its first command answered/accepted by an
  // instance other than `victim`, timed from `killed_at`.
  void MarkKill(int victim, Clock::time_point killed_at);
  int AwaitingFailover() const;
  void ClearFailover();  // no table waits any more

  void Stop();  // cancels every stream, waits for them, stops the driver
  LoadStats& stats() { return stats_; }
  const LoadOptions& options() const { return options_; }

  // Internal, for the reactors.
  void OnStreamDone(TableState* table, int player, int code);
  void Tick(TableState* table);
  void ScheduleReconnect(TableState* table, int player, Clock::duration delay);

 private:
  friend class PlayStream;
  struct Timer {
    Clock::time_point at;
    TableState* table;
    int player;  // -1: the table's tick; else reconnect that player
    bool operator>(const Timer& o) const { return at > o.at; }
  };
  void DriverLoop();
  void SetUpTable(TableState* table);
  void CreateTable(TableState* table);
  void OpenStream(TableState* table, int player, int instance, uint64_t last_seq);
  void Reconnect(TableState* table, int player);
  void TableSetupDone(TableState* table, bool ok);

  std::vector<InstanceEndpoint>* instances_;
  std::unique_ptr<wallet::v1::Wallet::Stub> wallet_;
  const LoadOptions options_;
  LoadStats stats_;
  // Appended to by AddTables (the caller's thread) only; the driver holds pointers.
  std::vector<std::unique_ptr<TableState>> tables_;
  std::atomic<int> ready_{0}, failed_{0}, in_setup_{0};
  std::atomic<int> live_streams_{0};
  std::atomic<int> pending_calls_{0};  // unary calls whose callback has not returned
  std::atomic<bool> stopping_{false};
  std::atomic<int> victim_{-1};
  std::mutex driver_mu_;
  std::condition_variable driver_cv_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;  // driver_mu_
  std::thread driver_;
  std::atomic<uint64_t> rotate_{0};
  std::mutex links_mu_;
  std::map<int, std::vector<std::shared_ptr<MuxLink>>> links_;  // links_mu_; by instance
  std::atomic<uint64_t> next_session_{1};
};

}  // namespace courtpiece::table_load

#endif  // COURTPIECE_TOOLS_TABLE_LOAD_CLIENT_H_
