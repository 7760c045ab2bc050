#include "courtpiece/rules/round.h"

#include <algorithm>
#include <cassert>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "courtpiece/common/check.h"

namespace courtpiece::rules {
namespace {

constexpr absl::string_view kSuitWords[4] = {"clubs", "diamonds", "hearts", "spades"};

std::string Describe(ErrorCode code, const Move& m, const Round& r) {
  const int seat = m.seat;
  switch (code) {
    case ErrorCode::kRoundOver:
      return "the round is over";
    case ErrorCode::kNotYourTurn:
      if (r.phase() == Phase::kCall) {
        return absl::StrCat("seat ", r.caller(), " must call trump first, not seat ", seat);
      }
      return absl::StrCat("it is seat ", r.turn(), "'s turn, not seat ", seat);
    case ErrorCode::kBadCall:
      if (r.phase() != Phase::kCall) return "no call or hide is expected now";
      if (m.type == MoveType::kPlay || m.type == MoveType::kAsk || m.type == MoveType::kShow) {
        return absl::StrCat("seat ", seat, " must call trump first");
      }
      if (seat != r.caller()) return absl::StrCat("seat ", seat, " is not the caller");
      if (r.rules().game == GameType::kKaat) return "kaat has no call";
      if (m.type == MoveType::kCall && r.rules().game == GameType::kHidden) {
        return "hidden expects a hide, not a call";
      }
      if (m.type == MoveType::kHide && r.rules().game != GameType::kHidden) {
        return "only hidden has a hide";
      }
      if (m.type == MoveType::kCall) return "not a suit";
      return absl::StrCat(m.value < kNumCards ? CardName(m.value) : "??",
                          " is not among the caller's first five cards");
    case ErrorCode::kCardNotInHand:
      return absl::StrCat("seat ", seat, " does not hold ",
                          m.value < kNumCards ? CardName(m.value) : "??");
    case ErrorCode::kMustFollowSuit: {
      int led = SuitOf(r.current_trick()[0]);
      return absl::StrCat("seat ", seat, " holds ", kSuitWords[led]);
    }
    case ErrorCode::kMustPlayTrump:
      return absl::StrCat("seat ", seat, " saw the trump and holds ", kSuitWords[r.trump()]);
    case ErrorCode::kCannotAsk:
      if (r.rules().game != GameType::kHidden) return "only hidden has an ask";
      if (r.trump_shown()) return "the trump is already shown";
      if (seat == r.caller()) return "the caller shows, never asks";
      if (r.current_trick().empty()) return "the leader cannot ask";
      return absl::StrCat("seat ", seat, " can follow suit");
    case ErrorCode::kCannotShow:
      if (r.rules().game != GameType::kHidden) return "only hidden has a show";
      if (r.trump_shown()) return "the trump is already shown";
      if (seat != r.caller()) return "only the caller shows the trump";
      if (r.current_trick().empty()) return "never on the first lead of the round";
      return absl::StrCat("seat ", seat, " can follow suit");
    default:
      return std::string(ErrorCodeName(code));
  }
}

}  // namespace

absl::string_view ResultKindName(ResultKind kind) {
  switch (kind) {
    case ResultKind::kNormal:
      return "normal";
    case ResultKind::kCourt:
      return "court";
    case ResultKind::kGoonCourt:
      return "goon_court";
    case ResultKind::kKot:
      return "kot";
    case ResultKind::kFourPoint:
      return "four_point";
    case ResultKind::kSixPoint:
      return "six_point";
    case ResultKind::kDraw:
      return "draw";
  }
  return "?";
}

absl::StatusOr<Round> Round::FromHands(const Rules& rules, int dealer, const Hands& hands) {
  if (dealer < 0 || dealer > 3) return MakeError(ErrorCode::kBadInput, "dealer must be 0..3");
  Round r;
  r.rules_ = rules;
  r.dealer_ = static_cast<uint8_t>(dealer);
  r.caller_ = static_cast<uint8_t>((dealer + 1) % 4);
  // Fast path: 52 cards < 52 whose bits make the whole deck are a valid deal.
  uint64_t all_bits = 0;
  bool bad_card = false;
  for (int s = 0; s < 4; ++s) {
    uint64_t h = 0, f = 0;
    for (int i = 0; i < 13; ++i) {
      const Card c = hands[s][i];
      bad_card |= c >= kNumCards;
      h |= uint64_t{1} << (c & 63);
      if (i < 5) f |= uint64_t{1} << (c & 63);
    }
    all_bits |= h;
    r.hand_[s] = r.dealt_[s] = CardSet(h);
    r.first_five_[s] = CardSet(f);
  }
  if (!bad_card && all_bits == CardSet::Deck().bits()) {
    r.turn_ = r.caller_;
    if (!rules.HasCall()) r.StartPlay();
    return r;
  }
  // Not a deal: find the first fault, in deal order, for the message.
  CardSet all;
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < 13; ++i) {
      Card c = hands[s][i];
      if (c >= kNumCards) return MakeError(ErrorCode::kBadDeal, "not a card");
      if (all.Has(c)) {
        return MakeError(ErrorCode::kBadDeal, absl::StrCat(CardName(c), " is dealt twice"));
      }
      all.Add(c);
    }
  }
  return MakeError(ErrorCode::kBadDeal, "not a deal");  // unreachable: 52 distinct cards
}

