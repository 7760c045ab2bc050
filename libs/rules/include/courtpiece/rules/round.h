// One round (deal of 13 tricks) as a pure state machine: RULES.md sections 1-3.
//
// Usage:
//   ASSIGN_OR_RETURN(Round r, Round::FromHands(rules, dealer, hands));  // or FromSeed
//   while (!r.over()) { MoveList ms; r.LegalMoves(&ms); RETURN_IF_ERROR(r.Apply(ms[i])); }
//   const RoundResult& res = r.result();
// Apply() validates every move and returns a status whose ErrorCode (errors.h) is the
// REPLAY.md code; a rejected move leaves the state unchanged. Check() is the same test
// without building a status (no allocation). The history (tricks, pickups, payouts, trump
// shown / set) is kept in fixed arrays: the play loop never allocates.
// View(seat) is the only way state may leave the engine toward a player.
// Serialize()/Restore() round-trip the whole state through a versioned binary format.
// Thread-safety: a Round is a value; no sharing, no globals.
#ifndef COURTPIECE_RULES_ROUND_H_
#define COURTPIECE_RULES_ROUND_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "courtpiece/common/splitmix64.h"
#include "courtpiece/rules/cards.h"
#include "courtpiece/rules/deal.h"
#include "courtpiece/rules/errors.h"
#include "courtpiece/rules/rules.h"

namespace courtpiece::rules {

enum class MoveType : uint8_t { kCall = 0, kHide, kPlay, kAsk, kShow };

struct Move {
  MoveType type = MoveType::kPlay;
  uint8_t seat = 0;
  uint8_t value = 0;  // suit for kCall, card for kHide / kPlay, 0 otherwise

  static Move Call(int seat, int suit) { return {MoveType::kCall, u8(seat), u8(suit)}; }
  static Move Hide(int seat, Card c) { return {MoveType::kHide, u8(seat), c}; }
  static Move Play(int seat, Card c) { return {MoveType::kPlay, u8(seat), c}; }
  static Move Ask(int seat) { return {MoveType::kAsk, u8(seat), 0}; }
  static Move Show(int seat) { return {MoveType::kShow, u8(seat), 0}; }
  bool operator==(const Move&) const = default;

 private:
  static uint8_t u8(int v) { return static_cast<uint8_t>(v); }
};

// Up to 13 cards + ask/show, or 4 calls, or 5 hides: fixed capacity, no allocation.
struct MoveList {
  std::array<Move, 16> moves;
  int size = 0;
  void Push(Move m) { moves[size++] = m; }
  const Move& operator[](int i) const { return moves[i]; }
  const Move* begin() const { return moves.data(); }
  const Move* end() const { return moves.data() + size; }
};

enum class Phase : uint8_t { kCall = 0, kPlay, kOver };

enum class ResultKind : uint8_t {
  kNormal = 0,
  kCourt,
  kGoonCourt,
  kKot,
  kFourPoint,
  kSixPoint,
  kDraw,
};
absl::string_view ResultKindName(ResultKind kind);

struct RoundResult {
  int winner = -1;  // team 0/1, -1 for a draw
  ResultKind kind = ResultKind::kNormal;
  int points = 0;              // game points (stack: the winner's stack points; -1 for a draw)
  std::array<int, 2> count{};  // classic: tricks won; pile games: picked up; stack: points
};

// A finished trick. cards[i] was played by seat (leader + i) % 4.
struct TrickRecord {
  uint8_t leader = 0;
  std::array<Card, 4> cards{};
  uint8_t winner = 0;
  uint8_t face_down = 0;  // bit i: cards[i] was a hidden caller's face-down throw
  uint8_t trump = 0;      // bit i: cards[i] had trump power when played
};

struct Pickup {
  uint8_t trick = 0;  // 1-based
  uint8_t seat = 0;
  uint8_t count = 0;  // tricks in the pile picked up
};

struct Payout {
  uint8_t trick = 0;  // 1-based
  uint8_t team = 0;
  uint8_t points = 0;
};

struct TrumpEvent {
  int8_t trick = -1;  // 1-based trick in which it happened, -1 if it has not
  int8_t seat = -1;   // asker / shower (hidden) or setter (kaat)
};

// What one seat may see. Cards the seat may not see are kHiddenCard.
struct SeatView {
  int seat = 0;
  GameType game = GameType::kClassic;
  int dealer = 0;
  int caller = 0;
  Phase phase = Phase::kCall;
  int turn = -1;               // seat to move, -1 once over
  CardSet hand;                // own cards in hand (face up)
  int face_down_card = -1;     // hidden: own face-down trump card (caller only), else -1
  bool has_face_down = false;  // hidden: the caller still has a face-down card
  int trump = -1;              // as known to this seat
  TrumpEvent trump_shown;      // hidden
  TrumpEvent trump_set;        // kaat
  std::array<int, 4> hand_size{};
  std::array<TrickRecord, 13> tricks{};  // finished; unseen cards kHiddenCard
  int num_tricks = 0;
  TrickRecord current;  // the trick in progress (cards[0..current_size))
  int current_size = 0;
  std::array<Pickup, 13> pickups{};
  int num_pickups = 0;
  std::array<Payout, 13> payouts{};
  int num_payouts = 0;
  int pile = 0;                     // pile games: tricks lying in the pile
  std::array<int, 2> tricks_won{};  // per team
  std::array<int, 2> count{};       // per team, as RoundResult::count
  int stack = 0;                    // stack: points in the stack
  int marker = -1;                  // stack: marked seat
  MoveList legal;                   // empty unless it is this seat's turn
  bool over = false;
  RoundResult result;  // valid when over
};

class Round {
 public:
  using Hands = std::array<std::array<Card, 13>, 4>;

