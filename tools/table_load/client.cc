#include "client.h"

#include <algorithm>
#include <array>
#include <random>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "courtpiece/common/grpc_status.h"
#include "grpcpp/channel.h"

namespace courtpiece::table_load {

namespace tv = table::v1;

namespace {

constexpr char kPlayerIdMetadata[] = "courtpiece-player-id";
constexpr auto kReconnectRetry = std::chrono::milliseconds(100);
constexpr auto kUnaryTimeout = std::chrono::seconds(5);
constexpr std::array<const char*, 4> kSuits = {"S", "H", "D", "C"};

int64_t MicrosSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t).count();
}

// Counts a unary call down when its callback returns.
class CallDone {
 public:
  explicit CallDone(std::atomic<int>& pending) : pending_(pending) {}
  ~CallDone() { pending_.fetch_sub(1); }

 private:
  std::atomic<int>& pending_;
};

char SuitOf(const std::string& card) { return card.empty() ? 0 : card.back(); }

}  // namespace

std::string GrpcCodeName(int code) {
  if (code < 0 || code > static_cast<int>(grpc::StatusCode::UNAUTHENTICATED)) {
    return absl::StrCat("CODE_", code);
  }
  return common::GrpcCodeName(static_cast<grpc::StatusCode>(code));
}

// One player's state, kept across that player's streams (a reconnect resumes by seq).
struct Player {
  std::string id;
  int seat = -1;
  uint64_t last_seq = 0;
  std::vector<std::string> hand;
  bool first_five = false;
  bool my_turn = false;
  char led_suit = 0;             // the suit of the trick in progress, 0 for none
  PlayStream* stream = nullptr;  // the live stream, if any
  int instance = -1;             // where `stream` is
  bool opened = false;           // `opened` received on `stream`
  uint64_t next_command_id = 1;
};

struct TableState {
  enum class Stage { kAccounts, kCreating, kJoining, kStarting, kReady, kFailed };
  int index = 0;
  std::string id;
  int create_instance = 0;
  std::recursive_mutex mu;
  // Guarded by mu.
  std::array<Player, 4> players;
  Stage stage = Stage::kAccounts;
  int accounts_open = 0;
  int joins_ok = 0;
  bool start_sent = false;
  // The action in flight: candidates tried in order until one is accepted.
  bool in_flight = false;
  int in_flight_player = -1;
  uint64_t in_flight_id = 0;
  bool in_flight_is_move = false;
  Clock::time_point sent_at;
  std::vector<tv::TableCommand> candidates;
  size_t candidate = 0;
  Clock::time_point last_accepted{};
  int64_t moves_accepted = 0;
  // Failover.
  bool awaiting_failover = false;
  bool failover_answered = false;
  bool mid_round_at_kill = false;
  Clock::time_point killed_at;
  // From the events: true from `round_over` or `count_in` until the next `hand`.
  bool between_rounds = true;
  // A `timeout` event arrived while awaiting failover.
  bool timeout_in_failover = false;
};