Round Round::FromSeed(const Rules& rules, int dealer, const Seed& seed) {
  COURTPIECE_CHECK(dealer >= 0 && dealer < 4, "the dealer is a seat 0..3");
  Round r;
  r.rules_ = rules;
  r.dealer_ = static_cast<uint8_t>(dealer);
  r.caller_ = static_cast<uint8_t>((dealer + 1) % 4);
  r.seeded_ = true;
  r.seed_ = seed;
  r.turn_ = r.caller_;
  ShuffleFromSeedInto(seed, rules.deal_fairness, &r.shuffle_);
  // The first packets come from the shuffle, whatever the trump will be.
  for (int k = 0; k < 4; ++k) {
    const int s = (r.caller_ + k) % 4;
    r.first_five_[s] = CardSet(r.shuffle_.first[k]);
    r.hand_[s] = r.dealt_[s] = r.first_five_[s];
  }
  if (!rules.HasCall()) {
    r.DealRest();
    r.StartPlay();
  }
  return r;
}

// The rest of a seeded deal once the trump is known (none in kaat): the hands of
// DealFromShuffle, as card sets. The first packets (first_five_) are already dealt.
void Round::DealRest() {
  const DealSets d = DealSetsFromShuffle(shuffle_, trump_);
  for (int k = 0; k < 4; ++k) {
    const int s = (caller_ + k) % 4;
    hand_[s] = dealt_[s] = CardSet(d.hands[k]);
  }
}

void Round::StartPlay() {
  phase_ = Phase::kPlay;
  turn_ = caller_;
}

[[gnu::always_inline]] inline bool Round::IsFaceDownThrow(int seat, Card c) const {
  return rules_.game == GameType::kHidden && !shown_ && seat == caller_ && cur_n_ > 0 &&
         SuitOf(c) != SuitOf(cur().cards[0]);
}

