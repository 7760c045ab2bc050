#include "services/table/table_host.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/check.h"
#include "courtpiece/common/log.h"
#include "courtpiece/table/v1/hosted_table.pb.h"
#include "services/table/host_convert.h"
#include "services/table/kept_history.h"

namespace courtpiece::table_service {

namespace {

// How long a voice_start waits for moderation's mute check before the player may record
// anyway (the upload checks the mute again).
constexpr absl::Duration kVoiceCheckTimeout = absl::Milliseconds(500);
// Commands of one stream held behind a pending voice check (20/s arrive at most).
constexpr size_t kHeldCommandsMax = 64;

constexpr char kOwnerAddrPayload[] = "courtpiece-owner-addr";
constexpr char kVoiceSentRefused[] =
    "voice_sent: a note is announced by the moderation service after its upload (POST "
    "/v1/voice or CourtPiece.UploadNote)";

bool Retryable(absl::StatusCode code) {
  return code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded ||
         code == absl::StatusCode::kResourceExhausted || code == absl::StatusCode::kAborted ||
         code == absl::StatusCode::kCancelled || code == absl::StatusCode::kUnknown ||
         code == absl::StatusCode::kInternal;
}

std::string_view EffectKind(const pb::StoredEffect& e) {
  switch (e.kind_case()) {
    case pb::StoredEffect::kTransfer:
      return "transfer";
    case pb::StoredEffect::kGame:
      return "game";
    case pb::StoredEffect::kQuit:
      return "quit";
    case pb::StoredEffect::kRound:
      return "round";
    case pb::StoredEffect::kReport:
      return "report";
    case pb::StoredEffect::kClosed:
      return "closed";
    case pb::StoredEffect::KIND_NOT_SET:
      break;
  }
  return "none";
}

pb::PlayResponse ResultMessage(uint64_t command_id, const absl::Status& status) {
  pb::PlayResponse out;
  pb::CommandResult* r = out.mutable_result();
  r->set_command_id(command_id);
  r->set_code(static_cast<int32_t>(status.code()));
  r->set_message(std::string(status.message()));
  return out;
}

pb::PlayResponse NoticeMessage(std::string_view type, std::string_view detail) {
  pb::PlayResponse out;
  out.mutable_notice()->set_type(std::string(type));
  out.mutable_notice()->set_detail(std::string(detail));
  return out;
}

pb::PlayResponse WalletDownNotice() {
  return NoticeMessage("wallet_unavailable", "the stake is being retried");
}

int SeatOfPlayer(const table::Table& t, std::string_view player) {
  for (int s = 0; s < 4; ++s) {
    if (t.seat(s).kind == table::SeatKind::kPerson && t.seat(s).player == player) return s;
  }
  return -1;
}

}  // namespace

// ---------------------------------------------------------------------------------------

struct TableHost::Impl {
  struct Stream {
    uint64_t id = 0;
    std::string player;
    std::shared_ptr<StreamSink> sink;
    bool cut = false;  // ended by CutStream; its OnStreamGone is queued
    // A voice_start waits for moderation's answer (OnVoiceCheck); the stream's later commands
    // wait behind it, in order, so that a quick voice_discard is not applied before its
    // start. At most kHeldCommandsMax; past that a command is refused RESOURCE_EXHAUSTED.
    bool voice_check_pending = false;
    std::deque<pb::TableCommand> held;
  };
  struct Pending {
    pb::StoredEffect effect;
    bool in_flight = false;
    int64_t next_ms = 0;
  };
  // A message to publish once the state that produced it is saved: to one stream
  // (stream_id), to every stream of a player, or (both empty) to every stream.
  struct Out {
    uint64_t stream_id = 0;
    std::string player;
    pb::PlayResponse message;
  };
  // A published event kept for clients resuming by seq: compact (the proto object costs
  // several times its bytes), parsed again only when replayed.
  static void Keep(KeptHistory& history, const pb::StoredEvent& e) {
    history.Push(e.event().seq(), e.to_player(), e.event().SerializeAsString());
  }
  struct Hosted {
    std::string id;
    Owner owner;
    pb::CreateTableRequest create;
    std::unique_ptr<table::Table> table;
    KeptHistory history;  // published events, oldest first (at most events_max)
    std::vector<Pending> pending;
    std::vector<pb::StoredEvent> fresh;  // collected, not yet saved
    std::vector<Out> outbox;
    bool dirty = false;
    int save_failures = 0;
    int64_t save_retry_ms = 0;
    bool closed = false;
    std::map<uint64_t, Stream> streams;
    // JoinTable answers waiting for the save of the join (persist, then answer): called
    // with the table after a save, or with nullptr and the reason when it is dropped.
    std::vector<std::function<void(const Hosted*, const absl::Status&)>> waiters;
    int64_t timer_ms = 0;
    int64_t adopt_grace_until_ms = 0;
    bool wallet_down_told = false;       // this instance broadcast wallet_unavailable
    bool wallet_available_owed = false;  // taken over with an awaited transfer pending
    bool flush_queued = false;           // in its worker's flush list
    uint64_t bot_asked = 0;              // the table's bot turn last handed to the pool
  };
  struct Worker {
    absl::Mutex mu;
    absl::CondVar cv;
    std::deque<std::function<void()>> tasks ABSL_GUARDED_BY(mu);
    bool stop ABSL_GUARDED_BY(mu) = false;
    std::thread thread;
    // Worker-thread only.
    std::unordered_map<std::string, std::unique_ptr<Hosted>> tables;
    std::set<std::pair<int64_t, std::string>> timers;
    std::vector<std::string> flush;  // tables touched since the last Flush
  };
  enum class Saved { kYes, kRetry, kDropped };

  Impl(const HostOptions& o, Clock& c, TableStore& s, WalletPort& w, RecordsPort& r,
       table::EngineFactory& e, table::SeedSource& seed, HostMetrics* m, BotRunner* b)
      : options(o),
        clock(c),
        store(s),
        wallet(w),
        records(r),
        engines(e),
        seeds(seed),
        metrics(m),
        log("table-host", common::LogLevel::kInfo) {
    COURTPIECE_CHECK(o.workers >= 1 && o.workers <= 256, "1..256 workers");
    for (int i = 0; i < o.workers; ++i) workers.push_back(std::make_unique<Worker>());
    if (b != nullptr) {
      bots = b;
    } else if (o.start_threads) {
      own_bots = std::make_unique<ThreadBotPool>(
          BotPoolOptions{.threads = o.bot_threads, .queue_max = o.bot_queue_max}, c);
      bots = own_bots.get();
    } else {
      own_bots = std::make_unique<InlineBotRunner>();
      bots = own_bots.get();
    }
  }

  const HostOptions options;
  Clock& clock;
  TableStore& store;
  WalletPort& wallet;
  RecordsPort& records;
  table::EngineFactory& engines;
  table::SeedSource& seeds;
  HostMetrics* metrics;
  std::unique_ptr<BotRunner> own_bots;
  BotRunner* bots = nullptr;
  common::Logger log;
  std::vector<std::unique_ptr<Worker>> workers;
  std::atomic<uint64_t> next_stream_id{1};
  std::atomic<int64_t> tables_count{0};
  std::atomic<bool> shutting_down{false};
  std::atomic<int64_t> last_heartbeat_ms{0};
  absl::Mutex taking_mu;
  absl::flat_hash_set<std::string> taking ABSL_GUARDED_BY(taking_mu);  // takeovers posted
  absl::Mutex streams_mu;
  // Stream id -> its table, and whether the stream was already given up for an overload.
  struct StreamEntry {
    std::string table_id;
    bool overloaded = false;
  };
  absl::flat_hash_map<uint64_t, StreamEntry> stream_tables ABSL_GUARDED_BY(streams_mu);
  absl::Mutex watch_mu;
  absl::CondVar watch_cv;
  bool watch_stop ABSL_GUARDED_BY(watch_mu) = false;
  std::thread watcher;

