#include "scenario.h"

#include <initializer_list>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/table/fake_engine.h"
#include "courtpiece/table/json.h"
#include "courtpiece/table/rules_engine.h"

namespace courtpiece::tablesim {
namespace {

namespace ct = ::courtpiece::table;
using json = nlohmann::json;

// "<field> must be <want> (got <value>)", the value cut to 40 characters.
absl::Status Bad(const std::string& field, const std::string& want, const json& got) {
  std::string g = got.dump(-1, ' ', false, json::error_handler_t::replace);
  if (g.size() > 40) g = g.substr(0, 37) + "...";
  return absl::InvalidArgumentError(absl::StrCat(field, " must be ", want, " (got ", g, ")"));
}

absl::Status OnlyKeys(const json& obj, const std::string& where,
                      std::initializer_list<std::string_view> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (std::string_view a : allowed) known = known || it.key() == a;
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, where.empty() ? "" : ": ", "unknown field \"", it.key(), "\""));
    }
  }
  return absl::OkStatus();
}

// Each reader leaves `*out` as it is when the key is absent.
absl::Status ReadInt(const json& obj, const char* key, const std::string& field, int64_t lo,
                     int64_t hi, int64_t* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return absl::OkStatus();
  const json& v = *it;
  bool ok = false;
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    ok = hi >= 0 && u <= static_cast<uint64_t>(hi);
    x = ok ? static_cast<int64_t>(u) : 0;
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
    ok = true;
  }
  if (!ok || x < lo || x > hi) return Bad(field, absl::StrCat("an integer ", lo, "..", hi), v);
  *out = x;
  return absl::OkStatus();
}

absl::Status ReadString(const json& obj, const char* key, const std::string& field, bool non_empty,
                        std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return absl::OkStatus();
  const json& v = *it;
  const std::string& want =
      non_empty ? "a non-empty string of at most 256 bytes" : "a string of at most 256 bytes";
  if (!v.is_string()) return Bad(field, want, v);
  const std::string& s = v.get_ref<const std::string&>();
  if (s.size() > kMaxStringBytes || (non_empty && s.empty())) return Bad(field, want, v);
  *out = s;
  return absl::OkStatus();
}

absl::Status ReadBool(const json& obj, const char* key, const std::string& field, bool* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return absl::OkStatus();
  if (!it->is_boolean()) return Bad(field, "true or false", *it);
  *out = it->get<bool>();
  return absl::OkStatus();
}

#define TABLESIM_RETURN_IF_ERROR(expr)          \
  do {                                          \
    if (absl::Status _st = (expr); !_st.ok()) { \
      return _st;                               \
    }                                           \
  } while (0)

absl::Status ReadTable(const json& sc, Scenario* out) {
  auto it = sc.find("table");
  if (it == sc.end()) return absl::OkStatus();
  const json& t = *it;
  if (!t.is_object()) return Bad("table", "an object", t);
  TABLESIM_RETURN_IF_ERROR(
      OnlyKeys(t, "table", {"table_id", "host", "bet", "turn_time_ms", "game", "fake_options",
                            "bot_level"}));
  ct::TableOptions& o = out->options;
  TABLESIM_RETURN_IF_ERROR(ReadString(t, "table_id", "table.table_id", true, &o.table_id));
  TABLESIM_RETURN_IF_ERROR(ReadString(t, "host", "table.host", true, &o.host_player));
  TABLESIM_RETURN_IF_ERROR(
      ReadInt(t, "bet", "table.bet", ct::kBetMinCoins, ct::kBetMaxCoins, &o.bet_coins));
  TABLESIM_RETURN_IF_ERROR(ReadInt(t, "turn_time_ms", "table.turn_time_ms", ct::kTurnTimeMinMs,
                                   ct::kTurnTimeMaxMs, &o.turn_time_ms));
  std::string level;
  TABLESIM_RETURN_IF_ERROR(ReadString(t, "bot_level", "table.bot_level", false, &level));
  absl::StatusOr<::courtpiece::bots::Level> parsed = ct::ParseBotLevel(level);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError("table.bot_level must be easy, normal or strong");
  }
  o.bot_level = *parsed;
  if (out->fake_engine) {
    if (t.contains("game")) return absl::InvalidArgumentError("table.game is for engine rules");
    TABLESIM_RETURN_IF_ERROR(
        ReadString(t, "fake_options", "table.fake_options", false, &o.game_options));
  } else {
    if (t.contains("fake_options")) {
      return absl::InvalidArgumentError("table.fake_options is for engine fake");
    }
    if (t.contains("game")) {
      if (!t["game"].is_object()) return Bad("table.game", "an object", t["game"]);
      o.game_options = t["game"].dump();
    }
  }
  return absl::OkStatus();
}

