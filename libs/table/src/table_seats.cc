// Seats: joining, leaving, disconnecting, bots, the host, auto start and the count-in.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/check.h"
#include "courtpiece/table/table.h"

namespace courtpiece::table {
namespace {
constexpr std::array<int, 4> kJoinOrder = {2, 1, 3, 0};
constexpr std::array<int, 4> kHostOrder = {0, 2, 1, 3};
}  // namespace

absl::Status Table::Join(const Command& c, int64_t now) {
  if (c.player.empty()) return absl::InvalidArgumentError("player is required");
  int mine = SeatOf(c.player);
  if (mine >= 0) {
    if (seats_[mine].Away()) return Reconnect(mine, now);
    return absl::AlreadyExistsError(absl::StrCat(c.player, " is already seated"));
  }
  if (c.balance_coins < 2 * options_.bet_coins) {
    return absl::FailedPreconditionError(
        absl::StrCat("sitting down needs ", 2 * options_.bet_coins, " coins"));
  }
  int seat = -1;
  for (int s : kJoinOrder) {
    if (seats_[s].kind == SeatKind::kEmpty) {
      seat = s;
      break;
    }
  }
  if (seat < 0 && !InRound()) {
    // A seat kept for someone away may be taken (RULES.md §4.9).
    for (int s : kJoinOrder) {
      if (seats_[s].Away()) {
        seat = s;
        FreeSeat(s, "seat_taken", QuitNow());
        break;
      }
    }
  }
  if (seat < 0) return absl::ResourceExhaustedError("the table is full");
  SeatState& st = seats_[seat];
  st = SeatState{};
  st.kind = SeatKind::kPerson;
  st.player = c.player;
  st.voice_used = VoiceUsedBy(c.player);  // sitting down again does not give it back (§5.1)
  if (vote_.active && !vote_.swap && vote_.seat == seat) ResolveVote(false, now);
  EmitAll({.type = "seated", .seat = seat, .player = c.player, .detail = "person"});
  for (int s = 0; s < 4; ++s) {
    if (s != seat && seats_[s].kind != SeatKind::kEmpty) {
      EmitTo(seat, {.type = "seated",
                    .seat = s,
                    .player = seats_[s].player,
                    .detail = seats_[s].kind == SeatKind::kBot ? "bot" : "person"});
    }
  }
  if (host_.empty()) {
    host_ = c.player;
    EmitAll({.type = "host", .seat = seat, .player = host_});
  } else {
    // The newcomer learns who hosts, as it learns who sits: a player back at the table may
    // have missed the host passing on while they were not seated.
    EmitTo(seat, {.type = "host", .seat = SeatOf(host_), .player = host_});
  }
  if (c.away) (void)Disconnect(seat, now);  // before Reschedule: no start begun and cancelled
  Reschedule(now);
  return absl::OkStatus();
}

absl::Status Table::Leave(int s, int64_t now) {
  SeatState& st = seats_[s];
  if (InRound()) {
    // The bot plays the rest of the round; the seat is settled when it ends (§4.8–4.10).
    if (recording_seat_ == s) ReleaseVoiceLock(now, "left");
    st.left = true;
    // One who pressed Leave cannot agree to end early (§4.12): an agreement given before
    // goes, so the round plays out and the leave is a quit.
    st.end_early = false;
    st.connected = false;
    EmitAll({.type = "away", .seat = s, .player = st.player, .detail = "left"});
    if (phase_ == Phase::kPlaying && engine_->ToAct() == s) DriveTurns(now);
    return absl::OkStatus();
  }
  // Outside a round (waiting, count-in) leaving costs no coins (§4.5). Once a round of a game
  // that counts was dealt it abandons the game, as an expired disconnect does: a quit (§4.5,
  // §4.9); before the game's first deal it is free (docs/table.md).
  FreeSeat(s, "left", QuitNow());
  MaybeFinishEarly(now);
  Reschedule(now);
  MaybeClose();
  return absl::OkStatus();
}

absl::Status Table::Disconnect(int s, int64_t now) {
  SeatState& st = seats_[s];
  if (!st.connected) return absl::OkStatus();
  st.connected = false;
  EmitAll({.type = "away", .seat = s, .player = st.player, .detail = "disconnected"});
  if (recording_seat_ == s) ReleaseVoiceLock(now, "disconnected");
  if (InRound()) {
    if (phase_ == Phase::kPlaying && engine_->ToAct() == s) DriveTurns(now);
    return absl::OkStatus();
  }
  st.keep_until_ms = now + (GameUnderWay() ? kKeepSeatInGameMs : kKeepSeatOutsideGameMs);
  Reschedule(now);
  return absl::OkStatus();
}

absl::Status Table::Reconnect(int s, int64_t now) {
  SeatState& st = seats_[s];
  st.connected = true;
  st.left = false;
  st.keep_until_ms = 0;
  st.bot_driving = false;
  st.timeouts_in_row = 0;
  EmitAll({.type = "back", .seat = s, .player = st.player});
  EmitSeatView(s);
  if (phase_ == Phase::kPlaying && engine_->ToAct() == s) DriveTurns(now);
  Reschedule(now);
  return absl::OkStatus();
}

absl::Status Table::SendView(std::string_view player) {
  const int s = SeatOf(player);
  if (s < 0) return absl::PermissionDeniedError("not seated at this table");
  EmitSeatView(s);
  return absl::OkStatus();
}

void Table::EmitSeatView(int s) {
  for (int o = 0; o < 4; ++o) {
    if (seats_[o].kind != SeatKind::kEmpty) {
      EmitTo(s, {.type = "seated",
                 .seat = o,
                 .player = seats_[o].player,
                 .detail = seats_[o].kind == SeatKind::kBot ? "bot" : "person"});
    }
  }
  EmitSeedCommitment(s);
  if (engine_) {
    for (EngineEvent& e : engine_->ViewOf(s)) {
      EmitTo(s, {.type = std::move(e.type),
                 .seat = e.seat,
                 .cards = std::move(e.cards),
                 .detail = std::move(e.detail)});
    }
  }
  EmitTableView(s);
  EmitSeedIfEntitled(s);
}

void Table::EmitSeedCommitment(int s) {
  // game_under_way_: a round of the running game was dealt, so round_seed_ is round_no_'s.
  if (!GameUnderWay()) return;
  EmitTo(s, {.type = "seed_commitment",
             .detail = Sha256Hex(round_seed_),
             .value = static_cast<int64_t>(round_no_)});
}

void Table::EmitSeedIfEntitled(int s) {
  // The round ended once the table is past kPlaying (court stake, between rounds, the next
  // count-in or stake); an abandoned round ends the game, and with it the catch-up.
  if (!GameUnderWay() || phase_ == Phase::kPlaying) return;
  if (!seed_only_player_.empty() && seed_only_player_ != seats_[s].player) return;
  EmitTo(
      s,
      {.type = "seed", .detail = SeedHex(round_seed_), .value = static_cast<int64_t>(round_no_)});
}

void Table::EmitTableView(int s) {
  static constexpr std::string_view kPhases[] = {"waiting", "count_in",    "staking",
                                                 "playing", "court_stake", "closed"};
  EmitTo(s, {.type = "table_phase",
             .detail = std::string(kPhases[static_cast<int>(phase_)]),
             .value = static_cast<int64_t>(round_no_)});
  if (!host_.empty()) EmitTo(s, {.type = "host", .seat = SeatOf(host_), .player = host_});
  for (int o = 0; o < 4; ++o) {
    const SeatState& st = seats_[o];
    if (st.kind != SeatKind::kPerson) continue;
    std::string_view state = st.left ? "left" : !st.connected ? "disconnected" : "present";
    if (st.bot_driving) state = "bot_driving";
    EmitTo(s, {.type = "presence",
               .seat = o,
               .player = st.player,
               .detail = std::string(state),
               .value = st.keep_until_ms});
    // Who already agreed to end the game early: a reconnecting client shows the request.
    if (st.end_early) EmitTo(s, {.type = "end_early", .seat = o, .player = st.player});
  }
  if (phase_ == Phase::kPlaying && turn_seat_ >= 0) {
    EmitTo(s, {.type = "turn", .seat = turn_seat_, .value = turn_deadline_});
  }
  if (count_in_until_ != 0) EmitTo(s, {.type = "count_in", .value = count_in_until_});
  if (auto_start_at_ != 0) EmitTo(s, {.type = "auto_start", .value = auto_start_at_});
  if (vote_.active) {
    EmitTo(s, {.type = "vote",
               .seat = vote_.seat,
               .player = vote_.asker,
               .detail = vote_.swap ? "swap" : "bot",
               .value = vote_.deadline_ms});
  }
  if (recording_seat_ >= 0) {
    EmitTo(s, {.type = "voice_recording",
               .seat = recording_seat_,
               .player = seats_[recording_seat_].player,
               .value = recording_until_ - kVoiceUploadGraceMs});
  }
}

absl::Status Table::StartNow(int s, int64_t now) {
  (void)s;
  if (game_active_) return absl::FailedPreconditionError("the game has already started");
  // A game never starts while a seated person is away (§4.3): nothing changes, no bot sits.
  for (const SeatState& st : seats_) {
    if (st.Away()) {
      return absl::FailedPreconditionError(
          absl::StrCat(st.player, " is away: a game starts when everyone seated is present"));
    }
  }
  for (int o = 0; o < 4; ++o) {
    if (seats_[o].kind == SeatKind::kEmpty) {
      seats_[o] = SeatState{};
      seats_[o].kind = SeatKind::kBot;
      seats_[o].player = absl::StrCat("bot-", o);
      EmitAll({.type = "seated", .seat = o, .player = seats_[o].player, .detail = "bot"});
    }
  }
  auto_start_at_ = 0;
  StartGame(now);
  return absl::OkStatus();
}

absl::Status Table::RemoveBot(int s, int target, int64_t now) {
  (void)s;
  if (target < 0 || target > 3 || seats_[target].kind != SeatKind::kBot) {
    return absl::InvalidArgumentError("no bot in that seat");
  }
  if (InRound()) return absl::FailedPreconditionError("bots stay until the round ends");
  EmitAll({.type = "unseated",
           .seat = target,
           .player = seats_[target].player,
           .detail = "bot_removed"});
  seats_[target] = SeatState{};
  Reschedule(now);
  return absl::OkStatus();
}

void Table::FreeSeat(int s, std::string_view reason, bool quit) {
  SeatState& st = seats_[s];
  std::string player = st.player;
  EmitAll({.type = "unseated", .seat = s, .player = player, .detail = std::string(reason)});
  if (recording_seat_ == s) {
    recording_seat_ = -1;
    recording_until_ = 0;
    EmitAll({.type = "voice_idle", .seat = s});
  }
  st = SeatState{};
  if (quit) {
    Effect e;  // not a designated initializer: GCC 12 -O3 warns (maybe-uninitialized)
    e.type = EffectType::kRecordQuit;
    e.player = player;
    e.game_no = game_no_;
    e.game_type = GameTypeOf(options_.game_options);
    effects_.push_back(std::move(e));
  }
  if (vote_.active) {
    std::erase(vote_.pending, player);
    int asker_seat = SeatOf(vote_.asker);
    bool partner_seat = asker_seat >= 0 && s == (asker_seat + 2) % 4;  // the host's partner
    if (vote_.swap && (player == vote_.asker || s == vote_.seat || partner_seat)) {
      vote_.active = false;
      EmitAll({.type = "vote_result", .seat = vote_.seat, .detail = "cancelled"});
    }
  }
  if (player == host_) {
    host_.clear();
    for (int o : kHostOrder) {
      if (seats_[o].kind == SeatKind::kPerson) {
        host_ = seats_[o].player;
        EmitAll({.type = "host", .seat = o, .player = host_});
        break;
      }
    }
  }
}

void Table::ExpireKeptSeat(int s, int64_t now) {
  // Not back in time: in a game under way it is a quit (§4.9); before or between games, or
  // before a game's first deal, it is not (§4.10).
  FreeSeat(s, "not_back_in_time", QuitNow());
  MaybeFinishEarly(now);
  Reschedule(now);
  MaybeClose();
}

void Table::MaybeClose() {
  if (phase_ == Phase::kClosed || PeopleSeated() > 0 || InRound()) return;
  phase_ = Phase::kClosed;
  auto_start_at_ = count_in_until_ = turn_deadline_ = recording_until_ = 0;
  vote_ = Vote{};
  bot_wait_.reset();
  for (SeatState& st : seats_) st = SeatState{};
  effects_.push_back({.type = EffectType::kClose});
}

void Table::Reschedule(int64_t now) {
  // Everyone still asked has left (FreeSeat took them off the list): the others agreed or
  // were silent, so the vote passes now instead of waiting out its 20 s (§4.11).
  if (vote_.active && vote_.pending.empty()) {
    ResolveVote(true, now);  // resets the vote, then reschedules
    return;
  }
  if (phase_ == Phase::kClosed || InRound()) return;
  bool ready = AllSeatsReady();
  if (!game_active_) {
    // A game starts by itself only while every seat is held by a bot or a present person
    // (§4.3): 7 s after that, or after the last game's end as soon as that holds. A partner
    // swap being voted on holds it until the vote is decided, so the opponents' 20 s of
    // silence (§4.11) can count as yes; "start now" still starts (and cancels the vote).
    ready = ready && !(vote_.active && vote_.swap);
    if (ready && auto_start_at_ == 0) {
      auto_start_at_ = next_game_at_ != 0 ? std::max(next_game_at_, now) : now + kAutoStartMs;
      EmitAll({.type = "auto_start", .value = auto_start_at_});
    } else if (!ready && auto_start_at_ != 0) {
      auto_start_at_ = 0;
      EmitAll({.type = "auto_start_cancelled"});
    }
    return;
  }
  if (phase_ == Phase::kWaiting && ready) {
    phase_ = Phase::kCountIn;
    count_in_until_ = now + kCountInMs;
    BeginVoiceRound(round_no_ + 1);  // the count-in belongs to the round it counts in (§5.1)
    EmitAll({.type = "count_in", .value = count_in_until_});
  } else if (phase_ == Phase::kCountIn && !ready) {
    phase_ = Phase::kWaiting;
    count_in_until_ = 0;
    EmitAll({.type = "count_in_cancelled"});
  }
}

void Table::StartGame(int64_t now) {
  absl::StatusOr<std::unique_ptr<GameEngine>> e =
      engines_->NewGame(options_.game_options, seeds_->Draw(draw_index_++));
  COURTPIECE_CHECK(e.ok(), "options were validated at Create");
  engine_ = std::move(*e);
  game_active_ = true;
  game_under_way_ = false;
  next_game_at_ = 0;
  ++game_no_;
  game_courts_ = {0, 0};
  game_goon_courts_ = {0, 0};
  game_people_ = 0;  // counted at each deal (StartRound): who sat at the start is not enough
  for (SeatState& st : seats_) st.end_early = false;
  EmitAll({.type = "game_started", .value = static_cast<int64_t>(game_no_)});
  if (vote_.active && vote_.swap) {
    // The swap is for before a game or between games only.
    EmitAll({.type = "vote_result", .seat = vote_.seat, .detail = "cancelled"});
    vote_ = Vote{};
  }
  Reschedule(now);
}

}  // namespace courtpiece::table
