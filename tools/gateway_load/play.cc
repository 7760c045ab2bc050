#include "play.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "brain.h"
#include "load.h"
#include "services/gateway/testing/client_json.h"
#include "services/gateway/testing/http_client.h"
#include "tools/gateway_load/async_stream.h"

namespace courtpiece::gateway_load {

namespace net = boost::asio;
namespace cv1 = ::courtpiece::client::v1;
using tcp = net::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr int kOk = 0, kInvalidArgument = 3, kNotFound = 5, kAlreadyExists = 6,
              kPermissionDenied = 7, kResourceExhausted = 8, kFailedPrecondition = 9, kAborted = 10,
              kUnavailable = 14, kUnauthenticated = 16;
constexpr auto kCommandTimeout = std::chrono::seconds(10);
constexpr auto kMovingRetry = std::chrono::milliseconds(200);
constexpr auto kSlowDownRetry = std::chrono::seconds(1);
constexpr int kJoinAttemptsMax = 20;
constexpr int kReconnectAttemptsMax = 10;  // in a row, backoff 0.5 s doubling to 5 s
constexpr int kResolveAttemptsMax = 10;    // "not open yet: retry", a second apart
constexpr int kSeqErrorsPrintedMax = 10;

int64_t MicrosSince(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - t).count();
}

std::string CodeName(int code) { return gateway::testing::StatusCodeName(code); }

// --- what is measured -----------------------------------------------------------------------

enum StepId {
  kSignIn,
  kCreate,
  kResolve,
  kOpen,
  kJoin,
  kStart,
  kCmdResult,
  kCmdEvent,
  kTableMove,
  kSteps
};
constexpr std::array<const char*, kSteps> kStepNames = {"sign-in",     "create",     "resolve",
                                                        "open",        "join",       "start_now",
                                                        "cmd->result", "cmd->event", "table move"};

struct Step {
  table_load::Samples interval, total;
};

struct PlayStats {
  std::array<Step, kSteps> steps;
  std::atomic<int64_t> connected{0};  // streams with `opened`, now
  std::atomic<int64_t> seated{0};     // players seated, now
  std::atomic<int64_t> ever_seated{0};
  std::atomic<int64_t> tables_playing{0};  // tables whose first game started
  std::atomic<int64_t> actions{0};         // moves accepted
  std::atomic<int64_t> refused{0};         // candidates refused (the brain's next try)
  std::atomic<int64_t> rounds{0}, games{0};
  std::atomic<int64_t> reconnects{0};   // streams reopened by the client
  std::atomic<int64_t> table_moves{0};  // notices "reconnecting" (the gateway's resume)
  std::atomic<int64_t> seq_errors{0};
  std::atomic<int64_t> gone{0};          // players whose stream ended for good
  std::atomic<int64_t> setup_failed{0};  // players never started (sign-in/create/resolve)
  table_load::Counts errors_interval, errors_total;  // "stage:CODE"
  table_load::Counts ends;                           // stream ends by code

  void Add(StepId s, int64_t micros) {
    steps[s].interval.Add(micros);
    steps[s].total.Add(micros);
  }
  void Error(const std::string& key) {
    errors_interval.Add(key);
    errors_total.Add(key);
  }
};

// --- the processes measured -----------------------------------------------------------------

struct ProcSample {
  double cpu_s = -1;  // utime + stime (+ cutime + cstime: its children that ended)
  int64_t rss_kib = -1;
  int children = 0;  // live children added in (Postgres' backends: CPU, and RssAnon)
};

// The live children of every process (one pass over /proc, bounded by its entries).
std::multimap<int, std::string> Children() {
  std::multimap<int, std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    std::optional<table_load::ProcStat> st = table_load::ReadProcStat(name);
    if (st.has_value()) out.emplace(st->ppid, name);
  }
  return out;
}

// The machine's busy and total jiffies (the first line of /proc/stat), to show how much of the
// CPU the processes measured had: the machine may be shared.
std::pair<int64_t, int64_t> MachineJiffies() {
  std::ifstream in("/proc/stat");
  std::string line;
  if (!std::getline(in, line)) return {0, 0};
  std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
  int64_t total = 0, idle = 0;
  for (size_t i = 1; i < f.size() && i <= 8; ++i) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(f[i], &v)) continue;
    total += v;
    if (i == 4 || i == 5) idle += v;  // idle, iowait
  }
  return {total - idle, total};
}

// RssAnon of /proc/<pid>/status: a child's private memory (Postgres' backends share the
// buffer cache, which VmRSS would count once per backend).
int64_t RssAnonBytes(const std::string& pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "RssAnon:")) continue;
    int64_t kib = 0;
    std::vector<std::string> parts =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kib)) return kib * 1024;
  }
  return 0;
}