  int64_t NowMs() const { return absl::ToUnixMillis(clock.Now()); }
  absl::Time Deadline() const { return clock.Now() + absl::Milliseconds(options.rpc_timeout_ms); }
  int64_t Backoff(uint32_t attempts) const {
    const int shift = static_cast<int>(std::min<uint32_t>(attempts > 0 ? attempts - 1 : 0, 16));
    return std::min(options.retry_max_ms, options.retry_min_ms << shift);
  }
  Worker& WorkerOf(std::string_view table_id) {
    return *workers[placement::HashPair(table_id, "") % workers.size()];
  }
  // bounded = false: past worker_queue_max too, only for what must not be lost and is
  // bounded elsewhere: a stream's end (once per stream), the reply to a call already taken
  // (once per call); see PostAlways.
  // Always false once the worker is stopping (Shutdown): a task queued then would never run,
  // and a gRPC call waiting on it would hold the server's shutdown forever.
  bool Post(Worker& w, std::function<void()> task, bool bounded = true) {
    absl::MutexLock lock(&w.mu);
    if (w.stop) return false;
    if (bounded && static_cast<int>(w.tasks.size()) >= options.worker_queue_max) return false;
    w.tasks.push_back(std::move(task));
    w.cv.Signal();
    return true;
  }
  void PostAlways(Worker& w, std::function<void()> task) {
    (void)Post(w, std::move(task), /*bounded=*/false);  // dropped only once stopping
  }
  // What a call whose task Post refused is answered.
  absl::Status Refused() const {
    if (shutting_down.load()) return absl::UnavailableError("this instance is shutting down");
    return absl::ResourceExhaustedError("the instance is overloaded: retry");
  }
  Hosted* Find(Worker& w, std::string_view id) {
    auto it = w.tables.find(std::string(id));
    return it == w.tables.end() ? nullptr : it->second.get();
  }

  // --- the worker loop -----------------------------------------------------------------

  void RunWorker(Worker& w) {
    for (;;) {
      std::deque<std::function<void()>> batch;
      {
        absl::MutexLock lock(&w.mu);
        const int64_t now = NowMs();
        const int64_t due = w.timers.empty() ? now + 1000 : w.timers.begin()->first;
        if (w.tasks.empty() && !w.stop && due > now) {
          w.cv.WaitWithTimeout(&w.mu, absl::Milliseconds(std::min<int64_t>(due - now, 1000)));
        }
        if (w.stop && w.tasks.empty()) return;
        batch.swap(w.tasks);
      }
      for (auto& task : batch) task();
      FireDue(w, NowMs());
      Flush(w, NowMs());
    }
  }

  // Runs every queued task and due timer of every worker on the calling thread.
  int PollAll() {
    constexpr int kPassesMax = 1000;
    for (int round = 0; round < kPassesMax; ++round) {
      bool any = false;
      for (auto& wp : workers) {
        std::deque<std::function<void()>> batch;
        {
          absl::MutexLock lock(&wp->mu);
          batch.swap(wp->tasks);
        }
        any = any || !batch.empty();
        for (auto& task : batch) task();
        const size_t before = wp->timers.size();
        FireDue(*wp, NowMs());
        any = any || wp->timers.size() != before || !wp->flush.empty();
        Flush(*wp, NowMs());
      }
      if (!any) return round + 1;
    }
    return kPassesMax;
  }

  void FireDue(Worker& w, int64_t now) {
    while (!w.timers.empty() && w.timers.begin()->first <= now) {
      const std::string id = w.timers.begin()->second;
      w.timers.erase(w.timers.begin());
      Hosted* h = Find(w, id);
      if (h == nullptr) continue;
      h->timer_ms = 0;
      OnTimer(w, *h, now);
    }
  }

  void Rearm(Worker& w, Hosted& h) {
    int64_t due = 0;
    auto consider = [&due](int64_t t) {
      if (t > 0 && (due == 0 || t < due)) due = t;
    };
    if (std::optional<int64_t> d = h.table->NextDeadline()) consider(*d);
    if (h.dirty) consider(h.save_retry_ms);
    // Effects go out only after a save (AfterSave). While saves fail (Redis down) a due
    // effect waits for the save's retry: arming its own, past, time would fire the timer
    // again and again and spin the worker for as long as Redis is away.
    const bool unsaved = h.dirty && h.save_failures > 0;
    for (const Pending& p : h.pending) {
      if (!p.in_flight && !unsaved) consider(std::max<int64_t>(p.next_ms, 1));
    }
    consider(h.adopt_grace_until_ms);
    if (due == h.timer_ms) return;
    if (h.timer_ms != 0) w.timers.erase({h.timer_ms, h.id});
    h.timer_ms = due;
    if (due != 0) w.timers.insert({due, h.id});
  }

  void OnTimer(Worker& w, Hosted& h, int64_t now) {
    if (h.adopt_grace_until_ms != 0 && now >= h.adopt_grace_until_ms) {
      h.adopt_grace_until_ms = 0;
      for (int s = 0; s < 4; ++s) {
        const table::SeatState& st = h.table->seat(s);
        if (st.kind != table::SeatKind::kPerson || !st.connected) continue;
        if (HasStream(h, st.player)) continue;
        (void)h.table->Handle({.type = table::CommandType::kDisconnect, .player = st.player}, now);
      }
    }
    h.table->Advance(now);
    Touch(w, h);
  }

  // --- after every input: collect, save, publish, send, re-arm ------------------------

  void Collect(Hosted& h) {
    for (table::Event& e : h.table->TakeEvents()) {
      pb::StoredEvent se;
      se.set_to_player(e.to_player);
      *se.mutable_event() = EventToProto(e);
      Out out{.player = e.to_player};
      *out.message.mutable_event() = se.event();
      h.outbox.push_back(std::move(out));
      h.fresh.push_back(std::move(se));
      h.dirty = true;
    }
    for (table::Effect& f : h.table->TakeEffects()) {
      h.dirty = true;
      // The close is an effect like the others (RecordTableClosed): saved with the state,
      // re-sent after a failover, and the table is removed only once it is acked.
      if (f.type == table::EffectType::kClose) h.closed = true;
      h.pending.push_back(Pending{.effect = EffectToStored(f, h.id)});
    }
  }

  std::string StateBytes(const Hosted& h, int64_t now) const {
    pb::HostedTable state;
    state.set_table(h.table->Snapshot());
    *state.mutable_create() = h.create;
    for (const Pending& p : h.pending) *state.add_pending() = p.effect;
    state.set_saved_unix_ms(now);
    state.set_closed(h.closed);
    return state.SerializeAsString();
  }

  TableStore::SaveRequest SaveRequestOf(const Hosted& h, int64_t now) const {
    TableStore::SaveRequest r{.table_id = h.id, .owner = h.owner, .state = StateBytes(h, now)};
    r.new_events.reserve(h.fresh.size());
    for (const pb::StoredEvent& e : h.fresh) r.new_events.push_back(e.SerializeAsString());
    return r;
  }

  // What a save's outcome does to the table (it may drop it: then kDropped).
  Saved Saw(Worker& w, Hosted& h, const absl::Status& s, size_t bytes, int64_t now) {
    if (metrics != nullptr) metrics->Save(bytes, s.code());
    if (s.ok()) {
      h.dirty = false;
      for (const pb::StoredEvent& e : h.fresh) Keep(h.history, e);
      h.fresh.clear();
      h.save_failures = 0;
      h.save_retry_ms = 0;
      return Saved::kYes;
    }
    if (s.code() == absl::StatusCode::kFailedPrecondition ||
        s.code() == absl::StatusCode::kNotFound) {
      log.Warn("table lost to another instance", {{"table", h.id}, {"status", s}});
      Drop(w, h.id, absl::UnavailableError("the table moved to another instance: reconnect"));
      return Saved::kDropped;
    }
    ++h.save_failures;
    h.save_retry_ms = now + Backoff(h.save_failures);
    if (h.save_failures == 1) log.Warn("table save failed", {{"table", h.id}, {"status", s}});
    return Saved::kRetry;
  }

  // One table, now (graceful shutdown).
  Saved Persist(Worker& w, Hosted& h, int64_t now) {
    if (!h.dirty) return Saved::kYes;
    TableStore::SaveRequest r = SaveRequestOf(h, now);
    const absl::Status s =
        store.Save(r.table_id, r.owner, r.state, r.new_events, options.events_max);
    return Saw(w, h, s, r.state.size(), now);
  }

  // After an input: the table's outputs wait for the worker's next Flush, which saves every
  // touched table in one pipelined round trip and then publishes.
  void Touch(Worker& w, Hosted& h) {
    AskBots(w, h);
    Collect(h);
    if (!h.flush_queued) {
      h.flush_queued = true;
      w.flush.push_back(h.id);
    }
  }

