#include "services/gateway/testing/scripted_player.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "services/gateway/testing/grpc_play_client.h"

namespace courtpiece::gateway::testing {

namespace cv1 = ::courtpiece::client::v1;

namespace {

constexpr int kUnavailable = static_cast<int>(absl::StatusCode::kUnavailable);
constexpr int kResourceExhausted = static_cast<int>(absl::StatusCode::kResourceExhausted);
constexpr int kInvalidArgument = static_cast<int>(absl::StatusCode::kInvalidArgument);
constexpr int kFailedPrecondition = static_cast<int>(absl::StatusCode::kFailedPrecondition);
constexpr absl::Duration kMovingRetry = absl::Milliseconds(200);
constexpr absl::Duration kRateRetry = absl::Seconds(1);
constexpr int kJoinAttemptsMax = 50;

std::string SuitOf(const std::string& card) {
  return card.empty() ? std::string() : card.substr(card.size() - 1);
}

cv1::TableCommand Move(const std::string& move, const std::string& card) {
  cv1::TableCommand c;
  c.set_type("move");
  c.set_move(move);
  c.set_card(card);
  return c;
}

}  // namespace

ScriptedPlayer::ScriptedPlayer(std::string name, Dialer dial, ScriptedPlayerOptions options)
    : name_(std::move(name)), dial_(std::move(dial)), options_(std::move(options)) {}

ScriptedPlayer::~ScriptedPlayer() {
  Stop();
  Disconnect();
}

std::vector<cv1::TableCommand> ScriptedPlayer::Candidates(const std::vector<std::string>& hand,
                                                          bool calling,
                                                          const std::string& led_suit) {
  std::vector<cv1::TableCommand> out;
  if (calling) {
    for (const char* suit : {"S", "H", "D", "C"}) out.push_back(Move("call", suit));
    for (const std::string& card : hand) out.push_back(Move("hide", card));
    return out;
  }
  std::vector<std::string> order = hand;
  std::stable_partition(order.begin(), order.end(), [&](const std::string& c) {
    return !led_suit.empty() && SuitOf(c) == led_suit;
  });
  for (const std::string& card : order) out.push_back(Move("play", card));
  out.push_back(Move("ask", ""));
  out.push_back(Move("show", ""));
  for (const std::string& card : hand) out.push_back(Move("hide", card));
  return out;
}

// --- messages ---------------------------------------------------------------------------

void ScriptedPlayer::Handle(const cv1::PlayResponse& message) {
  std::lock_guard<std::mutex> lock(mu_);
  switch (message.msg_case()) {
    case cv1::PlayResponse::kOpened: {
      const cv1::Opened& o = message.opened();
      opens_.push_back(o);
      views_.push_back(SeqView{.resumed = o.resumed(), .seqs = {}});
      gateway_resuming_ = false;
      if (o.seat() >= 0) seat_ = o.seat();
      if (!o.resumed()) {  // a fresh view follows: it replaces what was known
        hand_.clear();
        calling_ = false;
        led_suit_.clear();
        turn_seq_ = 0;
      }
      break;
    }
    case cv1::PlayResponse::kEvent: {
      const cv1::TableEvent& e = message.event();
      events_.push_back(e);
      if (views_.empty()) views_.push_back(SeqView{});
      if (e.seq() > 0) {
        views_.back().seqs.push_back(e.seq());
        last_seq_ = std::max(last_seq_, e.seq());
      }
      HandleEvent(e);
      break;
    }
    case cv1::PlayResponse::kResult:
      results_.push_back(message.result());
      break;
    case cv1::PlayResponse::kNotice:
      notices_.push_back(message.notice());
      if (message.notice().type() == "reconnecting") {
        gateway_resuming_ = true;
      } else if (message.notice().type() == "reconnected") {
        gateway_resuming_ = false;
        views_.push_back(SeqView{.resumed = true, .seqs = {}});
      }
      break;
    case cv1::PlayResponse::MSG_NOT_SET:
      faults_.push_back(absl::StrCat(name_, ": an empty PlayResponse"));
      break;
  }
  cv_.notify_all();
}

// Under mu_.
void ScriptedPlayer::HandleEvent(const cv1::TableEvent& e) {
  const std::string& type = e.type();
  if (type == "seated" && !options_.player_id.empty() && e.player() == options_.player_id) {
    seat_ = e.seat();
  } else if ((type == "hand" || type == "cards") && (e.seat() == seat_ || seat_ < 0)) {
    if (seat_ < 0) seat_ = e.seat();
    hand_.assign(e.cards().begin(), e.cards().end());
    calling_ = e.detail() == "first_five";
  } else if (type == "round" || type == "trick") {
    led_suit_.clear();
  } else if (type == "played" && e.cards_size() == 1) {
    const std::string& card = e.cards(0);
    if (led_suit_.empty() && card != "??") led_suit_ = SuitOf(card);
    if (e.seat() == seat_) {
      hand_.erase(std::remove(hand_.begin(), hand_.end(), card), hand_.end());
    }
  } else if (type == "turn") {
    turn_seq_ = (seat_ >= 0 && e.seat() == seat_) ? e.seq() : 0;
  } else if (type == "round_result") {
    turn_seq_ = 0;
    led_suit_.clear();
  } else if (type == "game_over") {
    turn_seq_ = 0;
    ++games_over_;
    if (options_.leave_at_game_over) leave_due_ = true;
  }
  // A move of this seat ends its turn (the table's next `turn` names the next decision).
  if (e.seat() == seat_ && (type == "played" || type == "trump" || type == "hidden" ||
                            type == "asked" || type == "shown")) {
    if (turn_seq_ != 0) done_turn_seq_ = std::max(done_turn_seq_, turn_seq_);
  }
}

void ScriptedPlayer::Fault(std::string what) {
  std::lock_guard<std::mutex> lock(mu_);
  faults_.push_back(absl::StrCat(name_, ": ", what));
}

// --- the connection -----------------------------------------------------------------------

absl::StatusOr<cv1::Opened> ScriptedPlayer::Open(const std::string& table_id, uint64_t last_seq) {
  table_id_ = table_id;
  return OpenOn(last_seq);
}

absl::StatusOr<cv1::Opened> ScriptedPlayer::OpenOn(uint64_t last_seq) {
  if (transport_ != nullptr) transport_->Cancel();
  transport_.reset();
  absl::StatusOr<std::unique_ptr<PlayTransport>> t = dial_();
  if (!t.ok()) return t.status();
  transport_ = *std::move(t);
  {
    std::lock_guard<std::mutex> lock(mu_);
    end_.reset();
  }
  cv1::PlayRequest open;
  open.mutable_open()->set_table_id(table_id_);
  open.mutable_open()->set_last_seq(last_seq);
  if (!options_.open_access_token.empty()) {
    open.mutable_open()->set_access_token(options_.open_access_token);
  }
  absl::Status sent = transport_->Send(open);
  const absl::Time deadline = absl::Now() + options_.open_timeout;
  while (absl::Now() < deadline) {
    absl::StatusOr<cv1::PlayResponse> m = transport_->Read(deadline - absl::Now());
    if (m.ok()) {
      Handle(*m);
      if (m->has_opened()) return m->opened();
      continue;
    }
    if (absl::IsDeadlineExceeded(m.status())) break;
    if (absl::IsInvalidArgument(m.status())) {  // a frame that is not a PlayResponse
      Fault(m.status().ToString());
      continue;
    }
    std::optional<StreamEnd> end = transport_->end();
    {
      std::lock_guard<std::mutex> lock(mu_);
      end_ = end;
      cv_.notify_all();
    }
    if (end.has_value() && !end->status.ok()) return end->status;
    return absl::UnavailableError("the stream ended before `opened`");
  }
  if (!sent.ok()) return sent;
  return absl::DeadlineExceededError(absl::StrCat(name_, ": no `opened` in time"));
}

absl::Status ScriptedPlayer::Reconnect() {
  const absl::Time deadline = absl::Now() + options_.reconnect_timeout;
  absl::Duration backoff = absl::Milliseconds(50);
  absl::Status last = absl::UnavailableError("not tried");
  // Stop() ends the wait when this runs in the player's own thread.
  const bool in_thread = std::this_thread::get_id() == thread_.get_id();
  while (!(in_thread && stop_.load())) {
    absl::StatusOr<cv1::Opened> opened = OpenOn(last_seq());
    if (opened.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      ++reconnects_;
      return absl::OkStatus();
    }
    last = opened.status();
    // Only a table being moved or a gateway restarting is worth waiting for.
    if (!absl::IsUnavailable(last) && !absl::IsDeadlineExceeded(last) && !absl::IsCancelled(last)) {
      return last;
    }
    if (absl::Now() + backoff >= deadline) break;
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Seconds(1));
  }
  return last;
}

