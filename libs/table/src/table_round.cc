// Rounds: stakes, play through the engine, turn timers, settlement, game end.
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/check.h"
#include "courtpiece/table/table.h"

namespace courtpiece::table {

void Table::EndCountIn(int64_t now) {
  (void)now;
  phase_ = Phase::kStaking;
  const int64_t bet = options_.bet_coins;
  Transfer t{.key = absl::StrCat(options_.table_id, ":", round_no_ + 1, ":stake:", stake_attempt_),
             .step = TransferStep::kStake,
             .min_balance_coins = 2 * bet,
             .awaited = true};
  int64_t house = 0;
  for (int s = 0; s < 4; ++s) {
    if (seats_[s].kind == SeatKind::kBot) {
      house -= bet;
    } else {
      t.legs.push_back({SeatAccount(s), -bet});
    }
  }
  if (house != 0) t.legs.push_back({"house", house});
  t.legs.push_back({PotAccount(), 4 * bet});
  EmitAll({.type = "staking", .value = 4 * bet});
  EmitTransfer(std::move(t));
}

absl::Status Table::OnWalletReply(std::string_view key, bool ok,
                                  const std::vector<std::string>& short_players, int64_t now_ms) {
  Advance(now_ms);
  if (awaited_key_.empty() || key != awaited_key_) {
    return absl::NotFoundError(absl::StrCat("no awaited transfer ", std::string(key)));
  }
  Transfer t = std::move(awaited_);
  awaited_ = Transfer{};
  awaited_key_.clear();
  if (t.step == TransferStep::kStake) {
    if (ok && AnyoneAway()) {
      // No card is dealt while a seated person is away (§4.3): the stake goes back exactly.
      ReturnStake(t);
    } else if (ok) {
      for (const TransferLeg& l : t.legs) {
        if (l.amount_coins < 0) stakes_.push_back({l.account, -l.amount_coins});
      }
      pot_coins_ = 4 * options_.bet_coins;
      StartRound(now_ms);
    } else {
      // Nothing moved. Players short of twice the bet are unseated, not a quit (§4.5 D).
      ++stake_attempt_;
      phase_ = Phase::kWaiting;
      EmitAll({.type = "stake_refused"});
      for (const std::string& p : short_players) {
        int s = SeatOf(p);
        if (s >= 0) FreeSeat(s, "not_enough_coins", false);
      }
      // Seats that went away while the stake was awaited are settled as at a round's end,
      // so a Leave is freed and a lost connection gets its keep deadline (never stalled).
      SettleAwaySeats(now_ms);
      Reschedule(now_ms);
      MaybeClose();
    }
  } else if (t.step == TransferStep::kRefund) {
    // The return of a stake accepted while someone was away (ReturnStake).
    if (ok) {
      phase_ = Phase::kWaiting;
      EmitAll({.type = "stake_returned", .value = 4 * options_.bet_coins});
      // As after a refused stake: a Leave is freed, a lost connection gets its keep deadline;
      // the count-in starts again once everyone is present.
      SettleAwaySeats(now_ms);
      Reschedule(now_ms);
      MaybeClose();
    } else {
      // The pot holds exactly these coins: the wallet is asked again with the same key, so a
      // refund that did go through is not paid twice.
      EmitTransfer(std::move(t));
    }
  } else if (t.step == TransferStep::kCourtStake) {
    if (ok) {
      for (const TransferLeg& l : t.legs) {
        if (l.amount_coins < 0) {
          stakes_.push_back({l.account, -l.amount_coins});
          pot_coins_ -= l.amount_coins;
        }
      }
      Payout(now_ms);
    } else {
      // Losing players who cannot pay again are left out; the rest pay (docs/table.md).
      Transfer again{
          .key = absl::StrCat(t.key, "+"), .step = TransferStep::kCourtStake, .awaited = true};
      int64_t in = 0;
      bool left_out = false;  // a named player was among the payers
      for (const TransferLeg& l : t.legs) {
        bool short_leg = false;
        for (const std::string& p : short_players) {
          short_leg = short_leg || l.account == absl::StrCat("player:", p);
        }
        left_out = left_out || (l.amount_coins < 0 && short_leg);
        if (l.amount_coins < 0 && !short_leg) {
          again.legs.push_back(l);
          in -= l.amount_coins;
        }
      }
      // A refusal naming nobody who pays would be asked again forever: pay out the pot as it is.
      if (in == 0 || !left_out) {
        Payout(now_ms);
      } else {
        again.legs.push_back({PotAccount(), in});
        EmitTransfer(std::move(again));
      }
    }
  }
  MaybeFinishEarly(now_ms);
  return absl::OkStatus();
}

bool Table::AnyoneAway() const {
  for (const SeatState& st : seats_) {
    if (st.Away()) return true;
  }
  return false;
}

void Table::ReturnStake(const Transfer& stake) {
  Transfer back{
      .key = absl::StrCat(options_.table_id, ":", round_no_ + 1, ":stake_refund:", stake_attempt_),
      .step = TransferStep::kRefund,
      .awaited = true};
  for (auto it = stake.legs.rbegin(); it != stake.legs.rend(); ++it) {
    back.legs.push_back({it->account, -it->amount_coins});
  }
  ++stake_attempt_;  // the next stake of this round is a new transfer with a new key
  EmitAll({.type = "deal_held", .value = 4 * options_.bet_coins});
  EmitTransfer(std::move(back));
}

void Table::StartRound(int64_t now) {
  ++round_no_;
  stake_attempt_ = 0;
  round_seed_ = seeds_->Draw(draw_index_++);
  absl::Status st = engine_->StartRound(round_seed_);
  COURTPIECE_CHECK(st.ok(), "the engine starts a round the table asks for");
  (void)st;
  phase_ = Phase::kPlaying;
  // Whether the game counts (stats, quits) uses the most people seated at any round start.
  game_people_ = std::max(game_people_, PeopleSeated());
  game_under_way_ = true;
  BeginVoiceRound(round_no_);  // normally done by the round's count-in already
  if (vote_.active) {
    EmitAll({.type = "vote_result", .seat = vote_.seat, .detail = "cancelled"});
    vote_ = Vote{};
  }
  EmitAll({.type = "round_started",
           .detail = Sha256Hex(round_seed_),
           .value = static_cast<int64_t>(round_no_)});
  FlushEngineEvents();
  DriveTurns(now);
}

void Table::DriveTurns(int64_t now) {
  while (phase_ == Phase::kPlaying) {
    if (engine_->RoundOver()) {
      EndRound(now);
      return;
    }
    int s = engine_->ToAct();
    const SeatState& st = seats_[s];
    const bool machine = st.kind == SeatKind::kBot || st.Away() || st.bot_driving;
    if (bot_wait_) {
      COURTPIECE_CHECK(bot_wait_->seat == s, "a bot move is awaited only for the seat to act");
      // Still awaited, unless the person is back at a seat played for them while away or
      // driven (a timed-out turn's move stays the machine's).
      if (machine || bot_wait_->timed_out) return;
      bot_wait_.reset();
    }
    if (machine) {
      if (!PlayForSeat(s, /*timed_out=*/false, now)) return;
      continue;
    }
    if (turn_seat_ != s || turn_deadline_ == 0) {
      turn_seat_ = s;
      turn_deadline_ = now + options_.turn_time_ms;
      EmitAll({.type = "turn", .seat = s, .value = turn_deadline_});
    }
    return;
  }
}

bots::Level Table::LevelFor(int s) const {
  return seats_[s].kind == SeatKind::kBot ? options_.bot_level : bots::kTimeoutLevel;
}

bool Table::PlayForSeat(int s, bool timed_out, int64_t now) {
  const bots::Level level = LevelFor(s);
  if (level == bots::Level::kEasy || !engine_->Searches()) {
    ApplyMove(s, engine_->AutoMove(s), now);
    return true;
  }
  bot_wait_ = BotTurn{.id = ++bot_requests_,
                      .seat = s,
                      .level = level,
                      .timed_out = timed_out,
                      .deadline_ms = now + BotBudgetMs(level)};
  turn_deadline_ = 0;
  turn_seat_ = -1;
  return false;
}

void Table::ApplyMove(int s, const Move& move, int64_t now) {
  (void)now;
  absl::Status st = engine_->Apply(s, move);
  COURTPIECE_CHECK(st.ok(), "AutoMove must be legal");
  (void)st;
  turn_deadline_ = 0;
  turn_seat_ = -1;
  FlushEngineEvents();
}

absl::Status Table::PlayMove(int s, const Move& move, int64_t now) {
  if (phase_ != Phase::kPlaying) return absl::FailedPreconditionError("no round in play");
  if (engine_->ToAct() != s) return absl::FailedPreconditionError("not your turn");
  if (bot_wait_) {
    return absl::FailedPreconditionError(bot_wait_->timed_out
                                             ? "your time ran out: a card is being played for you"
                                             : "a bot is playing for you: take_back first");
  }
  if (absl::Status st = engine_->Apply(s, move); !st.ok()) return st;
  seats_[s].timeouts_in_row = 0;
  turn_deadline_ = 0;
  turn_seat_ = -1;
  FlushEngineEvents();
  DriveTurns(now);
  return absl::OkStatus();
}

void Table::EndRound(int64_t now) {
  turn_deadline_ = 0;
  turn_seat_ = -1;
  outcome_ = engine_->Outcome();
  const int seed_only_to = engine_->SeedOnlyFor();
  // §4.9 judges who is away when the round ENDS: a Leave or disconnect while the Court's
  // second stake is awaited comes after the end and does not cost the share.
  away_at_round_end_ = 0;
  for (int s = 0; s < 4; ++s) away_at_round_end_ |= (seats_[s].Away() ? 1u : 0u) << s;
  engine_->FinishRound();
  outcome_game_over_ = engine_->GameOver();
  FlushEngineEvents();
  std::array<int, 2> sc = engine_->Scores();
  EmitAll({.type = "round_result",
           .seat = outcome_.winning_team,
           .detail = absl::StrCat(outcome_.kind, " ", sc[0], "-", sc[1]),
           .value = outcome_.points});
  PublishSeed(seed_only_to, absl::StrCat(outcome_.kind, " ", sc[0], "-", sc[1]));
  if (outcome_.winning_team >= 0 && IsCourtKind(outcome_.kind)) {
    ++game_courts_[outcome_.winning_team];
    if (outcome_.goon) ++game_goon_courts_[outcome_.winning_team];
  }
  if (outcome_.winning_team >= 0 && IsCourtKind(outcome_.kind)) {
    // A Court pays double: each losing seat stakes again first (§4.6).
    phase_ = Phase::kCourtStake;
    Transfer t{.key = absl::StrCat(options_.table_id, ":", round_no_, ":court_stake"),
               .step = TransferStep::kCourtStake,
               .awaited = true};
    // One leg per account: two bots on the losing side are one house leg of twice the bet
    // (the wallet refuses an account twice in a transfer).
    std::map<std::string, int64_t> debit;
    int64_t in = 0;
    for (int s = 0; s < 4; ++s) {
      if (s % 2 == outcome_.winning_team) continue;
      debit[SeatAccount(s)] -= options_.bet_coins;
      in += options_.bet_coins;
    }
    for (const auto& [account, amount] : debit) t.legs.push_back({account, amount});
    t.legs.push_back({PotAccount(), in});
    EmitTransfer(std::move(t));
    return;
  }
  Payout(now);
}

void Table::PublishSeed(int only_to, std::string result) {
  Event ev{
      .type = "seed", .detail = SeedHex(round_seed_), .value = static_cast<int64_t>(round_no_)};
  seed_only_player_ = only_to >= 0 ? seats_[only_to].player : std::string();
  if (only_to >= 0) {
    EmitTo(only_to, ev);
  } else {
    EmitAll(ev);
  }
  Effect e;
  e.type = EffectType::kRecordRound;
  e.round = RoundRecord{.round_no = round_no_,
                        .seed_hex = SeedHex(round_seed_),
                        .result = std::move(result),
                        .seed_only_to = only_to};
  effects_.push_back(std::move(e));
}

void Table::Payout(int64_t now) {
  std::map<std::string, int64_t> credit;
  TransferStep step = TransferStep::kPayout;
  if (outcome_.winning_team < 0) {
    step = TransferStep::kRefund;  // a draw returns every stake to whoever paid it
    for (const TransferLeg& l : stakes_) credit[l.account] += l.amount_coins;
  } else {
    const int64_t share = pot_coins_ / 2;
    credit["house"] += pot_coins_ - 2 * share;  // an odd coin (refused court stake) to the house
    for (int s = outcome_.winning_team; s < 4; s += 2) {
      // A bot's share, or that of a player away at the round's end, goes to the house; not
      // when the round ends the game (§4.6, §4.10).
      bool present = !((away_at_round_end_ >> s) & 1u) || outcome_game_over_;
      credit[seats_[s].kind == SeatKind::kPerson && present ? SeatAccount(s) : "house"] += share;
    }
  }
  Transfer t{.key = absl::StrCat(options_.table_id, ":", round_no_, ":",
                                 std::string(TransferStepName(step))),
             .step = step};
  t.legs.push_back({PotAccount(), -pot_coins_});
  for (auto& [account, coins] : credit) {
    if (coins != 0) t.legs.push_back({account, coins});
  }
  EmitTransfer(std::move(t));
  pot_coins_ = 0;
  stakes_.clear();
  AfterRound(outcome_game_over_, now);
}

void Table::AfterRound(bool game_over, int64_t now) {
  phase_ = Phase::kWaiting;
  if (game_over) {
    FinishGame(false, now);
    return;
  }
  SettleAwaySeats(now);
  MaybeFinishEarly(now);  // a holdout who walked out is gone: the others may have agreed
  if (!game_active_) return;
  Reschedule(now);
  MaybeClose();
}

void Table::SettleAwaySeats(int64_t now) {
  for (int s = 0; s < 4; ++s) {
    SeatState& st = seats_[s];
    if (st.kind != SeatKind::kPerson) continue;
    if (st.left) {
      FreeSeat(s, "left", QuitNow());  // pressed Leave and still away: a quit (§4.9)
    } else if (!st.connected && st.keep_until_ms == 0) {
      st.keep_until_ms = now + (GameUnderWay() ? kKeepSeatInGameMs : kKeepSeatOutsideGameMs);
    }
  }
}

void Table::ReleaseBot(int s, int64_t now) {
  if (!seats_[s].bot_driving) return;
  seats_[s].bot_driving = false;
  seats_[s].timeouts_in_row = 0;
  EmitAll({.type = "bot_released", .seat = s, .player = seats_[s].player});
  if (phase_ == Phase::kPlaying && engine_->ToAct() == s) DriveTurns(now);
}

void Table::FinishGame(bool ended_early, int64_t now) {
  std::array<int, 2> sc = engine_->Scores();
  GameRecord rec{.game_no = game_no_,
                 .counts_for_stats = !ended_early && GameCounts(),
                 .ended_early = ended_early,
                 .winning_team = ended_early ? -1 : (sc[0] > sc[1] ? 0 : 1),
                 .scores = sc,
                 .players = {},
                 .courts = game_courts_,
                 .goon_courts = game_goon_courts_};
  for (int s = 0; s < 4; ++s) {
    if (seats_[s].kind != SeatKind::kPerson) continue;
    rec.players.push_back({seats_[s].player, s, s % 2 == rec.winning_team});
  }
  EmitAll({.type = "game_over",
           .seat = rec.winning_team,
           .detail = absl::StrCat(ended_early ? "ended_early " : "", sc[0], "-", sc[1])});
  Effect e;  // not a designated initializer: GCC 12 -O3 warns (maybe-uninitialized)
  e.type = EffectType::kRecordGame;
  e.game = std::move(rec);
  e.game_type = GameTypeOf(options_.game_options);
  effects_.push_back(std::move(e));
  game_active_ = false;
  game_under_way_ = false;
  engine_.reset();
  phase_ = Phase::kWaiting;
  next_game_at_ = now + kAutoStartMs;
  for (int s = 0; s < 4; ++s) {
    seats_[s].end_early = false;
    // Not connected when the game ends, or a bot playing for you after five timeouts: the
    // seat is freed, not a quit (§4.10); the next game never stakes an absent player.
    if (seats_[s].Away()) {
      FreeSeat(s, "away_at_game_end", false);
    } else if (seats_[s].bot_driving) {
      FreeSeat(s, "bot_driving_at_game_end", false);
    }
  }
  Reschedule(now);
  MaybeClose();
}

absl::Status Table::EndEarly(int s, int64_t now) {
  if (!game_active_) return absl::FailedPreconditionError("no game to end");
  ReleaseBot(s, now);  // accepted: the player is back before the game may end
  // Agreeing again (a retry, a second tap) tells nobody twice; the check runs again.
  if (!seats_[s].end_early) {
    seats_[s].end_early = true;
    EmitAll({.type = "end_early", .seat = s, .player = seats_[s].player});
  }
  MaybeFinishEarly(now);
  return absl::OkStatus();
}

void Table::MaybeFinishEarly(int64_t now) {
  if (!game_active_ || phase_ == Phase::kStaking || phase_ == Phase::kCourtStake) return;
  // Unanimous (§4.12): every person seated, the away ones too (they agree once back, or the
  // check runs again when their seat is freed); a person's agreement outlasts a drop.
  int people = 0;
  for (const SeatState& st : seats_) {
    if (st.kind != SeatKind::kPerson) continue;
    if (!st.end_early) return;
    ++people;
  }
  if (people == 0) return;
  if (phase_ == Phase::kPlaying) {
    // The round in play is abandoned: every stake goes back to whoever paid it.
    std::map<std::string, int64_t> credit;
    for (const TransferLeg& l : stakes_) credit[l.account] += l.amount_coins;
    Transfer t{.key = absl::StrCat(options_.table_id, ":", round_no_, ":refund"),
               .step = TransferStep::kRefund};
    t.legs.push_back({PotAccount(), -pot_coins_});
    for (auto& [account, coins] : credit) t.legs.push_back({account, coins});
    EmitTransfer(std::move(t));
    pot_coins_ = 0;
    stakes_.clear();
    turn_deadline_ = 0;
    turn_seat_ = -1;
    bot_wait_.reset();
    EmitAll({.type = "round_abandoned", .value = static_cast<int64_t>(round_no_)});
    PublishSeed(engine_->SeedOnlyFor(), "abandoned");
  }
  count_in_until_ = 0;
  phase_ = Phase::kWaiting;
  FinishGame(true, now);
}

}  // namespace courtpiece::table