  void Flush(Worker& w, int64_t now) {
    if (w.flush.empty()) return;
    std::vector<std::string> ids;
    ids.swap(w.flush);
    std::vector<Hosted*> saving;
    std::vector<TableStore::SaveRequest> requests;
    std::vector<Hosted*> clean;
    for (const std::string& id : ids) {
      Hosted* h = Find(w, id);
      if (h == nullptr) continue;
      h->flush_queued = false;
      if (!h->dirty) {
        clean.push_back(h);
      } else if (h->save_failures > 0 && now < h->save_retry_ms) {
        Rearm(w, *h);  // waiting out the backoff: its timer brings it back
      } else {
        saving.push_back(h);
        requests.push_back(SaveRequestOf(*h, now));
      }
    }
    std::vector<absl::Status> results;
    if (!requests.empty()) results = store.SaveMany(requests, options.events_max);
    std::vector<std::string> saved;
    for (size_t i = 0; i < saving.size(); ++i) {
      const std::string id = saving[i]->id;
      const Saved outcome = Saw(w, *saving[i], results[i], requests[i].state.size(), now);
      if (outcome == Saved::kDropped) continue;
      if (outcome == Saved::kRetry) {
        Rearm(w, *saving[i]);
        continue;
      }
      saved.push_back(id);
    }
    for (Hosted* h : clean) saved.push_back(h->id);
    for (const std::string& id : saved) {
      if (Hosted* h = Find(w, id)) AfterSave(w, *h, now);
    }
  }

  void AfterSave(Worker& w, Hosted& h, int64_t now) {
    Publish(w, h);
    SendDue(w, h, now);
    if (h.closed && h.pending.empty()) {
      absl::Status s = store.Remove(h.id, h.owner);
      if (!s.ok()) log.Warn("closed table not removed", {{"table", h.id}, {"status", s}});
      Drop(w, h.id, absl::OkStatus());
      return;
    }
    Rearm(w, h);
  }

  void Publish(Worker& w, Hosted& h) {
    std::vector<uint64_t> cut;
    for (Out& out : h.outbox) {
      for (auto& [id, stream] : h.streams) {
        const bool to_it = out.stream_id != 0 ? id == out.stream_id
                                              : out.player.empty() || stream.player == out.player;
        if (!to_it) continue;
        if (!stream.sink->Send(out.message)) cut.push_back(id);
      }
    }
    h.outbox.clear();
    h.history.TrimTo(static_cast<size_t>(options.events_max));
    std::vector<std::function<void(const Hosted*, const absl::Status&)>> waiters;
    waiters.swap(h.waiters);
    for (auto& waiter : waiters) waiter(&h, absl::OkStatus());
    for (uint64_t id : cut) CutStream(w, h, id);
  }

  // A stream whose queue is full: ended, and its player's connection is gone.
  void CutStream(Worker& w, Hosted& h, uint64_t id) {
    auto it = h.streams.find(id);
    if (it == h.streams.end() || it->second.cut) return;
    it->second.cut = true;  // once per stream: PostAlways below is bounded by the streams
    it->second.sink->Finish(
        absl::ResourceExhaustedError("the stream's queue is full: the client is not reading"));
    const std::string table_id = h.id;
    PostAlways(w, [this, &w, table_id, id] { OnStreamGone(w, table_id, id); });
  }

  // A command the worker's queue had no room for: the stream is ended with
  // RESOURCE_EXHAUSTED (the client reconnects and resumes by seq), which the table sees as
  // a disconnect, so no command goes unanswered and no player is left counted present.
  void OnStreamOverloaded(Worker& w, const std::string& table_id, uint64_t id) {
    if (Hosted* h = Find(w, table_id); h != nullptr) {
      if (auto it = h->streams.find(id); it != h->streams.end()) {
        it->second.sink->Finish(absl::ResourceExhaustedError(
            "the instance is overloaded: a command was not taken; reconnect"));
      }
    }
    OnStreamGone(w, table_id, id);
  }

  bool HasStream(const Hosted& h, std::string_view player) const {
    for (const auto& [id, s] : h.streams) {
      if (s.player == player) return true;
    }
    return false;
  }

  void Drop(Worker& w, const std::string& id, const absl::Status& why) {
    auto it = w.tables.find(id);
    if (it == w.tables.end()) return;
    Hosted& h = *it->second;
    for (auto& waiter : h.waiters) {
      waiter(nullptr, why.ok() ? absl::UnavailableError("the table closed: retry") : why);
    }
    h.waiters.clear();
    for (auto& [sid, s] : h.streams) {
      s.sink->Finish(why);
      absl::MutexLock lock(&streams_mu);
      stream_tables.erase(sid);
    }
    if (h.timer_ms != 0) w.timers.erase({h.timer_ms, h.id});
    w.tables.erase(it);
    tables_count.fetch_sub(1);
  }

  // --- effects ---------------------------------------------------------------------------

  void SendDue(Worker& w, Hosted& h, int64_t now) {
    for (Pending& p : h.pending) {
      if (p.in_flight || p.next_ms > now) continue;
      p.in_flight = true;
      p.effect.set_attempts(p.effect.attempts() + 1);
      Send(w, h.id, p.effect);
    }
  }

  void Send(Worker& w, const std::string& table_id, const pb::StoredEffect& e) {
    const std::string key = e.key();
    auto reply = [this, &w, table_id, key](absl::Status s) {
      Post(w, [this, &w, table_id, key, s] { OnRecordReply(w, table_id, key, s); });
    };
    switch (e.kind_case()) {
      case pb::StoredEffect::kTransfer:
        wallet.Transfer(TransferFromStored(e), table_id, RoundOfTransferKey(key), Deadline(),
                        [this, &w, table_id, key](WalletReply r) {
                          Post(w, [this, &w, table_id, key, r = std::move(r)] {
                            OnTransferReply(w, table_id, key, r);
                          });
                        });
        break;
      case pb::StoredEffect::kGame:
        records.RecordGame(e.game(), Deadline(), reply);
        break;
      case pb::StoredEffect::kQuit:
        records.RecordQuit(e.quit(), Deadline(), reply);
        break;
      case pb::StoredEffect::kRound:
        records.RecordRound(e.round(), Deadline(), reply);
        break;
      case pb::StoredEffect::kReport:
        records.FileReport(e.report(), Deadline(), reply);
        break;
      case pb::StoredEffect::kClosed:
        records.RecordTableClosed(e.closed(), Deadline(), reply);
        break;
      case pb::StoredEffect::KIND_NOT_SET:
        Post(w, [this, &w, table_id, key] { OnRecordReply(w, table_id, key, absl::OkStatus()); });
        break;
    }
  }

  Pending* FindPending(Hosted& h, std::string_view key) {
    for (Pending& p : h.pending) {
      if (p.effect.key() == key && p.in_flight) return &p;
    }
    return nullptr;
  }
  void ErasePending(Hosted& h, std::string_view key) {
    h.pending.erase(std::find_if(h.pending.begin(), h.pending.end(),
                                 [key](const Pending& p) { return p.effect.key() == key; }));
    h.dirty = true;
  }

  void OnRecordReply(Worker& w, const std::string& table_id, const std::string& key,
                     const absl::Status& s) {
    Hosted* h = Find(w, table_id);
    if (h == nullptr) return;
    Pending* p = FindPending(*h, key);
    if (p == nullptr) return;
    if (metrics != nullptr) metrics->EffectSent(EffectKind(p->effect), s.code());
    const int64_t now = NowMs();
    if (!s.ok() && Retryable(s.code())) {
      p->in_flight = false;
      p->next_ms = now + Backoff(p->effect.attempts());
      Rearm(w, *h);
      return;
    }
    if (!s.ok()) {
      log.Error("record refused for good; dropped",
                {{"table", table_id}, {"key", key}, {"status", s}});
    }
    ErasePending(*h, key);
    Touch(w, *h);
  }

  // A table waiting for a searching bot's move: its job goes to the pool, once per turn
  // (a table restored here asks again: Hosted starts at 0). The answer comes back as a
  // task on this worker (OnBotMove); a full pool gets the heuristic's move at once.
  void AskBots(Worker& w, Hosted& h) {
    if (shutting_down.load()) return;  // the next owner asks again
    for (int guard = 0; guard < 64; ++guard) {
      std::optional<table::BotTurn> b = h.table->PendingBotTurn();
      if (!b || b->id == h.bot_asked) return;
      h.bot_asked = b->id;
      const std::string id = h.id;
      const uint64_t turn = b->id;
      const bots::Level level = b->level;
      Worker* wp = &w;
      BotRunner::Done done = [this, wp, id, turn, level](table::Move move) {
        // A full worker queue loses the answer: the turn's deadline plays the heuristic.
        (void)Post(*wp,
                   [this, wp, id, turn, level, move] { OnBotMove(*wp, id, turn, level, move); });
      };
      if (bots->Submit(h.table->NewBotJob(), absl::FromUnixMillis(b->deadline_ms),
                       std::move(done))) {
        return;
      }
      if (metrics != nullptr) metrics->BotMove(common::ToStd(bots::LevelName(level)), "pool_full");
      (void)h.table->OnBotMove(turn, std::nullopt, NowMs());  // may ask for the next seat
    }
  }

