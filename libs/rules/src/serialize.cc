// Binary state format (version 1). All integers are single bytes except card sets (8 bytes,
// little endian); optional small ints are stored +1 so that -1 becomes 0.
#include <cstring>

#include "absl/strings/string_view.h"
#include "courtpiece/rules/round.h"

namespace courtpiece::rules {
namespace {

constexpr uint8_t kVersion = 1;

class Writer {
 public:
  void U8(int v) { out_.push_back(static_cast<char>(static_cast<uint8_t>(v))); }
  void I8(int v) { U8(v + 1); }
  void Set(CardSet s) {
    uint64_t b = s.bits();
    for (int i = 0; i < 8; ++i) U8(static_cast<uint8_t>(b >> (8 * i)));
  }
  void Trick(const TrickRecord& t) {
    U8(t.leader);
    for (Card c : t.cards) U8(c);
    U8(t.winner);
    U8(t.face_down);
    U8(t.trump);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(absl::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool AtEnd() const { return pos_ == in_.size(); }
  int U8(int max) {
    if (pos_ >= in_.size()) {
      ok_ = false;
      return 0;
    }
    int v = static_cast<uint8_t>(in_[pos_++]);
    if (v > max) ok_ = false;
    return v;
  }
  int I8(int max) { return U8(max + 1) - 1; }
  CardSet Set() {
    uint64_t b = 0;
    for (int i = 0; i < 8; ++i) b |= uint64_t(U8(255)) << (8 * i);
    if (b & ~CardSet::Deck().bits()) ok_ = false;
    return CardSet(b);
  }
  TrickRecord Trick() {
    TrickRecord t;
    t.leader = static_cast<uint8_t>(U8(3));
    for (Card& c : t.cards) c = static_cast<Card>(U8(51));
    t.winner = static_cast<uint8_t>(U8(3));
    t.face_down = static_cast<uint8_t>(U8(15));
    t.trump = static_cast<uint8_t>(U8(15));
    return t;
  }

 private:
  absl::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace

std::string Round::Serialize() const {
  Writer w;
  w.U8(kVersion);
  w.U8(static_cast<int>(rules_.game));
  w.U8(static_cast<int>(rules_.court_bonus));
  w.U8(rules_.kot_points);
  w.U8(static_cast<int>(rules_.pile));
  w.U8(rules_.ace_cannot_win_pile);
  w.I8(rules_.last_card);
  w.U8(rules_.six_point);
  w.U8(rules_.target);
  w.U8(rules_.deal_fairness);
  w.U8(dealer_);
  w.U8(static_cast<int>(phase_));
  w.U8(turn_);
  w.U8(seeded_);
  if (seeded_) {
    for (uint8_t b : seed_) w.U8(b);
  }
  for (int s = 0; s < 4; ++s) {
    w.Set(hand_[s]);
    w.Set(dealt_[s]);
    w.Set(first_five_[s]);
  }
  w.I8(trump_);
  w.I8(hidden_card_);
  w.U8(shown_);
  w.U8(must_trump_);
  w.Set(face_down_);
  w.I8(shown_event_.trick);
  w.I8(shown_event_.seat);
  w.I8(set_event_.trick);
  w.I8(set_event_.seat);
  w.U8(cur_n_);
  w.Trick(cur());
  w.U8(num_tricks_);
  for (int i = 0; i < num_tricks_; ++i) w.Trick(tricks_[i]);
  w.I8(prev_winner_);
  w.U8(pile_);
  w.U8(won_[0]);
  w.U8(won_[1]);
  w.U8(count_[0]);
  w.U8(count_[1]);
  w.U8(stack_);
  w.I8(marker_);
  w.U8(num_pickups_);
  for (int i = 0; i < num_pickups_; ++i) {
    w.U8(pickups_[i].trick);
    w.U8(pickups_[i].seat);
    w.U8(pickups_[i].count);
  }
  w.U8(num_payouts_);
  for (int i = 0; i < num_payouts_; ++i) {
    w.U8(payouts_[i].trick);
    w.U8(payouts_[i].team);
    w.U8(payouts_[i].points);
  }
  w.I8(result_.winner);
  w.U8(static_cast<int>(result_.kind));
  w.I8(result_.points);
  w.U8(result_.count[0]);
  w.U8(result_.count[1]);
  return w.Take();
}

absl::StatusOr<Round> Round::Restore(absl::string_view bytes) {
  Reader in(bytes);
  if (in.U8(255) != kVersion) return MakeError(ErrorCode::kBadInput, "unknown state version");
  Round r;
  r.rules_.game = static_cast<GameType>(in.U8(4));
  r.rules_.court_bonus = static_cast<CourtBonus>(in.U8(2));
  r.rules_.kot_points = in.U8(10);
  r.rules_.pile = static_cast<PileSizes>(in.U8(1));
  r.rules_.ace_cannot_win_pile = in.U8(1);
  r.rules_.last_card = in.I8(51);
  r.rules_.six_point = in.U8(1);
  r.rules_.target = in.U8(100);
  r.rules_.deal_fairness = in.U8(1);
  r.dealer_ = static_cast<uint8_t>(in.U8(3));
  r.caller_ = static_cast<uint8_t>((r.dealer_ + 1) % 4);
  r.phase_ = static_cast<Phase>(in.U8(2));
  r.turn_ = static_cast<uint8_t>(in.U8(3));
  r.seeded_ = in.U8(1);
  if (r.seeded_) {
    for (uint8_t& b : r.seed_) b = static_cast<uint8_t>(in.U8(255));
  }
  for (int s = 0; s < 4; ++s) {
    r.hand_[s] = in.Set();
    r.dealt_[s] = in.Set();
    r.first_five_[s] = in.Set();
  }
  r.trump_ = static_cast<int8_t>(in.I8(3));
  r.hidden_card_ = static_cast<int8_t>(in.I8(51));
  r.shown_ = in.U8(1);
  r.must_trump_ = in.U8(1);
  r.face_down_ = in.Set();
  r.shown_event_.trick = static_cast<int8_t>(in.I8(13));
  r.shown_event_.seat = static_cast<int8_t>(in.I8(3));
  r.set_event_.trick = static_cast<int8_t>(in.I8(13));
  r.set_event_.seat = static_cast<int8_t>(in.I8(3));
  r.cur_n_ = static_cast<uint8_t>(in.U8(3));
  const TrickRecord current = in.Trick();
  r.num_tricks_ = static_cast<uint8_t>(in.U8(13));
  // num_tricks_ indexes the trick in progress: refuse it out of range before using it.
  if (!in.ok()) return MakeError(ErrorCode::kBadInput, "state bytes truncated or out of range");
  r.cur() = current;
  for (int i = 0; i < r.num_tricks_ && in.ok(); ++i) r.tricks_[i] = in.Trick();
  r.prev_winner_ = static_cast<int8_t>(in.I8(3));
  r.pile_ = static_cast<uint8_t>(in.U8(13));
  r.won_[0] = static_cast<uint8_t>(in.U8(13));
  r.won_[1] = static_cast<uint8_t>(in.U8(13));
  r.count_[0] = static_cast<uint8_t>(in.U8(13));
  r.count_[1] = static_cast<uint8_t>(in.U8(13));
  r.stack_ = static_cast<uint8_t>(in.U8(13));
  r.marker_ = static_cast<int8_t>(in.I8(3));
  r.num_pickups_ = static_cast<uint8_t>(in.U8(13));
  for (int i = 0; i < r.num_pickups_ && in.ok(); ++i) {
    r.pickups_[i].trick = static_cast<uint8_t>(in.U8(13));
    r.pickups_[i].seat = static_cast<uint8_t>(in.U8(3));
    r.pickups_[i].count = static_cast<uint8_t>(in.U8(13));
  }
  r.num_payouts_ = static_cast<uint8_t>(in.U8(13));
  for (int i = 0; i < r.num_payouts_ && in.ok(); ++i) {
    r.payouts_[i].trick = static_cast<uint8_t>(in.U8(13));
    r.payouts_[i].team = static_cast<uint8_t>(in.U8(1));
    r.payouts_[i].points = static_cast<uint8_t>(in.U8(13));
  }
  r.result_.winner = in.I8(1);
  r.result_.kind = static_cast<ResultKind>(in.U8(6));
  r.result_.points = in.I8(13);
  r.result_.count[0] = in.U8(13);
  r.result_.count[1] = in.U8(13);
  if (!in.ok() || !in.AtEnd()) {
    return MakeError(ErrorCode::kBadInput, "state bytes truncated, too long or out of range");
  }
  absl::Status st = r.ValidateRestored();
  if (!st.ok()) return st;
  if (r.seeded_ && r.phase_ == Phase::kCall) {
    ShuffleFromSeedInto(r.seed_, r.rules_.deal_fairness, &r.shuffle_);
    for (int k = 0; k < 4; ++k) {  // the first packets must be the seed's
      if (CardSet(r.shuffle_.first[k]) != r.first_five_[(r.caller_ + k) % 4]) {
        return MakeError(ErrorCode::kBadInput, "inconsistent state: first packets");
      }
    }
  }
  return r;
}

absl::Status Round::ValidateRestored() const {
  auto bad = [](absl::string_view what) {
    return MakeError(ErrorCode::kBadInput, std::string("inconsistent state: ") + std::string(what));
  };
  // The rules must be what ParseRules would accept.
  auto parsed = ParseRules(RulesToOptions(rules_));
  if (!parsed.ok() || !(*parsed == rules_)) return bad("rules");
  const bool hidden = rules_.game == GameType::kHidden;
  // Card accounting: every dealt card is in exactly one place.
  CardSet played;
  std::array<int, 4> played_by{};
  auto account = [&](const TrickRecord& t, int n) {
    for (int i = 0; i < n; ++i) {
      if (played.Has(t.cards[i])) return false;
      played.Add(t.cards[i]);
      ++played_by[(t.leader + i) % 4];
    }
    return true;
  };
  for (int i = 0; i < num_tricks_; ++i) {
    if (!account(tricks_[i], 4)) return bad("a card played twice");
  }
  if (!account(cur(), cur_n_)) return bad("a card played twice");
  CardSet dealt_all, held;
  for (int s = 0; s < 4; ++s) {
    if (!(dealt_[s] & dealt_all).empty() || !(hand_[s] & held).empty()) return bad("hands");
    dealt_all = dealt_all | dealt_[s];
    held = held | hand_[s];
    if ((first_five_[s] & dealt_[s]) != first_five_[s] || first_five_[s].size() != 5) {
      return bad("first packet");
    }
  }
  CardSet unplayed_hidden;
  if (hidden && hidden_card_ >= 0 && !shown_) unplayed_hidden.Add(Card(hidden_card_));
  if (!(held & played).empty() || !(unplayed_hidden & (held | played)).empty()) {
    return bad("cards in two places");
  }
  if ((held | played | unplayed_hidden) != dealt_all) return bad("cards lost");
  if ((face_down_ & played) != face_down_) return bad("face-down cards");
  // Each played card's marks: face down only in hidden, only where a throw can be, and
  // exactly the face-down set; trump power only on a trump-suit card not face down.
  CardSet marked_down;
  auto marks_ok = [&](const TrickRecord& t, int n) {
    // Marks past n are ignored: a previous build left the last trick's there between tricks.
    for (int i = 0; i < n; ++i) {
      const bool down = (t.face_down >> i) & 1, power = (t.trump >> i) & 1;
      // A face-down throw is the caller's, never a lead, never of the led suit.
      if (down &&
          (i == 0 || (t.leader + i) % 4 != caller_ || SuitOf(t.cards[i]) == SuitOf(t.cards[0]))) {
        return false;
      }
      if (down) marked_down.Add(t.cards[i]);
      if (power && (down || SuitOf(t.cards[i]) != trump_)) return false;
    }
    return true;
  };
  for (int i = 0; i < num_tricks_; ++i) {
    if (!marks_ok(tricks_[i], 4)) return bad("trick marks");
  }
  if (!marks_ok(cur(), cur_n_)) return bad("trick marks");
  if (marked_down != face_down_ || (!hidden && !face_down_.empty())) {
    return bad("face-down marks");
  }
  if (phase_ == Phase::kCall) {
    if (!rules_.HasCall() || num_tricks_ != 0 || cur_n_ != 0 || trump_ >= 0 || hidden_card_ >= 0 ||
        turn_ != caller_) {
      return bad("call phase");
    }
    if (dealt_all.size() != (seeded_ ? 20 : 52)) return bad("deal size");
    for (int s = 0; s < 4; ++s) {
      if (hand_[s] != dealt_[s]) return bad("hands before the call");
    }
    return absl::OkStatus();
  }
  if (dealt_all != CardSet::Deck()) return bad("not a full deck");
  for (int s = 0; s < 4; ++s) {
    int extra = (s == caller_ && unplayed_hidden.size() == 1) ? 1 : 0;
    if (hand_[s].size() + extra + played_by[s] != 13 || dealt_[s].size() != 13) {
      return bad("hand sizes");
    }
  }
  if (rules_.game != GameType::kKaat && trump_ < 0) return bad("no trump");
  if (rules_.game == GameType::kKaat) {
    // The trump and its event go together; while none is set, every played card followed
    // the led suit (the first that did not would have set it). FinishPileGame relies on
    // this: 13 tricks cannot all follow suit.
    if ((trump_ >= 0) != (set_event_.trick >= 0) ||
        (set_event_.trick >= 0) != (set_event_.seat >= 0)) {
      return bad("kaat trump");
    }
    if (trump_ < 0) {
      auto followed = [](const TrickRecord& t, int n) {
        for (int i = 1; i < n; ++i) {
          if (SuitOf(t.cards[i]) != SuitOf(t.cards[0])) return false;
        }
        return true;
      };
      for (int i = 0; i < num_tricks_; ++i) {
        if (!followed(tricks_[i], 4)) return bad("kaat trump");
      }
      if (!followed(cur(), cur_n_)) return bad("kaat trump");
    }
  }
  if (hidden != (hidden_card_ >= 0) || (hidden && SuitOf(Card(hidden_card_)) != trump_)) {
    return bad("hidden card");
  }
  if (must_trump_ && (trump_ < 0 || cur_n_ == 0)) return bad("must play trump");
  if (num_pickups_ > num_tricks_ || num_payouts_ > num_tricks_) return bad("events");
  if (won_[0] + won_[1] != num_tricks_) return bad("tricks won");
  if (phase_ == Phase::kPlay) {
    if (num_tricks_ >= 13) return bad("trick count");
    int expect = cur_n_ > 0         ? (cur().leader + cur_n_) % 4
                 : num_tricks_ == 0 ? caller_
                                    : tricks_[num_tricks_ - 1].winner;
    if (turn_ != expect) return bad("turn");
  }
  return absl::OkStatus();
}

}  // namespace courtpiece::rules
