#include "services/gateway/play_session.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/fifo.h"
#include "courtpiece/common/log.h"

namespace courtpiece::gateway {
namespace {

constexpr char kMovingNotApplied[] = "the table is moving to another server; not applied";
constexpr char kMovingMaybeApplied[] =
    "the table is moving to another server; may not have been applied; check the events";
constexpr size_t kTableIdMax = 64;

bool ValidTableId(const std::string& id) {
  if (id.empty() || id.size() > kTableIdMax) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

// The table's reply as the client's type: the same wire format, internal fields dropped.
std::optional<client::v1::PlayResponse> ToClient(const table::v1::PlayResponse& upstream) {
  client::v1::PlayResponse out;
  if (!out.ParseFromString(upstream.SerializeAsString())) return std::nullopt;
  out.DiscardUnknownFields();
  return out;
}

client::v1::PlayResponse Result(uint64_t command_id, absl::StatusCode code, std::string message) {
  client::v1::PlayResponse out;
  out.mutable_result()->set_command_id(command_id);
  out.mutable_result()->set_code(static_cast<int32_t>(code));
  out.mutable_result()->set_message(std::move(message));
  return out;
}

client::v1::PlayResponse NoticeOf(std::string type) {
  client::v1::PlayResponse out;
  out.mutable_notice()->set_type(std::move(type));
  return out;
}

bool Resumable(const absl::Status& status, const std::string& owner_addr) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kInternal:
      return true;
    case absl::StatusCode::kFailedPrecondition:
      return !owner_addr.empty();
    default:
      return false;
  }
}

class PlaySession final : public PlayConnection, public std::enable_shared_from_this<PlaySession> {
 public:
  PlaySession(PlayDeps deps, const PlaySessionOptions& options, std::string player_id,
              std::string peer, std::shared_ptr<ClientSink> sink)
      : deps_(deps),
        options_(options),
        player_(std::move(player_id)),
        peer_(std::move(peer)),
        sink_(std::move(sink)),
        tokens_(options.commands_burst),
        refilled_at_(deps.clock.Now()) {}

  ~PlaySession() override {
    // The front calls OnClientGone before it drops the session; this is a safety net.
    if (stream_ != nullptr) stream_->Cancel();
    if (retry_task_.has_value()) deps_.scheduler.Cancel(*retry_task_);
  }

  void OnClientMessage(client::v1::PlayRequest message) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (state_ == State::kDone) return;
    deps_.metrics.MessageIn(options_.kind);
    switch (message.msg_case()) {
      case client::v1::PlayRequest::kOpen:
        OpenLocked(message.open());
        break;
      case client::v1::PlayRequest::kCommand:
        CommandLocked(message.command());
        break;
      default:
        FinishLocked(absl::InvalidArgumentError("empty message: want open or command"));
        break;
    }
    Drain(lock);
  }

  void OnClientGone() override {
    std::unique_lock<std::mutex> lock(mu_);
    gone_.store(true, std::memory_order_release);
    outbox_.clear();
    if (state_ != State::kDone) {
      state_ = State::kDone;
      // The commands already sent still reach the table (a `leave` sent just before the
      // client closed must be a leave, not a disconnect); then the stream ends from here.
      std::shared_ptr<UpstreamStream> closing = std::move(stream_);  // leaves stream_ null
      StopUpstreamLocked();
      if (closing != nullptr) {
        closing->Close();
        deps_.scheduler.After(options_.upstream_close_grace, [closing] { closing->Cancel(); });
      }
    }
    // Once this returns the sink is not called and the deps are not used (the front may free
    // them). A drain on another thread (an upstream callback) may be handing a message to the
    // sink right now: wait for it; it stops after that message. A drain on this thread (the
    // sink called back into the session) stops when the sink returns.
    if (drainer_ != std::thread::id() && drainer_ != std::this_thread::get_id()) {
      drained_.wait(lock, [this] { return drainer_ == std::thread::id(); });
    }
  }

  // Called by the upstream observer of generation `gen`.
  void OnUpstreamResponse(uint64_t gen, table::v1::PlayResponse response) {
    std::unique_lock<std::mutex> lock(mu_);
    if (state_ == State::kDone || gen != generation_) return;
    std::optional<client::v1::PlayResponse> out = ToClient(response);
    if (!out.has_value()) return;
    switch (response.msg_case()) {
      case table::v1::PlayResponse::kOpened:
        OpenedLocked(std::move(*out));
        break;
      case table::v1::PlayResponse::kEvent: {
        const uint64_t seq = response.event().seq();
        if (seq != 0 && seq <= last_seq_) break;  // already delivered: never doubled
        last_seq_ = std::max(last_seq_, seq);
        Emit(std::move(*out));
        break;
      }
      case table::v1::PlayResponse::kResult: {
        auto it = std::find(in_flight_.begin(), in_flight_.end(), response.result().command_id());
        if (it != in_flight_.end()) in_flight_.erase(it);
        Emit(std::move(*out));
        break;
      }
      case table::v1::PlayResponse::kNotice:
        Emit(std::move(*out));
        break;
      default:
        break;
    }
    Drain(lock);
  }

