#include "services/table/host_convert.h"

#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"

namespace courtpiece::table_service {

bool ValidId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

namespace {

absl::StatusOr<table::MoveKind> ParseMoveKind(std::string_view name) {
  if (name == "call") return table::MoveKind::kCall;
  if (name == "hide") return table::MoveKind::kHide;
  if (name == "play") return table::MoveKind::kPlay;
  if (name == "ask") return table::MoveKind::kAsk;
  if (name == "show") return table::MoveKind::kShow;
  return absl::InvalidArgumentError(absl::StrCat("move: unknown kind \"",
                                                 common::ToAbsl(name.substr(0, 16)),
                                                 "\" (call, hide, play, ask, show)"));
}

}  // namespace

absl::StatusOr<table::Command> CommandFromProto(const pb::TableCommand& command,
                                                std::string_view player) {
  if (command.type().size() > kCommandTypeBytesMax) {
    return absl::InvalidArgumentError("type: too long");
  }
  std::optional<table::CommandType> type = table::ParseCommandType(command.type());
  if (!type.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("type: unknown command \"", command.type(), "\""));
  }
  if (*type == table::CommandType::kDisconnect || *type == table::CommandType::kReconnect) {
    return absl::InvalidArgumentError(
        "type: disconnect and reconnect are the stream's own life (end it / open a new one)");
  }
  if (command.note_id().size() > kNoteIdBytesMax) {
    return absl::InvalidArgumentError("note_id: longer than 64 bytes");
  }
  if (command.card().size() > kCardBytesMax) {
    return absl::InvalidArgumentError("card: longer than 3 bytes");
  }
  table::Command c;
  c.type = *type;
  c.player = std::string(player);
  c.seat = command.seat();
  c.yes = command.yes();
  c.note_id = command.note_id();
  c.duration_ms = command.duration_ms();
  if (*type == table::CommandType::kMove) {
    absl::StatusOr<table::MoveKind> kind = ParseMoveKind(command.move());
    if (!kind.ok()) return kind.status();
    c.move = table::Move{.kind = *kind, .card = command.card()};
  }
  return c;
}

pb::TableEvent EventToProto(const table::Event& event) {
  pb::TableEvent out;
  out.set_seq(event.seq);
  out.set_type(event.type);
  out.set_seat(event.seat);
  out.set_player(event.player);
  for (const std::string& card : event.cards) out.add_cards(card);
  out.set_detail(event.detail);
  out.set_value(event.value);
  return out;
}

uint64_t RoundOfTransferKey(std::string_view key) {
  const size_t first = key.find(':');
  if (first == std::string_view::npos) return 0;
  const size_t second = key.find(':', first + 1);
  const std::string_view field = key.substr(
      first + 1, second == std::string_view::npos ? std::string_view::npos : second - first - 1);
  uint64_t round = 0;
  if (!absl::SimpleAtoi(common::ToAbsl(field), &round)) return 0;
  return round;
}

pb::StoredEffect EffectToStored(const table::Effect& effect, std::string_view table_id) {
  pb::StoredEffect out;
  switch (effect.type) {
    case table::EffectType::kTransfer: {
      out.set_key(effect.transfer.key);
      pb::Transfer* t = out.mutable_transfer();
      t->set_key(effect.transfer.key);
      t->set_step(static_cast<int32_t>(effect.transfer.step));
      for (const table::TransferLeg& leg : effect.transfer.legs) {
        pb::TransferLeg* l = t->add_legs();
        l->set_account(leg.account);
        l->set_amount_coins(leg.amount_coins);
      }
      t->set_min_balance_coins(effect.transfer.min_balance_coins);
      t->set_awaited(effect.transfer.awaited);
      break;
    }
    case table::EffectType::kRecordGame: {
      const table::GameRecord& g = effect.game;
      out.set_key(absl::StrCat(common::ToAbsl(table_id), ":game:", g.game_no));
      lobby::v1::RecordGameRequest* r = out.mutable_game();
      r->set_key(out.key());
      r->set_table_id(std::string(table_id));
      r->set_game_no(g.game_no);
      r->set_counts_for_stats(g.counts_for_stats);
      r->set_ended_early(g.ended_early);
      r->set_winning_team(g.winning_team);
      r->add_scores(g.scores[0]);
      r->add_scores(g.scores[1]);
      r->set_game(effect.game_type);
      for (int team = 0; team < 2; ++team) {
        r->add_courts(g.courts[team]);
        r->add_goon_courts(g.goon_courts[team]);
      }
      for (const table::PlayerResult& p : g.players) {
        lobby::v1::PlayerResult* pr = r->add_players();
        pr->set_player(p.player);
        pr->set_seat(p.seat);
        pr->set_won(p.won);
      }
      break;
    }
    case table::EffectType::kRecordQuit: {
      out.set_key(
          absl::StrCat(common::ToAbsl(table_id), ":quit:", effect.game_no, ":", effect.player));
      lobby::v1::RecordQuitRequest* r = out.mutable_quit();
      r->set_key(out.key());
      r->set_table_id(std::string(table_id));
      r->set_game_no(effect.game_no);
      r->set_player(effect.player);
      r->set_game(effect.game_type);
      break;
    }
    case table::EffectType::kRecordRound: {
      out.set_key(absl::StrCat(common::ToAbsl(table_id), ":round:", effect.round.round_no));
      lobby::v1::RecordRoundRequest* r = out.mutable_round();
      r->set_key(out.key());
      r->set_table_id(std::string(table_id));
      r->set_round(effect.round.round_no);
      r->set_seed_hex(effect.round.seed_hex);
      r->set_result(effect.round.result);
      r->set_seed_only_to(effect.round.seed_only_to);
      break;
    }
    case table::EffectType::kReport: {
      out.set_key(
          absl::StrCat(common::ToAbsl(table_id), ":report:", effect.note_id, ":", effect.player));
      moderation::v1::FileReportRequest* r = out.mutable_report();
      r->set_key(out.key());
      r->set_table_id(std::string(table_id));
      r->set_note_id(effect.note_id);
      r->set_author(effect.author);
      r->set_reporter(effect.player);
      // The note's own round: a note sent in a count-in is stored under the round that
      // count-in opens (§5.1), a report may come after the next deal. 0 (a note restored
      // from a snapshot that did not keep it): moderation matches any round.
      r->set_round(effect.note_round);
      break;
    }
    case table::EffectType::kClose: {
      // The table's last effect: kept (durable in its saved state) until the lobby acks it,
      // and the table is removed from the store only after that (table_host.cc).
      out.set_key(absl::StrCat(common::ToAbsl(table_id), ":closed"));
      lobby::v1::RecordTableClosedRequest* r = out.mutable_closed();
      r->set_key(out.key());
      r->set_table_id(std::string(table_id));
      break;
    }
  }
  return out;
}

