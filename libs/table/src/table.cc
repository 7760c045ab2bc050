#include "courtpiece/table/table.h"

#include <sodium.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/check.h"

namespace courtpiece::table {
namespace {

constexpr std::array<std::string_view, 16> kCommandNames = {
    "join",       "leave",         "disconnect",   "reconnect", "start_now", "remove_bot",
    "ask_bot",    "vote",          "swap_partner", "end_early", "move",      "voice_start",
    "voice_sent", "voice_discard", "report",       "take_back"};

std::string Hex(const uint8_t* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 15];
  }
  return out;
}

}  // namespace

std::string_view CommandTypeName(CommandType type) {
  return kCommandNames[static_cast<size_t>(type)];
}
std::optional<CommandType> ParseCommandType(std::string_view name) {
  for (size_t i = 0; i < kCommandNames.size(); ++i) {
    if (kCommandNames[i] == name) return static_cast<CommandType>(i);
  }
  return std::nullopt;
}
std::string_view TransferStepName(TransferStep step) {
  static constexpr std::string_view kNames[] = {"stake", "court_stake", "payout", "refund"};
  return kNames[static_cast<int>(step)];
}
std::string_view EffectTypeName(EffectType type) {
  static constexpr std::string_view kNames[] = {"transfer", "record_game", "record_quit",
                                                "report",   "close",       "record_round"};
  return kNames[static_cast<int>(type)];
}

Seed DeterministicSeedSource::Draw(uint64_t draw_index) {
  std::string in = absl::StrCat(master_, "|", table_id_, "|", draw_index);
  Seed out;
  crypto_hash_sha256(out.data(), reinterpret_cast<const unsigned char*>(in.data()), in.size());
  return out;
}
std::string Sha256Hex(const Seed& seed) {
  Seed out;
  crypto_hash_sha256(out.data(), seed.data(), seed.size());
  return Hex(out.data(), out.size());
}
std::string SeedHex(const Seed& seed) { return Hex(seed.data(), seed.size()); }

absl::StatusOr<bots::Level> ParseBotLevel(std::string_view name) {
  if (name.empty() || name == "easy") return bots::Level::kEasy;
  if (name == "normal") return bots::Level::kNormal;
  if (name == "strong") return bots::Level::kStrong;
  return absl::InvalidArgumentError("bot_level must be easy, normal or strong");
}

int64_t BotBudgetMs(bots::Level level) {
  return level == bots::Level::kStrong ? kBotBudgetStrongMs : kBotBudgetNormalMs;
}

absl::Status ValidateTableOptions(const TableOptions& options) {
  if (options.bet_coins < kBetMinCoins || options.bet_coins > kBetMaxCoins) {
    return absl::InvalidArgumentError(
        absl::StrCat("bet_coins must be ", kBetMinCoins, "..", kBetMaxCoins));
  }
  if (options.turn_time_ms < kTurnTimeMinMs || options.turn_time_ms > kTurnTimeMaxMs) {
    return absl::InvalidArgumentError(
        absl::StrCat("turn_time_ms must be ", kTurnTimeMinMs, "..", kTurnTimeMaxMs));
  }
  if (options.table_id.empty() || options.host_player.empty()) {
    return absl::InvalidArgumentError("table_id and host_player are required");
  }
  if (options.bot_level > bots::Level::kStrong) {
    return absl::InvalidArgumentError("bot_level must be easy, normal or strong");
  }
  return absl::OkStatus();
}

Table::Table(const TableOptions& options, EngineFactory* engines, SeedSource* seeds)
    : options_(options), engines_(engines), seeds_(seeds) {}

