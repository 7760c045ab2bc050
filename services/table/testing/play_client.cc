#include "services/table/testing/play_client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace courtpiece::table_service::testing {

namespace pb = ::courtpiece::table::v1;

namespace {

constexpr char kPlayerIdMetadata[] = "courtpiece-player-id";
constexpr char kOwnerAddrMetadata[] = "courtpiece-owner-addr";

std::chrono::system_clock::time_point ToChrono(absl::Time t) { return absl::ToChronoTime(t); }

std::string SuitOf(const std::string& card) {
  return card.empty() ? std::string() : card.substr(card.size() - 1);
}

}  // namespace

pb::TableCommand MakeCommand(const std::string& type) {
  pb::TableCommand c;
  c.set_type(type);
  return c;
}

pb::TableCommand MakeMove(const std::string& move, const std::string& card) {
  pb::TableCommand c = MakeCommand("move");
  c.set_move(move);
  c.set_card(card);
  return c;
}

std::vector<int64_t> CoinDeltasBySeat(const std::vector<pb::TableEvent>& events, int64_t bet_coins,
                                      int* rounds) {
  std::vector<int64_t> delta(4, 0);
  *rounds = 0;
  for (const pb::TableEvent& e : events) {
    if (e.type() != "round_result") continue;
    ++*rounds;
    const int team = e.seat();
    if (team < 0) continue;  // a draw refunds every stake
    const std::string kind = e.detail().substr(0, e.detail().find(' '));
    const bool court = kind == "court" || kind == "goon_court" || kind == "kot" ||
                       kind == "four_point" || kind == "six_point";
    const int64_t coins = court ? 2 * bet_coins : bet_coins;
    for (int s = 0; s < 4; ++s) delta[s] += s % 2 == team ? coins : -coins;
  }
  return delta;
}

// --- PlayClient ---------------------------------------------------------------------------

PlayClient::PlayClient(std::string address, std::string player)
    : address_(std::move(address)),
      player_(std::move(player)),
      channel_(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials())),
      stub_(pb::TableService::NewStub(channel_)) {}

PlayClient::~PlayClient() {
  Cancel();
  if (reader_.joinable()) reader_.join();
}

bool PlayClient::Start(const pb::PlayRequest& first) {
  if (stream_ != nullptr) return false;
  if (!player_.empty()) context_.AddMetadata(kPlayerIdMetadata, player_);
  stream_ = stub_->Play(&context_);
  reader_ = std::thread([this] { ReadLoop(); });
  return Write(first);
}

absl::StatusOr<pb::Opened> PlayClient::Open(const std::string& table_id, uint64_t last_seq,
                                            absl::Duration timeout) {
  pb::PlayRequest open;
  open.mutable_open()->set_table_id(table_id);
  open.mutable_open()->set_last_seq(last_seq);
  Start(open);
  std::unique_lock<std::mutex> lock(mu_);
  const bool done = cv_.wait_until(lock, ToChrono(absl::Now() + timeout), [&] {
    return end_.has_value() || (!messages_.empty() && messages_.front().has_opened());
  });
  if (!messages_.empty() && messages_.front().has_opened()) return messages_.front().opened();
  if (!done) return absl::DeadlineExceededError("no answer to open");
  return absl::Status(static_cast<absl::StatusCode>(end_->code), end_->message);
}

bool PlayClient::Write(const pb::PlayRequest& request) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (stream_ == nullptr || writes_closed_) return false;
  return stream_->Write(request);
}

uint64_t PlayClient::NextCommandId() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_command_id_++;
}

absl::StatusOr<pb::CommandResult> PlayClient::Send(pb::TableCommand command,
                                                   absl::Duration timeout) {
  const uint64_t id = NextCommandId();
  command.set_command_id(id);
  std::unique_lock<std::mutex> lock(mu_);
  const size_t from = messages_.size();
  lock.unlock();
  pb::PlayRequest request;
  *request.mutable_command() = std::move(command);
  if (!Write(request)) return absl::UnavailableError("the stream is closed");
  lock.lock();
  std::optional<pb::CommandResult> result;
  cv_.wait_until(lock, ToChrono(absl::Now() + timeout), [&] {
    for (size_t i = from; i < messages_.size(); ++i) {
      if (messages_[i].has_result() && messages_[i].result().command_id() == id) {
        result = messages_[i].result();
        return true;
      }
    }
    return end_.has_value();
  });
  if (result.has_value()) return *result;
  if (end_.has_value()) return absl::UnavailableError("the stream ended");
  return absl::DeadlineExceededError(absl::StrCat("no result for command ", id));
}