  void OnUpstreamEnd(uint64_t gen, const absl::Status& status, const std::string& owner_addr) {
    std::unique_lock<std::mutex> lock(mu_);
    if (state_ == State::kDone || gen != generation_) return;
    stream_ = nullptr;
    ++generation_;  // whatever that stream still says is stale
    if (!Resumable(status, owner_addr)) {
      FinishLocked(status);
      Drain(lock);
      return;
    }
    for (uint64_t id : in_flight_) {
      Emit(Result(id, absl::StatusCode::kUnavailable,
                  stream_opened_ ? kMovingMaybeApplied : kMovingNotApplied));
    }
    in_flight_.clear();
    if (state_ == State::kOpen) {
      state_ = State::kResuming;
      Emit(NoticeOf("reconnecting"));
      retry_deadline_ = deps_.clock.Now() + options_.resume_timeout;
      backoff_ = options_.backoff_initial;
      redirects_in_row_ = 0;
    }
    if (deps_.log != nullptr) {
      deps_.log->Info("play upstream ended; resuming", {{"peer", peer_},
                                                        {"player", player_},
                                                        {"table_id", table_id_},
                                                        {"status", status.ToString()},
                                                        {"owner_addr", owner_addr}});
    }
    absl::Duration delay;
    if (status.code() == absl::StatusCode::kFailedPrecondition) {
      redirect_addr_ = owner_addr;
      delay = redirects_in_row_++ < options_.redirects_without_backoff_max ? absl::ZeroDuration()
                                                                           : NextBackoffLocked();
    } else {
      delay = NextBackoffLocked();
    }
    RetryLaterLocked(delay);
    Drain(lock);
  }

 private:
  enum class State { kAwaitOpen, kConnecting, kOpen, kResuming, kDone };

  class Observer final : public UpstreamObserver {
   public:
    Observer(std::weak_ptr<PlaySession> session, uint64_t gen)
        : session_(std::move(session)), gen_(gen) {}
    void OnResponse(table::v1::PlayResponse response) override {
      if (auto s = session_.lock()) s->OnUpstreamResponse(gen_, std::move(response));
    }
    void OnEnd(absl::Status status, std::string owner_addr) override {
      if (auto s = session_.lock()) s->OnUpstreamEnd(gen_, status, owner_addr);
    }

   private:
    std::weak_ptr<PlaySession> session_;
    uint64_t gen_;
  };

  void OpenLocked(const client::v1::OpenTable& open) {
    if (state_ != State::kAwaitOpen) {
      FinishLocked(absl::InvalidArgumentError("a second open on this stream"));
      return;
    }
    if (!ValidTableId(open.table_id())) {
      FinishLocked(
          absl::InvalidArgumentError("open.table_id: want 1..64 characters of [A-Za-z0-9_-]"));
      return;
    }
    table_id_ = open.table_id();
    last_seq_ = open.last_seq();
    state_ = State::kConnecting;
    retry_deadline_ = deps_.clock.Now() + options_.resume_timeout;
    backoff_ = options_.backoff_initial;
    ScheduleAttemptLocked(absl::ZeroDuration());
  }

  void CommandLocked(const client::v1::TableCommand& command) {
    const uint64_t id = command.command_id();
    if (state_ == State::kAwaitOpen) {
      FinishLocked(absl::InvalidArgumentError("the first message must be open"));
      return;
    }
    if (!TakeTokenLocked()) {
      ++refusals_;
      deps_.metrics.RateLimited(options_.kind);
      Emit(Result(id, absl::StatusCode::kResourceExhausted,
                  absl::StrCat("too many commands: at most ", options_.commands_per_second,
                               " a second, burst ", options_.commands_burst)));
      if (refusals_ >= options_.command_refusals_max) {
        FinishLocked(absl::ResourceExhaustedError(
            absl::StrCat("too many commands: ", refusals_, " refused")));
      }
      return;
    }
    table::v1::PlayRequest upstream;
    if (!upstream.mutable_command()->ParseFromString(command.SerializeAsString())) {
      FinishLocked(absl::InvalidArgumentError("malformed command"));
      return;
    }
    switch (state_) {
      case State::kConnecting:
        if (stream_ == nullptr) {
          if (static_cast<int>(held_.size()) >= options_.pending_before_open_max) {
            Emit(Result(id, absl::StatusCode::kResourceExhausted,
                        "too many commands before the table opened"));
          } else {
            held_.push_back(std::move(upstream));
          }
          return;
        }
        SendLocked(std::move(upstream));
        return;
      case State::kOpen:
        SendLocked(std::move(upstream));
        return;
      case State::kResuming:
        Emit(Result(id, absl::StatusCode::kUnavailable, kMovingNotApplied));
        return;
      default:
        return;
    }
  }

