#include "courtpiece/table/rules_engine.h"

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "courtpiece/bots/bot.h"
#include "courtpiece/bots/search_bot.h"
#include "courtpiece/common/check.h"

namespace courtpiece::table {
namespace {

using rules::kHiddenCard;

std::string Suit(int suit) { return suit < 0 ? std::string() : rules::SuitName(suit); }

std::vector<std::string> HandNames(rules::CardSet hand) {
  std::vector<std::string> out;
  for (rules::Card c : hand) out.push_back(rules::CardName(c));
  return out;
}

}  // namespace

absl::StatusOr<rules::Rules> ParseRulesJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(
      json.empty() ? std::string_view("{\"game\":\"classic\"}") : json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("game options must be a JSON object");
  }
  rules::OptionMap m;
  for (auto& [k, v] : j.items()) {
    if (v.is_null()) {
      m[k] = nullptr;
    } else if (v.is_boolean()) {
      m[k] = v.get<bool>();
    } else if (v.is_number_integer()) {
      m[k] = v.get<int64_t>();
    } else if (v.is_number()) {
      m[k] = v.get<double>();
    } else if (v.is_string()) {
      m[k] = v.get<std::string>();
    } else {
      return absl::InvalidArgumentError(absl::StrCat("option ", k, " has a bad value"));
    }
  }
  absl::StatusOr<rules::Rules> r = rules::ParseRules(m);
  if (!r.ok()) return absl::InvalidArgumentError(std::string(r.status().message()));
  return *r;
}

absl::StatusOr<rules::Move> ToRulesMove(int seat, const Move& move) {
  switch (move.kind) {
    case MoveKind::kCall: {
      std::optional<int> suit = rules::ParseSuit(move.card);
      if (!suit) return absl::InvalidArgumentError("call a suit: C, D, H or S");
      return rules::Move::Call(seat, *suit);
    }
    case MoveKind::kHide:
    case MoveKind::kPlay: {
      std::optional<rules::Card> c = rules::ParseCard(move.card);
      if (!c) return absl::InvalidArgumentError(absl::StrCat("not a card: ", move.card));
      return move.kind == MoveKind::kHide ? rules::Move::Hide(seat, *c)
                                          : rules::Move::Play(seat, *c);
    }
    case MoveKind::kAsk:
      return rules::Move::Ask(seat);
    case MoveKind::kShow:
      return rules::Move::Show(seat);
  }
  return absl::InvalidArgumentError("bad move");
}

Move FromRulesMove(const rules::Move& m) {
  switch (m.type) {
    case rules::MoveType::kCall:
      return {MoveKind::kCall, rules::SuitName(m.value)};
    case rules::MoveType::kHide:
      return {MoveKind::kHide, rules::CardName(m.value)};
    case rules::MoveType::kPlay:
      return {MoveKind::kPlay, rules::CardName(m.value)};
    case rules::MoveType::kAsk:
      return {MoveKind::kAsk, ""};
    case rules::MoveType::kShow:
      return {MoveKind::kShow, ""};
  }
  return {};
}

RulesEngine::RulesEngine(const rules::Rules& r, int first_dealer)
    : rules_(r), game_(r, first_dealer) {}

absl::Status RulesEngine::StartRound(const Seed& seed) {
  if (round_ || game_.over()) return absl::FailedPreconditionError("round in play or game over");
  round_.emplace(game_.StartRound(seed));
  for (int s = 0; s < 4; ++s) {
    rules::SeatView v = round_->View(s);
    Emit(s, {"round", v.caller, {}, absl::StrCat("dealer ", v.dealer)});
    if (!v.hand.empty()) {
      Emit(s,
           {"hand", s, HandNames(v.hand), v.phase == rules::Phase::kCall ? "first_five" : "full"});
    }
  }
  return absl::OkStatus();
}