  void OnBotMove(Worker& w, const std::string& table_id, uint64_t turn, bots::Level level,
                 const table::Move& move) {
    Hosted* h = Find(w, table_id);
    if (h == nullptr) return;  // dropped or handed over meanwhile
    const absl::Status s = h->table->OnBotMove(turn, move, NowMs());
    if (metrics != nullptr) {
      metrics->BotMove(common::ToStd(bots::LevelName(level)), s.ok() ? "searched" : "late");
    }
    Touch(w, *h);
  }

  void OnTransferReply(Worker& w, const std::string& table_id, const std::string& key,
                       const WalletReply& r) {
    Hosted* h = Find(w, table_id);
    if (h == nullptr) return;
    Pending* p = FindPending(*h, key);
    if (p == nullptr) return;
    if (metrics != nullptr) metrics->EffectSent("transfer", r.status.code());
    const int64_t now = NowMs();
    const bool awaited = p->effect.transfer().awaited();
    const absl::StatusCode code = r.status.code();
    if (!r.status.ok() && Retryable(code)) {
      p->in_flight = false;
      p->next_ms = now + Backoff(p->effect.attempts());
      if (awaited && !h->wallet_down_told) {
        h->wallet_down_told = true;
        Broadcast(w, *h, WalletDownNotice());
      }
      Rearm(w, *h);
      return;
    }
    ErasePending(*h, key);
    if (!r.status.ok() && code != absl::StatusCode::kFailedPrecondition) {
      log.Error("transfer refused for good",
                {{"table", table_id}, {"key", key}, {"status", r.status}});
    }
    if (awaited) {
      if (h->wallet_down_told || h->wallet_available_owed) {
        h->wallet_down_told = false;
        h->wallet_available_owed = false;
        Broadcast(w, *h, NoticeMessage("wallet_available", ""));
      }
      (void)h->table->OnWalletReply(key, r.status.ok(), r.short_players, now);
    }
    Touch(w, *h);
  }

  // Not game state: straight to the streams (nothing to save).
  void Broadcast(Worker& w, Hosted& h, const pb::PlayResponse& message) {
    std::vector<uint64_t> cut;
    for (auto& [id, s] : h.streams) {
      if (!s.sink->Send(message)) cut.push_back(id);
    }
    for (uint64_t id : cut) CutStream(w, h, id);
  }

  // --- streams and commands ---------------------------------------------------------------

  pb::TableInfo Info(const Hosted& h) const {
    pb::TableInfo info = InfoOf(*h.table, h.create);
    info.set_owner_instance(h.owner.instance);
    info.set_owner_addr(options.instance_addr);
    info.set_owner_epoch(h.owner.epoch);
    info.set_seq(h.history.back_seq());
    return info;
  }

  absl::Status NotHere(std::string_view table_id) {
    absl::StatusOr<Owner> owner = store.GetOwner(table_id);
    if (!owner.ok()) {
      if (owner.status().code() == absl::StatusCode::kNotFound) {
        return absl::NotFoundError(absl::StrCat("no table ", common::ToAbsl(table_id)));
      }
      return absl::UnavailableError(
          absl::StrCat("cannot find the table's owner: ", owner.status().message()));
    }
    if (owner->instance == options.instance_id) {
      return absl::UnavailableError("the table is being taken over here: retry");
    }
    std::string addr;
    absl::StatusOr<std::vector<InstanceInfo>> live = store.LiveInstances();
    if (live.ok()) {
      for (const InstanceInfo& i : *live) {
        if (i.id == owner->instance) addr = i.addr;
      }
    }
    absl::Status s = absl::FailedPreconditionError(
        absl::StrCat("table ", common::ToAbsl(table_id), " is owned by instance ", owner->instance,
                     addr.empty() ? " (not live: it is being taken over)" : " at " + addr));
    if (!addr.empty()) s.SetPayload(kOwnerAddrPayload, absl::Cord(addr));
    return s;
  }

  void OnOpen(Worker& w, uint64_t id, const std::string& player, const pb::OpenTable& open,
              std::shared_ptr<StreamSink> sink) {
    Hosted* h = Find(w, open.table_id());
    if (h == nullptr) {
      sink->Finish(NotHere(open.table_id()));
      Forget(id);
      return;
    }
    for (auto it = h->streams.begin(); it != h->streams.end();) {
      if (it->second.player == player) {
        it->second.sink->Finish(
            absl::AbortedError("another connection of this player took over the table"));
        Forget(it->first);
        it = h->streams.erase(it);
      } else {
        ++it;
      }
    }
    h->streams[id] = Stream{.id = id, .player = player, .sink = sink};
    const int seat = SeatOfPlayer(*h->table, player);
    const uint64_t last = open.last_seq();
    const uint64_t latest = h->history.back_seq();
    const bool resumed = seat >= 0 && last > 0 && !h->history.empty() &&
                         h->history.front_seq() <= last + 1 && last <= latest;
    pb::PlayResponse opened;
    *opened.mutable_opened()->mutable_table() = Info(*h);
    opened.mutable_opened()->set_seat(seat);
    opened.mutable_opened()->set_resumed(resumed);
    bool ok = sink->Send(opened);
    if (resumed) {
      ok = ok && h->history.ForEachAfter(last, player, [&](uint64_t, std::string_view bytes) {
        pb::PlayResponse m;
        return m.mutable_event()->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
               sink->Send(m);
      });
    }
    // Notices are not in the history: one who (re)connects while the wallet is down is told.
    if (h->wallet_down_told) {
      ok = ok && sink->Send(WalletDownNotice());
    }
    if (!ok) {
      CutStream(w, *h, id);
      return;
    }
    if (seat < 0) return;
    const int64_t now = NowMs();
    const table::SeatState& st = h->table->seat(seat);
    if (!st.connected || st.left) {
      (void)h->table->Handle({.type = table::CommandType::kReconnect, .player = player}, now);
    } else if (!resumed) {
      (void)h->table->SendView(player);
    }
    Touch(w, *h);
  }

  void Forget(uint64_t id) {
    absl::MutexLock lock(&streams_mu);
    stream_tables.erase(id);
  }

  void OnStreamGone(Worker& w, const std::string& table_id, uint64_t id) {
    Forget(id);
    Hosted* h = Find(w, table_id);
    if (h == nullptr) return;
    auto it = h->streams.find(id);
    if (it == h->streams.end()) return;
    const std::string player = it->second.player;
    h->streams.erase(it);
    if (HasStream(*h, player)) return;
    const int seat = SeatOfPlayer(*h->table, player);
    if (seat < 0 || !h->table->seat(seat).connected) return;
    const int64_t now = NowMs();
    (void)h->table->Handle({.type = table::CommandType::kDisconnect, .player = player}, now);
    Touch(w, *h);
  }

  void OnCommand(Worker& w, const std::string& table_id, uint64_t id,
                 const pb::TableCommand& command) {
    Hosted* h = Find(w, table_id);
    if (h == nullptr) return;
    auto it = h->streams.find(id);
    if (it == h->streams.end()) return;
    Stream& stream = it->second;
    auto reply_now = [&](const absl::Status& s) { Answer(w, *h, id, stream, command, s); };
    if (stream.voice_check_pending) {  // behind a voice_start waiting for moderation
      if (stream.held.size() >= kHeldCommandsMax) {
        reply_now(absl::ResourceExhaustedError("too many commands waiting: slow down"));
      } else {
        stream.held.push_back(command);
      }
      return;
    }
    if (command.type() == "voice_sent") {  // only moderation announces a note (AnnounceVoiceNote)
      reply_now(absl::InvalidArgumentError(kVoiceSentRefused));
      return;
    }
    if (h->save_failures > 0) {
      reply_now(absl::UnavailableError("the table is waiting for its storage: retry"));
      return;
    }
    absl::StatusOr<table::Command> c = CommandFromProto(command, stream.player);
    if (!c.ok()) {
      reply_now(c.status());
      return;
    }
    if (c->type == table::CommandType::kVoiceStart) {
      // A muted player may not take the recording lock (RULES §5.6): moderation says first,
      // within kVoiceCheckTimeout.
      stream.voice_check_pending = true;
      records.CheckVoice(stream.player, std::min(Deadline(), clock.Now() + kVoiceCheckTimeout),
                         [this, &w, table_id, id, command, c = *c](absl::Status s) {
                           PostAlways(w, [this, &w, table_id, id, command, c, s] {
                             OnVoiceCheck(w, table_id, id, command, c, s);
                           });
                         });
      return;
    }
    if (c->type != table::CommandType::kJoin) {
      Apply(w, *h, id, command, *c);
      return;
    }
    if (const int seat = SeatOfPlayer(*h->table, stream.player); seat >= 0) {
      if (h->table->seat(seat).Away()) {  // pressed Leave mid-round: join is coming back
        Apply(w, *h, id, command, *c);
        return;
      }
      reply_now(absl::AlreadyExistsError("already seated at this table"));
      return;
    }
    wallet.GetBalance(stream.player, Deadline(),
                      [this, &w, table_id, id, command, c = *c](absl::StatusOr<int64_t> b) {
                        PostAlways(w, [this, &w, table_id, id, command, c, b] {
                          OnBalance(w, table_id, id, command, c, b);
                        });
                      });
  }