ProcSample ReadProc(int pid, const std::multimap<int, std::string>& children) {
  ProcSample out;
  std::optional<table_load::ProcStat> self = table_load::ReadProcStat(std::to_string(pid));
  if (!self.has_value()) return out;
  int64_t ticks = self->ticks + self->children_ticks;
  absl::StatusOr<int64_t> rss = table_load::ReadRssBytes(pid);
  int64_t rss_bytes = rss.ok() ? *rss : 0;
  auto [lo, hi] = children.equal_range(pid);
  for (auto it = lo; it != hi; ++it) {
    std::optional<table_load::ProcStat> c = table_load::ReadProcStat(it->second);
    if (!c.has_value()) continue;
    ticks += c->ticks + c->children_ticks;
    rss_bytes += RssAnonBytes(it->second);
    ++out.children;
  }
  out.cpu_s = table_load::TicksToSeconds(ticks);
  out.rss_kib = rss.ok() ? rss_bytes / 1024 : -1;
  return out;
}

std::vector<std::pair<std::string, int>> ParsePids(const std::string& text) {
  std::vector<std::pair<std::string, int>> out;
  for (absl::string_view item : absl::StrSplit(text, absl::ByAnyChar(",\n"), absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(item, ':');
    int pid = 0;
    if (absl::SimpleAtoi(kv.second, &pid) && pid > 0) out.emplace_back(std::string(kv.first), pid);
  }
  return out;
}

// --- one player -------------------------------------------------------------------------------

struct PlayCtx {
  const PlayConfig* config;
  PlayStats* stats;
  net::io_context* ioc;
  tcp::endpoint endpoint;
  std::string host_header;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  ClientQueues* queues = nullptr;
  std::atomic<bool> ramped{false};  // the command steps count in `total` only after the ramp
};

// Runs on its strand only (the stream's completions, its timer, Begin/Stop posted to it).
class Player {
 public:
  Player(PlayCtx* ctx, int index, bool grpc)
      : ctx_(ctx),
        index_(index),
        grpc_(grpc),
        strand_(net::make_strand(*ctx->ioc)),
        timer_(strand_),
        rng_(static_cast<uint64_t>(index) * 7919 + 17) {}

  void Begin(std::string player_id, std::string authorization, std::string table_id, bool host) {
    net::post(strand_,
              [this, player_id = std::move(player_id), authorization = std::move(authorization),
               table_id = std::move(table_id), host] {
                player_id_ = player_id;
                authorization_ = authorization;
                table_id_ = table_id;
                host_ = host;
                brain_.set_player_id(player_id_);
                OpenStream();
              });
  }

  void Stop() {
    net::post(strand_, [this] {
      stopping_ = true;
      await_card_.clear();  // the drain is not measured
      CancelTimer();
      if (stream_ == nullptr) return Gone();
      if (seated_counted_) {
        cv1::TableCommand leave;
        leave.set_type("leave");
        SendCommand(Kind::kLeave, std::move(leave), 0);
        return;
      }
      stream_->Close();
    });
  }

  bool gone() const { return gone_.load(); }

 private:
  enum class Kind { kJoin, kStart, kMove, kLeave };
  enum class TimerFor { kNone, kThink, kStart, kRetry, kRejoin, kReconnect, kDeadline };
  struct Pending {
    uint64_t id = 0;
    Kind kind = Kind::kMove;
    SteadyClock::time_point sent;
    cv1::TableCommand command;
    uint64_t turn = 0;
  };

  // --- the stream ---------------------------------------------------------------------------

  void OpenStream() {
    const int gen = ++stream_gen_;
    PlayStreamHandlers h;
    h.on_message = [this, gen](const cv1::PlayResponse& m) {
      if (gen == stream_gen_) OnMessage(m);
    };
    h.on_end = [this, gen](int code, const std::string& why) {
      if (gen == stream_gen_) OnEnd(code, why);
    };
    const std::string auth = absl::StrCat("Bearer ", authorization_);
    if (grpc_) {
      stream_ = MakeGrpcPlayStream(
          strand_, *ctx_->queues, static_cast<size_t>(index_),
          ctx_->channels[static_cast<size_t>(index_) % ctx_->channels.size()], auth, std::move(h));
    } else {
      stream_ = MakeWsPlayStream(strand_, ctx_->endpoint, ctx_->host_header, auth, std::move(h));
    }
    cv1::PlayRequest open;
    open.mutable_open()->set_table_id(table_id_);
    open.mutable_open()->set_last_seq(last_seq_);
    open_sent_ = SteadyClock::now();
    stream_->Start(std::move(open));
  }

  void OnEnd(int code, const std::string& why) {
    stream_.reset();
    pending_.reset();
    await_card_.clear();
    CancelTimer();
    ctx_->stats->ends.Add(CodeName(code));
    SetConnected(false);
    SetSeated(false);
    if (stopping_) return Gone();
    const bool retry = code != kOk && code != kNotFound && code != kAborted &&
                       code != kPermissionDenied && code != kInvalidArgument &&
                       code != kUnauthenticated;
    if (!retry || reconnect_attempts_ >= kReconnectAttemptsMax) {
      ctx_->stats->Error(absl::StrCat("stream:", CodeName(code)));
      if (gone_errors_printed_++ == 0 && index_ < 40) {
        std::cerr << "player " << index_ << ": stream ended " << CodeName(code) << " " << why
                  << "\n";
      }
      return Gone();
    }
    const int shift = std::min(reconnect_attempts_, 4);
    ++reconnect_attempts_;
    const auto backoff = std::chrono::milliseconds((500 << shift) / 2 + rng_() % (500 << shift));
    ArmTimer(TimerFor::kReconnect,
             std::min<std::chrono::milliseconds>(backoff, std::chrono::milliseconds(5000)));
  }

  void Gone() {
    if (!gone_.exchange(true)) ctx_->stats->gone.fetch_add(1);
  }

  void OnMessage(const cv1::PlayResponse& m) {
    switch (m.msg_case()) {
      case cv1::PlayResponse::kOpened:
        OnOpened(m.opened());
        break;
      case cv1::PlayResponse::kEvent:
        OnEvent(m.event());
        break;
      case cv1::PlayResponse::kResult:
        if (pending_.has_value() && m.result().command_id() == pending_->id) {
          OnResult(m.result());
        }
        break;
      case cv1::PlayResponse::kNotice:
        // The gateway's own resume of this stream: how long the table was away.
        if (m.notice().type() == "reconnecting") {
          ctx_->stats->table_moves.fetch_add(1);
          moving_since_ = SteadyClock::now();
          moving_ = true;
        } else if (m.notice().type() == "reconnected" && moving_) {
          moving_ = false;
          ctx_->stats->Add(kTableMove, MicrosSince(moving_since_));
        }
        break;
      case cv1::PlayResponse::MSG_NOT_SET:
        ctx_->stats->Error("stream:bad_message");
        break;
    }
    MaybeAct();
  }

  void OnOpened(const cv1::Opened& o) {
    ctx_->stats->Add(kOpen, MicrosSince(open_sent_));
    if (opens_++ > 0) ctx_->stats->reconnects.fetch_add(1);
    reconnect_attempts_ = 0;
    SetConnected(true);
    if (!o.resumed()) view_last_seq_ = 0;
    brain_.OnOpened(o);
    if (brain_.seat() >= 0) {
      SetSeated(true);
    } else if (!stopping_) {
      SendJoin();
    }
  }

  void OnEvent(const cv1::TableEvent& e) {
    if (e.seq() > 0) {
      if (e.seq() <= view_last_seq_) {
        if (ctx_->stats->seq_errors.fetch_add(1) < kSeqErrorsPrintedMax) {
          std::cerr << "player " << index_ << ": seq " << e.seq() << " (" << e.type() << ") after "
                    << view_last_seq_ << "\n";
        }
      }
      view_last_seq_ = std::max(view_last_seq_, e.seq());
      last_seq_ = std::max(last_seq_, e.seq());
    }
    const bool mine = brain_.seat() >= 0 && e.seat() == brain_.seat();
    if (mine && e.type() == "played" && !await_card_.empty() && e.cards_size() == 1 &&
        e.cards(0) == await_card_) {
      if (ctx_->ramped.load()) {
        ctx_->stats->Add(kCmdEvent, MicrosSince(await_sent_));
      } else {
        ctx_->stats->steps[kCmdEvent].interval.Add(MicrosSince(await_sent_));
      }
      await_card_.clear();
    }
    if (host_) {
      if (e.type() == "game_started" && !counted_playing_) {
        counted_playing_ = true;
        ctx_->stats->tables_playing.fetch_add(1);
      } else if (e.type() == "round_result") {
        ctx_->stats->rounds.fetch_add(1);
      } else if (e.type() == "game_over") {
        ctx_->stats->games.fetch_add(1);
      }
    }
    if (e.type() == "seated" && e.player() == player_id_) SetSeated(true);
    if (mine && e.type() == "unseated" && !stopping_) {
      ctx_->stats->Error(absl::StrCat("unseated:", e.detail()));
      SetSeated(false);
      brain_.OnEvent(e);
      want_join_ = true;
      return;
    }
    brain_.OnEvent(e);
  }

  // --- commands -----------------------------------------------------------------------------

  void SendCommand(Kind kind, cv1::TableCommand command, uint64_t turn) {
    if (stream_ == nullptr) return;
    Pending p;
    p.id = next_command_id_++;
    p.kind = kind;
    p.sent = SteadyClock::now();
    p.turn = turn;
    command.set_command_id(p.id);
    p.command = command;
    if (kind == Kind::kMove && command.move() == "play") {
      await_card_ = command.card();
      await_sent_ = p.sent;
    }
    cv1::PlayRequest r;
    *r.mutable_command() = std::move(command);
    pending_ = std::move(p);
    stream_->Send(std::move(r));
    ArmTimer(TimerFor::kDeadline, kCommandTimeout);
  }

  void SendJoin() {
    cv1::TableCommand join;
    join.set_type("join");
    SendCommand(Kind::kJoin, std::move(join), 0);
  }

  void OnResult(const cv1::CommandResult& r) {
    CancelTimer();
    Pending p = *std::move(pending_);
    pending_.reset();
    const int code = r.code();
    const int64_t micros = MicrosSince(p.sent);
    switch (p.kind) {
      case Kind::kLeave:
        if (stream_ != nullptr) stream_->Close();
        return;
      case Kind::kJoin:
        ctx_->stats->Add(kJoin, micros);
        if (code == kOk || code == kAlreadyExists) {
          join_attempts_ = 0;
          SetSeated(true);
        } else if ((code == kUnavailable || code == kResourceExhausted) &&
                   ++join_attempts_ < kJoinAttemptsMax) {
          ArmTimer(TimerFor::kRejoin, std::chrono::seconds(1));
        } else {
          ctx_->stats->Error(absl::StrCat("join:", CodeName(code)));
          if (join_errors_printed_++ == 0 && index_ < 40) {
            std::cerr << "player " << index_ << ": join " << CodeName(code) << " " << r.message()
                      << "\n";
          }
        }
        return;
      case Kind::kStart:
        ctx_->stats->Add(kStart, micros);
        if (code == kOk || code == kFailedPrecondition) {
          start_sent_ = true;
        } else if (code != kUnavailable) {
          start_sent_ = true;
          ctx_->stats->Error(absl::StrCat("start_now:", CodeName(code)));
        }
        return;
      case Kind::kMove:
        if (ctx_->ramped.load()) {
          ctx_->stats->Add(kCmdResult, micros);
        } else {
          ctx_->stats->steps[kCmdResult].interval.Add(micros);
        }
        OnMoveResult(p, code, r.message());
        return;
    }
  }

  void OnMoveResult(const Pending& p, int code, const std::string& message) {
    if (code != kOk) await_card_.clear();
    if (code == kOk) {
      ctx_->stats->actions.fetch_add(1, std::memory_order_relaxed);
      brain_.TurnDone(p.turn);
      candidates_.clear();
      if (!await_card_.empty()) {  // the result comes after the events it caused
        ctx_->stats->Error("move:result_before_played");
        await_card_.clear();
      }
      return;
    }
    if (code == kUnavailable || code == kResourceExhausted) {
      // Counted, and retried: the retry's own send starts its latency again.
      ctx_->stats->Error(absl::StrCat("move:", CodeName(code), "(retried)"));
      retry_ = p;
      ArmTimer(TimerFor::kRetry, code == kUnavailable ? kMovingRetry : kSlowDownRetry);
      return;
    }
    if (code == kInvalidArgument || code == kFailedPrecondition) {
      if (absl::StrContains(message, "not your turn") ||
          absl::StrContains(message, "no round in play") ||
          absl::StrContains(message, "the round is over")) {
        brain_.TurnDone(p.turn);
        candidates_.clear();
        return;
      }
      ctx_->stats->refused.fetch_add(1, std::memory_order_relaxed);
      if (++candidate_ < candidates_.size() && brain_.due_turn() == p.turn) {
        SendCommand(Kind::kMove, candidates_[candidate_], p.turn);
        return;
      }
      if (brain_.due_turn() == p.turn) ctx_->stats->Error("move:no_candidate");
      brain_.TurnDone(p.turn);
      candidates_.clear();
      return;
    }
    ctx_->stats->Error(absl::StrCat("move:", CodeName(code)));
    brain_.TurnDone(p.turn);
    candidates_.clear();
  }

  // What to do next, when nothing is in flight or waiting.
  void MaybeAct() {
    if (stopping_ || stream_ == nullptr || pending_.has_value() || timer_for_ != TimerFor::kNone) {
      return;
    }
    if (want_join_ && !seated_counted_ && connected_counted_) {
      want_join_ = false;
      ArmTimer(TimerFor::kRejoin, std::chrono::seconds(1));
      return;
    }
    if (!seated_counted_) return;
    if (host_ && !start_sent_ && brain_.seats_taken() == 4) {
      ArmTimer(TimerFor::kStart, Think());
      return;
    }
    const uint64_t turn = brain_.due_turn();
    if (turn != 0 && turn != thought_turn_) {
      thought_turn_ = turn;
      ArmTimer(TimerFor::kThink, Think());
    }
  }

  void OnTimer(TimerFor what) {
    switch (what) {
      case TimerFor::kNone:
        return;
      case TimerFor::kThink: {
        const uint64_t turn = brain_.due_turn();
        if (turn == 0 || pending_.has_value() || stream_ == nullptr) break;
        candidates_ = brain_.Candidates();
        candidate_ = 0;
        if (candidates_.empty()) {
          ctx_->stats->Error("move:no_candidate");
          brain_.TurnDone(turn);
          break;
        }
        SendCommand(Kind::kMove, candidates_[0], turn);
        return;
      }
      case TimerFor::kStart: {
        if (start_sent_ || pending_.has_value()) break;
        cv1::TableCommand start;
        start.set_type("start_now");
        SendCommand(Kind::kStart, std::move(start), 0);
        return;
      }
      case TimerFor::kRetry:
        if (retry_.has_value() && brain_.due_turn() == retry_->turn && !pending_.has_value()) {
          Pending p = *std::move(retry_);
          retry_.reset();
          SendCommand(Kind::kMove, p.command, p.turn);
          return;
        }
        retry_.reset();
        break;
      case TimerFor::kRejoin:
        if (!seated_counted_ && !pending_.has_value() && stream_ != nullptr) {
          SendJoin();
          return;
        }
        break;
      case TimerFor::kReconnect:
        if (!stopping_ && stream_ == nullptr) {
          OpenStream();
          return;
        }
        break;
      case TimerFor::kDeadline:
        if (pending_.has_value()) {
          static constexpr const char* kKindNames[] = {"join", "start_now", "move", "leave"};
          ctx_->stats->Error(
              absl::StrCat(kKindNames[static_cast<int>(pending_->kind)], ":timeout"));
          if (pending_->kind == Kind::kLeave && stream_ != nullptr) stream_->Close();
          if (pending_->kind == Kind::kMove) brain_.TurnDone(pending_->turn);
          pending_.reset();
          await_card_.clear();
        }
        break;
    }
    MaybeAct();
  }

  std::chrono::milliseconds Think() {
    const PlayConfig& c = *ctx_->config;
    std::uniform_real_distribution<double> f(1.0 - c.think_jitter, 1.0 + c.think_jitter);
    return std::chrono::milliseconds(
        std::max<int64_t>(0, static_cast<int64_t>(c.think_ms * f(rng_))));
  }

  template <typename Duration>
  void ArmTimer(TimerFor what, Duration after) {
    timer_for_ = what;
    const int gen = ++timer_gen_;
    timer_.expires_after(after);
    timer_.async_wait([this, gen, what](boost::system::error_code ec) {
      if (ec || gen != timer_gen_) return;
      timer_for_ = TimerFor::kNone;
      OnTimer(what);
    });
  }

  void CancelTimer() {
    ++timer_gen_;
    timer_for_ = TimerFor::kNone;
    timer_.cancel();
  }

  void SetConnected(bool on) {
    if (on == connected_counted_) return;
    connected_counted_ = on;
    ctx_->stats->connected.fetch_add(on ? 1 : -1);
  }

  void SetSeated(bool on) {
    if (on == seated_counted_) return;
    seated_counted_ = on;
    ctx_->stats->seated.fetch_add(on ? 1 : -1);
    if (on && !ever_seated_) {
      ever_seated_ = true;
      ctx_->stats->ever_seated.fetch_add(1);
    }
  }

  PlayCtx* const ctx_;
  const int index_;
  const bool grpc_;
  Strand strand_;
  net::steady_timer timer_;
  std::mt19937_64 rng_;
  std::atomic<bool> gone_{false};

  std::string player_id_, authorization_, table_id_;
  bool host_ = false;
  std::shared_ptr<PlayStream> stream_;
  int stream_gen_ = 0;
  int opens_ = 0;
  int reconnect_attempts_ = 0;
  int join_attempts_ = 0;
  int gone_errors_printed_ = 0, join_errors_printed_ = 0;
  SteadyClock::time_point open_sent_;
  SteadyClock::time_point moving_since_;
  bool moving_ = false;
  uint64_t last_seq_ = 0, view_last_seq_ = 0;
  SeatBrain brain_;
  uint64_t next_command_id_ = 1;
  std::optional<Pending> pending_, retry_;
  std::vector<cv1::TableCommand> candidates_;
  size_t candidate_ = 0;
  uint64_t thought_turn_ = 0;
  std::string await_card_;
  SteadyClock::time_point await_sent_;
  TimerFor timer_for_ = TimerFor::kNone;
  int timer_gen_ = 0;
  bool start_sent_ = false, counted_playing_ = false;
  bool connected_counted_ = false, seated_counted_ = false, ever_seated_ = false;
  bool stopping_ = false;
  bool want_join_ = false;  // unseated while playing: sit down again
};

// --- setup: sign-in, create, resolve (blocking HTTP on the setup threads) ---------------------

std::string RandomToken(std::mt19937_64& rng, int n) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
  std::string out;
  for (int i = 0; i < n; ++i) out.push_back(kAlphabet[rng() % 64]);
  return out;
}