void PlayClient::ReadLoop() {
  pb::PlayResponse message;
  while (stream_->Read(&message)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (message.has_event()) last_seq_ = std::max(last_seq_, message.event().seq());
    messages_.push_back(std::move(message));
    message.Clear();
    cv_.notify_all();
  }
  StreamEnd end;
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    writes_closed_ = true;
    grpc::Status status = stream_->Finish();
    end.code = status.error_code();
    end.message = status.error_message();
  }
  const auto& trailing = context_.GetServerTrailingMetadata();
  auto it = trailing.find(kOwnerAddrMetadata);
  if (it != trailing.end()) end.owner_addr.assign(it->second.data(), it->second.size());
  std::lock_guard<std::mutex> lock(mu_);
  end_ = std::move(end);
  cv_.notify_all();
}

std::vector<pb::PlayResponse> PlayClient::messages() const {
  std::lock_guard<std::mutex> lock(mu_);
  return messages_;
}

size_t PlayClient::message_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return messages_.size();
}

bool PlayClient::WaitFor(const std::function<bool(const std::vector<pb::PlayResponse>&)>& done,
                         absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  bool held = false;
  cv_.wait_until(lock, ToChrono(absl::Now() + timeout), [&] {
    held = done(messages_);
    return held || end_.has_value();
  });
  return held;
}

std::optional<size_t> PlayClient::WaitForEvent(const std::string& type, absl::Duration timeout,
                                               size_t from) const {
  std::optional<size_t> found;
  WaitFor(
      [&](const std::vector<pb::PlayResponse>& m) {
        for (size_t i = from; i < m.size(); ++i) {
          if (m[i].has_event() && m[i].event().type() == type) {
            found = i;
            return true;
          }
        }
        return false;
      },
      timeout);
  return found;
}

uint64_t PlayClient::last_seq() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_seq_;
}

std::optional<StreamEnd> PlayClient::WaitEnd(absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_until(lock, ToChrono(absl::Now() + timeout), [&] { return end_.has_value(); });
  return end_;
}

bool PlayClient::ended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return end_.has_value();
}

void PlayClient::Cancel() {
  if (stream_ != nullptr) context_.TryCancel();
}

// --- AutoPlayer ---------------------------------------------------------------------------

AutoPlayer::AutoPlayer(PlayClient& client, AutoPlayerOptions options, size_t from)
    : client_(&client), options_(options), next_(from) {
  StartThread();
}

AutoPlayer::~AutoPlayer() { Stop(); }

void AutoPlayer::StartThread() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void AutoPlayer::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void AutoPlayer::Switch(PlayClient& client, size_t from) {
  Stop();
  client_ = &client;
  next_ = from;
  StartThread();
}

bool AutoPlayer::WaitGameOver(absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_until(lock, ToChrono(absl::Now() + timeout), [&] { return game_over_; });
}

bool AutoPlayer::game_over() const {
  std::lock_guard<std::mutex> lock(mu_);
  return game_over_;
}

int AutoPlayer::moves_ok() const {
  std::lock_guard<std::mutex> lock(mu_);
  return moves_ok_;
}

int AutoPlayer::moves_refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return moves_refused_;
}

std::vector<std::string> AutoPlayer::faults() const {
  std::lock_guard<std::mutex> lock(mu_);
  return faults_;
}

void AutoPlayer::Run() {
  if (game_over()) Leave();
  while (!stop_) {
    const size_t want = next_ + 1;
    client_->WaitFor([&](const std::vector<pb::PlayResponse>& m) { return m.size() >= want; },
                     absl::Milliseconds(50));
    std::vector<pb::PlayResponse> m = client_->messages();
    if (next_ >= m.size()) {
      if (client_->ended()) {
        // Nothing more will come on this stream; wait for Switch or Stop.
        while (!stop_) absl::SleepFor(absl::Milliseconds(20));
      }
      continue;
    }
    while (next_ < m.size() && !stop_) {
      const size_t i = next_++;
      Handle(m[i], i);
    }
    // A turn whose move was cut off by the end of the old stream (a failover): the new
    // stream's catch-up has no new "turn" for it, so take it again once the catch-up is in.
    if (turn_pending_ && !client_->ended() &&
        !client_->WaitFor(
            [&](const std::vector<pb::PlayResponse>& all) { return all.size() > next_; },
            absl::Milliseconds(200))) {
      TakeTurn(next_, /*retry=*/true);
    }
  }
}

void AutoPlayer::Handle(const pb::PlayResponse& message, size_t index) {
  if (message.has_opened()) {
    if (message.opened().seat() >= 0) seat_ = message.opened().seat();
    return;
  }
  if (!message.has_event()) return;
  const pb::TableEvent& e = message.event();
  const std::string& type = e.type();
  if (type == "turn" || type == "round_result" ||
      (e.seat() == seat_ && (type == "played" || type == "trump" || type == "hidden" ||
                             type == "shown" || type == "asked"))) {
    turn_pending_ = false;  // the turn was taken (maybe before a failover) or is over
  }
  if (type == "seated" && e.player() == client_->player()) {
    seat_ = e.seat();
  } else if (type == "hand" && e.seat() == seat_) {
    hand_.assign(e.cards().begin(), e.cards().end());
    calling_ = e.detail() == "first_five";
  } else if (type == "round") {
    led_suit_.clear();
  } else if (type == "trick") {
    led_suit_.clear();
  } else if (type == "played" && e.cards_size() == 1) {
    const std::string& card = e.cards(0);
    if (led_suit_.empty() && card != "??") led_suit_ = SuitOf(card);
    if (e.seat() == seat_) hand_.erase(std::remove(hand_.begin(), hand_.end(), card), hand_.end());
  } else if (type == "turn" && e.seat() == seat_ && seat_ >= 0) {
    TakeTurn(index);
  } else if (type == "game_over") {
    Leave();
    std::lock_guard<std::mutex> lock(mu_);
    game_over_ = true;
    cv_.notify_all();
  }
}