  // A muted player's voice_start is refused with moderation's own message. When moderation
  // does not answer the player may record (fail open: the upload checks the mute again, so a
  // muted note is never sent; only the "recording" shown to the table is not prevented).
  void OnVoiceCheck(Worker& w, const std::string& table_id, uint64_t id,
                    const pb::TableCommand& command, const table::Command& c,
                    const absl::Status& check) {
    Hosted* h = Find(w, table_id);
    if (h == nullptr) return;
    auto it = h->streams.find(id);
    if (it == h->streams.end()) return;
    if (check.code() == absl::StatusCode::kPermissionDenied) {
      Answer(w, *h, id, it->second, command, check);
    } else {
      if (!check.ok()) {
        log.Warn("voice check skipped: the player may record",
                 {{"table", table_id}, {"status", check}});
      }
      Apply(w, *h, id, command, c);
    }
    ResumeHeld(w, table_id, id);
  }

  // The commands that waited behind a voice check, in order; one of them may start another
  // check, and the rest wait again.
  void ResumeHeld(Worker& w, const std::string& table_id, uint64_t id) {
    Hosted* h = Find(w, table_id);
    if (h == nullptr) return;
    auto it = h->streams.find(id);
    if (it == h->streams.end()) return;
    it->second.voice_check_pending = false;
    std::deque<pb::TableCommand> held;
    held.swap(it->second.held);
    while (!held.empty()) {
      const pb::TableCommand next = std::move(held.front());
      held.pop_front();
      OnCommand(w, table_id, id, next);
      h = Find(w, table_id);
      if (h == nullptr) return;
      it = h->streams.find(id);
      if (it == h->streams.end()) return;
      if (it->second.voice_check_pending) {
        for (pb::TableCommand& rest : held) it->second.held.push_back(std::move(rest));
        return;
      }
    }
  }

  void OnBalance(Worker& w, const std::string& table_id, uint64_t id,
                 const pb::TableCommand& command, table::Command c,
                 const absl::StatusOr<int64_t>& balance) {
    Hosted* h = Find(w, table_id);
    if (h == nullptr) return;
    auto it = h->streams.find(id);
    if (it == h->streams.end()) return;
    if (!balance.ok()) {
      const absl::Status s = balance.status().code() == absl::StatusCode::kNotFound
                                 ? absl::FailedPreconditionError("the player has no coin account")
                                 : absl::UnavailableError("the wallet is unreachable: try again");
      Answer(w, *h, id, it->second, command, s);
      return;
    }
    c.balance_coins = *balance;
    Apply(w, *h, id, command, c);
  }

  // Answers a command the machine never saw (refused before it, or after an outside check).
  void Answer(Worker& w, Hosted& h, uint64_t id, Stream& stream, const pb::TableCommand& command,
              const absl::Status& s) {
    if (metrics != nullptr) metrics->Command(command.type(), s.code());
    if (!stream.sink->Send(ResultMessage(command.command_id(), s))) CutStream(w, h, id);
  }

  void Apply(Worker& w, Hosted& h, uint64_t id, const pb::TableCommand& command,
             const table::Command& c) {
    const int64_t now = NowMs();
    const absl::Status s = h.table->Handle(c, now);
    if (metrics != nullptr) metrics->Command(command.type(), s.code());
    Collect(h);
    h.outbox.push_back(Out{.stream_id = id, .message = ResultMessage(command.command_id(), s)});
    Touch(w, h);
  }

  // --- JoinTable (the lobby's quick join) --------------------------------------------------

  pb::JoinTableResponse JoinedOf(const Hosted& h, int seat) const {
    pb::JoinTableResponse out;
    out.set_seat(seat);
    *out.mutable_table() = Info(h);
    return out;
  }

  void OnJoinTable(Worker& w, const std::string& table_id, const std::string& player,
                   const JoinDone& done) {
    Hosted* h = Find(w, table_id);
    if (h == nullptr) {
      done(NotHere(table_id));
      return;
    }
    const int seat = SeatOfPlayer(*h->table, player);
    if (seat >= 0) {
      done(JoinedOf(*h, seat));
      return;
    }
    if (h->save_failures > 0) {
      done(absl::UnavailableError("the table is waiting for its storage: retry"));
      return;
    }
    wallet.GetBalance(player, Deadline(),
                      [this, &w, table_id, player, done](absl::StatusOr<int64_t> b) {
                        Post(w, [this, &w, table_id, player, done, b] {
                          OnJoinBalance(w, table_id, player, done, b);
                        });
                      });
  }

  void OnJoinBalance(Worker& w, const std::string& table_id, const std::string& player,
                     const JoinDone& done, const absl::StatusOr<int64_t>& balance) {
    Hosted* h = Find(w, table_id);
    if (h == nullptr) {
      done(NotHere(table_id));
      return;
    }
    const int seated = SeatOfPlayer(*h->table, player);
    if (seated >= 0) {  // a concurrent join (or a stream's) got there first
      done(JoinedOf(*h, seated));
      return;
    }
    if (!balance.ok()) {
      done(balance.status().code() == absl::StatusCode::kNotFound
               ? absl::FailedPreconditionError("the player has no coin account")
               : absl::UnavailableError("the wallet is unreachable: try again"));
      return;
    }
    const int64_t now = NowMs();
    const absl::Status s = h->table->Handle({.type = table::CommandType::kJoin,
                                             .player = player,
                                             .balance_coins = *balance,
                                             .away = !HasStream(*h, player)},
                                            now);
    if (metrics != nullptr) metrics->Command("join", s.code());
    if (!s.ok()) {
      done(s);
      return;
    }
    const int seat = SeatOfPlayer(*h->table, player);
    h->waiters.push_back([this, seat, done](const Hosted* saved, const absl::Status& why) {
      if (saved == nullptr) {
        done(why);
        return;
      }
      done(JoinedOf(*saved, seat));
    });
    Touch(w, *h);
  }

  // --- AnnounceVoiceNote (moderation, after storing a note) ------------------------------

  void OnAnnounce(Worker& w, const pb::AnnounceVoiceNoteRequest& r, const AnnounceDone& done) {
    Hosted* h = Find(w, r.table_id());
    if (h == nullptr) {
      done(NotHere(r.table_id()));
      return;
    }
    if (h->save_failures > 0) {
      done(absl::UnavailableError("the table is waiting for its storage: retry"));
      return;
    }
    const int64_t now = NowMs();
    h->table->Advance(now);  // a lock or a round that ended by now has ended
    Touch(w, *h);
    // Answers once what it answers about is saved (persist, then answer).
    auto answer_after_save = [h, done](int64_t play_at_ms, bool replayed) {
      h->waiters.push_back(
          [done, play_at_ms, replayed](const Hosted* saved, const absl::Status& why) {
            if (saved == nullptr) {
              done(why);
              return;
            }
            pb::AnnounceVoiceNoteResponse out;
            out.set_play_at_ms(play_at_ms);
            out.set_replayed(replayed);
            done(out);
          });
    };
    if (const table::VoiceNote* n = h->table->FindNote(r.note_id())) {
      if (n->author != r.player()) {
        if (metrics != nullptr) {
          metrics->Command("announce_voice_note", absl::StatusCode::kAlreadyExists);
        }
        done(absl::AlreadyExistsError(
            absl::StrCat("note ", r.note_id(), " was announced for another player")));
        return;
      }
      if (metrics != nullptr) metrics->Command("announce_voice_note", absl::StatusCode::kOk);
      answer_after_save(n->play_at_ms, /*replayed=*/true);
      return;
    }
    // The note belongs to the round its recording started in (§5.1), as CheckVoiceLock
    // told moderation: a recording that outlasts its round (the last card played, the next
    // count-in begun) is still announced.
    const int seat = SeatOfPlayer(*h->table, r.player());
    const bool recording = seat >= 0 && h->table->recording_seat() == seat;
    const uint64_t round = recording ? h->table->recording_round() : h->table->voice_round();
    if (r.round() != round) {
      if (metrics != nullptr) {
        metrics->Command("announce_voice_note", absl::StatusCode::kFailedPrecondition);
      }
      done(absl::FailedPreconditionError(absl::StrCat(
          "round_over: the note is of round ", r.round(),
          recording ? ", the recording is of round " : ", the table is in round ", round)));
      return;
    }
    // The player's own voice_sent, through the stream commands' path.
    absl::Status s = h->table->Handle({.type = table::CommandType::kVoiceSent,
                                       .player = r.player(),
                                       .note_id = r.note_id(),
                                       .duration_ms = r.duration_ms()},
                                      now);
    if (s.code() == absl::StatusCode::kFailedPrecondition ||
        s.code() == absl::StatusCode::kPermissionDenied) {
      // "you are not recording", "... is not seated", "reconnect first", "the table is closed"
      s = absl::FailedPreconditionError(absl::StrCat("no_lock: ", s.message()));
    }
    if (metrics != nullptr) metrics->Command("announce_voice_note", s.code());
    Touch(w, *h);
    if (!s.ok()) {
      done(s);
      return;
    }
    const table::VoiceNote* announced = h->table->FindNote(r.note_id());
    COURTPIECE_CHECK(announced != nullptr, "an accepted voice_sent keeps the note it announced");
    answer_after_save(announced->play_at_ms, /*replayed=*/false);
  }

