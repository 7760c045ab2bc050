// courtpiece-tablesim: runs a scripted table scenario in virtual time and prints every event
// and effect as JSON lines (docs/tablesim.md). Wiring only: libs/table decides.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "courtpiece/table/fake_engine.h"
#include "courtpiece/table/json.h"
#include "courtpiece/table/rules_engine.h"
#include "courtpiece/table/testing.h"

namespace ct = courtpiece::table;
using nlohmann::json;

namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "courtpiece-tablesim: %s\n", msg.c_str());
  return 2;
}

struct Printer {
  ct::TableHarness& h;
  size_t next = 0;
  void Flush() {
    for (; next < h.order.size(); ++next) {
      auto [is_effect, i] = h.order[next];
      std::cout << (is_effect ? ct::EffectToJson(h.effects[i], h.effect_times[i])
                              : ct::EventToJson(h.events[i], h.event_times[i]))
                << "\n";
    }
  }
};

absl::Status RunCommand(ct::TableHarness& h, const json& c) {
  std::string type = c.value("type", "");
  if (type == "auto") {
    // The bot's move for the seat to act, sent as that player's own command.
    const ct::GameEngine* e = h.table().engine();
    if (h.table().phase() != ct::Phase::kPlaying || !e || e->ToAct() < 0) {
      return absl::FailedPreconditionError("no turn to play");
    }
    int s = e->ToAct();
    return h.Play(h.table().seat(s).player, e->AutoMove(s));
  }
  if (type == "join") {
    std::string p = c.value("player", "");
    return h.Join(p, c.value("balance", int64_t{100'000}));
  }
  absl::StatusOr<ct::Command> cmd = ct::CommandFromJson(c.dump());
  if (!cmd.ok()) return cmd.status();
  return h.Do(*cmd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return Fail("usage: courtpiece-tablesim SCENARIO.json (or - for stdin)");
  std::stringstream text;
  if (std::string(argv[1]) == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(argv[1]);
    if (!in) return Fail(std::string("cannot read ") + argv[1]);
    text << in.rdbuf();
  }
  json sc = json::parse(text.str(), nullptr, false);
  if (sc.is_discarded() || !sc.is_object()) return Fail("the scenario is not a JSON object");
  json t = sc.value("table", json::object());
  ct::TableOptions o{.table_id = t.value("table_id", "t1"),
                     .host_player = t.value("host", "host"),
                     .bet_coins = t.value("bet", int64_t{25}),
                     .turn_time_ms = t.value("turn_time_ms", int64_t{15'000}),
                     .game_options = t.contains("game") ? t["game"].dump() : ""};
  std::unique_ptr<ct::EngineFactory> engines;
  std::string engine = sc.value("engine", "rules");
  if (engine == "rules") {
    engines = std::make_unique<ct::RulesEngineFactory>();
  } else if (engine == "fake") {
    engines = std::make_unique<ct::FakeEngineFactory>();
    o.game_options = t.value("fake_options", "");
  } else {
    return Fail("engine must be rules or fake");
  }
  if (absl::Status st = engines->Validate(o.game_options); !st.ok()) {
    return Fail(std::string(st.message()));
  }
  ct::TableHarness h(o, sc.value("seed", "seed"), engines.get(),
                     sc.value("host_balance", int64_t{100'000}), /*start_ms=*/0);
  const json balances_in = sc.value("balances", json::object());
  for (auto& [player, coins] : balances_in.items()) {
    h.balances["player:" + player] = coins.get<int64_t>();
  }
  for (const json& r : sc.value("wallet", json::array())) {
    h.scripted_replies.push_back(
        {r.value("ok", true), r.value("short", std::vector<std::string>{})});
  }
  Printer out{h};
  out.Flush();
  for (const json& c : sc.value("commands", json::array())) {
    int64_t at = c.value("at", h.now());
    if (at < h.now()) return Fail("commands must be in time order");
    h.AdvanceTo(at);
    out.Flush();
    absl::Status st = RunCommand(h, c);
    json line{{"at", h.now()},
              {"kind", "command"},
              {"command", c},
              {"status", st.ok() ? "OK" : std::string(absl::StatusCodeToString(st.code()))}};
    if (!st.ok()) line["error"] = std::string(st.message());
    std::cout << line.dump() << "\n";
    out.Flush();
  }
  h.AdvanceTo(sc.value("run_until_ms", h.now()));
  out.Flush();
  json balances = json::object();
  for (auto& [acct, coins] : h.balances) balances[acct] = coins;
  std::cout << json{{"at", h.now()},
                    {"kind", "end"},
                    {"balances", balances},
                    {"next_deadline", h.table().NextDeadline().value_or(-1)}}
                   .dump()
            << "\n";
  return 0;
}