  // hands[seat][0..4] is the first packet. Validates the deal (kBadDeal) and dealer.
  static absl::StatusOr<Round> FromHands(const Rules& rules, int dealer, const Hands& hands);
  // Deals from the seed (fair deals): the first packets now, the rest once trump is called
  // or hidden (kaat: everything now).
  static Round FromSeed(const Rules& rules, int dealer, const Seed& seed);

  // kOk or the REPLAY.md code the move would be rejected with.
  ErrorCode Check(const Move& m) const;
  // Applies a legal move; on error the state is unchanged.
  absl::Status Apply(const Move& m);
  // Shorthands for Apply(Move::...).
  absl::Status Call(int seat, int suit) { return Apply(Move::Call(seat, suit)); }
  absl::Status Hide(int seat, Card c) { return Apply(Move::Hide(seat, c)); }
  absl::Status Play(int seat, Card c) { return Apply(Move::Play(seat, c)); }
  absl::Status Ask(int seat) { return Apply(Move::Ask(seat)); }
  absl::Status Show(int seat) { return Apply(Move::Show(seat)); }
  // Applies a move Check() accepted (asserted in debug builds).
  void ApplyChecked(const Move& m);
  // Every legal move of the seat to move (empty once over): calls / hides in the call
  // phase; then the playable cards, then ask or show when allowed.
  void LegalMoves(MoveList* out) const;
  // The same without building moves (the fast path for playouts): the cards the seat to
  // move may play now (empty in the call phase and once over), and whether it may ask or
  // show the hidden trump now.
  CardSet PlayableCards() const;
  bool CanAsk() const;
  bool CanShow() const;

  // The most moves a round can take: a call or hide, 52 cards, and one ask or show.
  static constexpr int kMaxMoves = 54;
  // A random playout: plays the round to its end choosing every move uniformly among the
  // legal ones, exactly as
  //   while (!over()) { LegalMoves(&l); ApplyChecked(l[rng.Below(l.size)]); }
  // does (the same rng draws, so the same moves), with one game-type dispatch per round
  // instead of per move. When `moves` is not null it receives the moves played (room for
  // kMaxMoves). Returns how many moves were played (0 if the round was over).
  int PlayOutRandom(SplitMix64& rng, Move* moves = nullptr);
  // The same without the POPCNT/BMI2 path PlayOutRandom takes on CPUs that have them
  // (public so that tests cover both paths on any machine).
  int PlayOutRandomPortable(SplitMix64& rng, Move* moves = nullptr);

  SeatView View(int seat) const;

  std::string Serialize() const;
  static absl::StatusOr<Round> Restore(absl::string_view bytes);

  const Rules& rules() const { return rules_; }
  int dealer() const { return dealer_; }
  int caller() const { return caller_; }  // kaat: the leader
  Phase phase() const { return phase_; }
  bool over() const { return phase_ == Phase::kOver; }
  int turn() const { return phase_ == Phase::kOver ? -1 : turn_; }
  int trump() const { return trump_; }  // -1 until called / hidden / set
  int hidden_card() const { return hidden_card_; }
  bool trump_shown() const { return shown_; }
  CardSet hand(int seat) const { return hand_[seat]; }
  // The 13 cards dealt to a seat and its first packet (seed deals: the first packet only
  // until the call).
  CardSet dealt(int seat) const { return dealt_[seat]; }
  CardSet first_packet(int seat) const { return first_five_[seat]; }
  CardSet face_down_throws() const { return face_down_; }
  int completed_tricks() const { return num_tricks_; }
  std::span<const TrickRecord> tricks() const { return {tricks_.data(), size_t(num_tricks_)}; }
  std::span<const Card> current_trick() const { return {cur().cards.data(), size_t(cur_n_)}; }
  std::span<const Pickup> pickups() const { return {pickups_.data(), size_t(num_pickups_)}; }
  std::span<const Payout> payouts() const { return {payouts_.data(), size_t(num_payouts_)}; }
  TrumpEvent trump_shown_event() const { return shown_event_; }
  TrumpEvent trump_set_event() const { return set_event_; }
  // The team a Court / Goon Court of a pile game is judged against (RULES.md 2.2-2.4): the
  // caller's; in kaat the team that set the trump (-1 while none is set).
  int court_team() const {
    if (rules_.game != GameType::kKaat) return TeamOf(caller_);
    return set_event_.seat >= 0 ? TeamOf(set_event_.seat) : -1;
  }
  // Pile games: tricks picked up; stack: points taken; classic: 0 (see tricks_won(); the
  // View's and RoundResult's count are the tricks won there).
  std::array<int, 2> count() const { return {count_[0], count_[1]}; }
  std::array<int, 2> tricks_won() const { return {won_[0], won_[1]}; }
  int pile() const { return pile_; }
  int stack() const { return stack_; }
  int marker() const { return marker_; }
  // Valid once over().
  const RoundResult& result() const { return result_; }
  // Who calls (or, in kaat, leads) next after this round; -1 for stack (one round).
  int NextCaller() const;