// One PlayMux stream (LoadOptions::mux) carrying many players' sessions, as a gateway's.
// It keeps itself alive until OnDone, when every session still on it ends UNAVAILABLE; a
// dead one is replaced by the next OpenStream to its slot.
class MuxLink final : public grpc::ClientBidiReactor<tv::PlayMuxRequest, tv::PlayMuxResponse>,
                      public std::enable_shared_from_this<MuxLink> {
 public:
  void Start(tv::TableService::Stub* stub) {
    self_ = shared_from_this();
    stub->async()->PlayMux(&context_, this);
    StartRead(&in_);
    AddHold();  // writes start from outside the reactions: see Write
    StartCall();
  }
  // False when the link is dead (the stream is then not opened).
  bool Open(uint64_t session, PlayStream* stream, const std::string& player,
            const tv::OpenTable& open) {
    tv::SessionRequest r;
    r.set_session(session);
    r.set_player(player);
    *r.mutable_open() = open;
    std::unique_lock<std::mutex> lock(mu_);
    if (dead_) return false;
    sessions_[session] = stream;
    Write(lock, std::move(r));
    return true;
  }
  void Send(uint64_t session, const tv::PlayRequest& request) {
    tv::SessionRequest r;
    r.set_session(session);
    *r.mutable_command() = request.command();
    std::unique_lock<std::mutex> lock(mu_);
    if (!dead_) Write(lock, std::move(r));
  }
  void Close(uint64_t session) {
    tv::SessionRequest r;
    r.set_session(session);
    r.set_close(true);
    std::unique_lock<std::mutex> lock(mu_);
    if (!dead_) Write(lock, std::move(r));
  }
  bool dead() {
    std::lock_guard<std::mutex> lock(mu_);
    return dead_;
  }
  void Cancel() { context_.TryCancel(); }

  void OnWriteDone(bool ok) override {
    std::unique_lock<std::mutex> lock(mu_);
    writing_ = false;
    batch_.Clear();
    if (!ok) {
      out_.clear();
      return;
    }
    WriteBatchLocked();
  }
  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status&) override;

 private:
  // Under mu_: queues `r`, and starts it when no write is in flight. A start from outside
  // the reactions is safe while the hold is on, which Stop() (dead_) removes under mu_.
  void Write(std::unique_lock<std::mutex>&, tv::SessionRequest r) {
    out_.push_back(std::move(r));
    WriteBatchLocked();
  }
  // Under mu_: what waited goes as one batch (as the gateway's dialer does).
  void WriteBatchLocked() {
    if (writing_ || out_.empty()) return;
    // At most 512 (a few dozen bytes each: well under the table's 64 KiB).
    while (!out_.empty() && batch_.requests_size() < 512) {
      *batch_.add_requests() = std::move(out_.front());
      out_.pop_front();
    }
    writing_ = true;
    StartWrite(&batch_);
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (dead_) return;
      dead_ = true;
    }
    RemoveHold();
  }

  grpc::ClientContext context_;
  tv::PlayMuxResponse in_;
  std::shared_ptr<MuxLink> self_;
  std::mutex mu_;
  std::deque<tv::SessionRequest> out_;                  // mu_: waiting for the next write
  tv::PlayMuxRequest batch_;                            // mu_: the write in flight
  bool writing_ = false;                                // mu_
  bool dead_ = false;                                   // mu_
  std::unordered_map<uint64_t, PlayStream*> sessions_;  // mu_
};

// A Play stream of one player: its own gRPC call, or a session of a MuxLink. Deletes itself
// when it ends (OnDone, or its session's end).
class PlayStream final : public grpc::ClientBidiReactor<tv::PlayRequest, tv::PlayResponse> {
 public:
  PlayStream(LoadClient* client, TableState* table, int player, int instance)
      : client_(client), table_(table), player_(player), instance_(instance) {}

  // Under the table's mutex. False when the link is dead (nothing started).
  bool StartMuxLocked(std::shared_ptr<MuxLink> link, uint64_t session,
                      const tv::PlayRequest& open) {
    link_ = std::move(link);
    session_ = session;
    return link_->Open(session_, this, table_->players[player_].id, open.open());
  }
  // From the link's reactions: a message of this session, its end.
  void MuxMessage(const tv::PlayResponse& message) {
    std::lock_guard<std::recursive_mutex> lock(table_->mu);
    Handle(message);
  }
  void MuxEnded(int code) {
    client_->OnStreamDone(table_, player_, cancelled_ ? 1 : code);
    delete this;
  }