void ScriptedPlayer::Disconnect() {
  if (transport_ != nullptr) transport_->Cancel();
}

absl::Status ScriptedPlayer::OnStreamEnd() {
  std::optional<StreamEnd> end = transport_->end();
  if (!end.has_value()) end = StreamEnd{absl::UnavailableError("the stream ended"), 0, ""};
  {
    std::lock_guard<std::mutex> lock(mu_);
    end_ = end;
    cv_.notify_all();
  }
  if (options_.auto_reconnect && absl::IsUnavailable(end->status) && !table_id_.empty()) {
    absl::Status s = Reconnect();
    if (s.ok()) return s;
    std::lock_guard<std::mutex> lock(mu_);
    end_ = StreamEnd{s, 0, ""};
    return s;
  }
  transport_.reset();
  return end->status;
}

// --- commands -----------------------------------------------------------------------------

void ScriptedPlayer::Pace() {
  if (options_.commands_per_second <= 0) return;
  const absl::Duration interval = absl::Seconds(1.0 / options_.commands_per_second);
  const absl::Time now = absl::Now();
  if (now < last_send_ + interval) absl::SleepFor(last_send_ + interval - now);
  last_send_ = absl::Now();
}

absl::StatusOr<cv1::CommandResult> ScriptedPlayer::Send(cv1::TableCommand command) {
  return SendLocked(std::move(command));
}