int StatusCodeOf(const absl::Status& s) { return static_cast<int>(s.code()); }

// Signs in the group's four, creates the table, resolves its code; Begin()s the players.
void SetUpGroup(const PlayConfig& c, PlayStats* stats, gateway::testing::HttpClient& http,
                const std::string& run, int group, std::mt19937_64& rng,
                std::vector<std::unique_ptr<Player>>& players) {
  std::array<cv1::Session, 4> sessions;
  for (int k = 0; k < 4; ++k) {
    cv1::GuestLoginRequest req;
    req.set_device_secret(RandomToken(rng, 40));
    req.set_display_name(LoadPlayerName("Player", group * 4 + k));
    const auto t0 = SteadyClock::now();
    absl::StatusOr<cv1::Session> s = http.Call<cv1::Session>("GuestLogin", req);
    stats->Add(kSignIn, MicrosSince(t0));
    if (!s.ok()) {
      stats->Error(absl::StrCat("sign-in:", CodeName(StatusCodeOf(s.status()))));
      stats->setup_failed.fetch_add(4);
      return;
    }
    sessions[k] = *std::move(s);
  }
  const std::string host_auth = absl::StrCat("Bearer ", sessions[0].access_token());
  cv1::CreateTableRequest create;
  create.set_request_id(absl::StrCat("play-", run, "-", group));
  create.mutable_options()->set_game_options(c.game_options);
  create.mutable_options()->set_bet_coins(c.bet_coins);
  create.mutable_options()->set_turn_time_ms(c.turn_time_ms);
  absl::StatusOr<cv1::TableRef> ref = absl::UnavailableError("not tried");
  for (int attempt = 0; attempt < 3 && absl::IsUnavailable(ref.status()); ++attempt) {
    if (attempt > 0) absl::SleepFor(absl::Milliseconds(500));
    const auto t0 = SteadyClock::now();
    ref = http.Call<cv1::TableRef>("CreateTable", create, host_auth);
    stats->Add(kCreate, MicrosSince(t0));
  }
  if (!ref.ok()) {
    stats->Error(absl::StrCat("create:", CodeName(StatusCodeOf(ref.status()))));
    stats->setup_failed.fetch_add(4);
    return;
  }
  std::array<std::string, 4> table_ids;
  table_ids[0] = ref->table_id();
  for (int k = 1; k < 4; ++k) {
    cv1::ResolveCodeRequest resolve;
    resolve.set_code(ref->code());
    absl::StatusOr<cv1::TableRef> found = absl::NotFoundError("not tried");
    for (int attempt = 0; attempt < kResolveAttemptsMax; ++attempt) {
      const auto t0 = SteadyClock::now();
      found = http.Call<cv1::TableRef>("ResolveCode", resolve,
                                       absl::StrCat("Bearer ", sessions[k].access_token()));
      stats->Add(kResolve, MicrosSince(t0));
      const bool not_yet =
          absl::IsNotFound(found.status()) && absl::StrContains(found.status().message(), "retry");
      if (!not_yet && !absl::IsUnavailable(found.status())) break;
      absl::SleepFor(absl::Seconds(1));
    }
    if (!found.ok()) {
      stats->Error(absl::StrCat("resolve:", CodeName(StatusCodeOf(found.status()))));
      stats->setup_failed.fetch_add(4);
      return;
    }
    if (found->table_id() != table_ids[0]) stats->Error("resolve:other_table");
    table_ids[k] = found->table_id();
  }
  for (int k = 0; k < 4; ++k) {
    players[static_cast<size_t>(group * 4 + k)]->Begin(
        sessions[k].player_id(), sessions[k].access_token(), table_ids[k], k == 0);
  }
}