  // --- tables in and out --------------------------------------------------------------------

  void OnCreate(Worker& w, const pb::CreateTableRequest& request, const CreateDone& done) {
    if (Hosted* h = Find(w, request.table_id())) {
      if (!SameCreate(h->create, request)) {
        done(absl::AlreadyExistsError("the table id exists with other options"));
        return;
      }
      pb::CreateTableResponse out;
      *out.mutable_table() = Info(*h);
      out.set_created(false);
      done(out);
      return;
    }
    if (tables_count.load() >= options.tables_max) {
      done(absl::ResourceExhaustedError("this instance hosts its maximum of tables"));
      return;
    }
    const int64_t now = NowMs();
    absl::StatusOr<std::unique_ptr<table::Table>> t =
        table::Table::Create(OptionsOf(request), &engines, &seeds, now);
    if (!t.ok()) {
      done(t.status());
      return;
    }
    auto h = std::make_unique<Hosted>();
    h->id = request.table_id();
    h->create = request;
    h->table = std::move(*t);
    // The host has no stream yet: away (kept 1 minute, §4.10) until their Play stream opens,
    // as a player seated by JoinTable is; so no game starts for a host who never comes.
    (void)h->table->Handle(
        {.type = table::CommandType::kDisconnect, .player = request.host_player()}, now);
    absl::StatusOr<Owner> owner = store.Create(h->id, options.instance_id, StateBytes(*h, now));
    if (owner.status().code() == absl::StatusCode::kAlreadyExists) {
      done(Existing(request));
      return;
    }
    if (!owner.ok()) {
      done(absl::UnavailableError(
          absl::StrCat("the table store is unreachable: ", owner.status().message())));
      return;
    }
    h->owner = *owner;
    Hosted& ref = *h;
    w.tables[h->id] = std::move(h);
    tables_count.fetch_add(1);
    Touch(w, ref);  // the creation's events: saved and published with the next Flush
    pb::CreateTableResponse out;
    *out.mutable_table() = Info(ref);
    out.set_created(true);
    done(out);
  }

  // CreateTable of an id that the store has (hosted elsewhere, or here before a restart).
  absl::StatusOr<pb::CreateTableResponse> Existing(const pb::CreateTableRequest& request) {
    absl::StatusOr<pb::TableInfo> info = InfoFromStore(request.table_id(), &request);
    if (!info.ok()) return info.status();
    pb::CreateTableResponse out;
    *out.mutable_table() = *info;
    out.set_created(false);
    return out;
  }

  // The table as the store has it; with `same`, AlreadyExists unless it was made by an
  // equal request.
  absl::StatusOr<pb::TableInfo> InfoFromStore(std::string_view table_id,
                                              const pb::CreateTableRequest* same) {
    absl::StatusOr<StoredTableBytes> stored = store.Load(table_id);
    if (!stored.ok()) {
      if (stored.status().code() == absl::StatusCode::kNotFound) {
        return absl::NotFoundError(absl::StrCat("no table ", common::ToAbsl(table_id)));
      }
      return absl::UnavailableError(
          absl::StrCat("the table store is unreachable: ", stored.status().message()));
    }
    pb::HostedTable state;
    if (!state.ParseFromString(stored->state)) {
      return absl::InternalError("the stored table does not parse");
    }
    if (same != nullptr && !SameCreate(state.create(), *same)) {
      return absl::AlreadyExistsError("the table id exists with other options");
    }
    absl::StatusOr<std::unique_ptr<table::Table>> t =
        table::Table::Restore(state.table(), &engines, &seeds);
    if (!t.ok()) return absl::InternalError("the stored table does not restore");
    pb::TableInfo info = InfoOf(**t, state.create());
    info.set_owner_instance(stored->owner.instance);
    info.set_owner_epoch(stored->owner.epoch);
    absl::StatusOr<std::vector<InstanceInfo>> live = store.LiveInstances();
    if (live.ok()) {
      for (const InstanceInfo& i : *live) {
        if (i.id == stored->owner.instance) info.set_owner_addr(i.addr);
      }
    }
    return info;
  }

  // Takes a table this instance just claimed (epoch `owner`) from the store.
  void Adopt(Worker& w, const std::string& table_id, const Owner& owner) {
    if (Hosted* existing = Find(w, table_id)) {
      existing->owner = owner;
      return;
    }
    absl::StatusOr<StoredTableBytes> stored = store.Load(table_id);
    pb::HostedTable state;
    if (!stored.ok() || !state.ParseFromString(stored->state)) {
      log.Error("claimed table not loaded", {{"table", table_id}, {"status", stored.status()}});
      return;
    }
    absl::StatusOr<std::unique_ptr<table::Table>> t =
        table::Table::Restore(state.table(), &engines, &seeds);
    if (!t.ok()) {
      log.Error("claimed table not restored", {{"table", table_id}, {"status", t.status()}});
      return;
    }
    const int64_t now = NowMs();
    auto h = std::make_unique<Hosted>();
    h->id = table_id;
    h->owner = owner;
    h->create = state.create();
    h->table = std::move(*t);
    h->closed = state.closed();
    for (const std::string& bytes : stored->events) {
      pb::StoredEvent e;
      // Stored input, not a programmer's promise: an event out of seq order is skipped
      // (back_seq() is 0 while the history is empty; seqs start at 1).
      if (e.ParseFromString(bytes) && e.event().seq() > h->history.back_seq()) {
        Keep(h->history, e);
      }
    }
    for (const pb::StoredEffect& e : state.pending()) {
      // A stake or payout the old owner had not seen through: its players may have been told
      // "wallet_unavailable" there (the notice is not in the snapshot), so its success is
      // announced here; "wallet_available" to a player who heard nothing is harmless.
      if (e.has_transfer() && e.transfer().awaited()) h->wallet_available_owed = true;
      h->pending.push_back(Pending{.effect = e});
    }
    for (int s = 0; s < 4; ++s) {
      if (h->table->seat(s).kind == table::SeatKind::kPerson && h->table->seat(s).connected) {
        h->adopt_grace_until_ms = now + options.adopt_grace_ms;
      }
    }
    Hosted& ref = *h;
    w.tables[table_id] = std::move(h);
    tables_count.fetch_add(1);
    if (metrics != nullptr) metrics->TableClaimed();
    log.Info("table taken over", {{"table", table_id}, {"epoch", owner.epoch}});
    ref.table->Advance(now);
    ref.dirty = true;  // saved under the new epoch before anything is published
    Touch(w, ref);
  }

  // --- the watcher: heartbeat and failover ------------------------------------------------

  // Heartbeats; when the previous successful heartbeat is older than the TTL (the process
  // was stalled, or Redis was away), peers may have taken tables over meanwhile: every
  // table is checked against its owner record and dropped if it moved, so its streams go
  // to the new owner even when the table has no input that would hit the fence.
  void Heartbeat() {
    const int64_t now = NowMs();
    absl::Status s =
        store.Heartbeat({options.instance_id, options.instance_addr}, options.heartbeat_ttl_ms);
    if (!s.ok()) {
      log.Warn("heartbeat failed", {{"status", s}});
      return;
    }
    const int64_t last = last_heartbeat_ms.exchange(now);
    if (last != 0 && now - last >= options.heartbeat_ttl_ms) VerifyOwnership();
  }

