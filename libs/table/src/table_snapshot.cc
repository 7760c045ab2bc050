// Snapshot / restore through protos/courtpiece/table/v1/table_state.proto.
#include "absl/strings/str_cat.h"
#include "courtpiece/table/table.h"
#include "courtpiece/table/v1/table_state.pb.h"

namespace courtpiece::table {
namespace pb = ::courtpiece::table::v1;

namespace {
void LegsTo(const std::vector<TransferLeg>& legs,
            google::protobuf::RepeatedPtrField<pb::TransferLeg>* out) {
  for (const TransferLeg& l : legs) {
    pb::TransferLeg* p = out->Add();
    p->set_account(l.account);
    p->set_amount_coins(l.amount_coins);
  }
}
std::vector<TransferLeg> LegsFrom(const google::protobuf::RepeatedPtrField<pb::TransferLeg>& in) {
  std::vector<TransferLeg> out;
  for (const pb::TransferLeg& l : in) out.push_back({l.account(), l.amount_coins()});
  return out;
}
bool SeatOk(int s, bool allow_none) { return (allow_none && s == -1) || (s >= 0 && s <= 3); }

// Range and consistency checks of everything Restore casts or relies on.
absl::Status Validate(const pb::TableState& s) {
  auto bad = [](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("snapshot: bad ", std::string(what)));
  };
  const pb::TableOptions& o = s.options();
  if (o.table_id().empty() || o.bet_coins() < 25 || o.bet_coins() > 1000 ||
      o.turn_time_ms() < 5000 || o.turn_time_ms() > 30000 || o.bot_level() < 0 ||
      o.bot_level() > static_cast<int>(bots::Level::kStrong)) {
    return bad("options");
  }
  if (s.phase() < 0 || s.phase() > static_cast<int>(Phase::kClosed)) return bad("phase");
  if ((s.game_courts_size() != 0 && s.game_courts_size() != 2) ||
      (s.game_goon_courts_size() != 0 && s.game_goon_courts_size() != 2)) {
    return bad("game courts");
  }
  const auto phase = static_cast<Phase>(s.phase());
  for (const pb::SeatState& p : s.seats()) {
    if (p.kind() < 0 || p.kind() > static_cast<int>(SeatKind::kBot)) return bad("seat kind");
    if (p.kind() != static_cast<int>(SeatKind::kEmpty) && p.player().empty()) {
      return bad("seat player");
    }
    if (p.timeouts_in_row() < 0 || p.keep_until_ms() < 0) return bad("seat timers");
  }
  if (s.game_people() < 0 || s.game_people() > 4) return bad("game_people");
  if (!SeatOk(s.turn_seat(), true)) return bad("turn_seat");
  if (!SeatOk(s.recording_seat(), true)) return bad("recording_seat");
  if (static_cast<size_t>(s.voice_used_by_size()) > kVoiceUsedByMax) return bad("voice_used_by");
  if (s.vote().active() && !SeatOk(s.vote().seat(), false)) return bad("vote seat");
  for (const pb::VoiceNote& n : s.notes()) {
    if (!SeatOk(n.author_seat(), false)) return bad("note author_seat");
  }
  if (s.outcome().winning_team() < -1 || s.outcome().winning_team() > 1) return bad("outcome");
  if (s.pot_coins() < 0 || s.auto_start_at_ms() < 0 || s.count_in_until_ms() < 0 ||
      s.turn_deadline_ms() < 0 || s.recording_until_ms() < 0 || s.vote().deadline_ms() < 0 ||
      s.next_game_at_ms() < 0) {
    return bad("coins or times");
  }
  const bool awaiting = phase == Phase::kStaking || phase == Phase::kCourtStake;
  if (s.has_awaited() != awaiting) return bad("awaited transfer for the phase");
  if (s.has_awaited()) {
    int step = s.awaited().step();
    // In staking: the stake, or the refund of a stake accepted while someone was away.
    bool step_ok = phase == Phase::kStaking ? step == static_cast<int>(TransferStep::kStake) ||
                                                  step == static_cast<int>(TransferStep::kRefund)
                                            : step == static_cast<int>(TransferStep::kCourtStake);
    if (!step_ok || s.awaited().key().empty()) return bad("awaited step");
  }
  if (s.game_active() != s.has_engine()) return bad("engine for the game");
  if (s.game_under_way() && !s.game_active()) return bad("game_under_way without a game");
  if (s.voice_round() > s.round_no() + 1) return bad("voice_round");
  const bool in_game = phase == Phase::kCountIn || awaiting || phase == Phase::kPlaying;
  if (in_game && !s.game_active()) return bad("phase without a game");
  if (s.turn_deadline_ms() != 0 && phase != Phase::kPlaying) return bad("turn deadline");
  if (s.has_bot_wait()) {
    const pb::BotWait& b = s.bot_wait();
    if (phase != Phase::kPlaying || !SeatOk(b.seat(), false) || b.deadline_ms() <= 0 ||
        b.id() == 0 || b.id() > s.bot_requests() || s.turn_deadline_ms() != 0 ||
        (b.level() != static_cast<int>(bots::Level::kNormal) &&
         b.level() != static_cast<int>(bots::Level::kStrong))) {
      return bad("bot_wait");
    }
  }
  if (s.count_in_until_ms() != 0 && phase != Phase::kCountIn) return bad("count-in deadline");
  // Auto-start is only armed for a full table before a game (Reschedule): firing it in a
  // running game would start a second one over the round in play.
  if (s.auto_start_at_ms() != 0 && (s.game_active() || phase != Phase::kWaiting)) {
    return bad("auto-start time");
  }
  return absl::OkStatus();
}

}  // namespace