absl::Status ReadCommand(const json& c, size_t i, int64_t* last_at, Step* step) {
  const std::string where = absl::StrCat("commands[", i, "]");
  auto f = [&](const char* name) { return absl::StrCat(where, ".", name); };
  if (!c.is_object()) return Bad(where, "an object", c);
  TABLESIM_RETURN_IF_ERROR(OnlyKeys(c, where,
                                    {"at", "type", "player", "seat", "yes", "card", "suit",
                                     "note_id", "duration_ms", "balance"}));
  step->at_ms = *last_at;
  TABLESIM_RETURN_IF_ERROR(ReadInt(c, "at", f("at"), 0, kMaxScenarioMs, &step->at_ms));
  if (step->at_ms < *last_at) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".at: commands must be in time order (",
                                                   step->at_ms, " < ", *last_at, ")"));
  }
  *last_at = step->at_ms;
  std::string type;
  TABLESIM_RETURN_IF_ERROR(ReadString(c, "type", f("type"), true, &type));
  if (type.empty()) return absl::InvalidArgumentError(absl::StrCat(f("type"), " is required"));
  ct::Command& cmd = step->command;
  static const std::pair<std::string_view, ct::MoveKind> kMoves[] = {{"call", ct::MoveKind::kCall},
                                                                     {"hide", ct::MoveKind::kHide},
                                                                     {"play", ct::MoveKind::kPlay},
                                                                     {"ask", ct::MoveKind::kAsk},
                                                                     {"show", ct::MoveKind::kShow}};
  bool is_move = false;
  for (const auto& [name, kind] : kMoves) {
    if (type == name) {
      is_move = true;
      cmd.type = ct::CommandType::kMove;
      cmd.move.kind = kind;
    }
  }
  if (type == "auto") {
    step->auto_move = true;
  } else if (!is_move) {
    std::optional<ct::CommandType> t = ct::ParseCommandType(type);
    if (!t || *t == ct::CommandType::kMove) {
      return absl::InvalidArgumentError(
          absl::StrCat(f("type"), ": unknown command \"", type, "\""));
    }
    cmd.type = *t;
  }
  TABLESIM_RETURN_IF_ERROR(ReadString(c, "player", f("player"), false, &cmd.player));
  int64_t seat = -1;
  TABLESIM_RETURN_IF_ERROR(ReadInt(c, "seat", f("seat"), -1, 3, &seat));
  cmd.seat = static_cast<int>(seat);
  TABLESIM_RETURN_IF_ERROR(ReadBool(c, "yes", f("yes"), &cmd.yes));
  TABLESIM_RETURN_IF_ERROR(ReadString(c, "suit", f("suit"), false, &cmd.move.card));
  TABLESIM_RETURN_IF_ERROR(ReadString(c, "card", f("card"), false, &cmd.move.card));
  TABLESIM_RETURN_IF_ERROR(ReadString(c, "note_id", f("note_id"), false, &cmd.note_id));
  TABLESIM_RETURN_IF_ERROR(
      ReadInt(c, "duration_ms", f("duration_ms"), 0, kMaxDurationMs, &cmd.duration_ms));
  step->join_balance_coins = 100'000;
  TABLESIM_RETURN_IF_ERROR(
      ReadInt(c, "balance", f("balance"), 0, kMaxCoins, &step->join_balance_coins));
  cmd.balance_coins = step->join_balance_coins;
  step->echo = c;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Scenario> ReadScenario(std::string_view text) {
  json sc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (sc.is_discarded() || !sc.is_object()) {
    return absl::InvalidArgumentError("the scenario is not a JSON object");
  }
  TABLESIM_RETURN_IF_ERROR(OnlyKeys(sc, "",
                                    {"table", "engine", "seed", "host_balance", "balances",
                                     "wallet", "commands", "run_until_ms"}));
  Scenario out;
  out.options = {.table_id = "t1",
                 .host_player = "host",
                 .bet_coins = 25,
                 .turn_time_ms = 15'000,
                 .game_options = ""};
  std::string engine = "rules";
  TABLESIM_RETURN_IF_ERROR(ReadString(sc, "engine", "engine", true, &engine));
  if (engine != "rules" && engine != "fake") {
    return Bad("engine", "\"rules\" or \"fake\"", sc["engine"]);
  }
  out.fake_engine = engine == "fake";
  TABLESIM_RETURN_IF_ERROR(ReadTable(sc, &out));
  TABLESIM_RETURN_IF_ERROR(ReadString(sc, "seed", "seed", false, &out.master_seed));
  TABLESIM_RETURN_IF_ERROR(
      ReadInt(sc, "host_balance", "host_balance", 0, kMaxCoins, &out.host_balance_coins));
  if (auto it = sc.find("balances"); it != sc.end()) {
    if (!it->is_object()) return Bad("balances", "an object", *it);
    for (auto b = it->begin(); b != it->end(); ++b) {
      int64_t coins = 0;
      json one = {{b.key(), b.value()}};
      TABLESIM_RETURN_IF_ERROR(
          ReadInt(one, b.key().c_str(), absl::StrCat("balances.", b.key()), 0, kMaxCoins, &coins));
      out.balances_coins[b.key()] = coins;
    }
  }
  if (auto it = sc.find("wallet"); it != sc.end()) {
    if (!it->is_array() || it->size() > kMaxWalletReplies) {
      return Bad("wallet", "an array of at most 10000 replies", *it);
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const json& r = (*it)[i];
      const std::string where = absl::StrCat("wallet[", i, "]");
      if (!r.is_object()) return Bad(where, "an object", r);
      TABLESIM_RETURN_IF_ERROR(OnlyKeys(r, where, {"ok", "short"}));
      ct::TableHarness::Reply reply;
      TABLESIM_RETURN_IF_ERROR(ReadBool(r, "ok", absl::StrCat(where, ".ok"), &reply.ok));
      if (auto s = r.find("short"); s != r.end()) {
        if (!s->is_array() || s->size() > 4) {
          return Bad(absl::StrCat(where, ".short"), "an array of at most 4 players", *s);
        }
        for (size_t k = 0; k < s->size(); ++k) {
          std::string p;
          json one = {{"p", (*s)[k]}};
          TABLESIM_RETURN_IF_ERROR(
              ReadString(one, "p", absl::StrCat(where, ".short[", k, "]"), true, &p));
          reply.short_players.push_back(p);
        }
      }
      out.wallet.push_back(std::move(reply));
    }
  }
  int64_t last_at = 0;
  if (auto it = sc.find("commands"); it != sc.end()) {
    if (!it->is_array() || it->size() > kMaxCommands) {
      return Bad("commands", "an array of at most 100000 commands", *it);
    }
    out.steps.resize(it->size());
    for (size_t i = 0; i < it->size(); ++i) {
      TABLESIM_RETURN_IF_ERROR(ReadCommand((*it)[i], i, &last_at, &out.steps[i]));
    }
  }
  out.run_until_ms = last_at;
  TABLESIM_RETURN_IF_ERROR(
      ReadInt(sc, "run_until_ms", "run_until_ms", 0, kMaxScenarioMs, &out.run_until_ms));
  // The game options, checked by the engine that will play them.
  std::unique_ptr<ct::EngineFactory> engines;
  if (out.fake_engine) {
    engines = std::make_unique<ct::FakeEngineFactory>();
  } else {
    engines = std::make_unique<ct::RulesEngineFactory>();
  }
  if (absl::Status st = engines->Validate(out.options.game_options); !st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(out.fake_engine ? "table.fake_options: " : "table.game: ", st.message()));
  }
  if (absl::Status st = ct::ValidateTableOptions(out.options); !st.ok()) return st;
  return out;
}