absl::StatusOr<cv1::CommandResult> ScriptedPlayer::SendLocked(cv1::TableCommand command) {
  if (transport_ == nullptr) return absl::FailedPreconditionError("not connected");
  Pace();
  const uint64_t id = next_command_id_++;
  command.set_command_id(id);
  cv1::PlayRequest request;
  *request.mutable_command() = std::move(command);
  absl::Status sent = transport_->Send(request);
  if (!sent.ok()) return sent;
  const absl::Time deadline = absl::Now() + options_.command_timeout;
  while (true) {
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("no result for command ", id));
    }
    absl::StatusOr<cv1::PlayResponse> m = transport_->Read(deadline - now);
    if (m.ok()) {
      Handle(*m);
      if (m->has_result() && m->result().command_id() == id) return m->result();
      continue;
    }
    if (absl::IsDeadlineExceeded(m.status())) continue;
    if (absl::IsInvalidArgument(m.status())) {
      Fault(m.status().ToString());
      continue;
    }
    std::optional<StreamEnd> end = transport_->end();
    std::lock_guard<std::mutex> lock(mu_);
    end_ = end;
    cv_.notify_all();
    return absl::UnavailableError("the stream ended");
  }
}

absl::Status ScriptedPlayer::Join() {
  cv1::TableCommand join;
  join.set_type("join");
  for (int attempt = 0; attempt < kJoinAttemptsMax; ++attempt) {
    absl::StatusOr<cv1::CommandResult> r = SendLocked(join);
    if (!r.ok()) return r.status();
    if (r->code() == 0) return absl::OkStatus();
    if (r->code() != kUnavailable && r->code() != kResourceExhausted) {
      return absl::Status(static_cast<absl::StatusCode>(r->code()), r->message());
    }
    absl::SleepFor(r->code() == kUnavailable ? kMovingRetry : kRateRetry);
  }
  return absl::UnavailableError("join: still unavailable");
}

