#include "courtpiece/bots/solver.h"

#include <algorithm>
#include <array>

#include "courtpiece/common/check.h"

namespace courtpiece::bots {
namespace {

using rules::Card;
using rules::CardSet;
using rules::GameType;
using rules::Move;
using rules::MoveList;
using rules::MoveType;
using rules::Round;

constexpr int kInfinity = 1 << 14;
constexpr uint8_t kExact = 1, kLower = 2, kUpper = 3;

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  h *= 0xBF58476D1CE4E5B9ULL;
  return h ^ (h >> 29);
}

// Everything the rest of a round depends on at a trick boundary.
uint64_t PositionKey(const Round& r) {
  uint64_t h = 0x243F6A8885A308D3ULL;
  for (int s = 0; s < 4; ++s) h = Mix(h, r.hand(s).bits());
  const auto count = r.count();
  const auto won = r.tricks_won();
  const int last_winner = r.completed_tricks() > 0 ? r.tricks().back().winner : 7;
  // A show before this trick's lead reset the "won the trick before" chain.
  const bool fresh = r.trump_shown_event().trick == r.completed_tricks() + 1;
  uint64_t s = 0;
  s = s << 8 | static_cast<uint64_t>(r.turn() & 7);
  s = s << 8 | count[0];
  s = s << 8 | count[1];
  s = s << 8 | won[0];
  s = s << 8 | won[1];
  s = s << 8 | static_cast<uint64_t>(r.pile() + 32 * r.stack());
  s = s << 8 | static_cast<uint64_t>((r.marker() + 1) | (last_winner << 3) | (fresh << 7));
  s = s << 8 |
      static_cast<uint64_t>((r.trump() + 1) | (r.trump_shown() << 3) | (!r.pickups().empty() << 4) |
                            ((r.trump_set_event().seat & 1) << 5));
  h = Mix(h, s);
  return Mix(h, static_cast<uint64_t>(r.hidden_card() + 1));
}

// Cards whose identity matters beyond their rank order in their suit: such a card is never
// skipped as the equal of a neighbour.
CardSet SpecialCards(const rules::Rules& rules) {
  CardSet special;
  if (rules.game == GameType::kStack || (rules.IsPileGame() && rules.ace_cannot_win_pile)) {
    for (int suit = 0; suit < 4; ++suit) special.Add(rules::MakeCard(suit, rules::kAceRank));
  }
  if (rules.last_card >= 0) {
    const Card last = static_cast<Card>(rules.last_card);
    special.Add(last);
    if (rules.six_point) {
      for (int suit = 0; suit < 4; ++suit) special.Add(rules::MakeCard(suit, rules::RankOf(last)));
    }
  }
  return special;
}

// The moves to search, best first: the table's move, then cards high to low (an ask or
// show last). A card whose next higher card still in play is in the same hand is skipped:
// the two win and lose the same tricks.
int OrderMoves(const Round& r, const MoveList& legal, int tt_move, std::array<Move, 16>* out) {
  CardSet in_play;
  for (int s = 0; s < 4; ++s) in_play = in_play | r.hand(s);
  if (r.hidden_card() >= 0 && !r.trump_shown()) in_play.Add(static_cast<Card>(r.hidden_card()));
  for (Card c : r.current_trick()) in_play.Add(c);
  const CardSet hand = r.turn() >= 0 ? r.hand(r.turn()) : CardSet();
  const CardSet special = SpecialCards(r.rules());
  std::array<int, 16> keys{};
  int n = 0;
  for (int i = 0; i < legal.size; ++i) {
    const Move& m = legal[i];
    int key = 0;
    if (m.type == MoveType::kPlay) {
      const Card c = m.value;
      if (!special.Has(c) && hand.Has(c)) {
        const uint64_t above = in_play.bits() & rules::CardSet::Suit(rules::SuitOf(c)).bits() &
                               ~((uint64_t{2} << c) - 1);
        if (above != 0) {
          const Card next = static_cast<Card>(std::countr_zero(above));
          if (hand.Has(next) && !special.Has(next) && i != tt_move) continue;
        }
      }
      key = 100 + rules::RankOf(c);
    }
    if (i == tt_move) key = 1000;
    int j = n++;
    while (j > 0 && keys[j - 1] < key) {
      keys[j] = keys[j - 1];
      (*out)[j] = (*out)[j - 1];
      --j;
    }
    keys[j] = key;
    (*out)[j] = m;
  }
  return n;
}

int IndexOf(const MoveList& legal, const Move& m) {
  for (int i = 0; i < legal.size; ++i) {
    if (legal[i] == m) return i;
  }
  return 0xFF;
}

int MinimaxBrute(const Round& r, int team, bool count_at_end) {
  if (r.over()) return count_at_end ? EndValue(r, team) : TerminalValue(r, team);
  MoveList legal;
  r.LegalMoves(&legal);
  const bool maximize = rules::TeamOf(r.turn()) == team;
  int best = maximize ? -kInfinity : kInfinity;
  for (const Move& m : legal) {
    Round child = r;
    child.ApplyChecked(m);
    const int v = MinimaxBrute(child, team, count_at_end);
    best = maximize ? std::max(best, v) : std::min(best, v);
  }
  return best;
}

}  // namespace

