#include "match.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "courtpiece/common/check.h"
#include "courtpiece/common/splitmix64.h"
#include "courtpiece/rules/game.h"
#include "courtpiece/rules/round.h"

namespace courtpiece::botmatch {
namespace {

rules::Seed DealSeed(uint64_t master, uint64_t deal) {
  SplitMix64 g{master * 0x9E3779B97F4A7C15ULL ^ (deal << 20)};
  rules::Seed s{};
  for (size_t i = 0; i < s.size(); i += 8) {
    const uint64_t x = g.Next();
    for (size_t k = 0; k < 8; ++k) s[i + k] = static_cast<uint8_t>(x >> (8 * k));
  }
  return s;
}

// This thread's CPU time: what a decision costs on one core, whatever else the machine runs.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// The two sides' bots for one half, and their timing sinks.
struct Sides {
  bots::SearchBot a, b;
  SideTimes *ta, *tb;
};

// Plays one round to its end: side A in seats of team `a_team`.
void PlayRound(const MatchConfig& c, int a_team, Sides& sides, rules::Round& rd) {
  while (!rd.over()) {
    const int seat = rd.turn();
    const bool is_a = rules::TeamOf(seat) == a_team;
    bots::SearchBot& bot = is_a ? sides.a : sides.b;
    SideTimes* t = is_a ? sides.ta : sides.tb;
    const rules::SeatView view = rd.View(seat);
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = ThreadCpuMs();
    const rules::Move m = bot.ChooseMove(c.rules, view);
    const double ms = ThreadCpuMs() - cpu_start;
    const std::chrono::duration<double, std::milli> wall = std::chrono::steady_clock::now() - start;
    t->wall_ms.push_back(static_cast<float>(wall.count()));
    t->decision_ms.push_back(static_cast<float>(ms));
    if (bot.last_decision().searched) {
      ++t->searched;
      t->nodes += bot.last_decision().nodes;
      t->search_ms += ms;
    }
    rd.ApplyChecked(m);
  }
}

// Plays one half of deal (or game) `deal`, side A in seats of team `a_team`, into r.
void PlayHalf(const MatchConfig& c, int deal, int a_team, SideTimes* ta, SideTimes* tb,
              DealResult* r) {
  const uint64_t half_seed = SplitMix64{c.seed ^ (static_cast<uint64_t>(deal) * 2 + a_team)}.Next();
  bots::SearchOptions oa = c.a, ob = c.b;
  oa.seed = half_seed ^ 0xA;
  ob.seed = half_seed ^ 0xB;
  Sides sides{bots::SearchBot(oa), bots::SearchBot(ob), ta, tb};
  int winner = -1;
  if (!c.games) {
    rules::Round rd =
        rules::Round::FromSeed(c.rules, deal % 4, DealSeed(c.seed, static_cast<uint64_t>(deal)));
    PlayRound(c, a_team, sides, rd);
    const rules::RoundResult& res = rd.result();
    winner = res.winner;
    const int points = c.rules.game == rules::GameType::kStack ? 1 : res.points;
    r->points_a[a_team] = winner < 0 ? 0 : (winner == a_team ? points : -points);
    r->rounds[a_team] = 1;
  } else {
    rules::Game game(c.rules, deal % 4);
    // Round k of game `deal` has the same seed in both halves (a seed of its own per game
    // and round: DealSeed's deal index is the game's and the round's together).
    while (!game.over()) {
      const int k = game.rounds_played();
      COURTPIECE_CHECK(k < kGameRoundsMax, "a botmatch game ran past kGameRoundsMax rounds");
      rules::Round rd = game.StartRound(
          DealSeed(c.seed ^ 0x6A6D, static_cast<uint64_t>(deal) * kGameRoundsMax + k));
      PlayRound(c, a_team, sides, rd);
      game.FinishRound(rd);
    }
    winner = game.winner();
    const std::array<int, 2> score = game.score();
    r->points_a[a_team] = score[a_team] - score[1 - a_team];
    r->rounds[a_team] = game.rounds_played();
  }
  r->score_a[a_team] = winner < 0 ? 0.5 : (winner == a_team ? 1 : 0);
}

void Merge(SideTimes* into, const SideTimes& from) {
  into->decision_ms.insert(into->decision_ms.end(), from.decision_ms.begin(),
                           from.decision_ms.end());
  into->wall_ms.insert(into->wall_ms.end(), from.wall_ms.begin(), from.wall_ms.end());
  into->searched += from.searched;
  into->nodes += from.nodes;
  into->search_ms += from.search_ms;
}

}  // namespace

MatchResult RunMatch(const MatchConfig& c) {
  MatchResult out;
  out.deals.resize(static_cast<size_t>(c.deals));
  const int threads = std::max(1, std::min(c.threads, c.deals));
  std::vector<SideTimes> ta(static_cast<size_t>(threads)), tb(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      // Deal i goes to thread i mod threads: every deal's result depends only on its index.
      for (int d = t; d < c.deals; d += threads) {
        DealResult& r = out.deals[static_cast<size_t>(d)];
        for (int a_team = 0; a_team < 2; ++a_team) {
          PlayHalf(c, d, a_team, &ta[size_t(t)], &tb[size_t(t)], &r);
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) {
    Merge(&out.a, ta[size_t(t)]);
    Merge(&out.b, tb[size_t(t)]);
  }
  return out;
}

Interval MeanInterval(const std::vector<double>& v) {
  Interval iv;
  if (v.empty()) return iv;
  double sum = 0;
  for (double x : v) sum += x;
  iv.mean = sum / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - iv.mean) * (x - iv.mean);
  const double n = static_cast<double>(v.size());
  const double se = v.size() > 1 ? std::sqrt(ss / (n - 1) / n) : 0;
  iv.low = iv.mean - 1.96 * se;
  iv.high = iv.mean + 1.96 * se;
  return iv;
}

double Percentile(std::vector<float> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

namespace {

std::string TimesLine(const char* side, const bots::SearchOptions& o, const SideTimes& t) {
  char buf[512];
  const double nps = t.search_ms > 0 ? static_cast<double>(t.nodes) / (t.search_ms / 1000) : 0;
  std::snprintf(
      buf, sizeof buf,
      "  %s %-6s decisions %zu (searched %lld): CPU ms p50 %.3f p90 %.3f p99 %.3f max %.3f;"
      " wall ms p50 %.3f p99 %.3f; nodes/decision %.0f, nodes per CPU s %.0f\n",
      side, std::string(bots::LevelName(o.level)).c_str(), t.decision_ms.size(),
      static_cast<long long>(t.searched), Percentile(t.decision_ms, 50),
      Percentile(t.decision_ms, 90), Percentile(t.decision_ms, 99), Percentile(t.decision_ms, 100),
      Percentile(t.wall_ms, 50), Percentile(t.wall_ms, 99),
      t.searched > 0 ? static_cast<double>(t.nodes) / static_cast<double>(t.searched) : 0, nps);
  return buf;
}

}  // namespace

std::string Report(const MatchConfig& c, const MatchResult& r) {
  std::vector<double> score, points;
  int64_t a_won = 0, b_won = 0, draws = 0, rounds = 0;
  for (const DealResult& d : r.deals) {
    score.push_back((d.score_a[0] + d.score_a[1]) / 2);
    points.push_back((d.points_a[0] + d.points_a[1]) / 2.0);
    for (double s : d.score_a) {
      a_won += s == 1;
      b_won += s == 0;
      draws += s == 0.5;
    }
    rounds += d.rounds[0] + d.rounds[1];
  }
  const Interval w = MeanInterval(score);
  const Interval p = MeanInterval(points);
  const char* unit = c.games ? "games" : "rounds";
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "game %s: A=%s vs B=%s, %d %s x 2 = %zu %s (seed %llu)\n"
                "  A won %lld %s, B %lld, draws %lld: A %.1f%% [95%% CI %.1f%%, %.1f%%]\n",
                std::string(rules::GameTypeName(c.rules.game)).c_str(),
                std::string(bots::LevelName(c.a.level)).c_str(),
                std::string(bots::LevelName(c.b.level)).c_str(), c.deals,
                c.games ? "games" : "deals", 2 * r.deals.size(), unit,
                static_cast<unsigned long long>(c.seed), static_cast<long long>(a_won), unit,
                static_cast<long long>(b_won), static_cast<long long>(draws), 100 * w.mean,
                100 * w.low, 100 * w.high);
  std::string out = buf;
  if (c.games) {
    std::snprintf(
        buf, sizeof buf,
        "  final score, A minus B, per game: %+.3f [95%% CI %+.3f, %+.3f];"
        " %lld rounds, %.2f per game (target %d)\n",
        p.mean, p.low, p.high, static_cast<long long>(rounds),
        r.deals.empty() ? 0.0 : static_cast<double>(rounds) / (2.0 * double(r.deals.size())),
        c.rules.target);
  } else {
    std::snprintf(buf, sizeof buf,
                  "  points per round, A minus B: %+.3f [95%% CI %+.3f, %+.3f]"
                  " (A %+.3f per round, B its negative)\n",
                  2 * p.mean, 2 * p.low, 2 * p.high, p.mean);
  }
  return out + buf + TimesLine("A", c.a, r.a) + TimesLine("B", c.b, r.b);
}

}  // namespace courtpiece::botmatch