// --- the report ---------------------------------------------------------------------------------

struct ServiceCpu {
  int pid = 0;
  double cpu_s = 0;
  absl::Time at;
};

class Reporter {
 public:
  Reporter(const PlayConfig& c, PlayStats* stats) : c_(c), stats_(stats) {}

  void Print(double elapsed_s, double interval_s, bool final) {
    PlayStats& s = *stats_;
    const int64_t actions = s.actions.load();
    const double rate =
        interval_s > 0 ? static_cast<double>(actions - last_actions_) / interval_s : 0;
    last_actions_ = actions;
    std::ostringstream out;
    out << absl::StrFormat(
        "%s t=%.0fs: players %d asked, %d connected, %d seated (%d ever), %d setup failed, %d "
        "gone; tables in play %d; rounds %d, games %d; actions %d (%.1f/s %s), refused "
        "candidates %d; reconnects %d, table moves %d; seq errors %d\n",
        final ? "== FINAL" : "--", elapsed_s, c_.players, s.connected.load(), s.seated.load(),
        s.ever_seated.load(), s.setup_failed.load(), s.gone.load(), s.tables_playing.load(),
        s.rounds.load(), s.games.load(), actions,
        final ? static_cast<double>(actions) / std::max(1.0, elapsed_s) : rate,
        final ? "over the run" : "now", s.refused.load(), s.reconnects.load(), s.table_moves.load(),
        s.seq_errors.load());
    out << absl::StrFormat("   %-12s %9s %9s %9s %9s%s\n", "step", "count", "p50 ms", "p99 ms",
                           "max ms",
                           final ? "   (whole run; cmd steps after the ramp)" : "   (interval)");
    for (int i = 0; i < kSteps; ++i) {
      table_load::Samples::Summary sum =
          final ? s.steps[i].total.Take() : s.steps[i].interval.Take();
      if (final) last_cmd_event_p99_ = i == kCmdEvent ? sum.p99_ms : last_cmd_event_p99_;
      if (final && i == kCmdEvent) cmd_event_count_ = sum.count;
      out << absl::StrFormat("   %-12s %9d %9.2f %9.2f %9.2f\n", kStepNames[i], sum.count,
                             sum.p50_ms, sum.p99_ms, sum.max_ms);
    }
    if (final) {
      (void)s.errors_interval.Take();
      out << "   errors (whole run): " << s.errors_total.Format(s.errors_total.Take()) << "\n";
      out << "   stream ends: " << s.ends.Format(s.ends.Take()) << "\n";
    } else {
      out << "   errors: " << s.errors_interval.Format(s.errors_interval.Take()) << "\n";
    }
    out << Services(interval_s, final);
    std::cout << out.str() << std::flush;
  }