ErrorCode Round::Check(const Move& m) const {
  if (phase_ == Phase::kOver) return ErrorCode::kRoundOver;
  if (m.seat > 3) return ErrorCode::kNotYourTurn;
  const bool hidden = rules_.game == GameType::kHidden;
  if (m.type == MoveType::kCall) {
    if (!rules_.HasCall() || hidden || phase_ != Phase::kCall || m.seat != caller_ || m.value > 3) {
      return ErrorCode::kBadCall;
    }
    return ErrorCode::kOk;
  }
  if (m.type == MoveType::kHide) {
    if (!hidden || phase_ != Phase::kCall || m.seat != caller_ || m.value >= kNumCards ||
        !first_five_[caller_].Has(m.value)) {
      return ErrorCode::kBadCall;
    }
    return ErrorCode::kOk;
  }
  if (phase_ == Phase::kCall) {
    return m.seat == caller_ ? ErrorCode::kBadCall : ErrorCode::kNotYourTurn;
  }
  if (m.seat != turn_) return ErrorCode::kNotYourTurn;
  const CardSet h = hand_[m.seat];
  const bool leading = cur_n_ == 0;
  const int led = leading ? -1 : SuitOf(cur().cards[0]);
  const bool can_follow = !leading && h.HasSuit(led);
  switch (m.type) {
    case MoveType::kAsk:
      if (!hidden || shown_ || m.seat == caller_ || leading || can_follow) {
        return ErrorCode::kCannotAsk;
      }
      return ErrorCode::kOk;
    case MoveType::kShow:
      if (!hidden || shown_ || m.seat != caller_) return ErrorCode::kCannotShow;
      if (leading) return num_tricks_ > 0 ? ErrorCode::kOk : ErrorCode::kCannotShow;
      return can_follow ? ErrorCode::kCannotShow : ErrorCode::kOk;
    default:
      break;
  }
  const Card c = m.value;
  if (c >= kNumCards) return ErrorCode::kCardNotInHand;
  if (CallerAutoShow(m.seat) && c == hidden_card_) return ErrorCode::kOk;
  if (!h.Has(c)) return ErrorCode::kCardNotInHand;
  if (can_follow && SuitOf(c) != led) return ErrorCode::kMustFollowSuit;
  if (must_trump_ && SuitOf(c) != trump_ && h.HasSuit(trump_)) return ErrorCode::kMustPlayTrump;
  return ErrorCode::kOk;
}

absl::Status Round::Apply(const Move& m) {
  ErrorCode code = Check(m);
  if (code != ErrorCode::kOk) return MakeError(code, Describe(code, m, *this));
  ApplyChecked(m);
  return absl::OkStatus();
}

void Round::ApplyChecked(const Move& m) {
  assert(Check(m) == ErrorCode::kOk);  // hot path: debug builds and the sanitizer pass
  switch (m.type) {
    case MoveType::kCall:
      trump_ = static_cast<int8_t>(m.value);
      if (seeded_) DealRest();
      StartPlay();
      return;
    case MoveType::kHide:
      hidden_card_ = static_cast<int8_t>(m.value);
      trump_ = static_cast<int8_t>(SuitOf(m.value));
      if (seeded_) DealRest();
      hand_[caller_].Remove(m.value);
      StartPlay();
      return;
    case MoveType::kAsk:
    case MoveType::kShow:
      DoShow(m.seat);
      return;
    case MoveType::kPlay:
      PlayDispatch(m.seat, m.value);
      return;
  }
}

void Round::PlayDispatch(int seat, Card c) {
  switch (rules_.game) {
    case GameType::kClassic:
      return PlayCard<GameType::kClassic>(seat, c);
    case GameType::kPiles:
      return PlayCard<GameType::kPiles>(seat, c);
    case GameType::kHidden:
      if (CallerAutoShow(seat) && c == hidden_card_) DoShow(seat);
      return PlayCard<GameType::kHidden>(seat, c);
    case GameType::kKaat:
      return PlayCard<GameType::kKaat>(seat, c);
    case GameType::kStack:
      return PlayCard<GameType::kStack>(seat, c);
  }
}

void Round::DoShow(int seat) {
  shown_ = true;
  shown_event_ = {static_cast<int8_t>(num_tricks_ + 1), static_cast<int8_t>(seat)};
  hand_[caller_].Add(static_cast<Card>(hidden_card_));
  prev_winner_ = -1;  // two fresh wins are needed; this trick counts as the first
  must_trump_ = cur_n_ > 0;
}

