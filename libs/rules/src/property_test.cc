// Property tests over random rounds of every game type (100,000 each).
#include <bitset>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "courtpiece/common/splitmix64.h"
#include "courtpiece/common/test_scale.h"
#include "courtpiece/rules/deal.h"
#include "courtpiece/rules/round.h"
#include "gtest/gtest.h"

namespace courtpiece::rules {
namespace {

// Every property below is checked on every one of these rounds (the sanitizer pass of
// tests/run.sh runs a tenth of them, see test_scale.h).
constexpr int kRoundsPerGame = 100000;

using Rng = ::courtpiece::SplitMix64;

Seed SeedOf(uint64_t n, uint64_t salt) {
  Seed s{};
  for (int i = 0; i < 8; ++i) s[i] = static_cast<uint8_t>(n >> (8 * i));
  for (int i = 0; i < 8; ++i) s[8 + i] = static_cast<uint8_t>(salt >> (8 * i));
  return s;
}

// Rule variants per game type, cycled over the rounds.
std::vector<Rules> Variants(GameType g) {
  std::vector<Rules> out;
  Rules base = DefaultRules(g);
  out.push_back(base);
  if (g == GameType::kClassic) {
    Rules r = base;
    r.court_bonus = CourtBonus::kKot;
    r.kot_points = 4;
    out.push_back(r);
    r.court_bonus = CourtBonus::kNone;
    r.kot_points = 3;  // kot_points belongs to kot only
    out.push_back(r);
  }
  if (base.IsPileGame()) {
    Rules r = base;
    r.pile = PileSizes::k533;
    r.ace_cannot_win_pile = true;
    out.push_back(r);
    r = base;
    r.last_card = MakeCard(3, 0);
    r.six_point = true;
    r.deal_fairness = false;
    out.push_back(r);
  }
  return out;
}

// Every move a client could send about one seat, for every seat: seat blocks of kPerSeat
// (Play and Hide of each card, two by two; the five call values, one past the last suit;
// Ask; Show). CandidateIndex() is the inverse.
constexpr int kPerSeat = 52 * 2 + 5 + 2;
constexpr int kCandidates = 4 * kPerSeat;
std::vector<Move> Candidates() {
  std::vector<Move> out;
  for (int seat = 0; seat < 4; ++seat) {
    for (int c = 0; c < 52; ++c) {
      out.push_back(Move::Play(seat, Card(c)));
      out.push_back(Move::Hide(seat, Card(c)));
    }
    for (int s = 0; s < 5; ++s) out.push_back(Move::Call(seat, s));
    out.push_back(Move::Ask(seat));
    out.push_back(Move::Show(seat));
  }
  return out;
}

// The position of `m` in Candidates(), or -1 when it is not one of them.
int CandidateIndex(const Move& m) {
  if (m.seat >= 4) return -1;
  int k = -1;
  switch (m.type) {
    case MoveType::kPlay:
      k = m.value < 52 ? 2 * m.value : -1;
      break;
    case MoveType::kHide:
      k = m.value < 52 ? 2 * m.value + 1 : -1;
      break;
    case MoveType::kCall:
      k = m.value < 5 ? 104 + m.value : -1;
      break;
    case MoveType::kAsk:
      k = m.value == 0 ? 109 : -1;
      break;
    case MoveType::kShow:
      k = m.value == 0 ? 110 : -1;
      break;
  }
  return k < 0 ? -1 : m.seat * kPerSeat + k;
}

// Check() accepts exactly the moves LegalMoves() lists, among every candidate. One pass over
// the candidates with the listed ones marked (not a scan of the list per candidate, and no
// gtest assertion per candidate that agrees): most of this test's CPU is here.
void CheckAgreement(const Round& r, const std::vector<Move>& candidates) {
  MoveList legal;
  r.LegalMoves(&legal);
  std::bitset<kCandidates> listed;
  for (const Move& l : legal) {
    const int k = CandidateIndex(l);
    ASSERT_GE(k, 0) << "a legal move outside the candidates: type " << int(l.type) << " seat "
                    << int(l.seat) << " value " << int(l.value);
    listed.set(static_cast<size_t>(k));
  }
  for (size_t k = 0; k < candidates.size(); ++k) {
    const Move& m = candidates[k];
    if ((r.Check(m) == ErrorCode::kOk) != listed[k]) {
      FAIL() << "move type " << int(m.type) << " seat " << int(m.seat) << " value " << int(m.value)
             << ": Check " << (listed[k] ? "refuses" : "accepts") << " it, LegalMoves "
             << (listed[k] ? "lists" : "does not list") << " it";
    }
  }
}

TEST(Property, CandidateIndexIsThePositionInCandidates) {
  const std::vector<Move> candidates = Candidates();
  ASSERT_EQ(candidates.size(), size_t{kCandidates});
  for (size_t k = 0; k < candidates.size(); ++k) EXPECT_EQ(CandidateIndex(candidates[k]), int(k));
  EXPECT_EQ(CandidateIndex(Move::Ask(4)), -1);
  EXPECT_EQ(CandidateIndex(Move::Call(0, 5)), -1);
  EXPECT_EQ(CandidateIndex(Move::Play(0, Card(52))), -1);
}

void CheckViews(const Round& r) {
  CardSet played;
  for (const auto& t : r.tricks()) {
    for (Card c : t.cards) played.Add(c);
  }
  for (Card c : r.current_trick()) played.Add(c);
  const bool hidden = r.rules().game == GameType::kHidden;
  for (int seat = 0; seat < 4; ++seat) {
    SeatView v = r.View(seat);
    if (r.phase() == Phase::kCall) {  // RULES.md 1.3: the first five cards alone
      ASSERT_EQ(v.hand, r.first_packet(seat));
      for (int s = 0; s < 4; ++s) ASSERT_EQ(v.hand_size[s], 5);
    } else {
      ASSERT_EQ(v.hand, r.hand(seat));
    }
    // Cards this seat may see: its hand, played cards that are face up, and (caller only)
    // its face-down card and throws.
    CardSet may = v.hand | (played & ~r.face_down_throws());
    if (seat == r.caller()) {
      may = may | r.face_down_throws();
      if (r.hidden_card() >= 0) may.Add(Card(r.hidden_card()));
    }
    auto check_trick = [&](const TrickRecord& t, int n) {
      for (int i = 0; i < n; ++i) {
        if (t.cards[i] == kHiddenCard) continue;
        ASSERT_TRUE(may.Has(t.cards[i])) << "seat " << seat << " sees " << CardName(t.cards[i]);
      }
    };
    for (int i = 0; i < v.num_tricks; ++i) check_trick(v.tricks[i], 4);
    check_trick(v.current, v.current_size);
    if (v.face_down_card >= 0) {
      ASSERT_TRUE(may.Has(Card(v.face_down_card)));
    }
    if (hidden && seat != r.caller() && !r.trump_shown()) {
      ASSERT_EQ(v.trump, -1);
    }
    if (hidden && seat != r.caller()) {
      ASSERT_EQ(v.face_down_card, -1);
    }
    ASSERT_EQ(v.legal.size > 0, seat == r.turn());
  }
}

void CheckEndState(const Round& r) {
  ASSERT_TRUE(r.over());
  CardSet played;
  int n = 0;
  for (const auto& t : r.tricks()) {
    for (Card c : t.cards) {
      ASSERT_FALSE(played.Has(c));
      played.Add(c);
      ++n;
    }
  }
  ASSERT_EQ(n, 4 * r.completed_tricks());
  const int tricks = r.completed_tricks();
  const auto& res = r.result();
  const auto won = r.tricks_won();
  ASSERT_EQ(won[0] + won[1], tricks);
  CardSet left;
  for (int s = 0; s < 4; ++s) left = left | r.hand(s);
  ASSERT_TRUE((left & played).empty());
  if (r.rules().game == GameType::kHidden && tricks == 13) {
    ASSERT_TRUE(r.trump_shown());
  }
  switch (r.rules().game) {
    case GameType::kClassic:
      ASSERT_EQ(res.count, won);
      ASSERT_GE(res.count[res.winner], 7);
      if (res.kind == ResultKind::kKot) {
        ASSERT_EQ(res.count[res.winner], 13);
      }
      if (res.kind == ResultKind::kCourt) {
        ASSERT_EQ(res.count[1 - res.winner], 0);
      }
      break;
    case GameType::kStack: {
      int paid = 0;
      for (const auto& p : r.payouts()) paid += p.points;
      ASSERT_EQ(paid, res.count[0] + res.count[1]);
      ASSERT_EQ(paid + r.stack(), tricks);
      if (tricks == 13) {
        ASSERT_EQ(paid, 13);
      }
      if (tricks < 13) {
        ASSERT_GE(res.count[res.winner], r.rules().target);
      }
      ASSERT_EQ(res.points, res.count[res.winner]);
      break;
    }
    default: {
      int picked = 0;
      for (const auto& p : r.pickups()) picked += p.count;
      ASSERT_EQ(picked, res.count[0] + res.count[1]);
      ASSERT_EQ(picked + r.pile(), tricks);
      ASSERT_GE(res.count[res.winner], 7);
      if (tricks < 13) {
        ASSERT_GE(res.count[1 - res.winner], 1);
      }
      if (res.kind != ResultKind::kNormal) {
        ASSERT_EQ(res.count[res.winner], 13);
        ASSERT_EQ(tricks, 13);
      }
      if (res.count[res.winner] == 13) {
        ASSERT_NE(res.kind, ResultKind::kNormal);
      }
      break;
    }
  }
}

// Rounds [first, last) of game type g; round i is the same whichever shard plays it.
void RunProperty(GameType g, uint64_t salt, int first, int last) {
  const std::vector<Rules> variants = Variants(g);
  const std::vector<Move> candidates = Candidates();
  std::vector<Move> moves;
  for (int i = first; i < last; ++i) {
    const Rules& rules = variants[i % variants.size()];
    const Seed seed = SeedOf(i, salt);
    const int dealer = i % 4;
    Round r = Round::FromSeed(rules, dealer, seed);
    Rng rng{uint64_t(i) * 7919 + salt};
    const bool deep = true;
    const bool views = true;
    const int snapshot_at = static_cast<int>(rng.Below(60));
    std::string snapshot;
    size_t snapshot_moves = 0;
    moves.clear();
    // PlayOutRandom (both paths) from here with the same generator: the same moves.
    Round fast = r, portable = r;
    Rng fast_rng = rng, portable_rng = rng;
    MoveList legal;
    while (!r.over()) {
      if (deep) CheckAgreement(r, candidates);
      if (views) CheckViews(r);
      if (static_cast<int>(moves.size()) == snapshot_at) {
        snapshot = r.Serialize();
        snapshot_moves = moves.size();
      }
      r.LegalMoves(&legal);
      ASSERT_GT(legal.size, 0);
      const Move m = legal[rng.Below(legal.size)];
      ASSERT_EQ(r.Check(m), ErrorCode::kOk);
      r.ApplyChecked(m);
      moves.push_back(m);
      ASSERT_LE(moves.size(), size_t{Round::kMaxMoves});
    }
    if (views) CheckViews(r);
    ASSERT_NO_FATAL_FAILURE(CheckEndState(r));
    std::array<Move, Round::kMaxMoves> fast_moves, portable_moves;
    ASSERT_EQ(fast.PlayOutRandom(fast_rng, fast_moves.data()), static_cast<int>(moves.size()));
    ASSERT_EQ(portable.PlayOutRandomPortable(portable_rng, portable_moves.data()),
              static_cast<int>(moves.size()));
    for (size_t k = 0; k < moves.size(); ++k) {
      ASSERT_EQ(fast_moves[k], moves[k]) << "move " << k;
      ASSERT_EQ(portable_moves[k], moves[k]) << "move " << k;
    }
    ASSERT_EQ(fast.Serialize(), r.Serialize());
    ASSERT_EQ(portable.Serialize(), r.Serialize());
    ASSERT_EQ(fast.PlayOutRandom(fast_rng), 0);  // over: nothing more to play
    if (views && rules.HasCall()) {              // the same deal given whole: same call-phase views
      Round::Hands hands{};
      for (int s = 0; s < 4; ++s) {
        int k = 0;
        for (Card c : r.first_packet(s)) hands[s][k++] = c;
        for (Card c : r.dealt(s) & ~r.first_packet(s)) hands[s][k++] = c;
      }
      Round whole = *Round::FromHands(rules, dealer, hands);
      CheckViews(whole);
    }
    {  // same seed, same moves: same round
      Round again = Round::FromSeed(rules, dealer, seed);
      for (const Move& m : moves) ASSERT_TRUE(again.Apply(m).ok());
      ASSERT_EQ(again.Serialize(), r.Serialize());
    }
    if (!snapshot.empty()) {  // serialise, restore, continue: same events
      auto restored = Round::Restore(snapshot);
      ASSERT_TRUE(restored.ok()) << restored.status();
      ASSERT_EQ(restored->Serialize(), snapshot);
      for (size_t k = snapshot_moves; k < moves.size(); ++k) {
        ASSERT_TRUE(restored->Apply(moves[k]).ok());
      }
      ASSERT_EQ(restored->Serialize(), r.Serialize());
    }
  }
}

// The rounds of each game type are split into kShards contiguous ranges, one test each
// (Shards/PropertyRounds.Play/<game>_<k>), so that ctest runs them side by side: CMakeLists.txt
// registers one ctest entry per test, from the same COURTPIECE_PROPERTY_SHARDS. The union
// of the ranges is every round 0..rounds-1 of every game type, with the same seeds
// (SeedOf(i, salt)), dealers and rule variants as one test would play.
#ifndef COURTPIECE_PROPERTY_SHARDS
#error "COURTPIECE_PROPERTY_SHARDS is set by libs/rules/CMakeLists.txt"
#endif
constexpr int kShards = COURTPIECE_PROPERTY_SHARDS;

// Shard k of n over `rounds`: [k * rounds / n, (k + 1) * rounds / n).
std::pair<int, int> ShardRange(int rounds, int k, int n) {
  return {static_cast<int>(int64_t{rounds} * k / n),
          static_cast<int>(int64_t{rounds} * (k + 1) / n)};
}

TEST(Property, ShardsCoverEveryRoundOnce) {
  for (int rounds : {kRoundsPerGame, kRoundsPerGame / 10, 7, 1}) {
    int next = 0;
    for (int k = 0; k < kShards; ++k) {
      const auto [first, last] = ShardRange(rounds, k, kShards);
      ASSERT_EQ(first, next);
      ASSERT_LE(first, last);
      next = last;
    }
    ASSERT_EQ(next, rounds);
  }
}

struct GameSalt {
  GameType game;
  uint64_t salt;  // the salt each game type's seeds always had
};
constexpr GameSalt kGames[] = {{GameType::kClassic, 1},
                               {GameType::kPiles, 2},
                               {GameType::kHidden, 3},
                               {GameType::kKaat, 4},
                               {GameType::kStack, 5}};

class PropertyRounds : public ::testing::TestWithParam<std::tuple<GameSalt, int>> {};

TEST_P(PropertyRounds, Play) {
  const auto [gs, shard] = GetParam();
  const auto [first, last] = ShardRange(ScaledIterations(kRoundsPerGame), shard, kShards);
  RunProperty(gs.game, gs.salt, first, last);
}

INSTANTIATE_TEST_SUITE_P(Shards, PropertyRounds,
                         ::testing::Combine(::testing::ValuesIn(kGames),
                                            ::testing::Range(0, kShards)),
                         [](const ::testing::TestParamInfo<PropertyRounds::ParamType>& p) {
                           return std::string(GameTypeName(std::get<0>(p.param).game)) + "_" +
                                  std::to_string(std::get<1>(p.param));
                         });

TEST(Property, RestoreRejectsBadBytesWithoutCrashing) {
  Rules rules = DefaultRules(GameType::kHidden);
  Round r = Round::FromSeed(rules, 0, SeedOf(5, 5));
  Rng rng{5};
  MoveList legal;
  for (int k = 0; k < 20; ++k) {
    r.LegalMoves(&legal);
    r.ApplyChecked(legal[rng.Below(legal.size)]);
  }
  const std::string good = r.Serialize();
  EXPECT_TRUE(Round::Restore(good).ok());
  EXPECT_FALSE(Round::Restore("").ok());
  EXPECT_FALSE(Round::Restore(good.substr(0, good.size() - 1)).ok());
  EXPECT_FALSE(Round::Restore(good + "x").ok());
  std::string bad_version = good;
  bad_version[0] = 9;
  EXPECT_EQ(GetErrorCode(Round::Restore(bad_version).status()), ErrorCode::kBadInput);
  int rejected = 0;
  for (int k = 0; k < 20000; ++k) {
    std::string b = good;
    b[rng.Below(b.size())] = static_cast<char>(rng.Below(256));
    auto x = Round::Restore(b);
    if (!x.ok()) {
      ++rejected;
      continue;
    }
    // Whatever is accepted must play on safely.
    while (!x->over()) {
      x->LegalMoves(&legal);
      ASSERT_GT(legal.size, 0);
      x->ApplyChecked(legal[rng.Below(legal.size)]);
    }
  }
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace courtpiece::rules