  void Baseline() { (void)Services(0, false); }
  double cmd_event_p99() const { return last_cmd_event_p99_; }
  size_t cmd_event_count() const { return cmd_event_count_; }

 private:
  std::string Services(double interval_s, bool final) {
    std::vector<std::pair<std::string, int>> pids = ParsePids(c_.service_pids);
    if (!c_.service_pids_file.empty()) {
      std::ifstream in(c_.service_pids_file);
      std::stringstream text;
      text << in.rdbuf();
      for (auto& p : ParsePids(text.str())) pids.push_back(p);
    }
    pids.emplace_back("load", static_cast<int>(getpid()));
    const std::multimap<int, std::string> children = Children();
    const std::pair<int64_t, int64_t> machine = MachineJiffies();
    std::pair<int64_t, int64_t>& since = final ? machine_first_ : machine_prev_;
    std::string machine_line;
    if (since.second > 0 && machine.second > since.second) {
      const double cores = static_cast<double>(std::thread::hardware_concurrency());
      machine_line = absl::StrFormat(
          "   machine: %.0f%% of %.0f cores busy (all processes, ours and others')\n",
          100.0 * cores * static_cast<double>(machine.first - since.first) /
              static_cast<double>(machine.second - since.second),
          cores);
    }
    machine_prev_ = machine;
    if (machine_first_.second == 0) machine_first_ = machine;
    std::string out = absl::StrFormat("   %-12s %8s %10s %8s %10s\n", "process", "pid", "cpu s",
                                      "cpu %", "RSS MiB");
    for (const auto& [name, pid] : pids) {
      const ProcSample p = ReadProc(pid, children);
      // The interval's CPU share; in the final report the average since the process was
      // first seen (a restarted table instance: since its restart).
      const absl::Time now = absl::Now();
      ServiceCpu& prev = prev_[name];
      ServiceCpu& first = first_[name];
      if (p.cpu_s >= 0 && first.pid != pid) first = ServiceCpu{pid, p.cpu_s, now};
      double pct = -1;
      if (final && p.cpu_s >= 0 && now - first.at > absl::Seconds(1)) {
        pct = 100.0 * (p.cpu_s - first.cpu_s) / absl::ToDoubleSeconds(now - first.at);
      } else if (!final && p.cpu_s >= 0 && prev.pid == pid && interval_s > 0) {
        pct = 100.0 * (p.cpu_s - prev.cpu_s) / interval_s;
      }
      if (p.cpu_s >= 0) prev = ServiceCpu{pid, p.cpu_s, now};
      absl::StrAppendFormat(
          &out, "   %-12s %8d %10.1f %8s %10s%s\n", name, pid, p.cpu_s,
          pct >= 0 ? absl::StrFormat("%.0f", pct) : "-",
          p.rss_kib >= 0 ? absl::StrFormat("%.1f", static_cast<double>(p.rss_kib) / 1024.0)
                         : "gone",
          p.children > 0 ? absl::StrFormat("  (with %d children)", p.children) : "");
    }
    return out + machine_line;
  }