void AutoPlayer::Leave() {
  if (!options_.leave_at_game_over || left_) return;
  for (int attempt = 0; attempt < 50 && !stop_; ++attempt) {
    Pace();
    absl::StatusOr<pb::CommandResult> r =
        client_->Send(MakeCommand("leave"), options_.command_timeout);
    if (!r.ok()) return;  // the stream ended: leave again after Switch
    if (r->code() != static_cast<int>(absl::StatusCode::kUnavailable)) {
      // OK, or already gone (a leave applied before a failover lost its answer).
      left_ = true;
      return;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

void AutoPlayer::TakeTurn(size_t index, bool retry) {
  turn_pending_ = false;
  // A later turn, or a move of this seat, already received: this turn is over.
  std::vector<pb::PlayResponse> m = client_->messages();
  for (size_t i = retry ? m.size() : index + 1; i < m.size(); ++i) {
    if (!m[i].has_event()) continue;
    const pb::TableEvent& e = m[i].event();
    if (e.type() == "turn" || e.type() == "round_result" ||
        (e.seat() == seat_ && (e.type() == "played" || e.type() == "trump" ||
                               e.type() == "hidden" || e.type() == "shown"))) {
      return;
    }
  }
  std::vector<pb::TableCommand> candidates;
  if (calling_) {
    for (const char* suit : {"S", "H", "D", "C"}) candidates.push_back(MakeMove("call", suit));
    for (const std::string& card : hand_) candidates.push_back(MakeMove("hide", card));
  }
  std::vector<std::string> order = hand_;
  std::stable_partition(order.begin(), order.end(),
                        [&](const std::string& c) { return SuitOf(c) == led_suit_; });
  for (const std::string& card : order) candidates.push_back(MakeMove("play", card));
  candidates.push_back(MakeMove("ask", ""));
  candidates.push_back(MakeMove("show", ""));
  if (!calling_) {
    for (const std::string& card : hand_) candidates.push_back(MakeMove("hide", card));
  }
  bool stop = false;
  for (const pb::TableCommand& c : candidates) {
    if (stop_) return;
    if (Try(c, &stop)) return;
    if (stop) return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  faults_.push_back(absl::StrCat(client_->player(), ": no candidate accepted at message ", index,
                                 " (hand ", hand_.size(), " cards)"));
}

bool AutoPlayer::Try(pb::TableCommand command, bool* stop) {
  for (int attempt = 0; attempt < 100 && !stop_; ++attempt) {
    Pace();
    absl::StatusOr<pb::CommandResult> r = client_->Send(command, options_.command_timeout);
    if (!r.ok()) {  // the stream ended or no answer: retry the turn on the next stream
      turn_pending_ = true;
      *stop = true;
      return false;
    }
    const auto code = static_cast<absl::StatusCode>(r->code());
    if (code == absl::StatusCode::kOk) {
      std::lock_guard<std::mutex> lock(mu_);
      ++moves_ok_;
      return true;
    }
    if (code == absl::StatusCode::kUnavailable) {  // storage or wallet: retry the same move
      absl::SleepFor(absl::Milliseconds(100));
      continue;
    }
    if (code == absl::StatusCode::kInvalidArgument ||
        code == absl::StatusCode::kFailedPrecondition) {
      std::lock_guard<std::mutex> lock(mu_);
      ++moves_refused_;
      if (absl::StrContains(r->message(), "not your turn") ||
          absl::StrContains(r->message(), "no round in play")) {
        *stop = true;
      }
      return false;
    }
    std::lock_guard<std::mutex> lock(mu_);
    faults_.push_back(absl::StrCat(client_->player(), ": ", command.move(), " ", command.card(),
                                   " answered ", r->code(), " ", r->message()));
    if (code == absl::StatusCode::kResourceExhausted) {
      continue;  // paced too fast: try again (after Pace)
    }
    *stop = true;
    return false;
  }
  *stop = true;
  return false;
}

void AutoPlayer::Pace() {
  const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(1.0 / options_.commands_per_second));
  const auto now = std::chrono::steady_clock::now();
  if (now < last_send_ + interval) std::this_thread::sleep_for(last_send_ + interval - now);
  last_send_ = std::chrono::steady_clock::now();
}

}  // namespace courtpiece::table_service::testing