// The play path is instantiated per game type (PlayDispatch picks one per move), so the
// game-type tests below are compile-time constants.
// Kaat: the first card not of the led suit sets the trump. Then whether `c` is of the
// trump suit (never while there is none: trump_ -1).
template <GameType G>
[[gnu::always_inline]] inline bool Round::SetsOrIsTrump(int seat, Card c, int led_suit) {
  if constexpr (G == GameType::kKaat) {
    if (trump_ < 0 && SuitOf(c) != led_suit) {
      trump_ = static_cast<int8_t>(SuitOf(c));
      set_event_ = {static_cast<int8_t>(num_tricks_ + 1), static_cast<int8_t>(seat)};
    }
  }
  return SuitOf(c) == trump_;
}

template <GameType G>
[[gnu::always_inline]] inline void Round::PlayCard(int seat, Card c) {
  constexpr bool kHiddenGame = G == GameType::kHidden;
  const int n = cur_n_;
  const int led = n == 0 ? SuitOf(c) : SuitOf(cur().cards[0]);
  if (n == 0) {
    cur().leader = static_cast<uint8_t>(seat);
    cur().face_down = 0;
    cur().trump = 0;
  }
  const uint8_t bit = static_cast<uint8_t>(1u << n);
  const bool trump_suit = SetsOrIsTrump<G>(seat, c, led);
  bool face_down = false;
  if constexpr (kHiddenGame) {
    face_down = IsFaceDownThrow(seat, c);
    if (face_down) {
      cur().face_down |= bit;
      face_down_.Add(c);
    }
  }
  const bool powered = trump_suit && !face_down && (!kHiddenGame || shown_);
  hand_[seat].Remove(c);
  cur().cards[n] = c;
  cur().trump = static_cast<uint8_t>(cur().trump | (powered ? bit : 0));
  cur_n_ = static_cast<uint8_t>(n + 1);
  must_trump_ = false;
  turn_ = static_cast<uint8_t>((seat + 1) & 3);
  if (n == 3) ResolveTrick<G>();
}

int Round::Strength(Card c, int led, bool powered, bool face_down, bool low_ace) {
  if (face_down) return 0;
  const int r = low_ace ? 0 : RankOf(c) + 1;
  if (SuitOf(c) == led) return 100 + r;
  if (powered) return 200 + r;
  return 0;
}

template <GameType G>
[[gnu::always_inline]] inline int Round::TrickWinner() const {
  const int led = SuitOf(cur().cards[0]);
  // Branch-free max over (strength * 4 + position): strengths never tie among winners.
  // Strength as Strength(): 0 for a face-down card or one neither led nor trump-powered,
  // else 100 (led suit) or 200 (powered) + rank + 1 (0 for a marked seat's ace in stack).
  const int marked_pos =
      (G == GameType::kStack && marker_ >= 0) ? (marker_ - cur().leader) & 3 : -1;
  int best = 0;
  for (int i = 0; i < 4; ++i) {
    const Card c = cur().cards[i];
    const int suit = SuitOf(c);
    const int rank = c - kNumRanks * suit;
    const int r = (i == marked_pos && rank == kAceRank) ? 0 : rank + 1;
    int s = suit == led ? 100 + r : (((cur().trump >> i) & 1) ? 200 + r : 0);
    if (G == GameType::kHidden && ((cur().face_down >> i) & 1)) s = 0;
    best = std::max(best, s * 4 + i);
  }
  return (cur().leader + (best & 3)) & 3;
}

template <GameType G>
[[gnu::always_inline]] inline void Round::ResolveTrick() {
  const int w = TrickWinner<G>();
  cur().winner = static_cast<uint8_t>(w);
  ++num_tricks_;  // the trick played into tricks_[num_tricks_] is now a finished one
  cur_n_ = 0;
  ++won_[TeamOf(w)];
  if constexpr (G == GameType::kPiles || G == GameType::kHidden || G == GameType::kKaat) {
    AfterPileTrick<G>(w);
  }
  if constexpr (G == GameType::kStack) AfterStackTrick(w);
  turn_ = static_cast<uint8_t>(w);
  CheckEnd<G>();
}