  // Under the table's mutex.
  void StartLocked(tv::TableService::Stub* stub, const tv::PlayRequest& open) {
    context_.AddMetadata(kPlayerIdMetadata, table_->players[player_].id);
    stub->async()->Play(&context_, this);
    out_.push_back(open);
    writing_ = true;
    StartWrite(&out_.front());
    StartRead(&in_);
    StartCall();
  }
  void SendLocked(const tv::PlayRequest& request) {
    if (link_ != nullptr) {
      link_->Send(session_, request);
      return;
    }
    out_.push_back(request);
    if (!writing_) {
      writing_ = true;
      StartWrite(&out_.front());
    }
  }
  void CancelLocked() {
    if (link_ == nullptr) {
      context_.TryCancel();
    } else if (!cancelled_) {
      cancelled_ = true;  // its end says CANCELLED, as a cancelled call's
      link_->Close(session_);
    }
  }
  int instance() const { return instance_; }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::recursive_mutex> lock(table_->mu);
    if (!out_.empty()) out_.pop_front();
    if (!ok) {
      out_.clear();
      writing_ = false;
      return;
    }
    if (out_.empty()) {
      writing_ = false;
    } else {
      StartWrite(&out_.front());
    }
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // OnDone follows
    {
      std::lock_guard<std::recursive_mutex> lock(table_->mu);
      Handle(in_);
    }
    StartRead(&in_);
  }

  void OnDone(const grpc::Status& status) override {
    client_->OnStreamDone(table_, player_, static_cast<int>(status.error_code()));
    delete this;
  }

 private:
  void Handle(const tv::PlayResponse& message);
  void HandleEvent(Player& p, const tv::TableEvent& e);
  void HandleResult(const tv::CommandResult& r);

  LoadClient* const client_;
  TableState* const table_;
  const int player_;
  const int instance_;
  grpc::ClientContext context_;
  tv::PlayResponse in_;
  std::deque<tv::PlayRequest> out_;  // the table's mutex
  bool writing_ = false;             // the table's mutex
  std::shared_ptr<MuxLink> link_;    // mux: the link and the session on it
  uint64_t session_ = 0;
  bool cancelled_ = false;  // the table's mutex
};

void MuxLink::OnReadDone(bool ok) {
  if (!ok) {
    Stop();  // OnDone follows
    return;
  }
  for (const tv::SessionResponse& in : in_.responses()) {
    PlayStream* stream = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = sessions_.find(in.session());
      if (it != sessions_.end()) {
        stream = it->second;
        if (in.has_end()) sessions_.erase(it);
      }
    }
    // Only this link's reactions end a session's stream, so `stream` is alive here.
    if (stream == nullptr) continue;
    if (in.has_end()) {
      stream->MuxEnded(in.end().code());
    } else {
      stream->MuxMessage(in.response());
    }
  }
  StartRead(&in_);
}

void MuxLink::OnDone(const grpc::Status&) {
  std::unordered_map<uint64_t, PlayStream*> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dead_ = true;
    left.swap(sessions_);
  }
  for (auto& [session, stream] : left) {
    stream->MuxEnded(static_cast<int>(grpc::StatusCode::UNAVAILABLE));
  }
  std::shared_ptr<MuxLink> last = std::move(self_);
}

namespace {

tv::PlayRequest Command(Player& p, const std::string& type) {
  tv::PlayRequest r;
  r.mutable_command()->set_command_id(p.next_command_id++);
  r.mutable_command()->set_type(type);
  return r;
}

}  // namespace

void PlayStream::Handle(const tv::PlayResponse& message) {
  Player& p = table_->players[player_];
  if (p.stream != this) return;  // a stale stream (already replaced)
  LoadStats& stats = client_->stats();
  switch (message.msg_case()) {
    case tv::PlayResponse::kOpened: {
      p.opened = true;
      if (message.opened().seat() >= 0) p.seat = message.opened().seat();
      if (table_->stage == TableState::Stage::kJoining && player_ > 0) {
        SendLocked(Command(p, "join"));
      }
      if (table_->stage == TableState::Stage::kJoining &&
          table_->joins_ok == client_->options().people - 1 && !table_->start_sent &&
          table_->players[0].opened && table_->players[0].stream) {
        table_->start_sent = true;
        table_->players[0].stream->SendLocked(Command(table_->players[0], "start_now"));
      }
      if (table_->awaiting_failover) client_->Tick(table_);
      return;
    }
    case tv::PlayResponse::kEvent:
      p.last_seq = std::max(p.last_seq, message.event().seq());
      HandleEvent(p, message.event());
      return;
    case tv::PlayResponse::kResult:
      HandleResult(message.result());
      return;
    case tv::PlayResponse::kNotice:
      stats.notices.Add(message.notice().type());
      return;
    case tv::PlayResponse::MSG_NOT_SET:
      return;
  }
}