int TerminalValue(const Round& round, int team) {
  const rules::RoundResult& res = round.result();
  if (res.winner < 0) return 0;
  const int points = round.rules().game == GameType::kStack ? 1 : res.points;
  return (res.winner == team ? 1 : -1) * kPointValue * points;
}

namespace {

// The suit with trump power for cards played now, or -1.
int ActiveTrump(const Round& r) {
  if (r.rules().game == GameType::kHidden && !r.trump_shown()) return -1;
  return r.trump();
}

int RolloutStrength(const Round& r, Card c, int led, int trump) {
  if (rules::SuitOf(c) == trump) return 200 + rules::RankOf(c);
  // Kaat: the first card off the led suit sets the trump and is one.
  if (trump < 0 && r.rules().game == GameType::kKaat && rules::SuitOf(c) != led) {
    return 200 + rules::RankOf(c);
  }
  return rules::SuitOf(c) == led ? 100 + rules::RankOf(c) : 0;
}

Card Cheapest(CardSet cards, int trump) {
  const CardSet side = CardSet(cards.bits() & ~(trump >= 0 ? CardSet::Suit(trump).bits() : 0));
  const CardSet from = side.empty() ? cards : side;
  Card best = from.First();
  for (Card c : from) {
    if (rules::RankOf(c) < rules::RankOf(best)) best = c;
  }
  return best;
}

// The rollout's move, all hands known: lead a card no other hand can beat in its suit (else
// the cheapest), let a partner's winning card stand, else win as cheaply as possible, else
// throw the cheapest.
Card RolloutCard(const Round& r) {
  const CardSet playable = r.PlayableCards();
  const int seat = r.turn();
  const int trump = ActiveTrump(r);
  const auto trick = r.current_trick();
  if (trick.empty()) {
    CardSet others;
    for (int s = 0; s < 4; ++s) {
      if (s != seat) others = others | r.hand(s);
    }
    for (Card c : playable) {
      if (rules::SuitOf(c) == trump) continue;
      const uint64_t above =
          others.bits() & CardSet::Suit(rules::SuitOf(c)).bits() & ~((uint64_t{2} << c) - 1);
      if (above == 0) return c;
    }
    return Cheapest(playable, trump);
  }
  const int led = rules::SuitOf(trick[0]);
  const int n = static_cast<int>(trick.size());
  int best = -1, best_pos = 0;
  for (int i = 0; i < n; ++i) {
    const int st = RolloutStrength(r, trick[static_cast<size_t>(i)], led, trump);
    if (st > best) {
      best = st;
      best_pos = i;
    }
  }
  const int winner = (seat - n + best_pos + 8) & 3;
  if (winner == (seat ^ 2)) return Cheapest(playable, trump);
  int cheapest_win = 1 << 20;
  Card pick = Cheapest(playable, trump);
  for (Card c : playable) {
    const int st = RolloutStrength(r, c, led, trump);
    if (st > best && st < cheapest_win) {
      cheapest_win = st;
      pick = c;
    }
  }
  return pick;
}

}  // namespace

int EndValue(const Round& round, int team) {
  const auto count = round.result().count;
  return TerminalValue(round, team) + (count[team] - count[1 - team]);
}

int RolloutValue(const Round& round, int team, int64_t* moves) {
  Round r = round;
  while (!r.over()) {
    r.ApplyChecked(rules::Move::Play(r.turn(), RolloutCard(r)));
    if (moves != nullptr) ++*moves;
  }
  return EndValue(r, team);
}

int HorizonValue(const Round& round, int team) {
  const auto count = round.count();
  const auto won = round.tricks_won();
  const int sign = [&](int seat) {
    return seat < 0 ? 0 : (rules::TeamOf(seat) == team ? 1 : -1);
  }(round.completed_tricks() > 0 ? round.tricks().back().winner : -1);
  switch (round.rules().game) {
    case GameType::kClassic:
      return 3 * (won[team] - won[1 - team]);
    case GameType::kStack: {
      const int marked = round.marker() < 0 ? 0 : (rules::TeamOf(round.marker()) == team ? 1 : -1);
      return 2 * (count[team] - count[1 - team]) + marked * round.stack();
    }
    default:
      return 2 * (count[team] - count[1 - team]) + sign * round.pile();
  }
}