std::string Table::Snapshot() const {
  pb::TableState s;
  s.set_format_version(1);
  pb::TableOptions* o = s.mutable_options();
  o->set_table_id(options_.table_id);
  o->set_host_player(options_.host_player);
  o->set_bet_coins(options_.bet_coins);
  o->set_turn_time_ms(options_.turn_time_ms);
  o->set_game_options(options_.game_options);
  o->set_bot_level(static_cast<int>(options_.bot_level));
  s.set_phase(static_cast<int>(phase_));
  for (const SeatState& st : seats_) {
    pb::SeatState* p = s.add_seats();
    p->set_kind(static_cast<int>(st.kind));
    p->set_player(st.player);
    p->set_connected(st.connected);
    p->set_left(st.left);
    p->set_keep_until_ms(st.keep_until_ms);
    p->set_timeouts_in_row(st.timeouts_in_row);
    p->set_bot_driving(st.bot_driving);
    p->set_voice_used(st.voice_used);
    p->set_end_early(st.end_early);
  }
  s.set_host(host_);
  s.set_game_active(game_active_);
  s.set_game_no(game_no_);
  s.set_round_no(round_no_);
  s.set_stake_attempt(stake_attempt_);
  s.set_draw_index(draw_index_);
  s.set_game_people(game_people_);
  s.set_round_seed(std::string(round_seed_.begin(), round_seed_.end()));
  s.set_auto_start_at_ms(auto_start_at_);
  s.set_count_in_until_ms(count_in_until_);
  s.set_turn_deadline_ms(turn_deadline_);
  s.set_turn_seat(turn_seat_);
  if (bot_wait_) {
    pb::BotWait* b = s.mutable_bot_wait();
    b->set_id(bot_wait_->id);
    b->set_seat(bot_wait_->seat);
    b->set_level(static_cast<int>(bot_wait_->level));
    b->set_timed_out(bot_wait_->timed_out);
    b->set_deadline_ms(bot_wait_->deadline_ms);
  }
  s.set_bot_requests(bot_requests_);
  LegsTo(stakes_, s.mutable_stakes());
  s.set_pot_coins(pot_coins_);
  if (!awaited_key_.empty()) {
    pb::Transfer* t = s.mutable_awaited();
    t->set_key(awaited_.key);
    t->set_step(static_cast<int>(awaited_.step));
    LegsTo(awaited_.legs, t->mutable_legs());
    t->set_min_balance_coins(awaited_.min_balance_coins);
    t->set_awaited(true);
  }
  s.mutable_outcome()->set_winning_team(outcome_.winning_team);
  s.mutable_outcome()->set_kind(outcome_.kind);
  s.mutable_outcome()->set_points(outcome_.points);
  s.mutable_outcome()->set_goon(outcome_.goon);
  s.set_outcome_game_over(outcome_game_over_);
  s.set_away_at_round_end(away_at_round_end_);
  s.set_next_game_at_ms(next_game_at_);
  s.set_game_under_way(game_under_way_);
  s.set_voice_round(voice_round_);
  s.set_seed_only_player(seed_only_player_);
  for (int team = 0; team < 2; ++team) {
    s.add_game_courts(game_courts_[team]);
    s.add_game_goon_courts(game_goon_courts_[team]);
  }
  pb::Vote* v = s.mutable_vote();
  v->set_active(vote_.active);
  v->set_swap(vote_.swap);
  v->set_seat(vote_.seat);
  v->set_asker(vote_.asker);
  v->set_deadline_ms(vote_.deadline_ms);
  for (const std::string& p : vote_.pending) v->add_pending(p);
  s.set_recording_seat(recording_seat_);
  s.set_recording_until_ms(recording_until_);
  s.set_recording_round(recording_round_);
  for (const std::string& p : voice_used_by_) s.add_voice_used_by(p);
  for (const VoiceNote& n : notes_) {
    pb::VoiceNote* p = s.add_notes();
    p->set_note_id(n.note_id);
    p->set_author(n.author);
    p->set_author_seat(n.author_seat);
    p->set_round(n.round);
    p->set_play_at_ms(n.play_at_ms);
    p->set_report_until_ms(n.report_until_ms);
    for (const std::string& r : n.reporters) p->add_reporters(r);
  }
  s.set_seq(seq_);
  if (engine_) {
    s.set_has_engine(true);
    s.set_engine(engine_->Serialize());
  }
  return s.SerializeAsString();
}