  void SendLocked(table::v1::PlayRequest request) {
    const uint64_t id = request.command().command_id();
    if (static_cast<int>(in_flight_.size()) >= options_.in_flight_max) {
      Emit(Result(id, absl::StatusCode::kResourceExhausted, "too many commands in flight"));
      return;
    }
    if (!stream_->Send(std::move(request))) {
      Emit(Result(id, absl::StatusCode::kUnavailable, kMovingNotApplied));
      return;
    }
    in_flight_.push_back(id);
  }

  bool TakeTokenLocked() {
    const absl::Time now = deps_.clock.Now();
    if (now > refilled_at_) {
      tokens_ = std::min<double>(
          options_.commands_burst,
          tokens_ + absl::ToDoubleSeconds(now - refilled_at_) * options_.commands_per_second);
      refilled_at_ = now;
    }
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
  }

  void OpenedLocked(client::v1::PlayResponse opened) {
    stream_opened_ = true;
    redirects_in_row_ = 0;
    backoff_ = options_.backoff_initial;
    const bool resumed = opened.opened().resumed();
    if (state_ == State::kResuming) {
      if (deps_.log != nullptr) {
        const absl::Duration paused =
            options_.resume_timeout - (retry_deadline_ - deps_.clock.Now());
        deps_.log->Info("play resumed", {{"player", player_},
                                         {"table_id", table_id_},
                                         {"by_seq", resumed},
                                         {"last_seq", static_cast<int64_t>(last_seq_)},
                                         {"paused_ms", absl::ToInt64Milliseconds(paused)}});
      }
      if (resumed) {
        deps_.metrics.Reconnect("resumed");
        Emit(NoticeOf("reconnected"));
      } else {
        deps_.metrics.Reconnect("snapshot");
        Emit(std::move(opened));
      }
    } else {
      Emit(std::move(opened));
    }
    if (!resumed) last_seq_ = 0;  // a fresh view follows; the client replaces its own
    state_ = State::kOpen;
  }

  absl::Duration NextBackoffLocked() {
    const absl::Duration d = backoff_;
    backoff_ = std::min(backoff_ * 2, options_.backoff_max);
    return d;
  }

  void RetryLaterLocked(absl::Duration delay) {
    const absl::Time now = deps_.clock.Now();
    if (now >= retry_deadline_) {
      GiveUpLocked();
      return;
    }
    ScheduleAttemptLocked(std::min(delay, retry_deadline_ - now));
  }

  void GiveUpLocked() {
    if (state_ == State::kResuming) deps_.metrics.Reconnect("failed");
    FinishLocked(absl::UnavailableError(absl::StrCat("the table could not be reached for ",
                                                     absl::FormatDuration(options_.resume_timeout),
                                                     "; reconnect")));
  }

  void ScheduleAttemptLocked(absl::Duration delay) {
    const uint64_t gen = generation_;
    std::weak_ptr<PlaySession> weak = weak_from_this();
    retry_task_ = deps_.scheduler.After(delay, [weak, gen] {
      if (auto s = weak.lock()) s->Attempt(gen);
    });
  }