 private:
  Round() = default;
  void StartPlay();
  void DealRest();
  void DoShow(int seat);
  TrickRecord& cur() { return tricks_[num_tricks_]; }
  const TrickRecord& cur() const { return tricks_[num_tricks_]; }
  void PlayDispatch(int seat, Card c);
  uint64_t PlayableInPlay() const;
  int PlayOutRandomBmi2(SplitMix64& rng, Move* moves);
  template <class Bits>
  int PlayOutByGame(SplitMix64& rng, Move* moves);
  template <GameType G, class Bits>
  int PlayOutLoop(SplitMix64& rng, Move* moves);
  template <GameType G>
  bool SetsOrIsTrump(int seat, Card c, int led_suit);
  template <GameType G>
  void PlayCard(int seat, Card c);
  template <GameType G>
  void ResolveTrick();
  template <GameType G>
  int TrickWinner() const;
  template <GameType G>
  void AfterPileTrick(int winner);
  void AfterStackTrick(int winner);
  template <GameType G>
  void CheckEnd();
  void Finish(int winner, ResultKind kind, int points);
  void FinishPileGame();
  bool CallerAutoShow(int seat) const;
  bool IsFaceDownThrow(int seat, Card c) const;
  static int Strength(Card c, int led, bool powered, bool face_down, bool low_ace);
  absl::Status ValidateRestored() const;

  Rules rules_;
  uint8_t dealer_ = 0;
  uint8_t caller_ = 0;
  Phase phase_ = Phase::kCall;
  uint8_t turn_ = 0;
  bool seeded_ = false;
  Seed seed_{};
  Shuffle shuffle_;  // seeded rounds: the shuffle, kept for the second phase (not serialised)
  std::array<CardSet, 4> hand_{};
  std::array<CardSet, 4> dealt_{};
  std::array<CardSet, 4> first_five_{};
  int8_t trump_ = -1;
  int8_t hidden_card_ = -1;
  bool shown_ = false;
  bool must_trump_ = false;
  CardSet face_down_;
  TrumpEvent shown_event_;
  TrumpEvent set_event_;
  uint8_t cur_n_ = 0;
  uint8_t num_tricks_ = 0;
  int8_t prev_winner_ = -1;
  uint8_t pile_ = 0;
  std::array<uint8_t, 2> won_{};
  std::array<uint8_t, 2> count_{};
  uint8_t stack_ = 0;
  int8_t marker_ = -1;
  // tricks_[num_tricks_] is the trick in progress (played into place: no copy at its end).
  std::array<TrickRecord, 14> tricks_{};
  std::array<Pickup, 13> pickups_{};
  uint8_t num_pickups_ = 0;
  std::array<Payout, 13> payouts_{};
  uint8_t num_payouts_ = 0;
  RoundResult result_;
};

// Inline: random playouts call it on every move. Branch-free but for the hidden caller's
// last card: follow suit if possible, else trump when it must, else anything.
inline CardSet Round::PlayableCards() const {
  if (phase_ != Phase::kPlay) return CardSet();
  const int seat = turn_;
  if (rules_.game == GameType::kHidden && CallerAutoShow(seat)) [[unlikely]] {
    return CardSet::Of(static_cast<Card>(hidden_card_));
  }
  return CardSet(PlayableInPlay());
}

inline uint64_t Round::PlayableInPlay() const {
  const uint64_t h = hand_[turn_].bits();
  const uint64_t led =
      cur_n_ == 0 ? CardSet::Deck().bits() : CardSet::Suit(SuitOf(cur().cards[0])).bits();
  const uint64_t follow = h & led;
  const uint64_t trumps = must_trump_ ? h & CardSet::Suit(trump_).bits() : 0;
  return follow != 0 ? follow : (trumps != 0 ? trumps : h);
}

inline bool Round::CallerAutoShow(int seat) const {
  return rules_.game == GameType::kHidden && !shown_ && seat == caller_ && hidden_card_ >= 0 &&
         hand_[seat].empty();
}

}  // namespace courtpiece::rules

#endif  // COURTPIECE_RULES_ROUND_H_