absl::StatusOr<std::unique_ptr<Table>> Table::Create(const TableOptions& options,
                                                     EngineFactory* engines, SeedSource* seeds,
                                                     int64_t now_ms) {
  if (absl::Status s = ValidateTableOptions(options); !s.ok()) return s;
  if (absl::Status s = engines->Validate(options.game_options); !s.ok()) return s;
  std::unique_ptr<Table> t(new Table(options, engines, seeds));
  t->seats_[0].kind = SeatKind::kPerson;
  t->seats_[0].player = options.host_player;
  t->host_ = options.host_player;
  t->EmitAll({.type = "seated", .seat = 0, .player = options.host_player, .detail = "person"});
  t->Reschedule(now_ms);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Outputs.

void Table::EmitTo(int s, Event ev) {
  if (seats_[s].kind != SeatKind::kPerson) return;
  ev.seq = ++seq_;
  ev.to_seat = s;
  ev.to_player = seats_[s].player;
  events_.push_back(std::move(ev));
}
void Table::EmitAll(Event ev) {
  for (int s = 0; s < 4; ++s) EmitTo(s, ev);
}
void Table::FlushEngineEvents() {
  if (!engine_) return;
  std::array<std::vector<EngineEvent>, 4> per_seat = engine_->TakeEvents();
  for (int s = 0; s < 4; ++s) {
    for (EngineEvent& e : per_seat[s]) {
      EmitTo(s, {.type = std::move(e.type),
                 .seat = e.seat,
                 .cards = std::move(e.cards),
                 .detail = std::move(e.detail)});
    }
  }
}
void Table::EmitTransfer(Transfer t) {
  int64_t sum = 0;
  for (const TransferLeg& l : t.legs) sum += l.amount_coins;
  COURTPIECE_CHECK(sum == 0, "a transfer's legs sum to zero");
  (void)sum;
  if (t.awaited) {
    awaited_key_ = t.key;
    awaited_ = t;
  }
  effects_.push_back({.type = EffectType::kTransfer, .transfer = std::move(t)});
}
std::vector<Event> Table::TakeEvents() {
  std::vector<Event> out;
  out.swap(events_);
  return out;
}
std::vector<Effect> Table::TakeEffects() {
  std::vector<Effect> out;
  out.swap(effects_);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Helpers.

int Table::SeatOf(std::string_view player) const {
  for (int s = 0; s < 4; ++s) {
    if (seats_[s].kind == SeatKind::kPerson && seats_[s].player == player) return s;
  }
  return -1;
}
int Table::PeopleSeated() const {
  int n = 0;
  for (const SeatState& st : seats_) n += st.kind == SeatKind::kPerson;
  return n;
}
bool Table::AllSeatsReady() const {
  for (const SeatState& st : seats_) {
    if (st.kind == SeatKind::kEmpty || st.Away()) return false;
  }
  return true;
}
std::string Table::PotAccount() const {
  return absl::StrCat("pot:", options_.table_id, ":", round_no_ + (phase_ == Phase::kStaking));
}
std::string Table::SeatAccount(int s) const {
  return seats_[s].kind == SeatKind::kPerson ? absl::StrCat("player:", seats_[s].player)
                                             : std::string("house");
}

std::optional<int64_t> Table::NextDeadline() const {
  int64_t best = 0;
  auto consider = [&](int64_t t) {
    if (t > 0 && (best == 0 || t < best)) best = t;
  };
  consider(auto_start_at_);
  consider(count_in_until_);
  consider(turn_deadline_);
  if (bot_wait_) consider(bot_wait_->deadline_ms);
  if (vote_.active) consider(vote_.deadline_ms);
  consider(recording_until_);
  for (const SeatState& st : seats_) consider(st.keep_until_ms);
  if (best == 0) return std::nullopt;
  return best;
}
std::optional<std::string> Table::AwaitedTransferKey() const {
  if (awaited_key_.empty()) return std::nullopt;
  return awaited_key_;
}

// ---------------------------------------------------------------------------------------------
// Inputs.

void Table::Advance(int64_t now_ms) {
  for (int guard = 0; guard < 10'000; ++guard) {
    std::optional<int64_t> next = NextDeadline();
    if (!next || *next > now_ms || phase_ == Phase::kClosed) return;
    FireDue(*next);
  }
  COURTPIECE_CHECK(false, "table deadlines do not advance");
}

void Table::FireDue(int64_t t) {
  if (auto_start_at_ == t) {
    auto_start_at_ = 0;
    StartGame(t);
  } else if (count_in_until_ == t) {
    count_in_until_ = 0;
    EndCountIn(t);
  } else if (turn_deadline_ == t) {
    turn_deadline_ = 0;
    int s = engine_->ToAct();
    COURTPIECE_CHECK(s >= 0 && s < 4, "a turn timer runs only while a seat is to act");
    SeatState& st = seats_[s];
    if (++st.timeouts_in_row >= kTimeoutsBeforeBot && !st.bot_driving) {
      st.bot_driving = true;
      EmitAll({.type = "bot_driving", .seat = s, .player = st.player});
    }
    EmitAll({.type = "timeout", .seat = s, .value = st.timeouts_in_row});
    if (PlayForSeat(s, /*timed_out=*/true, t)) DriveTurns(t);
  } else if (bot_wait_ && bot_wait_->deadline_ms == t) {
    // The search missed its budget: the heuristic plays (a late answer is refused by id).
    int s = bot_wait_->seat;
    COURTPIECE_CHECK(phase_ == Phase::kPlaying && engine_->ToAct() == s,
                     "a bot move is awaited only for the seat to act");
    bot_wait_.reset();
    ApplyMove(s, engine_->AutoMove(s), t);
    DriveTurns(t);
  } else if (vote_.active && vote_.deadline_ms == t) {
    ResolveVote(true, t);  // silence is a yes
  } else if (recording_until_ == t) {
    ReleaseVoiceLock(t, "timeout");
  } else {
    for (int s = 0; s < 4; ++s) {
      if (seats_[s].keep_until_ms == t) {
        ExpireKeptSeat(s, t);
        return;
      }
    }
  }
}

std::optional<BotTurn> Table::PendingBotTurn() const { return bot_wait_; }

std::unique_ptr<BotJob> Table::NewBotJob() const {
  COURTPIECE_CHECK(bot_wait_.has_value(), "NewBotJob needs a pending bot turn");
  // FNV-1a over the table id, then the round and the turn's id: the same turn gets the same
  // search (a restored table asks again with the same id), and nothing of the deal leaks in.
  uint64_t seed = 1469598103934665603ULL;
  for (unsigned char c : options_.table_id) seed = (seed ^ c) * 1099511628211ULL;
  seed ^= (round_no_ << 32) ^ bot_wait_->id;
  return engine_->NewBotJob(bot_wait_->seat, bot_wait_->level, seed);
}

absl::Status Table::OnBotMove(uint64_t id, const std::optional<Move>& move, int64_t now_ms) {
  Advance(now_ms);
  if (!bot_wait_ || bot_wait_->id != id) {
    return absl::NotFoundError(absl::StrCat("no bot move awaited with id ", id));
  }
  const int s = bot_wait_->seat;
  COURTPIECE_CHECK(phase_ == Phase::kPlaying && engine_->ToAct() == s,
                   "a bot move is awaited only for the seat to act");
  bot_wait_.reset();
  if (move && engine_->Apply(s, *move).ok()) {
    turn_deadline_ = 0;
    turn_seat_ = -1;
    FlushEngineEvents();
  } else {
    ApplyMove(s, engine_->AutoMove(s), now_ms);  // no move, or a refused one: the heuristic's
  }
  DriveTurns(now_ms);
  return absl::OkStatus();
}

absl::Status Table::Handle(const Command& c, int64_t now_ms) {
  Advance(now_ms);
  if (phase_ == Phase::kClosed) return absl::FailedPreconditionError("the table is closed");
  if (c.type == CommandType::kJoin) return Join(c, now_ms);
  int s = SeatOf(c.player);
  if (s < 0) return absl::PermissionDeniedError(absl::StrCat(c.player, " is not seated"));
  SeatState& st = seats_[s];
  if (c.type != CommandType::kDisconnect && c.type != CommandType::kReconnect &&
      c.type != CommandType::kLeave && st.Away()) {
    // Pressed Leave mid-round (their stream, which sent this, is open): `join` brings them
    // back (client-api.md §3.5); a dropped connection comes back by reopening its stream.
    return absl::FailedPreconditionError(st.left ? "you left this round: send join to come back"
                                                 : "reconnect first");
  }
  // Validate and apply first: an error changes nothing (not even a bot-driven seat).
  absl::Status status = Dispatch(s, c, now_ms);
  if (!status.ok() || c.type == CommandType::kDisconnect || c.type == CommandType::kLeave) {
    return status;
  }
  // Any accepted action of the player takes their seat back from the bot (RULES.md §4.7).
  s = SeatOf(c.player);  // a swap may have moved them
  if (s >= 0) ReleaseBot(s, now_ms);
  return status;
}

absl::Status Table::Dispatch(int s, const Command& c, int64_t now_ms) {
  switch (c.type) {
    case CommandType::kJoin:
      break;
    case CommandType::kLeave:
      return Leave(s, now_ms);
    case CommandType::kDisconnect:
      return Disconnect(s, now_ms);
    case CommandType::kReconnect:
      return Reconnect(s, now_ms);
    case CommandType::kStartNow:
      return StartNow(s, now_ms);
    case CommandType::kRemoveBot:
      return RemoveBot(s, c.seat, now_ms);
    case CommandType::kAskBot:
      return AskBot(s, c.seat, now_ms);
    case CommandType::kVote:
      return CastVote(s, c.yes, now_ms);
    case CommandType::kSwapPartner:
      return SwapPartner(s, c.seat, now_ms);
    case CommandType::kEndEarly:
      return EndEarly(s, now_ms);
    case CommandType::kMove:
      return PlayMove(s, c.move, now_ms);
    case CommandType::kVoiceStart:
      return VoiceStart(s, now_ms);
    case CommandType::kVoiceSent:
      return VoiceSent(s, c, now_ms);
    case CommandType::kVoiceDiscard:
      return VoiceDiscard(s, now_ms);
    case CommandType::kReport:
      return Report(s, c, now_ms);
    case CommandType::kTakeBack:
      // §4.7 "until you act again": the one command that does nothing but act (Handle's
      // ReleaseBot takes the seat back once it is accepted).
      if (!seats_[s].bot_driving) {
        return absl::FailedPreconditionError("no bot is playing for you");
      }
      return absl::OkStatus();
  }
  return absl::InvalidArgumentError("unknown command");
}

}  // namespace courtpiece::table