absl::StatusOr<std::unique_ptr<Table>> Table::Restore(std::string_view snapshot,
                                                      EngineFactory* engines, SeedSource* seeds) {
  pb::TableState s;
  if (!s.ParseFromArray(snapshot.data(), static_cast<int>(snapshot.size())) ||
      s.format_version() != 1 || s.seats_size() != 4 || s.round_seed().size() != 32) {
    return absl::InvalidArgumentError("not a table snapshot (format 1)");
  }
  if (absl::Status st = Validate(s); !st.ok()) return st;
  TableOptions o{.table_id = s.options().table_id(),
                 .host_player = s.options().host_player(),
                 .bet_coins = s.options().bet_coins(),
                 .turn_time_ms = s.options().turn_time_ms(),
                 .game_options = s.options().game_options(),
                 .bot_level = static_cast<bots::Level>(s.options().bot_level())};
  std::unique_ptr<Table> t(new Table(o, engines, seeds));
  t->phase_ = static_cast<Phase>(s.phase());
  for (int i = 0; i < 4; ++i) {
    const pb::SeatState& p = s.seats(i);
    SeatState& st = t->seats_[i];
    st.kind = static_cast<SeatKind>(p.kind());
    st.player = p.player();
    st.connected = p.connected();
    st.left = p.left();
    st.keep_until_ms = p.keep_until_ms();
    st.timeouts_in_row = p.timeouts_in_row();
    st.bot_driving = p.bot_driving();
    st.voice_used = p.voice_used();
    st.end_early = p.end_early();
  }
  t->host_ = s.host();
  t->game_active_ = s.game_active();
  t->game_no_ = s.game_no();
  t->round_no_ = s.round_no();
  t->stake_attempt_ = s.stake_attempt();
  t->draw_index_ = s.draw_index();
  t->game_people_ = s.game_people();
  std::copy(s.round_seed().begin(), s.round_seed().end(), t->round_seed_.begin());
  t->auto_start_at_ = s.auto_start_at_ms();
  t->count_in_until_ = s.count_in_until_ms();
  t->turn_deadline_ = s.turn_deadline_ms();
  t->turn_seat_ = s.turn_seat();
  if (s.has_bot_wait()) {
    t->bot_wait_ = BotTurn{.id = s.bot_wait().id(),
                           .seat = s.bot_wait().seat(),
                           .level = static_cast<bots::Level>(s.bot_wait().level()),
                           .timed_out = s.bot_wait().timed_out(),
                           .deadline_ms = s.bot_wait().deadline_ms()};
  }
  t->bot_requests_ = s.bot_requests();
  t->stakes_ = LegsFrom(s.stakes());
  t->pot_coins_ = s.pot_coins();
  if (s.has_awaited()) {
    t->awaited_ = Transfer{.key = s.awaited().key(),
                           .step = static_cast<TransferStep>(s.awaited().step()),
                           .legs = LegsFrom(s.awaited().legs()),
                           .min_balance_coins = s.awaited().min_balance_coins(),
                           .awaited = true};
    t->awaited_key_ = t->awaited_.key;
  }
  t->outcome_ = {s.outcome().winning_team(), s.outcome().kind(), s.outcome().points(),
                 s.outcome().goon()};
  t->outcome_game_over_ = s.outcome_game_over();
  t->away_at_round_end_ = s.away_at_round_end() & 15u;
  t->next_game_at_ = s.next_game_at_ms();
  t->game_under_way_ = s.game_under_way();
  t->voice_round_ = s.voice_round();
  t->seed_only_player_ = s.seed_only_player();
  // Two per team, or none (a snapshot from before the counts: read as zeros; Validate).
  for (int team = 0; team < s.game_courts_size(); ++team) {
    t->game_courts_[team] = s.game_courts(team);
  }
  for (int team = 0; team < s.game_goon_courts_size(); ++team) {
    t->game_goon_courts_[team] = s.game_goon_courts(team);
  }
  t->vote_ = Vote{.active = s.vote().active(),
                  .swap = s.vote().swap(),
                  .seat = s.vote().seat(),
                  .asker = s.vote().asker(),
                  .deadline_ms = s.vote().deadline_ms(),
                  .pending = {s.vote().pending().begin(), s.vote().pending().end()}};
  t->recording_seat_ = s.recording_seat();
  t->recording_until_ = s.recording_until_ms();
  // A snapshot from before recording_round was kept, taken while someone recorded: the
  // note belongs to the voice round as it was.
  t->recording_round_ =
      s.recording_round() == 0 && s.recording_seat() >= 0 ? s.voice_round() : s.recording_round();
  t->voice_used_by_.assign(s.voice_used_by().begin(), s.voice_used_by().end());
  for (const pb::VoiceNote& p : s.notes()) {
    t->notes_.push_back({.note_id = p.note_id(),
                         .author = p.author(),
                         .author_seat = p.author_seat(),
                         .round = p.round(),
                         .play_at_ms = p.play_at_ms(),
                         .report_until_ms = p.report_until_ms(),
                         .reporters = {p.reporters().begin(), p.reporters().end()}});
  }
  t->seq_ = s.seq();
  if (s.has_engine()) {
    Seed none{};
    absl::StatusOr<std::unique_ptr<GameEngine>> e = engines->NewGame(o.game_options, none);
    if (!e.ok()) return absl::InvalidArgumentError(e.status().message());
    if (absl::Status st = (*e)->Restore(s.engine()); !st.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("engine: ", st.message()));
    }
    t->engine_ = std::move(*e);
  }
  if (t->phase_ == Phase::kPlaying) {
    // A round in play must wait on a seat: the turn timer and DriveTurns rely on it.
    int to_act = t->engine_->ToAct();
    if (!t->engine_->InRound() || t->engine_->RoundOver() || to_act < 0 || to_act > 3) {
      return absl::InvalidArgumentError("snapshot: phase playing without a round in play");
    }
    if (t->bot_wait_ && (t->bot_wait_->seat != to_act || !t->engine_->Searches())) {
      return absl::InvalidArgumentError("snapshot: bot_wait not for the seat to act");
    }
  } else if (t->engine_ && t->engine_->InRound()) {
    return absl::InvalidArgumentError("snapshot: a round in play outside phase playing");
  }
  return t;
}

}  // namespace courtpiece::table