  void VerifyOwnership() {
    for (auto& wp : workers) {
      Worker* w = wp.get();
      (void)Post(*w, [this, w] {
        std::vector<std::string> lost;
        for (auto& [id, h] : w->tables) {
          absl::StatusOr<Owner> owner = store.GetOwner(id);
          if ((owner.ok() && !(*owner == h->owner)) ||
              owner.status().code() == absl::StatusCode::kNotFound) {
            lost.push_back(id);
          }
        }
        for (const std::string& id : lost) {
          log.Warn("table taken over while this instance was away", {{"table", id}});
          Drop(*w, id, absl::UnavailableError("the table moved to another instance: reconnect"));
        }
      });
    }
  }

  void ClaimAndAdopt(const std::string& table_id, const Owner& from) {
    absl::StatusOr<Owner> claimed = store.Claim(table_id, options.instance_id, from.epoch);
    if (!claimed.ok()) return;  // another instance won, or the store is down: next pass
    Worker& w = WorkerOf(table_id);
    Post(w, [this, &w, table_id, owner = *claimed] { Adopt(w, table_id, owner); });
  }

  // On the table's worker, so that the tables of a dead instance are taken over by every
  // worker at once (each a few Redis round trips), not one by one by the watcher.
  void TakeOver(Worker& w, const std::string& table_id, const std::string& dead) {
    {
      absl::MutexLock lock(&taking_mu);
      taking.erase(table_id);
    }
    if (shutting_down.load() || Find(w, table_id) != nullptr) return;
    absl::StatusOr<Owner> owner = store.GetOwner(table_id);
    if (!owner.ok() || owner->instance != dead) return;
    absl::StatusOr<Owner> claimed = store.Claim(table_id, options.instance_id, owner->epoch);
    if (!claimed.ok()) return;
    Adopt(w, table_id, *claimed);
  }

  void WatchOnce() {
    if (shutting_down.load()) return;
    Heartbeat();
    absl::StatusOr<std::vector<InstanceInfo>> live = store.LiveInstances();
    absl::StatusOr<std::vector<std::string>> known = store.KnownInstances();
    if (!live.ok() || !known.ok()) return;
    bool self_live = false;
    for (const InstanceInfo& i : *live) self_live = self_live || i.id == options.instance_id;
    if (!self_live) return;  // our own heartbeat is not in: do not take anything
    for (const std::string& dead : *known) {
      if (dead == options.instance_id) continue;
      if (std::any_of(live->begin(), live->end(),
                      [&dead](const InstanceInfo& i) { return i.id == dead; })) {
        continue;
      }
      absl::StatusOr<std::vector<std::string>> tables = store.TablesOf(dead);
      if (!tables.ok()) continue;
      // The index loses a table when it is claimed or removed: empty = nothing left.
      bool all_moved = tables->empty();
      for (const std::string& t : *tables) {
        if (PickOwner(t, *live) != options.instance_id) continue;
        if (tables_count.load() >= options.tables_max) break;
        {
          absl::MutexLock lock(&taking_mu);
          if (!taking.insert(t).second) continue;  // already on its way
        }
        Worker& w = WorkerOf(t);
        if (!Post(w, [this, &w, t, dead] { TakeOver(w, t, dead); })) {
          absl::MutexLock lock(&taking_mu);
          taking.erase(t);
        }
      }
      if (all_moved) (void)store.Forget(dead);
    }
  }

  // Tables the store says this instance owns (a restart under the same id): claimed again,
  // which bumps the epoch and fences any earlier incarnation.
  void TakeBackOwn() {
    absl::StatusOr<std::vector<std::string>> tables = store.TablesOf(options.instance_id);
    if (!tables.ok()) return;
    for (const std::string& t : *tables) {
      absl::StatusOr<Owner> owner = store.GetOwner(t);
      if (owner.ok() && owner->instance == options.instance_id) ClaimAndAdopt(t, *owner);
    }
  }

  void RunWatcher() {
    for (;;) {
      {
        absl::MutexLock lock(&watch_mu);
        watch_cv.WaitWithTimeout(&watch_mu, absl::Milliseconds(options.heartbeat_every_ms));
        if (watch_stop) return;
      }
      WatchOnce();
    }
  }

  // Runs `fn` on every worker and waits for all (bounded); used by reads across tables.
  void OnEveryWorker(const std::function<void(Worker&)>& fn) {
    absl::Mutex mu;
    int left = static_cast<int>(workers.size());
    for (auto& wp : workers) {
      Worker* w = wp.get();
      if (!Post(*w, [&mu, &left, &fn, w] {
            fn(*w);
            absl::MutexLock lock(&mu);
            --left;
          })) {
        absl::MutexLock lock(&mu);
        --left;
      }
    }
    if (!options.start_threads) PollAll();
    // Waits for every worker: the tasks hold references to this frame (a worker is never
    // blocked for long: its slowest step is one bounded Redis round trip).
    absl::MutexLock lock(&mu);
    auto done = [&left] { return left == 0; };
    mu.Await(absl::Condition(&done));
  }
};

// ---------------------------------------------------------------------------------------

TableHost::TableHost(HostOptions options, Clock& clock, TableStore& store, WalletPort& wallet,
                     RecordsPort& records, table::EngineFactory& engines, table::SeedSource& seeds,
                     HostMetrics* metrics, BotRunner* bots)
    : options_(std::move(options)),
      impl_(std::make_unique<Impl>(options_, clock, store, wallet, records, engines, seeds, metrics,
                                   bots)) {}

TableHost::~TableHost() { Shutdown(); }

absl::Status TableHost::Start() {
  impl_->Heartbeat();
  impl_->TakeBackOwn();
  if (!options_.start_threads) {
    impl_->PollAll();
    return absl::OkStatus();
  }
  for (auto& w : impl_->workers) {
    Impl::Worker* wp = w.get();
    w->thread = std::thread([this, wp] { impl_->RunWorker(*wp); });
  }
  impl_->watcher = std::thread([this] { impl_->RunWatcher(); });
  return absl::OkStatus();
}

void TableHost::Shutdown() {
  if (impl_->shutting_down.exchange(true)) return;
  // First: no pool thread may post an answer to a worker after it stops.
  impl_->bots->Stop();
  {
    absl::MutexLock lock(&impl_->watch_mu);
    impl_->watch_stop = true;
    impl_->watch_cv.Signal();
  }
  if (impl_->watcher.joinable()) impl_->watcher.join();
  impl_->OnEveryWorker([this](Impl::Worker& w) {
    std::vector<std::string> ids;
    for (auto& [id, h] : w.tables) ids.push_back(id);
    const int64_t now = impl_->NowMs();
    for (const std::string& id : ids) {
      Impl::Hosted* h = impl_->Find(w, id);
      if (h == nullptr) continue;
      if (impl_->Persist(w, *h, now) == Impl::Saved::kDropped) continue;
      impl_->Drop(w, id, absl::UnavailableError("this instance is shutting down: reconnect"));
    }
  });
  for (auto& w : impl_->workers) {
    {
      absl::MutexLock lock(&w->mu);
      w->stop = true;
      w->cv.Signal();
    }
    if (w->thread.joinable()) w->thread.join();
  }
  (void)impl_->store.Deregister(options_.instance_id);
}

void TableHost::CreateTable(const table::v1::CreateTableRequest& request, CreateDone done) {
  if (absl::Status s = ValidateCreate(request); !s.ok()) {
    done(s);
    return;
  }
  if (impl_->shutting_down.load()) {
    done(absl::UnavailableError("this instance is shutting down"));
    return;
  }
  Impl::Worker& w = impl_->WorkerOf(request.table_id());
  if (!impl_->Post(w, [this, &w, request, done] { impl_->OnCreate(w, request, done); })) {
    done(impl_->Refused());
  }
}

void TableHost::GetTable(std::string_view table_id, InfoDone done) {
  if (!ValidId(table_id)) {
    done(absl::InvalidArgumentError("table_id: must be 1..64 chars of [A-Za-z0-9_-]"));
    return;
  }
  Impl::Worker& w = impl_->WorkerOf(table_id);
  std::string id(table_id);
  if (!impl_->Post(w, [this, &w, id, done] {
        if (Impl::Hosted* h = impl_->Find(w, id)) {
          done(impl_->Info(*h));
          return;
        }
        done(impl_->InfoFromStore(id, nullptr));
      })) {
    done(impl_->Refused());
  }
}

namespace {
bool Passes(const table::v1::TableInfo& info, const TableHost::ListFilter& filter) {
  if (filter.open_only) {
    if (!info.listed() || info.phase() == "closed") return false;
    bool empty_seat = false;
    for (const table::v1::SeatInfo& s : info.seats())
      empty_seat = empty_seat || s.kind() == "empty";
    if (!empty_seat) return false;
  }
  if (!filter.player.empty()) {
    bool seated = false;
    for (const table::v1::SeatInfo& s : info.seats()) {
      seated = seated || (s.kind() == "person" && s.player() == filter.player);
    }
    if (!seated) return false;
  }
  return true;
}
}  // namespace

void TableHost::JoinTable(std::string_view table_id, std::string_view player, JoinDone done) {
  if (!ValidId(table_id) || !ValidId(player)) {
    done(absl::InvalidArgumentError("table_id and player: 1..64 chars of [A-Za-z0-9_-]"));
    return;
  }
  if (impl_->shutting_down.load()) {
    done(absl::UnavailableError("this instance is shutting down"));
    return;
  }
  Impl::Worker& w = impl_->WorkerOf(table_id);
  std::string id(table_id), p(player);
  if (!impl_->Post(w, [this, &w, id, p, done] { impl_->OnJoinTable(w, id, p, done); })) {
    done(impl_->Refused());
  }
}

std::vector<table::v1::TableInfo> TableHost::ListTables(const ListFilter& filter) {
  absl::Mutex mu;
  std::vector<table::v1::TableInfo> out;
  impl_->OnEveryWorker([this, &mu, &out, &filter](Impl::Worker& w) {
    for (auto& [id, h] : w.tables) {
      table::v1::TableInfo info = impl_->Info(*h);
      if (!Passes(info, filter)) continue;
      absl::MutexLock lock(&mu);
      out.push_back(std::move(info));
    }
  });
  absl::MutexLock lock(&mu);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.table_id() < b.table_id(); });
  return out;
}