  // One try: find the owner (or take the address the last table named), open there.
  void Attempt(uint64_t gen) {
    std::unique_lock<std::mutex> lock(mu_);
    if (state_ == State::kDone || gen != generation_ || stream_ != nullptr) return;
    retry_task_.reset();
    if (deps_.clock.Now() >= retry_deadline_) {
      GiveUpLocked();
      Drain(lock);
      return;
    }
    std::string addr = std::move(redirect_addr_);
    redirect_addr_.clear();
    if (addr.empty()) {
      const std::string table_id = table_id_;
      lock.unlock();  // Redis I/O without the lock
      absl::StatusOr<std::string> owner = deps_.owners.Lookup(table_id);
      lock.lock();
      if (state_ == State::kDone || gen != generation_ || stream_ != nullptr) return;
      if (!owner.ok()) {
        if (owner.status().code() == absl::StatusCode::kNotFound) {
          FinishLocked(owner.status());
        } else {
          RetryLaterLocked(NextBackoffLocked());
        }
        Drain(lock);
        return;
      }
      addr = *std::move(owner);
    }
    table::v1::OpenTable open;
    open.set_table_id(table_id_);
    open.set_last_seq(last_seq_);
    stream_opened_ = false;
    stream_ = deps_.dialer.Open(addr, player_, std::move(open),
                                std::make_shared<Observer>(weak_from_this(), generation_));
    std::vector<table::v1::PlayRequest> held = std::move(held_);
    held_.clear();
    for (table::v1::PlayRequest& r : held) SendLocked(std::move(r));
    Drain(lock);
  }

  void StopUpstreamLocked() {
    ++generation_;
    if (stream_ != nullptr) {
      stream_->Cancel();
      stream_ = nullptr;
    }
    if (retry_task_.has_value()) {
      deps_.scheduler.Cancel(*retry_task_);
      retry_task_.reset();
    }
    held_.clear();
    in_flight_.clear();
  }

  void FinishLocked(const absl::Status& status) {
    if (state_ == State::kDone) return;
    state_ = State::kDone;
    StopUpstreamLocked();
    finish_ = status;
  }

  void Emit(client::v1::PlayResponse message) {
    if (!gone_) outbox_.push_back(std::move(message));
  }

  // Sends the outbox without the lock, in order, one drainer at a time; leaves unlocked.
  void Drain(std::unique_lock<std::mutex>& lock) {
    if (drainer_ != std::thread::id()) {
      lock.unlock();
      return;
    }
    drainer_ = std::this_thread::get_id();
    while (!gone_ && (!outbox_.empty() || finish_.has_value())) {
      common::Fifo<client::v1::PlayResponse> batch;
      batch.swap(outbox_);
      std::optional<absl::Status> finish;
      if (batch.empty()) finish.swap(finish_);  // Finish goes after every message before it
      lock.unlock();
      for (; !batch.empty(); batch.pop_front()) {
        if (gone_.load(std::memory_order_acquire)) break;
        sink_->Send(std::move(batch.front()));
        deps_.metrics.MessageOut(options_.kind);
      }
      if (finish.has_value() && !gone_.load(std::memory_order_acquire)) {
        sink_->Finish(*finish);
      }
      lock.lock();
    }
    drainer_ = std::thread::id();
    drained_.notify_all();
    lock.unlock();
  }

  const PlayDeps deps_;
  const PlaySessionOptions options_;
  const std::string player_;
  const std::string peer_;
  const std::shared_ptr<ClientSink> sink_;

  std::mutex mu_;
  State state_ = State::kAwaitOpen;                // guarded by mu_
  std::string table_id_;                           // guarded by mu_
  uint64_t last_seq_ = 0;                          // guarded by mu_
  uint64_t generation_ = 0;                        // guarded by mu_
  std::shared_ptr<UpstreamStream> stream_;         // guarded by mu_
  bool stream_opened_ = false;                     // guarded by mu_
  std::string redirect_addr_;                      // guarded by mu_
  int redirects_in_row_ = 0;                       // guarded by mu_
  absl::Time retry_deadline_;                      // guarded by mu_
  absl::Duration backoff_;                         // guarded by mu_
  std::optional<Scheduler::TaskId> retry_task_;    // guarded by mu_
  std::vector<uint64_t> in_flight_;                // guarded by mu_
  std::vector<table::v1::PlayRequest> held_;       // guarded by mu_
  double tokens_;                                  // guarded by mu_
  absl::Time refilled_at_;                         // guarded by mu_
  int refusals_ = 0;                               // guarded by mu_
  common::Fifo<client::v1::PlayResponse> outbox_;  // guarded by mu_
  std::optional<absl::Status> finish_;             // guarded by mu_
  std::thread::id drainer_;          // guarded by mu_: who drains the outbox; id() when none does
  std::condition_variable drained_;  // drainer_ went back to id()
  // Set once, under mu_; the drain also reads it without mu_ between two messages.
  std::atomic<bool> gone_{false};
};

}  // namespace

std::shared_ptr<PlayConnection> PlaySessionService::Connect(std::string player_id, std::string peer,
                                                            std::shared_ptr<ClientSink> sink) {
  return std::make_shared<PlaySession>(deps_, options_, std::move(player_id), std::move(peer),
                                       std::move(sink));
}

}  // namespace courtpiece::gateway