absl::Status RulesEngine::Apply(int seat, const Move& move) {
  if (!round_ || round_->over()) return absl::FailedPreconditionError("no round in play");
  absl::StatusOr<rules::Move> m = ToRulesMove(seat, move);
  if (!m.ok()) return m.status();
  const int tricks_before = round_->completed_tricks();
  const bool shown_before = round_->trump_shown();
  const int set_before = round_->trump_set_event().trick;
  const int pickups_before = static_cast<int>(round_->pickups().size());
  const int payouts_before = static_cast<int>(round_->payouts().size());
  const rules::Phase phase_before = round_->phase();
  if (absl::Status st = round_->Apply(*m); !st.ok()) return st;
  RenderMove(seat, *m, tricks_before, shown_before, set_before, pickups_before, payouts_before,
             phase_before);
  return absl::OkStatus();
}

void RulesEngine::RenderMove(int seat, const rules::Move& m, int tricks_before, bool shown_before,
                             int set_before, int pickups_before, int payouts_before,
                             rules::Phase phase_before) {
  const rules::Round& r = *round_;
  for (int s = 0; s < 4; ++s) {
    rules::SeatView v = r.View(s);
    switch (m.type) {
      case rules::MoveType::kCall:
        Emit(s, {"trump", seat, {}, Suit(v.trump)});
        break;
      case rules::MoveType::kHide:
        Emit(s, {"hidden", seat,
                 s == seat ? std::vector<std::string>{rules::CardName(
                                 static_cast<rules::Card>(v.face_down_card))}
                           : std::vector<std::string>{},
                 ""});
        break;
      case rules::MoveType::kAsk:
        Emit(s, {"asked", seat, {}, ""});
        break;
      case rules::MoveType::kShow:
        Emit(s, {"shown", seat, {}, ""});
        break;
      case rules::MoveType::kPlay: {
        rules::Card c = kHiddenCard;
        if (v.num_tricks > tricks_before) {
          const rules::TrickRecord& t = v.tricks[tricks_before];
          c = t.cards[(seat - t.leader + 4) % 4];
        } else if (v.current_size > 0) {
          c = v.current.cards[v.current_size - 1];
        }
        Emit(s, {"played", seat, {rules::CardName(c)}, ""});
        break;
      }
    }
    if (phase_before == rules::Phase::kCall && v.phase != rules::Phase::kCall) {
      Emit(s, {"hand", s, HandNames(v.hand), "full"});
    }
    if (!shown_before && r.trump_shown()) {
      Emit(s, {"trump_shown", v.trump_shown.seat, {}, Suit(v.trump)});
      if (s == v.caller) Emit(s, {"hand", s, HandNames(v.hand), "full"});
    }
    if (set_before < 0 && v.trump_set.trick >= 0) {
      Emit(s, {"trump_set", v.trump_set.seat, {}, Suit(v.trump)});
    }
    if (v.num_tricks > tricks_before) {
      const rules::TrickRecord& t = v.tricks[tricks_before];
      Emit(s, {"trick",
               t.winner,
               {},
               absl::StrCat("tricks ", v.tricks_won[0], "-", v.tricks_won[1], " count ", v.count[0],
                            "-", v.count[1])});
    }
    for (int i = pickups_before; i < v.num_pickups; ++i) {
      Emit(s, {"pickup", v.pickups[i].seat, {}, absl::StrCat(int{v.pickups[i].count})});
    }
    for (int i = payouts_before; i < v.num_payouts; ++i) {
      Emit(s, {"stack_payout", v.payouts[i].team, {}, absl::StrCat(int{v.payouts[i].points})});
    }
    if (v.over) {
      Emit(s,
           {"round_over",
            v.result.winner,
            {},
            absl::StrCat(std::string(rules::ResultKindName(v.result.kind)), " ", v.result.points)});
    }
  }
}

Move RulesEngine::AutoMove(int seat) const {
  return FromRulesMove(bots::ChooseMove(rules_, round_->View(seat)));
}

namespace {
class SearchJob final : public BotJob {
 public:
  SearchJob(rules::Rules rules, rules::SeatView view, bots::SearchOptions options)
      : rules_(std::move(rules)), view_(std::move(view)), options_(options) {}
  Move Run() override { return FromRulesMove(bots::ChooseMove(rules_, view_, options_)); }

