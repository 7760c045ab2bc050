#include <chrono>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <fstream>
#include <map>

#include "courtpiece/bots/bot.h"
#include "courtpiece/common/splitmix64.h"
#include "courtpiece/rules/deal.h"
#include "replay.h"

namespace courtpiece::rules_cli {
namespace {

using rules::Move;
using rules::Round;

CliOutput UsageError(const std::string& message) {
  CliOutput out;
  out.json = {
      {"ok", false},
      {"error",
       {{"round", nullptr}, {"move", nullptr}, {"code", "bad_input"}, {"message", message}}}};
  out.exit_code = 2;
  return out;
}

// Flags as --name value pairs.
bool ParseFlags(const std::vector<std::string>& args, std::map<std::string, std::string>* flags,
                std::string* error) {
  for (size_t i = 0; i < args.size(); i += 2) {
    if (args[i].rfind("--", 0) != 0 || i + 1 >= args.size()) {
      *error = "bad argument '" + args[i] + "' (flags are --name value)";
      return false;
    }
    (*flags)[args[i].substr(2)] = args[i + 1];
  }
  return true;
}

std::optional<rules::Rules> RulesFlag(const std::string& text, std::string* error) {
  Json j = Json::parse(text, nullptr, false);
  auto options = OptionsFromJson(j);
  if (!options) {
    *error = "--rules must be a JSON object";
    return std::nullopt;
  }
  auto r = rules::ParseRules(*options);
  if (!r.ok()) {
    *error = std::string(r.status().message());
    return std::nullopt;
  }
  return *r;
}

// --seed: 1..64 hex digits, left-padded with zeros to 32 bytes.
std::optional<rules::Seed> SeedFlag(const std::string& hex) {
  if (hex.empty() || hex.size() > 64) return std::nullopt;
  return rules::ParseSeed(std::string(64 - hex.size(), '0') + hex);
}

using PolicyRng = ::courtpiece::SplitMix64;

// Uniform over the legal moves (the allocation-free fast path of the engine).
Move RandomMove(const Round& round, PolicyRng& rng, rules::MoveList* legal) {
  if (round.phase() == rules::Phase::kCall) {
    round.LegalMoves(legal);
    return (*legal)[rng.Below(legal->size)];
  }
  const rules::CardSet playable = round.PlayableCards();
  const int n = playable.size();
  const bool hidden = round.rules().game == rules::GameType::kHidden;  // ask/show only there
  const bool ask = hidden && round.CanAsk();
  const bool show = hidden && round.CanShow();
  const int k = rng.Below(n + ask + show);
  if (k < n) return Move::Play(round.turn(), playable.Nth(k));
  return (ask && k == n) ? Move::Ask(round.turn()) : Move::Show(round.turn());
}

#if defined(__x86_64__)
// The same choice with the POPCNT/BMI2 instructions (the k-th lowest legal card by pdep is
// exactly CardSet::Nth(k)); used when the CPU has them (checked at run time), since the
// portable build cannot assume them.
[[gnu::target("popcnt,bmi2")]] Move RandomMoveBmi2(const Round& round, PolicyRng& rng,
                                                   rules::MoveList* legal) {
  if (round.phase() == rules::Phase::kCall) {
    round.LegalMoves(legal);
    return (*legal)[rng.Below(legal->size)];
  }
  const uint64_t playable = round.PlayableCards().bits();
  const int n = __builtin_popcountll(playable);
  const bool hidden = round.rules().game == rules::GameType::kHidden;
  const bool ask = hidden && round.CanAsk();
  const bool show = hidden && round.CanShow();
  const int k = rng.Below(n + ask + show);
  if (k < n) {
    return Move::Play(round.turn(), static_cast<rules::Card>(
                                        __builtin_ctzll(_pdep_u64(uint64_t{1} << k, playable))));
  }
  return (ask && k == n) ? Move::Ask(round.turn()) : Move::Show(round.turn());
}
bool HasBmi2() { return __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi2"); }
#else
Move RandomMoveBmi2(const Round& round, PolicyRng& rng, rules::MoveList* legal) {
  return RandomMove(round, rng, legal);
}
bool HasBmi2() { return false; }
#endif

}  // namespace

CliOutput DealCommand(const std::vector<std::string>& args) {
  std::map<std::string, std::string> f;
  std::string err;
  if (!ParseFlags(args, &f, &err)) return UsageError(err);
  auto seed = SeedFlag(f["seed"]);
  if (!seed) return UsageError("--seed must be 1 to 64 hex digits");
  rules::Rules r =
      rules::DefaultRules(f.count("hide") ? rules::GameType::kHidden : rules::GameType::kPiles);
  if (f.count("rules")) {
    auto parsed = RulesFlag(f["rules"], &err);
    if (!parsed) return UsageError(err);
    r = *parsed;
  }
  int caller = 0;
  if (f.count("caller")) {
    if (f["caller"].size() != 1 || f["caller"][0] < '0' || f["caller"][0] > '3') {
      return UsageError("--caller must be 0..3");
    }
    caller = f["caller"][0] - '0';
  }
  if (f.count("trump") && f.count("hide")) return UsageError("give --trump or --hide, not both");
  Round round = Round::FromSeed(r, (caller + 3) % 4, *seed);
  Json first = HandsToJson(round);
  absl::Status st;
  if (f.count("trump")) {
    auto suit = rules::ParseSuit(f["trump"]);
    if (!suit) return UsageError("--trump must be C, D, H or S");
    st = round.Apply(Move::Call(caller, *suit));
  } else if (f.count("hide")) {
    auto card = rules::ParseCard(f["hide"]);
    if (!card) return UsageError("--hide must be a card such as 7S");
    st = round.Apply(Move::Hide(caller, *card));
  }
  if (!st.ok()) return UsageError(std::string(st.message()));
  rules::Deal d = rules::DealFromSeed(*seed, caller, round.trump(), r.deal_fairness);
  auto commitment = rules::Commitment(*seed);
  CliOutput out;
  Json& j = out.json;
  j["seed"] = rules::HexEncode(seed->data(), seed->size());
  j["commitment"] = rules::HexEncode(commitment.data(), commitment.size());
  j["caller"] = caller;
  j["trump"] = round.trump() < 0 ? Json(nullptr) : Json(rules::SuitName(round.trump()));
  if (round.hidden_card() >= 0) j["hidden"] = rules::CardName(rules::Card(round.hidden_card()));
  j["check_applies"] = d.check_applies;
  j["reshuffles"] = d.reshuffles;
  Json packets = Json::array();
  for (int s = 0; s < 4; ++s) {
    std::string text;
    for (int i = 0; i < 5; ++i) text += (i ? " " : "") + rules::CardName(d.hands[s][i]);
    packets.push_back(text);
  }
  j["first_packets"] = packets;
  if (round.phase() == rules::Phase::kCall) {
    j["hands"] = nullptr;  // the rest waits for the call
  } else {
    Json hands = Json::array();
    for (int s = 0; s < 4; ++s) {
      std::string text;
      for (int i = 0; i < 13; ++i) text += (i ? " " : "") + rules::CardName(d.hands[s][i]);
      hands.push_back(text);
    }
    j["hands"] = hands;
  }
  return out;
}

CliOutput SelfplayCommand(const std::vector<std::string>& args) {
  std::map<std::string, std::string> f;
  std::string err;
  if (!ParseFlags(args, &f, &err)) return UsageError(err);
  if (!f.count("rules")) return UsageError("--rules JSON is required");
  auto r = RulesFlag(f["rules"], &err);
  if (!r) {
    CliOutput out = UsageError(err);
    out.json["error"]["code"] = "bad_rules";
    return out;
  }
  long long n = 0;
  try {
    n = std::stoll(f["rounds"]);
  } catch (...) {
    return UsageError("--rounds must be a positive integer");
  }
  if (n <= 0) return UsageError("--rounds must be a positive integer");
  auto seed = SeedFlag(f["seed"]);
  if (!seed) return UsageError("--seed must be 1 to 64 hex digits");
  std::string policy = f.count("policy") ? f["policy"] : "random";
  const bool bot = policy == "bot";
  if (!bot && policy != "random") return UsageError("--policy must be random or bot");
  std::ofstream jsonl;
  const bool write = f.count("jsonl") > 0;
  if (write) {
    jsonl.open(f["jsonl"]);
    if (!jsonl) return UsageError("cannot open --jsonl file " + f["jsonl"]);
  }
  const Json rules_json = OptionsToJson(rules::RulesToOptions(*r));
  // Round i's seed is bytes [32i, 32i+32) of the master seed's stream; its dealer is i % 4.
  rules::SeedStream master(*seed);
  const bool bmi2 = HasBmi2();
  std::array<long long, 7> kind_n{};
  std::array<std::array<long long, 14>, 14> count_n{};  // [winner's count][other's count]
  std::vector<Move> moves;
  auto start = std::chrono::steady_clock::now();
  for (long long i = 0; i < n; ++i) {
    rules::Seed rs;
    for (auto& b : rs) b = master.NextByte();
    const int dealer = static_cast<int>(i % 4);
    Round round = Round::FromSeed(*r, dealer, rs);
    PolicyRng rng{0};
    for (int k = 0; k < 8; ++k) rng.state = (rng.state << 8) | rs[k];
    rules::MoveList legal;
    moves.clear();
    while (!round.over()) {
      // The bot decides from the seat's view only (what that seat may know).
      const Move m = bot    ? bots::ChooseMove(*r, round.View(round.turn()))
                     : bmi2 ? RandomMoveBmi2(round, rng, &legal)
                            : RandomMove(round, rng, &legal);
      round.ApplyChecked(m);
      if (write) moves.push_back(m);
    }
    const auto& res = round.result();
    ++kind_n[static_cast<int>(res.kind)];
    const int w = res.winner < 0 ? 0 : res.winner;
    ++count_n[res.count[w]][res.count[1 - w]];
    if (write) {
      Json line;
      line["rules"] = rules_json;
      line["first_dealer"] = dealer;
      Json mv = Json::array();
      for (const Move& m : moves) mv.push_back(MoveToJson(m));
      line["rounds"] = Json::array({Json{{"hands", HandsToJson(round)}, {"moves", mv}}});
      jsonl << line.dump() << '\n';
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CliOutput out;
  out.json["rounds"] = n;
  out.json["rounds_per_second"] = seconds > 0 ? double(n) / seconds : 0.0;
  out.json["seconds"] = seconds;
  Json kj = Json::object();
  for (int k = 0; k < 7; ++k) {
    if (kind_n[k]) kj[std::string(rules::ResultKindName(rules::ResultKind(k)))] = kind_n[k];
  }
  out.json["kinds"] = kj;
  Json cj = Json::object();
  for (int a = 0; a < 14; ++a) {
    for (int b = 0; b < 14; ++b) {
      if (count_n[a][b]) cj[std::to_string(a) + "-" + std::to_string(b)] = count_n[a][b];
    }
  }
  out.json["counts"] = cj;
  return out;
}

}  // namespace courtpiece::rules_cli