// Branch-free: whether a pile is taken is a coin toss in random play, so it is computed
// with bitwise ands and applied with conditional moves (the pickup slot is always written,
// and only counted when taken).
template <GameType G>
[[gnu::always_inline]] inline void Round::AfterPileTrick(int w) {
  const int pile = pile_ + 1;
  const int k = num_tricks_;
  const TrickRecord& last = tricks_[k - 1];
  const Card win_card = last.cards[(w - last.leader) & 3];
  const int min = num_pickups_ == 0 ? rules_.FirstPileMin() : rules_.LaterPileMin();
  bool take = (prev_winner_ == w) & (pile >= min) &
              !(rules_.ace_cannot_win_pile & (RankOf(win_card) == kAceRank));
  if constexpr (G == GameType::kHidden) take &= shown_;
  take |= k == 13;
  prev_winner_ = static_cast<int8_t>(w);
  // At most one pickup per trick, so slot num_pickups_ (< num_tricks_ <= 13) exists.
  pickups_[num_pickups_] = {static_cast<uint8_t>(k), static_cast<uint8_t>(w),
                            static_cast<uint8_t>(pile)};
  num_pickups_ = static_cast<uint8_t>(num_pickups_ + take);
  count_[TeamOf(w)] = static_cast<uint8_t>(count_[TeamOf(w)] + (take ? pile : 0));
  pile_ = static_cast<uint8_t>(take ? 0 : pile);
}

[[gnu::always_inline]] inline void Round::AfterStackTrick(int w) {
  ++stack_;
  const int k = num_tricks_;
  const int team = TeamOf(w);
  if (k == 13 || marker_ == w) {
    payouts_[num_payouts_++] = {static_cast<uint8_t>(k), static_cast<uint8_t>(team), stack_};
    count_[team] = static_cast<uint8_t>(count_[team] + stack_);
    stack_ = 0;
    marker_ = -1;
  } else if (k != 1) {
    marker_ = static_cast<int8_t>(w);
  }
}

void Round::Finish(int winner, ResultKind kind, int points) {
  phase_ = Phase::kOver;
  result_.winner = winner;
  result_.kind = kind;
  result_.points = points;
  if (rules_.game == GameType::kClassic) {
    result_.count = {won_[0], won_[1]};
  } else {
    result_.count = {count_[0], count_[1]};
  }
}

template <GameType G>
[[gnu::always_inline]] inline void Round::CheckEnd() {
  switch (G) {
    case GameType::kClassic: {
      const int hi = won_[0] > won_[1] ? 0 : 1;
      const int a = won_[hi], b = won_[1 - hi];
      if (rules_.court_bonus == CourtBonus::kKot) {
        if (a >= 7 && b >= 1)
          Finish(hi, ResultKind::kNormal, 1);
        else if (a == 13)
          Finish(hi, ResultKind::kKot, rules_.kot_points);
      } else if (a >= 7) {
        if (b == 0 && rules_.court_bonus == CourtBonus::kCourt) {
          Finish(hi, ResultKind::kCourt, 2);
        } else {
          Finish(hi, ResultKind::kNormal, 1);
        }
      }
      return;
    }
    case GameType::kStack: {
      for (int team = 0; team < 2; ++team) {
        if (count_[team] >= rules_.target) {
          Finish(team, ResultKind::kNormal, count_[team]);
          return;
        }
      }
      if (num_tricks_ == 13) {
        if (count_[0] == count_[1]) {
          Finish(-1, ResultKind::kDraw, -1);
        } else {
          const int hi = count_[0] > count_[1] ? 0 : 1;
          Finish(hi, ResultKind::kNormal, count_[hi]);
        }
      }
      return;
    }
    default: {
      // Branchless on purpose (the engine's hot path): int operands, so that clang's
      // -Wbitwise-instead-of-logical has nothing to say.
      const int a = int{count_[0] >= 7} & int{count_[1] >= 1};
      const int b = int{count_[1] >= 7} & int{count_[0] >= 1};
      if (a | b) [[unlikely]] {
        Finish(a ? 0 : 1, ResultKind::kNormal, 1);
      } else if (num_tricks_ == 13) [[unlikely]] {
        FinishPileGame();
      }
      return;
    }
  }
}