 private:
  rules::Rules rules_;
  rules::SeatView view_;  // the seat's view only: a copy, the round stays with the engine
  bots::SearchOptions options_;
};
}  // namespace

std::unique_ptr<BotJob> RulesEngine::NewBotJob(int seat, bots::Level level, uint64_t seed) const {
  COURTPIECE_CHECK(round_ && round_->turn() == seat, "NewBotJob is for the seat to act");
  COURTPIECE_CHECK(level != bots::Level::kEasy, "easy is AutoMove, played at once");
  return std::make_unique<SearchJob>(rules_, round_->View(seat), bots::LevelOptions(level, seed));
}

std::array<std::vector<EngineEvent>, 4> RulesEngine::TakeEvents() {
  std::array<std::vector<EngineEvent>, 4> out;
  std::swap(out, pending_);
  return out;
}

std::vector<EngineEvent> RulesEngine::ViewOf(int seat) const {
  std::vector<EngineEvent> out;
  const std::array<int, 2> score = game_.score();
  out.push_back({"score", -1, {}, absl::StrCat(score[0], "-", score[1])});
  if (!round_) return out;
  rules::SeatView v = round_->View(seat);
  out.push_back({"round", v.caller, {}, absl::StrCat("dealer ", v.dealer)});
  out.push_back(
      {"hand", seat, HandNames(v.hand), v.phase == rules::Phase::kCall ? "first_five" : "full"});
  if (v.face_down_card >= 0) {
    out.push_back(
        {"hidden", v.caller, {rules::CardName(static_cast<rules::Card>(v.face_down_card))}, ""});
  }
  if (v.trump >= 0) out.push_back({"trump", v.caller, {}, Suit(v.trump)});
  out.push_back({"tricks",
                 -1,
                 {},
                 absl::StrCat("tricks ", v.tricks_won[0], "-", v.tricks_won[1], " count ",
                              v.count[0], "-", v.count[1])});
  // Finished tricks as this seat may see them ("??" for a face-down throw of someone else).
  for (int i = 0; i < v.num_tricks; ++i) {
    const rules::TrickRecord& t = v.tricks[i];
    std::vector<std::string> cards;
    for (rules::Card c : t.cards) cards.push_back(rules::CardName(c));
    out.push_back(
        {"trick_cards", t.winner, std::move(cards), absl::StrCat("leader ", int{t.leader})});
  }
  for (int i = 0; i < v.num_pickups; ++i) {
    out.push_back({"pickup", v.pickups[i].seat, {}, absl::StrCat(int{v.pickups[i].count})});
  }
  for (int i = 0; i < v.num_payouts; ++i) {
    out.push_back({"stack_payout", v.payouts[i].team, {}, absl::StrCat(int{v.payouts[i].points})});
  }
  out.push_back({"pile", -1, {}, absl::StrCat(v.pile)});
  if (v.game == rules::GameType::kStack) {
    out.push_back({"stack", v.marker, {}, absl::StrCat(v.stack)});
  }
  out.push_back({"hand_sizes",
                 -1,
                 {},
                 absl::StrCat(v.hand_size[0], " ", v.hand_size[1], " ", v.hand_size[2], " ",
                              v.hand_size[3])});
  for (int i = 0; i < v.current_size; ++i) {
    out.push_back(
        {"played", (v.current.leader + i) % 4, {rules::CardName(v.current.cards[i])}, ""});
  }
  out.push_back({"to_act", v.turn, {}, ""});
  return out;
}

RoundOutcome RulesEngine::Outcome() const {
  const rules::RoundResult& r = round_->result();
  bool goon = r.kind == rules::ResultKind::kGoonCourt;
  if (r.kind == rules::ResultKind::kFourPoint || r.kind == rules::ResultKind::kSixPoint) {
    goon = r.winner != round_->court_team();  // they replace a Court's or a Goon Court's points
  }
  return {r.winner, std::string(rules::ResultKindName(r.kind)), r.points, goon};
}

int RulesEngine::SeedOnlyFor() const {
  if (round_ && !round_->face_down_throws().empty()) return round_->caller();
  return -1;
}

void RulesEngine::FinishRound() {
  if (!round_ || !round_->over()) return;
  game_.FinishRound(*round_);
  round_.reset();
}

