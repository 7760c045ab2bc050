// The table service's domain: hosts libs/table machines for real players on a fixed pool of
// workers, keeps each table's state and unacknowledged effects in a TableStore (Redis),
// fans events out to the players' streams, sends effects to their receivers until
// acknowledged, and takes over the tables of instances that died (docs/table-service.md).
//
// Threading: each table is pinned to one worker (by a hash of its id); everything that
// touches a table (commands, timers, wallet and records replies, stream changes) runs on
// that worker, one input at a time, so a table needs no lock. Public methods are safe from
// any thread: they post to the worker and answer through callbacks / the StreamSink.
// Without threads (HostOptions::start_threads = false, for unit tests) nothing runs until
// the test calls Poll() and WatchOnce(); time then comes only from the injected Clock.
//
// Persist, then publish: after an input the table's state (with its pending effects and
// new events) is saved, fenced by the owner epoch; only then do the events reach the
// streams, the command its result, and the effects their receivers.
#ifndef COURTPIECE_SERVICES_TABLE_TABLE_HOST_H_
#define COURTPIECE_SERVICES_TABLE_TABLE_HOST_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/table/engine.h"
#include "courtpiece/table/table.h"
#include "courtpiece/table/v1/table_service.pb.h"
#include "services/table/bot_pool.h"
#include "services/table/ports.h"
#include "services/table/table_store.h"

namespace courtpiece::table_service {

struct HostOptions {
  std::string instance_id;    // unique per instance; [A-Za-z0-9_.-]
  std::string instance_addr;  // host:port clients and peers reach this instance at
  int workers = 2;
  bool start_threads = true;       // false: unit tests drive Poll()/WatchOnce()
  int tables_max = 20'000;         // CreateTable / claims past this: ResourceExhausted
  int events_max = 256;            // kept per table for clients resuming by seq
  int worker_queue_max = 100'000;  // inputs waiting per worker; past it: ResourceExhausted
  int64_t heartbeat_ttl_ms = 3'000;
  int64_t heartbeat_every_ms = 500;
  int64_t rpc_timeout_ms = 2'000;  // per call to the wallet, the lobby, moderation
  int64_t retry_min_ms = 100;      // effect re-sends and failed saves back off from here
  int64_t retry_max_ms = 5'000;    // ... doubling up to here (then steady, never dropped)
  // After taking a table over, people still marked connected have this long to open a new
  // stream before the table treats them as disconnected.
  int64_t adopt_grace_ms = 15'000;
  // The searching bots' pool (bot_pool.h) the host makes when none is given: threads and
  // queued jobs. A host without threads runs each search inline (InlineBotRunner).
  int bot_threads = 1;
  int bot_queue_max = 1024;
};

// One player's Play stream, as the server implements it.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // Queues a message; false when the stream's queue is full (the host then ends it).
  virtual bool Send(const table::v1::PlayResponse& message) = 0;
  // Ends the stream with `status`; no Send after it.
  virtual void Finish(const absl::Status& status) = 0;
};

// Hooks for the service's metrics (nullable). Called on worker threads.
class HostMetrics {
 public:
  virtual ~HostMetrics() = default;
  virtual void Command(std::string_view type, absl::StatusCode code) = 0;
  virtual void Save(size_t bytes, absl::StatusCode code) = 0;
  virtual void EffectSent(std::string_view kind, absl::StatusCode code) = 0;
  virtual void TableClaimed() = 0;
  // A searching bot's move: `outcome` "searched" (played), "late" (its table had played the
  // heuristic already, or moved on), "pool_full" (refused: the heuristic played at once).
  virtual void BotMove(std::string_view level, std::string_view outcome) {
    (void)level, (void)outcome;
  }
};

struct HostStats {
  int64_t tables = 0;
  int64_t streams = 0;
  int64_t seats_people = 0;
  int64_t seats_bots = 0;
  int64_t seats_empty = 0;
  int64_t pending_effects = 0;
  int64_t bot_jobs_queued = 0;   // searching bots' jobs waiting for a pool thread
  int64_t bot_jobs_expired = 0;  // dropped unrun at their deadline (since start)
};

// What TableHost::ListTables keeps (ListTablesRequest).
struct ListTablesFilter {
  std::string player;      // non-empty: tables where this person is seated
  bool open_only = false;  // listed, at least one empty seat, not closed
};