void Round::FinishPileGame() {
  const int w = count_[0] == 13 ? 0 : 1;
  // A kaat round that reaches its 13th trick has always set a trump (RULES.md 2.4): if
  // every card followed the led suit, each trick would hold four cards of one suit, and
  // 13 tricks would split every suit's 13 cards into groups of four, which cannot be.
  // Play sets it at the first card off the led suit, and Restore refuses a kaat state
  // without a trump whose tricks hold such a card; so this is a programmer error.
  const int judged = court_team();
  COURTPIECE_CHECK(judged >= 0, "a kaat round of 13 tricks has set a trump");
  ResultKind kind = w == judged ? ResultKind::kCourt : ResultKind::kGoonCourt;
  int points = w == judged ? 2 : 3;
  const TrickRecord& last = tricks_[12];
  const int wi = (last.winner - last.leader + 4) % 4;
  if (rules_.last_card >= 0 && last.cards[wi] == rules_.last_card) {
    kind = ResultKind::kFourPoint;
    points = 4;
    const int pi = (wi + 2) % 4;
    const Card pc = last.cards[pi];
    if (rules_.six_point && RankOf(pc) == RankOf(static_cast<Card>(rules_.last_card)) &&
        SuitOf(pc) != SuitOf(static_cast<Card>(rules_.last_card))) {
      const int led = SuitOf(last.cards[0]);
      auto strength = [&](int i) {
        return Strength(last.cards[i], led, (last.trump >> i) & 1, (last.face_down >> i) & 1,
                        false);
      };
      const int ps = strength(pi);
      if (strength((wi + 1) % 4) <= ps && strength((wi + 3) % 4) <= ps) {
        kind = ResultKind::kSixPoint;
        points = 6;
      }
    }
  }
  Finish(w, kind, points);
}

int Round::NextCaller() const {
  if (rules_.game == GameType::kStack) return -1;
  const int ct = TeamOf(caller_);
  if (result_.winner == ct) {
    if (rules_.IsPileGame() && count_[ct] == 13) return (caller_ + 2) % 4;
    return caller_;
  }
  return (caller_ + 1) % 4;
}

bool Round::CanAsk() const {
  if (phase_ != Phase::kPlay || rules_.game != GameType::kHidden || shown_) return false;
  return turn_ != caller_ && cur_n_ > 0 && !hand_[turn_].HasSuit(SuitOf(cur().cards[0]));
}

bool Round::CanShow() const {
  if (phase_ != Phase::kPlay || rules_.game != GameType::kHidden || shown_) return false;
  if (turn_ != caller_) return false;
  if (cur_n_ == 0) return num_tricks_ > 0;
  return !hand_[turn_].HasSuit(SuitOf(cur().cards[0]));
}

void Round::LegalMoves(MoveList* out) const {
  if (phase_ == Phase::kCall) {
    out->size = 0;
    if (rules_.game == GameType::kHidden) {
      for (Card c : first_five_[caller_]) out->Push(Move::Hide(caller_, c));
    } else {
      for (int s = 0; s < 4; ++s) out->Push(Move::Call(caller_, s));
    }
    return;
  }
  int n = 0;
  Move* moves = out->moves.data();
  const uint8_t seat = turn_;
  for (Card c : PlayableCards()) moves[n++] = Move{MoveType::kPlay, seat, c};
  if (rules_.game == GameType::kHidden) {
    if (CanAsk()) moves[n++] = Move::Ask(seat);
    if (CanShow()) moves[n++] = Move::Show(seat);
  }
  out->size = n;
}