void PlayStream::HandleEvent(Player& p, const tv::TableEvent& e) {
  const std::string& type = e.type();
  if (type == "round_over" || type == "count_in") table_->between_rounds = true;
  if (type == "timeout" && table_->awaiting_failover) table_->timeout_in_failover = true;
  if (type == "hand") {
    table_->between_rounds = false;
    p.seat = e.seat();
    p.hand.assign(e.cards().begin(), e.cards().end());
    p.first_five = e.detail() == "first_five";
  } else if (type == "turn") {
    p.my_turn = e.seat() == p.seat;
    if (p.my_turn && table_->awaiting_failover) client_->Tick(table_);
  } else if (type == "played") {
    if (e.seat() == p.seat) {
      p.my_turn = false;
      if (e.cards_size() > 0) std::erase(p.hand, e.cards(0));
    }
    if (p.led_suit == 0 && e.cards_size() > 0) p.led_suit = SuitOf(e.cards(0));
  } else if (type == "trick" || type == "tricks") {
    p.led_suit = 0;
  } else if (type == "trump" || type == "hidden" || type == "asked" || type == "shown") {
    if (e.seat() == p.seat) p.my_turn = false;
  } else if (type == "round_over" || type == "round" || type == "round_started") {
    p.my_turn = false;
    p.led_suit = 0;
  }
}

void PlayStream::HandleResult(const tv::CommandResult& r) {
  TableState& t = *table_;
  LoadStats& stats = client_->stats();
  stats.commands.fetch_add(1, std::memory_order_relaxed);
  // Setup steps.
  if (t.stage == TableState::Stage::kJoining) {
    if (r.code() != 0) {
      stats.setup_errors.Add(
          absl::StrCat(player_ == 0 ? "start_now_" : "join_", GrpcCodeName(r.code())));
      client_->TableSetupDone(table_, false);
      return;
    }
    if (player_ > 0) {
      ++t.joins_ok;
    } else {
      client_->TableSetupDone(table_, true);
      return;
    }
    if (t.joins_ok == client_->options().people - 1 && !t.start_sent && t.players[0].opened &&
        t.players[0].stream) {
      t.start_sent = true;
      t.players[0].stream->SendLocked(Command(t.players[0], "start_now"));
    }
    return;
  }
  if (!t.in_flight || t.in_flight_player != player_ || t.in_flight_id != r.command_id()) return;
  stats.command_latency.Add(MicrosSince(t.sent_at));
  const bool new_owner = t.awaiting_failover && instance_ != client_->victim_.load();
  if (new_owner && !t.failover_answered) {
    t.failover_answered = true;
    stats.failover_answered.Add(MicrosSince(t.killed_at));
  }
  if (r.code() == 0) {
    t.in_flight = false;
    if (t.in_flight_is_move) {
      stats.actions.fetch_add(1, std::memory_order_relaxed);
      t.last_accepted = Clock::now();
      ++t.moves_accepted;
      if (new_owner) {
        t.awaiting_failover = false;
        const int64_t since_kill = MicrosSince(t.killed_at);
        stats.failover_accepted.Add(since_kill);
        if (t.mid_round_at_kill) {
          stats.failover_accepted_mid_round.Add(since_kill);
        } else {
          stats.failover_accepted_between_rounds.Add(since_kill);
        }
        if (t.timeout_in_failover) stats.failover_accepted_after_timeout.Add(since_kill);
      }
    }
    return;
  }
  if (!t.in_flight_is_move) {  // a failover probe, answered
    t.in_flight = false;
    return;
  }
  stats.rejected.Add(GrpcCodeName(r.code()));
  Player& p = t.players[player_];
  if (++t.candidate >= t.candidates.size() || p.stream == nullptr) {
    stats.no_candidate.fetch_add(1, std::memory_order_relaxed);
    t.in_flight = false;
    p.my_turn = false;  // wait for the next `turn`
    return;
  }
  tv::PlayRequest next;
  *next.mutable_command() = t.candidates[t.candidate];
  next.mutable_command()->set_command_id(p.next_command_id++);
  t.in_flight_id = next.command().command_id();
  t.sent_at = Clock::now();
  p.stream->SendLocked(next);
}