table::Transfer TransferFromStored(const pb::StoredEffect& effect) {
  const pb::Transfer& t = effect.transfer();
  table::Transfer out;
  out.key = t.key();
  out.step = static_cast<table::TransferStep>(t.step());
  for (const pb::TransferLeg& l : t.legs()) {
    out.legs.push_back({.account = l.account(), .amount_coins = l.amount_coins()});
  }
  out.min_balance_coins = t.min_balance_coins();
  out.awaited = t.awaited();
  return out;
}

std::string_view PhaseName(table::Phase phase) {
  switch (phase) {
    case table::Phase::kWaiting:
      return "waiting";
    case table::Phase::kCountIn:
      return "count_in";
    case table::Phase::kStaking:
      return "staking";
    case table::Phase::kPlaying:
      return "playing";
    case table::Phase::kCourtStake:
      return "court_stake";
    case table::Phase::kClosed:
      return "closed";
  }
  return "unknown";
}

pb::TableInfo InfoOf(const table::Table& t, const pb::CreateTableRequest& create) {
  pb::TableInfo info;
  info.set_table_id(create.table_id());
  info.set_code(create.code());
  info.set_listed(create.listed());
  info.set_host_player(t.host());
  info.set_bet_coins(t.options().bet_coins);
  info.set_turn_time_ms(t.options().turn_time_ms);
  info.set_game_options(t.options().game_options);
  info.set_bot_level(std::string(bots::LevelName(t.options().bot_level)));
  info.set_phase(std::string(PhaseName(t.phase())));
  info.set_round(t.round_no());
  for (int s = 0; s < 4; ++s) {
    const table::SeatState& st = t.seat(s);
    pb::SeatInfo* seat = info.add_seats();
    seat->set_seat(s);
    seat->set_kind(st.kind == table::SeatKind::kEmpty    ? "empty"
                   : st.kind == table::SeatKind::kPerson ? "person"
                                                         : "bot");
    seat->set_player(st.player);
    seat->set_connected(st.kind == table::SeatKind::kPerson && st.connected);
    seat->set_away(st.Away());
  }
  return info;
}

table::TableOptions OptionsOf(const pb::CreateTableRequest& create) {
  return table::TableOptions{.table_id = create.table_id(),
                             .host_player = create.host_player(),
                             .bet_coins = create.bet_coins(),
                             .turn_time_ms = create.turn_time_ms(),
                             .game_options = create.game_options(),
                             // ValidateCreate refused a bad name.
                             .bot_level = table::ParseBotLevel(create.bot_level())
                                              .value_or(bots::Level::kEasy)};
}

absl::Status ValidateCreate(const pb::CreateTableRequest& create) {
  if (!ValidId(create.table_id())) {
    return absl::InvalidArgumentError("table_id: must be 1..64 chars of [A-Za-z0-9_-]");
  }
  if (!ValidId(create.host_player())) {
    return absl::InvalidArgumentError("host_player: must be 1..64 chars of [A-Za-z0-9_-]");
  }
  bool code_ok = create.code().size() == 6;
  for (char c : create.code()) code_ok = code_ok && c >= '0' && c <= '9';
  if (!code_ok) return absl::InvalidArgumentError("code: must be 6 digits");
  if (create.game_options().size() > 1024) {
    return absl::InvalidArgumentError("game_options: longer than 1024 bytes");
  }
  if (absl::Status s = table::ParseBotLevel(create.bot_level()).status(); !s.ok()) return s;
  return absl::OkStatus();
}

bool SameCreate(const pb::CreateTableRequest& a, const pb::CreateTableRequest& b) {
  return a.table_id() == b.table_id() && a.host_player() == b.host_player() &&
         a.bet_coins() == b.bet_coins() && a.turn_time_ms() == b.turn_time_ms() &&
         a.game_options() == b.game_options() && a.code() == b.code() && a.listed() == b.listed() &&
         table::ParseBotLevel(a.bot_level()).value_or(bots::Level::kEasy) ==
             table::ParseBotLevel(b.bot_level()).value_or(bots::Level::kEasy);
}

}  // namespace courtpiece::table_service