void ScriptedPlayer::MaybeAct() {
  if (transport_ == nullptr || absl::Now() < act_not_before_) return;
  if (leave_due_) {
    cv1::TableCommand leave;
    leave.set_type("leave");
    absl::StatusOr<cv1::CommandResult> r = SendLocked(leave);
    if (r.ok() && r->code() != kUnavailable) leave_due_ = false;
    if (r.ok() && r->code() == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      left_ = true;
    }
    return;
  }
  uint64_t turn = 0;
  std::vector<cv1::TableCommand> candidates;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (turn_seq_ == 0 || turn_seq_ <= done_turn_seq_ || seat_ < 0 || gateway_resuming_) return;
    turn = turn_seq_;
    candidates = Candidates(hand_, calling_, led_suit_);
  }
  for (const cv1::TableCommand& c : candidates) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (turn_seq_ != turn || done_turn_seq_ >= turn) return;  // the turn moved on
    }
    absl::StatusOr<cv1::CommandResult> r = SendLocked(c);
    if (!r.ok()) return;  // the stream ended or no answer: the turn stays due
    const int code = r->code();
    if (code == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      ++moves_ok_;
      done_turn_seq_ = std::max(done_turn_seq_, turn);
      return;
    }
    if (code == kUnavailable) {  // the table is moving: try this turn again later
      act_not_before_ = absl::Now() + kMovingRetry;
      return;
    }
    if (code == kResourceExhausted) {
      act_not_before_ = absl::Now() + kRateRetry;
      Fault(absl::StrCat(c.move(), " ", c.card(), " answered ", code, " ", r->message()));
      return;
    }
    if (code == kInvalidArgument || code == kFailedPrecondition) {
      std::lock_guard<std::mutex> lock(mu_);
      ++moves_refused_;
      if (absl::StrContains(r->message(), "not your turn") ||
          absl::StrContains(r->message(), "no round in play")) {
        done_turn_seq_ = std::max(done_turn_seq_, turn);
        return;
      }
      continue;
    }
    Fault(absl::StrCat(c.move(), " ", c.card(), " answered ", code, " ", r->message()));
    std::lock_guard<std::mutex> lock(mu_);
    done_turn_seq_ = std::max(done_turn_seq_, turn);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  done_turn_seq_ = std::max(done_turn_seq_, turn);
  faults_.push_back(absl::StrCat(name_, ": no candidate accepted for the turn at seq ", turn,
                                 " (hand ", hand_.size(), " cards)"));
}

absl::Status ScriptedPlayer::Step(absl::Duration timeout) {
  if (drop_.exchange(false) && !table_id_.empty()) {
    Disconnect();
    absl::Status s = Reconnect();
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      end_ = StreamEnd{s, 0, ""};
      transport_.reset();
      return s;
    }
  }
  if (transport_ == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    return end_.has_value() ? end_->status : absl::FailedPreconditionError("not connected");
  }
  MaybeAct();
  if (transport_ == nullptr) return absl::FailedPreconditionError("not connected");
  absl::StatusOr<cv1::PlayResponse> m = transport_->Read(timeout);
  if (m.ok()) {
    Handle(*m);
    MaybeAct();
    return absl::OkStatus();
  }
  if (absl::IsDeadlineExceeded(m.status())) return absl::OkStatus();
  if (absl::IsInvalidArgument(m.status())) {
    Fault(m.status().ToString());
    return absl::OkStatus();
  }
  absl::Status s = OnStreamEnd();
  if (s.ok() && transport_ == nullptr) return absl::OutOfRangeError("the stream ended (OK)");
  return s;
}

absl::Status ScriptedPlayer::PlayUntil(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    const absl::Time now = absl::Now();
    if (now >= deadline) return absl::DeadlineExceededError(absl::StrCat(name_, ": not done"));
    absl::Status s = Step(std::min(deadline - now, absl::Milliseconds(50)));
    if (!s.ok()) return done() ? absl::OkStatus() : s;
  }
  return absl::OkStatus();
}