// "<game line>\n<0|1: a round in play>\n<the round's bytes>".
std::string RulesEngine::Serialize() const {
  std::string out = absl::StrCat(game_.Serialize(), "\n", round_ ? 1 : 0, "\n");
  if (round_) out += round_->Serialize();
  return out;
}

namespace {

// Snapshots written before the engine kept a rules::Game start with the line
// "g1 <score0> <score1> <over> <next_caller> <rounds> <has_round>". Rewritten in the current
// form (the winner, not stored then, is the team at the target; in stack the one with more
// points), so a table snapshotted by the previous build still restores. Anything that does
// not parse is left as it is, to be refused by the current parser.
std::string UpgradeLegacyBytes(std::string_view bytes, const rules::Rules& rules) {
  if (bytes.substr(0, 3) != "g1 ") return std::string(bytes);
  const size_t nl = bytes.find('\n');
  if (nl == std::string_view::npos) return std::string(bytes);
  const std::vector<absl::string_view> f =
      absl::StrSplit(absl::string_view(bytes.data() + 3, nl - 3), ' ');
  std::array<int, 6> v{};
  if (f.size() != 6) return std::string(bytes);
  for (int i = 0; i < 6; ++i) {
    if (!absl::SimpleAtoi(f[i], &v[i]) || v[i] < 0) return std::string(bytes);
  }
  const auto [s0, s1, over, next_caller, rounds, has_round] = v;
  int winner = -1;
  if (over == 1) {
    winner = rules.game == rules::GameType::kStack ? (s0 > s1   ? 0
                                                      : s1 > s0 ? 1
                                                                : -1)
                                                   : (s0 >= rules.target ? 0 : 1);
  }
  return absl::StrCat("game1 ", s0, " ", s1, " ", over, " ", winner, " ", next_caller, " ", rounds,
                      "\n", has_round, "\n",
                      absl::string_view(bytes.data() + nl + 1, bytes.size() - nl - 1));
}

}  // namespace

absl::Status RulesEngine::Restore(std::string_view legacy_or_current) {
  const std::string upgraded = UpgradeLegacyBytes(legacy_or_current, rules_);
  const std::string_view bytes = upgraded;
  const size_t game_end = bytes.find('\n');
  if (game_end == std::string_view::npos || bytes.size() < game_end + 3 ||
      (bytes[game_end + 1] != '0' && bytes[game_end + 1] != '1') || bytes[game_end + 2] != '\n') {
    return absl::InvalidArgumentError("bad engine bytes");
  }
  absl::StatusOr<rules::Game> game =
      rules::Game::Restore(rules_, absl::string_view(bytes.data(), game_end));
  if (!game.ok()) return absl::InvalidArgumentError(game.status().message());
  const bool has_round = bytes[game_end + 1] == '1';
  const std::string_view rest = bytes.substr(game_end + 3);
  if (!has_round && !rest.empty()) return absl::InvalidArgumentError("bad engine bytes");
  std::optional<rules::Round> round;
  if (has_round) {
    if (game->over()) return absl::InvalidArgumentError("a round in play in a game that is over");
    absl::StatusOr<rules::Round> r =
        rules::Round::Restore(absl::string_view(rest.data(), rest.size()));
    if (!r.ok()) return r.status();
    if (!(r->rules() == rules_) || r->caller() != game->next_caller()) {
      return absl::InvalidArgumentError("the round in play is not this game's next round");
    }
    round.emplace(std::move(*r));
  }
  game_ = *game;
  round_ = std::move(round);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<GameEngine>> RulesEngineFactory::NewGame(
    std::string_view options, const Seed& first_dealer_seed) {
  absl::StatusOr<rules::Rules> r = ParseRulesJson(options);
  if (!r.ok()) return r.status();
  return std::unique_ptr<GameEngine>(std::make_unique<RulesEngine>(*r, first_dealer_seed[0] % 4));
}

absl::Status RulesEngineFactory::Validate(std::string_view options) {
  return ParseRulesJson(options).status();
}

}  // namespace courtpiece::table