namespace {

// How a playout counts the legal cards and picks the k-th lowest: portable code, or the
// POPCNT/BMI2 instructions (pdep selects the k-th set bit) on CPUs that have them.
struct PortableBits {
  static int Count(uint64_t b) { return CardSet(b).size(); }
  static Card Nth(uint64_t b, int k) { return CardSet(b).Nth(k); }
};
#if defined(__x86_64__)
struct Bmi2Bits {
  [[gnu::target("popcnt,bmi2")]] static int Count(uint64_t b) { return __builtin_popcountll(b); }
  [[gnu::target("popcnt,bmi2")]] static Card Nth(uint64_t b, int k) {
    return static_cast<Card>(__builtin_ctzll(_pdep_u64(uint64_t{1} << k, b)));
  }
};
#endif

}  // namespace

template <GameType G, class Bits>
[[gnu::always_inline]] inline int Round::PlayOutLoop(SplitMix64& rng, Move* moves) {
  int n = 0;
  auto record = [&](Move m) {
    if (moves != nullptr) moves[n] = m;
    ++n;
  };
  if (phase_ == Phase::kCall) {
    MoveList legal;
    LegalMoves(&legal);
    const Move m = legal[rng.Below(legal.size)];
    ApplyChecked(m);
    record(m);
  }
  if constexpr (G != GameType::kHidden) {
    // No ask, show or face-down throw: whole tricks at a time, with the trick's state in
    // locals (a trick already begun, e.g. in a restored round, finishes move by move).
    while (phase_ != Phase::kOver && cur_n_ == 0) {
      const int leader = turn_;
      TrickRecord& t = cur();
      t.leader = static_cast<uint8_t>(leader);
      t.face_down = 0;
      uint64_t led = CardSet::Deck().bits();
      int led_suit = -1;
      uint8_t powered = 0;
      for (int i = 0; i < 4; ++i) {
        const int seat = (leader + i) & 3;
        const uint64_t h = hand_[seat].bits();
        const uint64_t follow = h & led;
        const uint64_t playable = follow != 0 ? follow : h;
        const Card c = Bits::Nth(playable, rng.Below(Bits::Count(playable)));
        // Check() reads the members this loop keeps in locals, so the rule is asserted here:
        // a card of the hand, of the led suit when the hand has one.
        assert(((h >> c) & 1) && (follow == 0 || ((follow >> c) & 1)));
        record(Move::Play(seat, c));
        hand_[seat] = CardSet(h & ~(uint64_t{1} << c));
        t.cards[i] = c;
        if (i == 0) {
          led_suit = SuitOf(c);
          led = CardSet::Suit(led_suit).bits();
        }
        const unsigned trump_suit = SetsOrIsTrump<G>(seat, c, led_suit) ? 1u : 0u;
        powered = static_cast<uint8_t>(powered | (trump_suit << i));
      }
      t.trump = powered;
      cur_n_ = 4;
      must_trump_ = false;
      ResolveTrick<G>();
    }
  }
  while (phase_ != Phase::kOver) {
    const int seat = turn_;
    uint64_t playable;
    bool ask = false, show = false;
    if constexpr (G == GameType::kHidden) {
      playable = PlayableCards().bits();
      ask = CanAsk();
      show = CanShow();
    } else {
      playable = PlayableInPlay();
    }
    const int count = Bits::Count(playable);
    const int k = rng.Below(count + ask + show);
    if (k < count) [[likely]] {
      const Card c = Bits::Nth(playable, k);
      assert(Check(Move::Play(seat, c)) == ErrorCode::kOk);
      record(Move::Play(seat, c));
      if constexpr (G == GameType::kHidden) {
        if (CallerAutoShow(seat) && c == hidden_card_) DoShow(seat);
      }
      PlayCard<G>(seat, c);
    } else {  // ask and show never both apply: one is the caller's, one the others'
      record(ask ? Move::Ask(seat) : Move::Show(seat));
      DoShow(seat);
    }
  }
  return n;
}

template <class Bits>
[[gnu::always_inline]] inline int Round::PlayOutByGame(SplitMix64& rng, Move* moves) {
  switch (rules_.game) {
    case GameType::kClassic:
      return PlayOutLoop<GameType::kClassic, Bits>(rng, moves);
    case GameType::kPiles:
      return PlayOutLoop<GameType::kPiles, Bits>(rng, moves);
    case GameType::kHidden:
      return PlayOutLoop<GameType::kHidden, Bits>(rng, moves);
    case GameType::kKaat:
      return PlayOutLoop<GameType::kKaat, Bits>(rng, moves);
    case GameType::kStack:
      return PlayOutLoop<GameType::kStack, Bits>(rng, moves);
  }
  return 0;
}