// --- LoadClient -------------------------------------------------------------------------

LoadClient::LoadClient(std::vector<InstanceEndpoint>* instances,
                       std::shared_ptr<grpc::Channel> wallet_channel, LoadOptions options)
    : instances_(instances),
      wallet_(wallet::v1::Wallet::NewStub(wallet_channel)),
      options_(std::move(options)) {
  driver_ = std::thread([this] { DriverLoop(); });
}

LoadClient::~LoadClient() { Stop(); }

void LoadClient::Stop() {
  if (stopping_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(driver_mu_);
    driver_cv_.notify_all();
  }
  driver_.join();
  for (auto& t : tables_) {
    std::lock_guard<std::recursive_mutex> lock(t->mu);
    for (Player& p : t->players) {
      if (p.stream != nullptr) p.stream->CancelLocked();
    }
  }
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
  while (live_streams_.load() > 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  {
    std::lock_guard<std::mutex> lock(links_mu_);
    for (auto& [instance, links] : links_) {
      for (auto& link : links) {
        if (link != nullptr) link->Cancel();
      }
    }
  }
  while (pending_calls_.load() > 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void LoadClient::AddTables(int count, int instance, int concurrency, Clock::duration ramp,
                           Clock::time_point deadline) {
  const Clock::time_point start = Clock::now();
  const int first = tables();
  const int target_ready = ready_.load() + failed_.load() + count;
  for (int i = first; i < first + count; ++i) {
    auto t = std::make_unique<TableState>();
    t->index = i;
    t->id = absl::StrCat(options_.run_id, "-t", i);
    t->create_instance = instance;
    for (int s = 0; s < 4; ++s) t->players[s].id = absl::StrCat(options_.run_id, "-p", i, "_", s);
    tables_.push_back(std::move(t));
  }
  for (int i = first; i < first + count; ++i) {
    const Clock::time_point not_before = start + ramp * (i - first) / count;
    if (not_before > Clock::now()) std::this_thread::sleep_until(std::min(not_before, deadline));
    while (in_setup_.load() >= concurrency && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (Clock::now() >= deadline) break;
    in_setup_.fetch_add(1);
    SetUpTable(tables_[i].get());
  }
  while (ready_.load() + failed_.load() < target_ready && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void LoadClient::SetUpTable(TableState* t) {
  for (int s = 0; s < options_.people; ++s) {
    struct Call {
      grpc::ClientContext context;
      wallet::v1::OpenAccountRequest request;
      wallet::v1::OpenAccountResponse response;
    };
    auto* call = new Call;
    call->context.set_deadline(std::chrono::system_clock::now() + kUnaryTimeout);
    call->request.set_player_id(t->players[s].id);
    pending_calls_.fetch_add(1);
    wallet_->async()->OpenAccount(
        &call->context, &call->request, &call->response, [this, t, call](grpc::Status status) {
          delete call;
          CallDone done(pending_calls_);
          std::lock_guard<std::recursive_mutex> lock(t->mu);
          if (t->stage != TableState::Stage::kAccounts) return;
          if (!status.ok()) {
            stats_.setup_errors.Add(
                absl::StrCat("open_account_", GrpcCodeName(status.error_code())));
            TableSetupDone(t, false);
            return;
          }
          if (++t->accounts_open == options_.people) {
            t->stage = TableState::Stage::kCreating;
            CreateTable(t);
          }
        });
  }
}

void LoadClient::CreateTable(TableState* t) {
  struct Call {
    grpc::ClientContext context;
    tv::CreateTableRequest request;
    tv::CreateTableResponse response;
  };
  auto* call = new Call;
  call->context.set_deadline(std::chrono::system_clock::now() + kUnaryTimeout);
  call->request.set_table_id(t->id);
  call->request.set_host_player(t->players[0].id);
  call->request.set_bet_coins(options_.bet_coins);
  call->request.set_turn_time_ms(options_.turn_time_ms);
  call->request.set_game_options(options_.game_options);
  call->request.set_bot_level(options_.bot_level);
  call->request.set_code(absl::StrFormat("%06d", t->index % 1'000'000));
  pending_calls_.fetch_add(1);
  (*instances_)[t->create_instance].stub->async()->CreateTable(
      &call->context, &call->request, &call->response, [this, t, call](grpc::Status status) {
        delete call;
        CallDone done(pending_calls_);
        std::lock_guard<std::recursive_mutex> lock(t->mu);
        if (!status.ok()) {
          stats_.setup_errors.Add(absl::StrCat("create_table_", GrpcCodeName(status.error_code())));
          TableSetupDone(t, false);
          return;
        }
        t->stage = TableState::Stage::kJoining;
        for (int s = 0; s < options_.people; ++s) OpenStream(t, s, t->create_instance, 0);
      });
}

void LoadClient::TableSetupDone(TableState* t, bool ok) {
  if (t->stage == TableState::Stage::kReady || t->stage == TableState::Stage::kFailed) return;
  t->stage = ok ? TableState::Stage::kReady : TableState::Stage::kFailed;
  in_setup_.fetch_sub(1);
  if (!ok) {
    failed_.fetch_add(1);
    return;
  }
  ready_.fetch_add(1);
  // The table's ticks, at a random phase so that tables do not act in lockstep.
  static thread_local std::mt19937_64 rng(std::random_device{}());
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / options_.actions_per_second));
  std::uniform_int_distribution<int64_t> phase(0, period.count());
  std::lock_guard<std::mutex> lock(driver_mu_);
  timers_.push({Clock::now() + Clock::duration(phase(rng)), t, -1});
  driver_cv_.notify_one();
}

void LoadClient::OpenStream(TableState* t, int player, int instance, uint64_t last_seq) {
  Player& p = t->players[player];
  InstanceEndpoint& endpoint = (*instances_)[instance];
  auto* stream = new PlayStream(this, t, player, instance);
  p.stream = stream;
  p.instance = instance;
  p.opened = false;
  live_streams_.fetch_add(1);
  tv::PlayRequest open;
  open.mutable_open()->set_table_id(t->id);
  open.mutable_open()->set_last_seq(last_seq);
  const size_t n = endpoint.stream_stubs.size();
  if (!options_.mux) {
    stream->StartLocked(endpoint.stream_stubs[(t->index * 4 + player) % n].get(), open);
    return;
  }
  // A table's players share a link (as a gateway's players share its one per instance).
  const size_t slot = t->index % n;
  std::shared_ptr<MuxLink> link;
  {
    std::lock_guard<std::mutex> lock(links_mu_);
    std::vector<std::shared_ptr<MuxLink>>& links = links_[instance];
    links.resize(n);
    if (links[slot] == nullptr || links[slot]->dead()) {
      links[slot] = std::make_shared<MuxLink>();
      links[slot]->Start(endpoint.stream_stubs[slot].get());
    }
    link = links[slot];
  }
  if (!stream->StartMuxLocked(link, next_session_.fetch_add(1), open)) {
    p.stream = nullptr;  // the link died just now: the driver retries
    live_streams_.fetch_sub(1);
    delete stream;
    ScheduleReconnect(t, player, kReconnectRetry);
  }
}

void LoadClient::OnStreamDone(TableState* t, int player, int code) {
  {
    std::lock_guard<std::recursive_mutex> lock(t->mu);
    Player& p = t->players[player];
    p.stream = nullptr;
    p.opened = false;
    if (t->in_flight && t->in_flight_player == player) t->in_flight = false;
    if (!stopping_.load()) {
      stats_.stream_ends.Add(GrpcCodeName(code));
      if (t->stage == TableState::Stage::kJoining) {
        stats_.setup_errors.Add(absl::StrCat("stream_", GrpcCodeName(code)));
        TableSetupDone(t, false);
      } else if (t->stage == TableState::Stage::kReady) {
        ScheduleReconnect(t, player, kReconnectRetry);
      }
    }
  }
  live_streams_.fetch_sub(1);
}

void LoadClient::ScheduleReconnect(TableState* t, int player, Clock::duration delay) {
  std::lock_guard<std::mutex> lock(driver_mu_);
  timers_.push({Clock::now() + delay, t, player});
  driver_cv_.notify_one();
}

void LoadClient::Reconnect(TableState* t, int player) {
  if (stopping_.load()) return;
  // GetTable on an instance, rotating: a dead one answers UNAVAILABLE, the next is tried.
  const int ask = static_cast<int>(rotate_.fetch_add(1) % instances_->size());
  struct Call {
    grpc::ClientContext context;
    tv::GetTableRequest request;
    tv::TableInfo response;
  };
  auto* call = new Call;
  call->context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
  call->request.set_table_id(t->id);
  pending_calls_.fetch_add(1);
  (*instances_)[ask].stub->async()->GetTable(
      &call->context, &call->request, &call->response,
      [this, t, player, call](grpc::Status status) {
        std::unique_ptr<Call> owned(call);
        CallDone done(pending_calls_);
        std::lock_guard<std::recursive_mutex> lock(t->mu);
        if (stopping_.load() || t->players[player].stream != nullptr) return;
        int owner = -1;
        if (status.ok()) {
          for (size_t i = 0; i < instances_->size(); ++i) {
            if ((*instances_)[i].addr == call->response.owner_addr()) owner = static_cast<int>(i);
          }
        }
        if (owner < 0) {
          ScheduleReconnect(t, player, kReconnectRetry);
          return;
        }
        OpenStream(t, player, owner, t->players[player].last_seq);
      });
}

void LoadClient::Tick(TableState* t) {
  if (t->stage != TableState::Stage::kReady) return;
  if (t->in_flight) {
    stats_.busy_ticks.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  int actor = -1;
  for (int s = 0; s < 4; ++s) {
    const Player& p = t->players[s];
    if (p.my_turn && p.stream != nullptr && p.opened) actor = s;
  }
  if (actor < 0) {
    // After a failover, a table with nobody to act still proves its new owner: a probe
    // (`vote` with no vote running) is answered FAILED_PRECONDITION by the owner.
    const bool all_open =
        std::all_of(t->players.begin(), t->players.end(), [](const Player& p) { return p.opened; });
    if (t->awaiting_failover && !t->failover_answered && all_open) {
      Player& host = t->players[0];
      tv::PlayRequest probe = Command(host, "vote");
      probe.mutable_command()->set_yes(true);
      t->in_flight = true;
      t->in_flight_player = 0;
      t->in_flight_id = probe.command().command_id();
      t->in_flight_is_move = false;
      t->sent_at = Clock::now();
      host.stream->SendLocked(probe);
      return;
    }
    stats_.idle_ticks.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Player& p = t->players[actor];
  t->candidates.clear();
  if (p.first_five) {
    for (const char* suit : kSuits) {
      tv::TableCommand c;
      c.set_type("move");
      c.set_move("call");
      c.set_card(suit);
      t->candidates.push_back(std::move(c));
    }
  } else {
    std::vector<std::string> cards = p.hand;
    std::stable_partition(cards.begin(), cards.end(), [&](const std::string& card) {
      return p.led_suit != 0 && SuitOf(card) == p.led_suit;
    });
    for (const std::string& card : cards) {
      tv::TableCommand c;
      c.set_type("move");
      c.set_move("play");
      c.set_card(card);
      t->candidates.push_back(std::move(c));
    }
  }
  if (t->candidates.empty()) {
    stats_.idle_ticks.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  t->candidate = 0;
  tv::PlayRequest request;
  *request.mutable_command() = t->candidates[0];
  request.mutable_command()->set_command_id(p.next_command_id++);
  t->in_flight = true;
  t->in_flight_player = actor;
  t->in_flight_id = request.command().command_id();
  t->in_flight_is_move = true;
  t->sent_at = Clock::now();
  p.stream->SendLocked(request);
}

void LoadClient::DriverLoop() {
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / options_.actions_per_second));
  // Timers due within this slack run together: thousands of tables ticking a second each
  // would otherwise wake this thread once per tick (the tool's CPU is the machine's too).
  constexpr auto kSlack = std::chrono::milliseconds(1);
  std::vector<Timer> due;
  std::unique_lock<std::mutex> lock(driver_mu_);
  while (!stopping_.load()) {
    if (timers_.empty()) {
      driver_cv_.wait_for(lock, std::chrono::milliseconds(50));
      continue;
    }
    const Clock::time_point now = Clock::now();
    if (timers_.top().at > now + kSlack) {
      driver_cv_.wait_until(lock, std::min(timers_.top().at, now + std::chrono::milliseconds(50)));
      continue;
    }
    due.clear();
    while (!timers_.empty() && timers_.top().at <= now + kSlack) {
      due.push_back(timers_.top());
      timers_.pop();
    }
    lock.unlock();
    for (const Timer& next : due) {
      if (next.player < 0) {
        std::lock_guard<std::recursive_mutex> table_lock(next.table->mu);
        Tick(next.table);
      } else {
        Reconnect(next.table, next.player);
      }
    }
    lock.lock();
    for (const Timer& next : due) {
      // Fixed rate: the next tick is one period after this one was due, not after now.
      if (next.player < 0) timers_.push({next.at + period, next.table, -1});
    }
  }
}

int LoadClient::Steady(Clock::time_point since) const {
  int n = 0;
  for (const auto& t : tables_) {
    std::lock_guard<std::recursive_mutex> lock(t->mu);
    const bool open =
        std::all_of(t->players.begin(), t->players.end(), [](const Player& p) { return p.opened; });
    if (t->stage == TableState::Stage::kReady && open && t->last_accepted > since) ++n;
  }
  return n;
}

int LoadClient::TablesWithActions() const {
  int n = 0;
  for (const auto& t : tables_) {
    std::lock_guard<std::recursive_mutex> lock(t->mu);
    if (t->moves_accepted > 0) ++n;
  }
  return n;
}

int LoadClient::BusiestInstance() const {
  std::vector<int> counts(instances_->size(), 0);
  for (const auto& t : tables_) {
    std::lock_guard<std::recursive_mutex> lock(t->mu);
    if (t->players[0].instance >= 0) ++counts[t->players[0].instance];
  }
  return static_cast<int>(std::max_element(counts.begin(), counts.end()) - counts.begin());
}

void LoadClient::MarkKill(int victim, Clock::time_point killed_at) {
  victim_.store(victim);
  for (auto& t : tables_) {
    std::lock_guard<std::recursive_mutex> lock(t->mu);
    if (t->stage != TableState::Stage::kReady) continue;
    t->awaiting_failover = true;
    t->failover_answered = false;
    t->killed_at = killed_at;
    // Not "someone holds cards": a classic round ends at 7 tricks with cards in hand.
    t->mid_round_at_kill = !t->between_rounds;
    t->timeout_in_failover = false;
  }
}

void LoadClient::ClearFailover() {
  victim_.store(-1);
  for (auto& t : tables_) {
    std::lock_guard<std::recursive_mutex> lock(t->mu);
    t->awaiting_failover = false;
  }
}

int LoadClient::AwaitingFailover() const {
  int n = 0;
  for (const auto& t : tables_) {
    std::lock_guard<std::recursive_mutex> lock(t->mu);
    if (t->awaiting_failover) ++n;
  }
  return n;
}

}  // namespace courtpiece::table_load