  const PlayConfig& c_;
  PlayStats* const stats_;
  int64_t last_actions_ = 0;
  double last_cmd_event_p99_ = 0;
  size_t cmd_event_count_ = 0;
  std::map<std::string, ServiceCpu> prev_, first_;
  std::pair<int64_t, int64_t> machine_prev_{0, 0}, machine_first_{0, 0};
};

}  // namespace

int RunPlay(const PlayConfig& c) {
  if (c.players <= 0 || c.players % 4 != 0 || c.grpc_share < 0 || c.grpc_share > 1 ||
      c.think_ms < 0 || c.think_jitter < 0 || c.think_jitter > 1 || c.seconds <= 0 ||
      c.ramp_seconds < 0 || c.report_seconds <= 0) {
    std::cerr << "play: --players a multiple of 4, --grpc_share 0..1, --think_jitter 0..1\n";
    return 2;
  }
  std::mt19937_64 seed_rng(std::random_device{}());
  const std::string run = RandomToken(seed_rng, 8);
  PlayStats stats;
  net::io_context ioc;
  auto work = net::make_work_guard(ioc);
  PlayCtx ctx;
  ctx.config = &c;
  ctx.stats = &stats;
  ctx.ioc = &ioc;
  ctx.endpoint = tcp::endpoint(
      net::ip::make_address(c.http_host == "localhost" ? "127.0.0.1" : c.http_host), c.http_port);
  ctx.host_header = absl::StrCat(c.http_host, ":", c.http_port);
  for (int i = 0; i < std::max(1, c.grpc_channels > 0 ? c.grpc_channels : c.players); ++i) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", i);
    ctx.channels.push_back(
        grpc::CreateCustomChannel(c.grpc_target, grpc::InsecureChannelCredentials(), args));
  }
  ClientQueues queues(std::clamp(c.grpc_queues, 1, common::AsyncQueues::kQueuesMax));
  ctx.queues = &queues;
  // Player p is on gRPC when the share's running total crosses an integer at p.
  std::vector<std::unique_ptr<Player>> players;
  int grpc_players = 0;
  for (int p = 0; p < c.players; ++p) {
    const bool grpc = static_cast<int>((p + 1) * c.grpc_share) > static_cast<int>(p * c.grpc_share);
    grpc_players += grpc ? 1 : 0;
    players.push_back(std::make_unique<Player>(&ctx, p, grpc));
  }
  std::vector<std::thread> io;
  for (int t = 0; t < std::clamp(c.io_threads, 1, 4); ++t) io.emplace_back([&] { ioc.run(); });
  std::cout << absl::StrFormat(
                   "play: %d players (%d gRPC, %d WebSocket) at %d tables, think %d ms +-%.0f%%, "
                   "ramp %d s, run %d s, game %s bet %d\n",
                   c.players, grpc_players, c.players - grpc_players, c.players / 4, c.think_ms,
                   100 * c.think_jitter, c.ramp_seconds, c.seconds, c.game_options, c.bet_coins)
            << std::flush;

  const absl::Time t0 = absl::Now();
  const absl::Time end = t0 + absl::Seconds(c.seconds);
  const int groups = c.players / 4;
  std::atomic<int> next_group{0};
  std::atomic<bool> stop_setup{false};
  std::vector<std::thread> setup;
  for (int t = 0; t < std::max(1, c.setup_threads); ++t) {
    setup.emplace_back([&, t] {
      gateway::testing::HttpClient http(c.http_host, c.http_port, absl::Seconds(10));
      std::mt19937_64 rng(seed_rng() + static_cast<uint64_t>(t));
      for (int g = next_group.fetch_add(1); g < groups && !stop_setup.load();
           g = next_group.fetch_add(1)) {
        const absl::Time due = t0 + absl::Seconds(static_cast<double>(c.ramp_seconds) * g / groups);
        while (absl::Now() < due && !stop_setup.load()) {
          absl::SleepFor(std::min(due - absl::Now(), absl::Milliseconds(100)));
        }
        if (stop_setup.load()) break;
        SetUpGroup(c, &stats, http, run, g, rng, players);
      }
    });
  }

  Reporter reporter(c, &stats);
  reporter.Baseline();
  absl::Time last_report = t0;
  const absl::Time ramp_end = t0 + absl::Seconds(c.ramp_seconds);
  while (absl::Now() < end) {
    absl::SleepFor(std::min(absl::Milliseconds(200), end - absl::Now()));
    const absl::Time now = absl::Now();
    if (!ctx.ramped.load() && now >= ramp_end) {
      ctx.ramped = true;  // the steady part is measured from here, setup done or not
      std::cout << absl::StrFormat("ramp over at t=%.0fs: %d players seated\n",
                                   absl::ToDoubleSeconds(now - t0), stats.seated.load());
    }
    if (now - last_report >= absl::Seconds(c.report_seconds)) {
      reporter.Print(absl::ToDoubleSeconds(now - t0), absl::ToDoubleSeconds(now - last_report),
                     false);
      last_report = now;
    }
  }
  stop_setup = true;
  for (auto& t : setup) t.join();
  const double run_s = absl::ToDoubleSeconds(absl::Now() - t0);
  const int64_t actions_at_end = stats.actions.load();

  // Drain: everyone seated leaves (a bot ends a round in play), every stream closes.
  for (auto& p : players) p->Stop();
  const absl::Time drain_deadline = absl::Now() + absl::Seconds(c.drain_seconds);
  auto all_done = [&] {
    return stats.connected.load() == 0 &&
           std::all_of(players.begin(), players.end(),
                       [](const std::unique_ptr<Player>& p) { return p->gone(); });
  };
  while (!all_done() && absl::Now() < drain_deadline) absl::SleepFor(absl::Milliseconds(100));
  const bool drained = all_done();
  stats.actions = actions_at_end;
  reporter.Print(run_s, run_s, true);
  std::cout << absl::StrFormat("drain: %s (%d streams still connected)\n",
                               drained ? "every stream closed" : "timed out",
                               stats.connected.load());

  const double p99 = reporter.cmd_event_p99();
  std::cout << absl::StrFormat("goal p99 command->event < 100 ms: %.2f ms over %d moves: %s\n", p99,
                               reporter.cmd_event_count(),
                               reporter.cmd_event_count() > 0 && p99 < 100 ? "MET" : "MISSED");
  int rc = 0;
  if (stats.seq_errors.load() > 0) {
    std::cout << "FAIL: seq checks: " << stats.seq_errors.load() << " events out of order\n";
    rc = 1;
  }
  if (stats.ever_seated.load() < c.players) {
    std::cout << "FAIL: " << c.players - stats.ever_seated.load() << " players never seated\n";
    rc = 1;
  }
  if (actions_at_end == 0) {
    std::cout << "FAIL: no move was played\n";
    rc = 1;
  }
  work.reset();
  ioc.stop();
  for (auto& t : io) t.join();
  queues.CancelAllAndStop();
  players.clear();
  return rc;
}

}  // namespace courtpiece::gateway_load
