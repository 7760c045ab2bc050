#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/status/status.h"
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

constexpr int kMaxThreads = 256;
// With --jsonl, rounds are played in batches of this many (split across the threads) and
// each batch's lines are written before the next: memory stays bounded (~12 MB of lines).
constexpr long long kJsonlRoundsPerBatch = 8192;

// Digits only, 1 to 18 of them, value >= 1.
std::optional<long long> PositiveInt(const std::string& text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  long long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < 1) return std::nullopt;
  return v;
}

int DefaultThreads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(std::min<unsigned>(hw, kMaxThreads));
}

struct SelfplayJob {
  rules::Rules rules;
  rules::Seed seed;
  bool bot = false;
  bool write = false;       // --jsonl
  bool deal_stats = false;  // --deal-stats on
  Json rules_json;
};

// Results by kind, and by [winner's count][other's count]; with --deal-stats, the rounds
// whose fairness check applied by their number of reshuffles (0..kMaxReshuffles).
struct Tally {
  std::array<long long, 7> kinds{};
  std::array<std::array<long long, 14>, 14> counts{};
  std::vector<long long> reshuffles;  // empty unless --deal-stats
  void Add(const Tally& o) {
    for (int k = 0; k < 7; ++k) kinds[k] += o.kinds[k];
    for (int a = 0; a < 14; ++a) {
      for (int b = 0; b < 14; ++b) counts[a][b] += o.counts[a][b];
    }
    if (reshuffles.size() < o.reshuffles.size()) reshuffles.resize(o.reshuffles.size());
    for (size_t k = 0; k < o.reshuffles.size(); ++k) reshuffles[k] += o.reshuffles[k];
  }
};

// Plays rounds [first, last) into *tally, appending their --jsonl lines to *lines.
// Round i's seed is bytes [32i, 32i+32) of the master seed's stream, its dealer i % 4 and
// its policy generator is seeded from the round seed: every round stands alone.
void PlayRounds(const SelfplayJob& job, long long first, long long last, Tally* tally,
                std::string* lines) {
  rules::SeedStream master(job.seed, static_cast<uint64_t>(first) * sizeof(rules::Seed));
  std::vector<Move> moves;
  for (long long i = first; i < last; ++i) {
    rules::Seed rs;
    master.Read(rs.data(), rs.size());
    const int dealer = static_cast<int>(i % 4);
    Round round = Round::FromSeed(job.rules, dealer, rs);
    PolicyRng rng{0};
    for (int k = 0; k < 8; ++k) rng.state = (rng.state << 8) | rs[k];
    moves.clear();
    if (job.bot) {
      while (!round.over()) {
        // The bot decides from the seat's view only (what that seat may know).
        const Move m = bots::ChooseMove(job.rules, round.View(round.turn()));
        round.ApplyChecked(m);
        if (job.write) moves.push_back(m);
      }
    } else {  // uniform over the legal moves, the engine's allocation-free playout
      std::array<Move, Round::kMaxMoves> played;
      const int k = round.PlayOutRandom(rng, job.write ? played.data() : nullptr);
      if (job.write) moves.assign(played.begin(), played.begin() + k);
    }
    if (job.deal_stats) {
      // The deal is re-derived from the round's seed (docs/rules-engine.md): with the trump
      // the round called or hid (none in kaat), it is the deal the round was dealt.
      const rules::Deal d = rules::DealFromSeed(
          rs, round.caller(), job.rules.HasCall() ? round.trump() : -1, job.rules.deal_fairness);
      if (d.check_applies) ++tally->reshuffles[d.reshuffles];
    }
    const auto& res = round.result();
    ++tally->kinds[static_cast<int>(res.kind)];
    const int w = res.winner < 0 ? 0 : res.winner;
    ++tally->counts[res.count[w]][res.count[1 - w]];
    if (job.write) {
      Json line;
      line["rules"] = job.rules_json;
      line["first_dealer"] = dealer;
      Json mv = Json::array();
      for (const Move& m : moves) mv.push_back(MoveToJson(m));
      line["rounds"] = Json::array({Json{{"hands", HandsToJson(round)}, {"moves", mv}}});
      *lines += line.dump();
      *lines += '\n';
    }
  }
}