int Round::PlayOutRandomPortable(SplitMix64& rng, Move* moves) {
  return PlayOutByGame<PortableBits>(rng, moves);
}

#if defined(__x86_64__)
// flatten: everything below is inlined here, where the BMI2 instructions are allowed.
[[gnu::target("popcnt,bmi2"), gnu::flatten]] int Round::PlayOutRandomBmi2(SplitMix64& rng,
                                                                          Move* moves) {
  return PlayOutByGame<Bmi2Bits>(rng, moves);
}
#else
int Round::PlayOutRandomBmi2(SplitMix64& rng, Move* moves) {
  return PlayOutRandomPortable(rng, moves);
}
#endif

int Round::PlayOutRandom(SplitMix64& rng, Move* moves) {
#if defined(__x86_64__)
  // AMD before Zen 3 (families 15h and 17h) has BMI2 but a microcoded, slow pdep.
  static const bool kFastPdep = __builtin_cpu_supports("popcnt") &&
                                __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("amdfam15h") &&
                                !__builtin_cpu_is("amdfam17h");
  if (kFastPdep) return PlayOutRandomBmi2(rng, moves);
#endif
  return PlayOutRandomPortable(rng, moves);
}

SeatView Round::View(int seat) const {
  COURTPIECE_CHECK(seat >= 0 && seat < 4, "a view is of a seat 0..3");
  SeatView v;
  v.seat = seat;
  v.game = rules_.game;
  v.dealer = dealer_;
  v.caller = caller_;
  v.phase = phase_;
  v.turn = turn();
  // Before the call (or hide) a seat knows only its first packet (RULES.md 1.3: trump is
  // named "from those five cards alone"), however the round was dealt.
  const bool calling = phase_ == Phase::kCall;
  v.hand = calling ? first_five_[seat] : hand_[seat];
  const bool hidden = rules_.game == GameType::kHidden;
  if (hidden && hidden_card_ >= 0 && !shown_) {
    v.has_face_down = true;
    v.face_down_card = seat == caller_ ? hidden_card_ : -1;
  }
  v.trump = trump_;
  if (hidden && !shown_ && seat != caller_) v.trump = -1;
  v.trump_shown = shown_event_;
  v.trump_set = set_event_;
  for (int s = 0; s < 4; ++s) v.hand_size[s] = (calling ? first_five_[s] : hand_[s]).size();
  auto mask = [&](TrickRecord t, int n) {
    for (int i = 0; i < n; ++i) {
      if (((t.face_down >> i) & 1) && seat != caller_) t.cards[i] = kHiddenCard;
    }
    return t;
  };
  v.num_tricks = num_tricks_;
  for (int i = 0; i < num_tricks_; ++i) v.tricks[i] = mask(tricks_[i], 4);
  v.current_size = cur_n_;
  v.current = mask(cur(), cur_n_);
  for (int i = cur_n_; i < 4; ++i) v.current.cards[i] = kHiddenCard;
  v.num_pickups = num_pickups_;
  v.pickups = pickups_;
  v.num_payouts = num_payouts_;
  v.payouts = payouts_;
  v.pile = pile_;
  v.tricks_won = {won_[0], won_[1]};
  // As RoundResult::count: classic counts tricks won (count_ is the pile and stack tally).
  v.count = rules_.game == GameType::kClassic ? std::array<int, 2>{won_[0], won_[1]}
                                              : std::array<int, 2>{count_[0], count_[1]};
  v.stack = stack_;
  v.marker = marker_;
  if (seat == turn()) LegalMoves(&v.legal);
  v.over = over();
  if (v.over) v.result = result_;
  return v;
}

}  // namespace courtpiece::rules