void TableHost::CheckVoiceLock(std::string_view table_id, std::string_view player, VoiceDone done) {
  if (!ValidId(table_id) || !ValidId(player)) {
    done(absl::InvalidArgumentError("table_id and player: 1..64 chars of [A-Za-z0-9_-]"));
    return;
  }
  Impl::Worker& w = impl_->WorkerOf(table_id);
  std::string id(table_id), p(player);
  if (!impl_->Post(w, [this, &w, id, p, done] {
        Impl::Hosted* h = impl_->Find(w, id);
        if (h == nullptr) {
          done(impl_->NotHere(id));
          return;
        }
        const table::Table& t = *h->table;
        table::v1::CheckVoiceLockResponse out;
        const int seat = SeatOfPlayer(t, p);
        const bool recording = seat >= 0 && t.recording_seat() == seat;
        out.set_seat(seat);
        out.set_round(recording ? t.recording_round() : t.voice_round());
        if (seat < 0) {
          out.set_reason("not_seated");
        } else if (t.PeopleSeated() < 2) {
          out.set_reason("alone");
        } else if (t.seat(seat).voice_used && !recording) {
          out.set_reason("allowance_used");
        } else if (!recording) {
          out.set_reason("no_lock");
        } else {
          out.set_may_send(true);
        }
        done(out);
      })) {
    done(impl_->Refused());
  }
}

void TableHost::AnnounceVoiceNote(const table::v1::AnnounceVoiceNoteRequest& request,
                                  AnnounceDone done) {
  if (!ValidId(request.table_id()) || !ValidId(request.player())) {
    done(absl::InvalidArgumentError("table_id and player: 1..64 chars of [A-Za-z0-9_-]"));
    return;
  }
  if (!ValidId(request.note_id())) {
    done(absl::InvalidArgumentError("note_id: 1..64 chars of [A-Za-z0-9_-]"));
    return;
  }
  if (request.duration_ms() < 1 ||
      request.duration_ms() > table::kVoiceMaxMs + table::kVoiceToleranceMs) {
    done(absl::InvalidArgumentError(absl::StrCat("duration_ms: 1..",
                                                 table::kVoiceMaxMs + table::kVoiceToleranceMs,
                                                 ", got ", request.duration_ms())));
    return;
  }
  if (impl_->shutting_down.load()) {
    done(absl::UnavailableError("this instance is shutting down"));
    return;
  }
  Impl::Worker& w = impl_->WorkerOf(request.table_id());
  if (!impl_->Post(w, [this, &w, request, done] { impl_->OnAnnounce(w, request, done); })) {
    done(impl_->Refused());
  }
}

uint64_t TableHost::Open(std::string_view player, const table::v1::OpenTable& open,
                         std::shared_ptr<StreamSink> sink) {
  const uint64_t id = impl_->next_stream_id.fetch_add(1);
  if (!ValidId(open.table_id())) {
    sink->Finish(absl::InvalidArgumentError("table_id: must be 1..64 chars of [A-Za-z0-9_-]"));
    return id;
  }
  if (impl_->shutting_down.load()) {
    sink->Finish(absl::UnavailableError("this instance is shutting down: reconnect"));
    return id;
  }
  {
    absl::MutexLock lock(&impl_->streams_mu);
    impl_->stream_tables[id] = {.table_id = open.table_id()};
  }
  Impl::Worker& w = impl_->WorkerOf(open.table_id());
  std::string p(player);
  if (!impl_->Post(w, [this, &w, id, p, open, sink] { impl_->OnOpen(w, id, p, open, sink); })) {
    impl_->Forget(id);
    sink->Finish(impl_->Refused());
  }
  return id;
}

void TableHost::Command(uint64_t stream_id, const table::v1::TableCommand& command) {
  std::string table_id;
  {
    absl::MutexLock lock(&impl_->streams_mu);
    auto it = impl_->stream_tables.find(stream_id);
    if (it == impl_->stream_tables.end() || it->second.overloaded) return;
    table_id = it->second.table_id;
  }
  Impl::Worker& w = impl_->WorkerOf(table_id);
  if (impl_->Post(w, [this, &w, table_id, stream_id, command] {
        impl_->OnCommand(w, table_id, stream_id, command);
      })) {
    return;
  }
  {
    absl::MutexLock lock(&impl_->streams_mu);
    auto it = impl_->stream_tables.find(stream_id);
    if (it == impl_->stream_tables.end() || it->second.overloaded) return;
    it->second.overloaded = true;  // once per stream: its later commands go with it
  }
  impl_->PostAlways(
      w, [this, &w, table_id, stream_id] { impl_->OnStreamOverloaded(w, table_id, stream_id); });
}

void TableHost::StreamEnded(uint64_t stream_id) {
  std::string table_id;
  {
    absl::MutexLock lock(&impl_->streams_mu);
    auto it = impl_->stream_tables.find(stream_id);
    if (it == impl_->stream_tables.end()) return;
    table_id = it->second.table_id;
  }
  Impl::Worker& w = impl_->WorkerOf(table_id);
  impl_->PostAlways(
      w, [this, &w, table_id, stream_id] { impl_->OnStreamGone(w, table_id, stream_id); });
}

int TableHost::Poll() { return impl_->PollAll(); }
void TableHost::WatchOnce() {
  impl_->WatchOnce();
  if (!options_.start_threads) impl_->PollAll();
}

HostStats TableHost::Stats() const {
  absl::Mutex mu;
  HostStats out;
  impl_->OnEveryWorker([&mu, &out](Impl::Worker& w) {
    HostStats mine;
    for (auto& [id, h] : w.tables) {
      ++mine.tables;
      mine.streams += static_cast<int64_t>(h->streams.size());
      mine.pending_effects += static_cast<int64_t>(h->pending.size());
      for (int s = 0; s < 4; ++s) {
        switch (h->table->seat(s).kind) {
          case table::SeatKind::kEmpty:
            ++mine.seats_empty;
            break;
          case table::SeatKind::kPerson:
            ++mine.seats_people;
            break;
          case table::SeatKind::kBot:
            ++mine.seats_bots;
            break;
        }
      }
    }
    absl::MutexLock lock(&mu);
    out.tables += mine.tables;
    out.streams += mine.streams;
    out.pending_effects += mine.pending_effects;
    out.seats_people += mine.seats_people;
    out.seats_bots += mine.seats_bots;
    out.seats_empty += mine.seats_empty;
  });
  out.bot_jobs_queued = impl_->bots->QueueDepth();
  out.bot_jobs_expired = impl_->bots->Expired();
  return out;
}

}  // namespace courtpiece::table_service