class TableHost {
 public:
  TableHost(HostOptions options, Clock& clock, TableStore& store, WalletPort& wallet,
            RecordsPort& records, table::EngineFactory& engines, table::SeedSource& seeds,
            HostMetrics* metrics = nullptr, BotRunner* bots = nullptr);
  ~TableHost();
  TableHost(const TableHost&) = delete;
  TableHost& operator=(const TableHost&) = delete;

  // Heartbeats, takes back the tables it owns in the store (a restart with the same
  // instance id), starts the workers and the watcher.
  absl::Status Start();
  // Graceful: saves every table, ends its streams with UNAVAILABLE, drops it, and removes
  // the instance's heartbeat so live peers take the tables over at once.
  void Shutdown();

  using CreateDone = std::function<void(absl::StatusOr<table::v1::CreateTableResponse>)>;
  void CreateTable(const table::v1::CreateTableRequest& request, CreateDone done);
  using InfoDone = std::function<void(absl::StatusOr<table::v1::TableInfo>)>;
  void GetTable(std::string_view table_id, InfoDone done);
  // Every table hosted here, by id; with a filter, only the tables that pass it.
  using ListFilter = ListTablesFilter;
  std::vector<table::v1::TableInfo> ListTables(const ListFilter& filter = {});
  // Seats `player` as a Play stream's `join` would (the wallet balance check included);
  // without a stream of theirs the seat is then marked disconnected (RULES.md §4.10's keep
  // runs until a Play stream reconnects them). Answers after the state is saved.
  // Already seated: their seat. ResourceExhausted full, FailedPrecondition too few coins /
  // no coin account / owned elsewhere (owner payload as Play's open), NotFound unknown,
  // Unavailable wallet or store down, InvalidArgument bad ids.
  using JoinDone = std::function<void(absl::StatusOr<table::v1::JoinTableResponse>)>;
  void JoinTable(std::string_view table_id, std::string_view player, JoinDone done);
  using VoiceDone = std::function<void(absl::StatusOr<table::v1::CheckVoiceLockResponse>)>;
  void CheckVoiceLock(std::string_view table_id, std::string_view player, VoiceDone done);
  // Called by moderation once it has stored `player`'s probed note: feeds the machine the
  // player's voice_sent, as a stream command is fed (saved, then fanned out, then
  // answered). Replayed: the note_id was announced already and is still kept. Errors:
  // InvalidArgument malformed; NotFound unknown table; AlreadyExists the note_id was
  // announced for another player; FailedPrecondition "round_over: ..." (round is not the
  // table's voice round), "no_lock: ..." (the player does not hold the lock), or owned
  // elsewhere (owner payload as Play's open); Unavailable the store is down.
  using AnnounceDone = std::function<void(absl::StatusOr<table::v1::AnnounceVoiceNoteResponse>)>;
  void AnnounceVoiceNote(const table::v1::AnnounceVoiceNoteRequest& request, AnnounceDone done);

  // A Play stream opened by `player`. The host answers through `sink`: Opened and the
  // catch-up, then events and command results; or Finish with NOT_FOUND /
  // FAILED_PRECONDITION (owner elsewhere) / UNAVAILABLE. Returns the stream's id.
  uint64_t Open(std::string_view player, const table::v1::OpenTable& open,
                std::shared_ptr<StreamSink> sink);
  void Command(uint64_t stream_id, const table::v1::TableCommand& command);
  // The client went away (or the server cut the stream): a disconnect for the table.
  void StreamEnded(uint64_t stream_id);

  // Test drivers (start_threads = false): run every queued input and due timer, until
  // nothing is left to do now (at most 1,000 passes over the workers; returns how many it
  // took: a timer due again and again at the same time shows as 1,000); one pass of the
  // watcher (heartbeat, failover).
  int Poll();
  void WatchOnce();

  HostStats Stats() const;
  const HostOptions& options() const { return options_; }

 private:
  struct Impl;
  HostOptions options_;
  std::unique_ptr<Impl> impl_;
};

// Rendezvous hashing: the instance (of `instances`) that should own a table (libs/placement,
// shared with the lobby, which places new tables with it).
using placement::PickOwner;

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_TABLE_HOST_H_