Solver::Solver(const SolverLimits& limits) : limits_(limits) {
  COURTPIECE_CHECK(limits.tt_entries_log2 >= 10 && limits.tt_entries_log2 <= 24,
                   "transposition table of 2^10..2^24 entries");
  COURTPIECE_CHECK(limits.node_budget >= 1, "a node budget of at least one node");
  table_.resize(size_t{1} << limits.tt_entries_log2);
  mask_ = table_.size() - 1;
}

void Solver::NewGeneration() {
  if (++generation_ == 0) {
    std::fill(table_.begin(), table_.end(), Entry{});
    generation_ = 1;
  }
}

Solver::Result Solver::Solve(const Round& round, int team, int horizon_tricks) {
  NewGeneration();
  team_ = team;
  horizon_ = horizon_tricks;
  nodes_ = 0;
  budget_ = limits_.node_budget;
  aborted_ = false;
  Result res;
  res.value = Search(round, -kInfinity, kInfinity);
  res.complete = !aborted_;
  res.nodes = nodes_;
  return res;
}

Solver::MovesResult Solver::SolveMoves(const Round& round, int team, std::span<const Move> moves,
                                       std::span<int> values, int64_t node_budget) {
  COURTPIECE_CHECK(values.size() >= moves.size(), "a value slot per move");
  NewGeneration();
  team_ = team;
  nodes_ = 0;
  budget_ = std::min(node_budget, limits_.node_budget);
  MovesResult out;
  std::array<int, 16> trial{};
  // Horizon 0: a greedy rollout after each move, so that every move has a value however
  // small the budget (at most 52 moves each).
  for (size_t i = 0; i < moves.size(); ++i) {
    Round child = round;
    child.ApplyChecked(moves[i]);
    values[i] = RolloutValue(child, team, &nodes_);
  }
  for (int horizon = round.completed_tricks() + 1; horizon <= 13; ++horizon) {
    horizon_ = horizon;
    aborted_ = false;
    hit_horizon_ = false;
    for (size_t i = 0; i < moves.size() && !aborted_; ++i) {
      Round child = round;
      child.ApplyChecked(moves[i]);
      trial[i] = Search(child, -kInfinity, kInfinity);
    }
    if (aborted_) break;
    std::copy(trial.begin(), trial.begin() + static_cast<long>(moves.size()), values.begin());
    out.horizon = horizon;
    // Every line ended before the horizon: deeper searches give the same values.
    if (!hit_horizon_) {
      out.horizon = 13;
      break;
    }
  }
  out.nodes = nodes_;
  return out;
}

int Solver::Search(const Round& r, int alpha, int beta) {
  if (r.over()) return limits_.count_at_end ? EndValue(r, team_) : TerminalValue(r, team_);
  const bool boundary = r.current_trick().empty();
  if (boundary && r.completed_tricks() >= horizon_) {
    hit_horizon_ = true;
    return limits_.rollout_at_horizon ? RolloutValue(r, team_, &nodes_) : HorizonValue(r, team_);
  }
  if (++nodes_ > budget_) {
    aborted_ = true;
    return boundary ? HorizonValue(r, team_) : 0;
  }
  Entry* entry = nullptr;
  uint64_t key = 0;
  int tt_move = -1;
  if (boundary) {
    key = PositionKey(r);
    entry = &table_[key & mask_];
    if (entry->generation == generation_ && entry->key == key) {
      tt_move = entry->move;
      if (entry->horizon == horizon_) {
        const int v = entry->value;
        if (entry->bound == kExact) return v;
        if (entry->bound == kLower && v >= beta) return v;
        if (entry->bound == kUpper && v <= alpha) return v;
      }
    }
  }
  MoveList legal;
  r.LegalMoves(&legal);
  std::array<Move, 16> order;
  const int n = OrderMoves(r, legal, tt_move, &order);
  const bool maximize = rules::TeamOf(r.turn()) == team_;
  const int alpha0 = alpha, beta0 = beta;
  int best = maximize ? -kInfinity : kInfinity;
  Move best_move = order[0];
  for (int i = 0; i < n; ++i) {
    Round child = r;
    child.ApplyChecked(order[i]);
    const int v = Search(child, alpha, beta);
    if (maximize ? v > best : v < best) {
      best = v;
      best_move = order[i];
    }
    if (maximize) {
      alpha = std::max(alpha, v);
    } else {
      beta = std::min(beta, v);
    }
    if (alpha >= beta || aborted_) break;
  }
  if (entry != nullptr && !aborted_) {
    entry->key = key;
    entry->value = static_cast<int16_t>(best);
    entry->bound = best <= alpha0 ? kUpper : (best >= beta0 ? kLower : kExact);
    entry->horizon = static_cast<uint8_t>(horizon_);
    entry->move = static_cast<uint8_t>(IndexOf(legal, best_move));
    entry->generation = generation_;
  }
  return best;
}

int BruteForceValue(const Round& round, int team, bool count_at_end) {
  return MinimaxBrute(round, team, count_at_end);
}

}  // namespace courtpiece::bots
