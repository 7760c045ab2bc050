#include "courtpiece/table/json.h"

#include <nlohmann/json.hpp>

namespace courtpiece::table {

std::string EventToJson(const Event& e, int64_t at_ms) {
  nlohmann::json j{
      {"at", at_ms}, {"kind", "event"}, {"seq", e.seq}, {"to", e.to_seat}, {"type", e.type}};
  if (e.seat >= 0) j["seat"] = e.seat;
  if (!e.player.empty()) j["player"] = e.player;
  if (!e.cards.empty()) j["cards"] = e.cards;
  if (!e.detail.empty()) j["detail"] = e.detail;
  if (e.value != 0) j["value"] = e.value;
  return j.dump();
}

std::string EffectToJson(const Effect& f, int64_t at_ms) {
  nlohmann::json j{{"at", at_ms}, {"kind", "effect"}, {"type", EffectTypeName(f.type)}};
  switch (f.type) {
    case EffectType::kTransfer: {
      nlohmann::json legs = nlohmann::json::array();
      for (const TransferLeg& l : f.transfer.legs) {
        legs.push_back({{"account", l.account}, {"coins", l.amount_coins}});
      }
      j["key"] = f.transfer.key;
      j["step"] = TransferStepName(f.transfer.step);
      j["legs"] = legs;
      if (f.transfer.min_balance_coins) j["min_balance"] = f.transfer.min_balance_coins;
      j["awaited"] = f.transfer.awaited;
      break;
    }
    case EffectType::kRecordGame: {
      nlohmann::json players = nlohmann::json::array();
      for (const PlayerResult& p : f.game.players) {
        players.push_back({{"player", p.player}, {"seat", p.seat}, {"won", p.won}});
      }
      j["game_no"] = f.game.game_no;
      j["counts_for_stats"] = f.game.counts_for_stats;
      j["ended_early"] = f.game.ended_early;
      j["winning_team"] = f.game.winning_team;
      j["scores"] = f.game.scores;
      j["players"] = players;
      j["game"] = f.game_type;
      j["courts"] = f.game.courts;
      j["goon_courts"] = f.game.goon_courts;
      break;
    }
    case EffectType::kRecordQuit:
      j["player"] = f.player;
      j["game"] = f.game_type;
      break;
    case EffectType::kReport:
      j["reporter"] = f.player;
      j["note_id"] = f.note_id;
      j["author"] = f.author;
      break;
    case EffectType::kClose:
      break;
    case EffectType::kRecordRound:
      j["round_no"] = f.round.round_no;
      j["seed"] = f.round.seed_hex;
      j["result"] = f.round.result;
      j["seed_only_to"] = f.round.seed_only_to;
      break;
  }
  return j.dump();
}

std::string GameTypeOf(std::string_view game_options) {
  nlohmann::json j = nlohmann::json::parse(game_options, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("game") && j["game"].is_string()) {
    return j["game"].get<std::string>();
  }
  return "classic";
}

absl::StatusOr<Command> CommandFromJson(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    return absl::InvalidArgumentError("a command is an object with a string \"type\"");
  }
  // Wrong types are errors, never exceptions (this reads untrusted input).
  auto str = [&](const char* key, std::string* out) {
    auto it = j.find(key);
    if (it == j.end()) return true;
    if (!it->is_string()) return false;
    *out = it->get<std::string>();
    return true;
  };
  auto integer = [&](const char* key, int64_t lo, int64_t hi, int64_t* out) {
    auto it = j.find(key);
    if (it == j.end()) return true;
    if (!it->is_number_integer()) return false;
    if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(hi)) return false;
    int64_t v = it->get<int64_t>();
    if (v < lo || v > hi) return false;
    *out = v;
    return true;
  };
  std::string type = j["type"];
  Command c;
  if (type == "call" || type == "hide" || type == "play" || type == "ask" || type == "show") {
    c.type = CommandType::kMove;
    static const std::pair<const char*, MoveKind> kinds[] = {{"call", MoveKind::kCall},
                                                             {"hide", MoveKind::kHide},
                                                             {"play", MoveKind::kPlay},
                                                             {"ask", MoveKind::kAsk},
                                                             {"show", MoveKind::kShow}};
    for (auto& [n, k] : kinds) {
      if (type == n) c.move.kind = k;
    }
    if (!str("suit", &c.move.card) || !str("card", &c.move.card)) {
      return absl::InvalidArgumentError("card and suit are strings");
    }
  } else if (std::optional<CommandType> t = ParseCommandType(type)) {
    c.type = *t;
  } else {
    return absl::InvalidArgumentError("unknown command type " + type);
  }
  int64_t seat = -1;
  c.balance_coins = 1'000'000;
  if (!str("player", &c.player) || !str("note_id", &c.note_id) || !integer("seat", -1, 3, &seat) ||
      !integer("duration_ms", 0, 1'000'000, &c.duration_ms) ||
      !integer("balance", 0, int64_t{1} << 50, &c.balance_coins)) {
    return absl::InvalidArgumentError(
        "player and note_id are strings; seat -1..3, duration_ms 0..1000000, balance >= 0");
  }
  c.seat = static_cast<int>(seat);
  if (auto it = j.find("yes"); it != j.end()) {
    if (!it->is_boolean()) return absl::InvalidArgumentError("yes is true or false");
    c.yes = it->get<bool>();
  }
  return c;
}

}  // namespace courtpiece::table