// --- the thread ---------------------------------------------------------------------------

void ScriptedPlayer::Start() {
  Stop();
  stop_ = false;
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      if (!Step(absl::Milliseconds(50)).ok()) break;
    }
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  });
}

void ScriptedPlayer::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ScriptedPlayer::DropConnection() { drop_ = true; }

bool ScriptedPlayer::WaitUntil(const std::function<bool()>& done, absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() >= deadline) return false;
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
  return true;
}

bool ScriptedPlayer::WaitGameOver(absl::Duration timeout, int games) const {
  return WaitUntil([&] { return games_over() >= games || ended(); }, timeout) &&
         games_over() >= games;
}

// --- observers ----------------------------------------------------------------------------

int ScriptedPlayer::seat() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seat_;
}
std::vector<std::string> ScriptedPlayer::hand() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hand_;
}
uint64_t ScriptedPlayer::last_seq() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_seq_;
}
int ScriptedPlayer::games_over() const {
  std::lock_guard<std::mutex> lock(mu_);
  return games_over_;
}
bool ScriptedPlayer::left() const {
  std::lock_guard<std::mutex> lock(mu_);
  return left_;
}
int ScriptedPlayer::moves_ok() const {
  std::lock_guard<std::mutex> lock(mu_);
  return moves_ok_;
}
int ScriptedPlayer::moves_refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return moves_refused_;
}
int ScriptedPlayer::reconnects() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reconnects_;
}
std::vector<std::string> ScriptedPlayer::faults() const {
  std::lock_guard<std::mutex> lock(mu_);
  return faults_;
}
std::vector<cv1::TableEvent> ScriptedPlayer::events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}
std::vector<uint64_t> ScriptedPlayer::EventSeqs(const std::string& type) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint64_t> out;
  for (const cv1::TableEvent& e : events_) {
    if (e.type() == type) out.push_back(e.seq());
  }
  return out;
}
std::vector<SeqView> ScriptedPlayer::views() const {
  std::lock_guard<std::mutex> lock(mu_);
  return views_;
}
std::vector<cv1::Opened> ScriptedPlayer::opens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return opens_;
}
std::vector<cv1::Notice> ScriptedPlayer::notices() const {
  std::lock_guard<std::mutex> lock(mu_);
  return notices_;
}
std::vector<cv1::CommandResult> ScriptedPlayer::results() const {
  std::lock_guard<std::mutex> lock(mu_);
  return results_;
}
std::optional<StreamEnd> ScriptedPlayer::end() const {
  std::lock_guard<std::mutex> lock(mu_);
  return end_;
}
bool ScriptedPlayer::ended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return end_.has_value();
}

absl::Status ScriptedPlayer::CheckSeqs() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t last = 0;
  for (size_t v = 0; v < views_.size(); ++v) {
    if (!views_[v].resumed) last = 0;
    for (uint64_t seq : views_[v].seqs) {
      if (seq <= last) {
        return absl::InternalError(absl::StrCat(name_, ": seq ", seq, " after ", last, " in view ",
                                                v, views_[v].resumed ? " (resumed)" : ""));
      }
      last = seq;
    }
  }
  return absl::OkStatus();
}

ScriptedPlayer::Dialer WebSocketDialer(WsOptions options) {
  return [options]() -> absl::StatusOr<std::unique_ptr<PlayTransport>> {
    absl::StatusOr<std::unique_ptr<WsPlayClient>> c = WsPlayClient::Connect(options);
    if (!c.ok()) return c.status();
    return std::unique_ptr<PlayTransport>(std::move(*c));
  };
}

ScriptedPlayer::Dialer GrpcDialer(std::shared_ptr<grpc::Channel> channel,
                                  std::string authorization) {
  return [channel = std::move(channel),
          authorization =
              std::move(authorization)]() -> absl::StatusOr<std::unique_ptr<PlayTransport>> {
    return std::unique_ptr<PlayTransport>(GrpcPlayClient::Start(channel, authorization));
  };
}

}  // namespace courtpiece::gateway::testing