// Plays rounds [0, n) on `threads` threads into *tally, writing --jsonl lines to *jsonl
// when not null. Batches of rounds are split into one contiguous slice per thread and the
// slices' lines written in round order: the output does not depend on the thread count.
absl::Status PlayAll(const SelfplayJob& job, long long n, int threads, std::ostream* jsonl,
                     Tally* tally) {
  const long long batch = jsonl != nullptr ? std::max<long long>(kJsonlRoundsPerBatch, threads) : n;
  std::vector<Tally> tallies(threads);
  if (job.deal_stats) {
    for (Tally& t : tallies) t.reshuffles.assign(rules::kMaxReshuffles + 1, 0);
  }
  std::vector<std::string> lines(threads);
  for (long long first = 0; first < n; first += batch) {
    const long long last = std::min(n, first + batch);
    const long long per = (last - first + threads - 1) / threads;
    std::vector<std::thread> pool;
    absl::Status started = absl::OkStatus();
    for (int t = 0; t < threads && started.ok(); ++t) {
      const long long a = std::min(last, first + t * per), b = std::min(last, a + per);
      lines[t].clear();
      if (t + 1 == threads) {  // the calling thread plays the last slice
        PlayRounds(job, a, b, &tallies[t], &lines[t]);
        continue;
      }
      try {
        pool.emplace_back(PlayRounds, std::cref(job), a, b, &tallies[t], &lines[t]);
      } catch (const std::system_error& e) {
        started = absl::ResourceExhaustedError(std::string("cannot start a thread: ") + e.what());
      }
    }
    for (auto& th : pool) th.join();
    if (!started.ok()) return started;
    if (jsonl != nullptr) {
      for (const std::string& text : lines) *jsonl << text;
      if (!*jsonl) return absl::UnavailableError("cannot write the --jsonl file");
    }
  }
  for (const Tally& t : tallies) tally->Add(t);
  return absl::OkStatus();
}

}  // namespace

// --deal-stats: the reshuffles of the checked rounds, from the histogram. Percentiles are
// nearest-rank: the smallest count that at least p% of the checked rounds do not exceed.
Json DealStatsJson(const std::vector<long long>& hist) {
  long long checked = 0, total = 0, reshuffled = 0;
  int max = 0;
  for (size_t k = 0; k < hist.size(); ++k) {
    checked += hist[k];
    total += hist[k] * static_cast<long long>(k);
    if (k > 0) reshuffled += hist[k];
    if (hist[k] > 0) max = static_cast<int>(k);
  }
  auto percentile = [&](int p) {
    const long long rank = (checked * p + 99) / 100;  // ceil(checked * p / 100), >= 1
    long long seen = 0;
    for (size_t k = 0; k < hist.size(); ++k) {
      seen += hist[k];
      if (seen >= rank && seen > 0) return static_cast<int>(k);
    }
    return 0;
  };
  Json j;
  j["checked_rounds"] = checked;
  j["reshuffled_rounds"] = reshuffled;
  j["reshuffles"] = total;
  j["mean"] = checked > 0 ? double(total) / double(checked) : 0.0;
  j["p50"] = percentile(50);
  j["p90"] = percentile(90);
  j["p99"] = percentile(99);
  j["max"] = max;
  j["capped"] = hist.size() > size_t{rules::kMaxReshuffles} ? hist[rules::kMaxReshuffles] : 0;
  return j;
}

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
  const std::optional<long long> rounds = PositiveInt(f["rounds"]);
  if (!rounds) return UsageError("--rounds must be a positive integer");
  const long long n = *rounds;
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
  int threads = DefaultThreads();
  if (f.count("threads")) {
    const std::optional<long long> t = PositiveInt(f["threads"]);
    if (!t || *t > kMaxThreads) {
      return UsageError("--threads must be 1.." + std::to_string(kMaxThreads));
    }
    threads = static_cast<int>(*t);
  }
  threads = static_cast<int>(std::min<long long>(threads, n));  // no idle threads
  bool deal_stats = false;
  if (f.count("deal-stats")) {
    if (f["deal-stats"] != "on" && f["deal-stats"] != "off") {
      return UsageError("--deal-stats must be on or off");
    }
    deal_stats = f["deal-stats"] == "on";
  }
  const SelfplayJob job{*r,    *seed,      bot,
                        write, deal_stats, OptionsToJson(rules::RulesToOptions(*r))};
  Tally tally;
  auto start = std::chrono::steady_clock::now();
  if (absl::Status st = PlayAll(job, n, threads, write ? &jsonl : nullptr, &tally); !st.ok()) {
    return UsageError(std::string(st.message()) + (write ? " (--jsonl " + f["jsonl"] + ")" : ""));
  }
  const auto& kind_n = tally.kinds;
  const auto& count_n = tally.counts;
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
  // A debug field, only on request (REPLAY.md: fields may be added; the default line keeps
  // exactly the documented ones).
  if (deal_stats) out.json["deal_stats"] = DealStatsJson(tally.reshuffles);
  return out;
}

}  // namespace courtpiece::rules_cli