namespace {

struct Printer {
  ct::TableHarness& h;
  std::ostream& out;
  size_t next = 0;
  void Flush() {
    for (; next < h.order.size(); ++next) {
      auto [is_effect, i] = h.order[next];
      out << (is_effect ? ct::EffectToJson(h.effects[i], h.effect_times[i])
                        : ct::EventToJson(h.events[i], h.event_times[i]))
          << "\n";
    }
  }
};

absl::Status RunStep(ct::TableHarness& h, const Step& step) {
  if (step.auto_move) {
    // The bot's move for the seat to act, sent as that player's own command.
    const ct::GameEngine* e = h.table().engine();
    if (h.table().phase() != ct::Phase::kPlaying || !e || e->ToAct() < 0) {
      return absl::FailedPreconditionError("no turn to play");
    }
    int s = e->ToAct();
    return h.Play(h.table().seat(s).player, e->AutoMove(s));
  }
  if (step.command.type == ct::CommandType::kJoin) {
    return h.Join(step.command.player, step.join_balance_coins);
  }
  return h.Do(step.command);
}

}  // namespace

void RunScenario(const Scenario& sc, std::ostream& out) {
  std::unique_ptr<ct::EngineFactory> engines;
  if (sc.fake_engine) {
    engines = std::make_unique<ct::FakeEngineFactory>();
  } else {
    engines = std::make_unique<ct::RulesEngineFactory>();
  }
  ct::TableHarness h(sc.options, sc.master_seed, engines.get(), sc.host_balance_coins,
                     /*start_ms=*/0);
  for (const auto& [player, coins] : sc.balances_coins) h.balances["player:" + player] = coins;
  for (const ct::TableHarness::Reply& r : sc.wallet) h.scripted_replies.push_back(r);
  Printer printer{h, out};
  printer.Flush();
  for (const Step& step : sc.steps) {
    h.AdvanceTo(step.at_ms);
    printer.Flush();
    absl::Status st = RunStep(h, step);
    json line{{"at", h.now()},
              {"kind", "command"},
              {"command", step.echo},
              {"status", st.ok() ? "OK" : std::string(absl::StatusCodeToString(st.code()))}};
    if (!st.ok()) line["error"] = std::string(st.message());
    out << line.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    printer.Flush();
  }
  h.AdvanceTo(sc.run_until_ms);
  printer.Flush();
  json balances = json::object();
  for (auto& [acct, coins] : h.balances) balances[acct] = coins;
  out << json{{"at", h.now()},
              {"kind", "end"},
              {"balances", balances},
              {"next_deadline", h.table().NextDeadline().value_or(-1)}}
             .dump(-1, ' ', false, json::error_handler_t::replace)
      << "\n";
}

int RunTablesim(std::string_view text, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Scenario> sc = ReadScenario(text);
  if (!sc.ok()) {
    err << "courtpiece-tablesim: " << sc.status().message() << "\n";
    return 2;
  }
  RunScenario(*sc, out);
  return 0;
}

}  // namespace courtpiece::tablesim
