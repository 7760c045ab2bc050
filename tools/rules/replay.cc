#include "replay.h"

#include <functional>
#include <sstream>

#include "courtpiece/rules/deal.h"
#include "courtpiece/rules/game.h"

namespace courtpiece::rules_cli {
namespace {

using rules::Card;
using rules::CardName;
using rules::ErrorCode;
using rules::GameType;
using rules::Move;
using rules::MoveType;
using rules::Round;

struct InputRound {
  bool seeded = false;
  Round::Hands hands{};
  std::vector<int> hand_sizes;  // for bad_deal checks
  rules::Seed seed{};
  std::vector<Move> moves;
};

struct Input {
  rules::Rules rules;
  int first_dealer = 0;
  std::vector<InputRound> rounds;
};

struct InputError {
  ErrorCode code;
  std::string message;
};

Json ErrorJson(ErrorCode code, Json round, Json move, const std::string& message) {
  Json e;
  e["round"] = std::move(round);
  e["move"] = std::move(move);
  e["code"] = std::string(rules::ErrorCodeName(code));
  e["message"] = message;
  return e;
}

Json CardJson(Card c) { return CardName(c); }

std::optional<InputError> ParseHands(const Json& j, InputRound* r) {
  if (!j.is_array() || j.size() != 4) {
    return InputError{ErrorCode::kBadInput, "hands must be an array of 4 hands"};
  }
  std::vector<std::vector<Card>> hands(4);
  for (int s = 0; s < 4; ++s) {
    // Only the REPLAY.md form: one string of card texts per hand.
    if (!j[s].is_string()) {
      return InputError{ErrorCode::kBadInput, "a hand must be a string of cards"};
    }
    std::vector<std::string> tokens;
    std::istringstream in(j[s].get<std::string>());
    std::string token;
    while (in >> token) tokens.push_back(token);
    for (const auto& t : tokens) {
      auto c = rules::ParseCard(t);
      if (!c) return InputError{ErrorCode::kBadInput, "bad card text '" + t + "'"};
      hands[s].push_back(*c);
    }
  }
  r->hand_sizes.clear();
  for (int s = 0; s < 4; ++s) {
    r->hand_sizes.push_back(static_cast<int>(hands[s].size()));
    for (size_t i = 0; i < hands[s].size() && i < 13; ++i) r->hands[s][i] = hands[s][i];
  }
  return std::nullopt;
}

std::optional<InputError> ParseMove(const Json& j, Move* m) {
  if (!j.is_object()) return InputError{ErrorCode::kBadInput, "a move must be an object"};
  auto seat = j.find("seat");
  if (seat == j.end() || !seat->is_number_integer() || seat->get<int64_t>() < 0 ||
      seat->get<int64_t>() > 3) {
    return InputError{ErrorCode::kBadInput, "a move needs \"seat\" 0..3"};
  }
  m->seat = static_cast<uint8_t>(seat->get<int>());
  int actions = 0;
  for (const char* k : {"call", "hide", "play", "ask", "show"}) actions += j.contains(k);
  if (actions != 1) {
    return InputError{ErrorCode::kBadInput,
                      "a move needs exactly one of call, hide, play, ask, show"};
  }
  if (j.contains("call")) {
    const Json& v = j["call"];
    if (!v.is_string()) return InputError{ErrorCode::kBadInput, "call must be a string"};
    auto s = rules::ParseSuit(v.get<std::string>());
    // Not a suit is bad_call (REPLAY.md), found when the move is played.
    *m = Move::Call(m->seat, s ? *s : 255);
    return std::nullopt;
  }
  for (const char* k : {"hide", "play"}) {
    if (!j.contains(k)) continue;
    const Json& v = j[k];
    std::optional<Card> c;
    if (v.is_string()) c = rules::ParseCard(v.get<std::string>());
    if (!c) return InputError{ErrorCode::kBadInput, std::string("bad card text in ") + k};
    *m = std::string(k) == "hide" ? Move::Hide(m->seat, *c) : Move::Play(m->seat, *c);
    return std::nullopt;
  }
  for (const char* k : {"ask", "show"}) {
    if (!j.contains(k)) continue;
    if (j[k] != Json(true))
      return InputError{ErrorCode::kBadInput, std::string(k) + " must be true"};
    *m = std::string(k) == "ask" ? Move::Ask(m->seat) : Move::Show(m->seat);
  }
  return std::nullopt;
}

// Parses and validates the whole input: bad_input, then bad_rules, then bad_deal.
std::optional<InputError> ParseInput(const std::string& text, Input* in) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InputError{ErrorCode::kBadInput, "input is not a JSON object"};
  }
  if (!j.contains("rules") || !j["rules"].is_object()) {
    return InputError{ErrorCode::kBadInput, "\"rules\" must be an object"};
  }
  auto fd = j.find("first_dealer");
  if (fd == j.end() || !fd->is_number_integer() || fd->get<int64_t>() < 0 ||
      fd->get<int64_t>() > 3) {
    return InputError{ErrorCode::kBadInput, "\"first_dealer\" must be 0..3"};
  }
  in->first_dealer = fd->get<int>();
  if (!j.contains("rounds") || !j["rounds"].is_array()) {
    return InputError{ErrorCode::kBadInput, "\"rounds\" must be an array"};
  }
  for (const Json& jr : j["rounds"]) {
    InputRound r;
    if (!jr.is_object()) return InputError{ErrorCode::kBadInput, "a round must be an object"};
    const bool has_hands = jr.contains("hands"), has_seed = jr.contains("seed");
    if (has_hands == has_seed) {
      return InputError{ErrorCode::kBadInput, "a round needs exactly one of hands or seed"};
    }
    if (has_hands) {
      if (auto e = ParseHands(jr["hands"], &r)) return e;
    } else {
      std::optional<rules::Seed> seed;
      if (jr["seed"].is_string()) seed = rules::ParseSeed(jr["seed"].get<std::string>());
      if (!seed) return InputError{ErrorCode::kBadInput, "seed must be 64 hex digits"};
      r.seeded = true;
      r.seed = *seed;
    }
    if (jr.contains("moves")) {
      if (!jr["moves"].is_array())
        return InputError{ErrorCode::kBadInput, "moves must be an array"};
      for (const Json& jm : jr["moves"]) {
        Move m;
        if (auto e = ParseMove(jm, &m)) return e;
        r.moves.push_back(m);
      }
    }
    in->rounds.push_back(std::move(r));
  }
  auto options = OptionsFromJson(j["rules"]);
  auto parsed = rules::ParseRules(*options);
  if (!parsed.ok()) {
    return InputError{ErrorCode::kBadRules, std::string(parsed.status().message())};
  }
  in->rules = *parsed;
  for (size_t i = 0; i < in->rounds.size(); ++i) {
    const InputRound& r = in->rounds[i];
    if (r.seeded) continue;
    for (int s = 0; s < 4; ++s) {
      if (r.hand_sizes[s] != 13) {
        return InputError{ErrorCode::kBadDeal,
                          "round " + std::to_string(i) + ": seat " + std::to_string(s) + " holds " +
                              std::to_string(r.hand_sizes[s]) + " cards, not 13"};
      }
    }
    auto round = Round::FromHands(in->rules, 0, r.hands);
    if (!round.ok()) {
      return InputError{ErrorCode::kBadDeal, "round " + std::to_string(i) + ": " +
                                                 std::string(round.status().message())};
    }
  }
  return std::nullopt;
}

Json ResultJson(const Round& r) {
  if (!r.over()) return nullptr;
  const rules::RoundResult& res = r.result();
  Json j;
  j["winner"] = res.winner < 0 ? Json(nullptr) : Json(res.winner);
  j["kind"] = std::string(rules::ResultKindName(res.kind));
  j["points"] = res.kind == rules::ResultKind::kDraw ? Json(nullptr) : Json(res.points);
  j["count"] = {res.count[0], res.count[1]};
  return j;
}

Json TrickJson(const rules::TrickRecord& t, bool finished) {
  Json j;
  j["leader"] = t.leader;
  Json cards = Json::array();
  for (Card c : t.cards) cards.push_back(CardJson(c));
  j["cards"] = cards;
  if (finished) j["winner"] = t.winner;
  return j;
}

Json PickupsJson(std::span<const rules::Pickup> ps) {
  Json a = Json::array();
  for (const auto& p : ps) {
    a.push_back({{"trick", p.trick},
                 {"seat", p.seat},
                 {"team", rules::TeamOf(p.seat)},
                 {"count", p.count}});
  }
  return a;
}

Json PayoutsJson(std::span<const rules::Payout> ps) {
  Json a = Json::array();
  for (const auto& p : ps)
    a.push_back({{"trick", p.trick}, {"team", p.team}, {"points", p.points}});
  return a;
}

Json TrumpEventJson(rules::TrumpEvent e) {
  if (e.trick < 0) return nullptr;
  return {{"trick", e.trick}, {"seat", e.seat}};
}

Json SuitJson(int suit) { return suit < 0 ? Json(nullptr) : Json(rules::SuitName(suit)); }

Json RoundJson(const Round& r) {
  Json j;
  const GameType g = r.rules().game;
  j["dealer"] = r.dealer();
  j["caller"] = r.caller();
  j["trump"] = SuitJson(r.trump());
  Json tricks = Json::array();
  for (const auto& t : r.tricks()) tricks.push_back(TrickJson(t, true));
  j["tricks"] = tricks;
  if (r.rules().IsPileGame()) j["pickups"] = PickupsJson(r.pickups());
  if (g == GameType::kStack) j["payouts"] = PayoutsJson(r.payouts());
  if (g == GameType::kHidden) j["trump_shown"] = TrumpEventJson(r.trump_shown_event());
  if (g == GameType::kKaat) {
    rules::TrumpEvent e = r.trump_set_event();
    j["trump_set"] =
        e.trick < 0
            ? Json(nullptr)
            : Json{{"trick", e.trick}, {"seat", e.seat}, {"suit", rules::SuitName(r.trump())}};
  }
  j["result"] = ResultJson(r);
  return j;
}

Json GameJson(const rules::Game& g, bool settled, const Round* live_stack_round) {
  Json j;
  auto score = g.score();
  if (live_stack_round != nullptr) score = live_stack_round->count();
  j["score"] = {score[0], score[1]};
  j["over"] = g.over();
  j["winner"] = g.over() && g.winner() >= 0 ? Json(g.winner()) : Json(nullptr);
  j["next_caller"] = settled && !g.over() ? Json(g.next_caller()) : Json(nullptr);
  return j;
}

std::string MoveText(const Move& m) { return MoveToJson(m).dump(); }

Json ViewJson(const rules::SeatView& v, const Round& r) {
  Json j;
  auto card_list = [](rules::CardSet s) {
    Json a = Json::array();
    for (Card c : s) a.push_back(CardName(c));
    return a;
  };
  j["seat"] = v.seat;
  j["game_type"] = std::string(rules::GameTypeName(v.game));
  j["dealer"] = v.dealer;
  j["caller"] = v.caller;
  j["phase"] = v.phase == rules::Phase::kCall   ? "call"
               : v.phase == rules::Phase::kPlay ? "play"
                                                : "over";
  j["turn"] = v.turn < 0 ? Json(nullptr) : Json(v.turn);
  j["hand"] = card_list(v.hand);
  Json hands = Json::array();
  for (int s = 0; s < 4; ++s) {
    if (s == v.seat) {
      hands.push_back(card_list(v.hand));
    } else {
      hands.push_back(Json(std::vector<std::string>(v.hand_size[s], "??")));
    }
  }
  j["hands"] = hands;
  if (v.game == GameType::kHidden) {
    j["face_down"] = !v.has_face_down        ? Json(nullptr)
                     : v.face_down_card >= 0 ? Json(CardName(Card(v.face_down_card)))
                                             : Json("??");
  }
  j["trump"] = SuitJson(v.trump);
  Json tricks = Json::array();
  for (int i = 0; i < v.num_tricks; ++i) tricks.push_back(TrickJson(v.tricks[i], true));
  j["tricks"] = tricks;
  Json cur = TrickJson(v.current, false);
  cur["cards"] = Json::array();
  for (int i = 0; i < v.current_size; ++i) cur["cards"].push_back(CardName(v.current.cards[i]));
  j["current_trick"] = v.current_size > 0 ? cur : Json(nullptr);
  if (r.rules().IsPileGame()) {
    j["pickups"] = PickupsJson({v.pickups.data(), size_t(v.num_pickups)});
    j["pile"] = v.pile;
  }
  if (v.game == GameType::kStack) {
    j["payouts"] = PayoutsJson({v.payouts.data(), size_t(v.num_payouts)});
    j["stack"] = v.stack;
    j["marker"] = v.marker < 0 ? Json(nullptr) : Json(v.marker);
  }
  if (v.game == GameType::kHidden) j["trump_shown"] = TrumpEventJson(v.trump_shown);
  if (v.game == GameType::kKaat) {
    j["trump_set"] = v.trump_set.trick < 0 ? Json(nullptr)
                                           : Json{{"trick", v.trump_set.trick},
                                                  {"seat", v.trump_set.seat},
                                                  {"suit", rules::SuitName(v.trump)}};
  }
  j["tricks_won"] = {v.tricks_won[0], v.tricks_won[1]};
  j["count"] = {v.count[0], v.count[1]};
  Json legal = Json::array();
  for (const Move& m : v.legal) legal.push_back(MoveToJson(m));
  j["legal"] = legal;
  j["result"] = ResultJson(r);
  return j;
}

}  // namespace

std::optional<rules::OptionMap> OptionsFromJson(const Json& j) {
  if (!j.is_object()) return std::nullopt;
  rules::OptionMap m;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const Json& v = it.value();
    if (v.is_null())
      m[it.key()] = nullptr;
    else if (v.is_boolean())
      m[it.key()] = v.get<bool>();
    else if (v.is_number_integer())
      m[it.key()] = v.get<int64_t>();
    else if (v.is_number())
      m[it.key()] = v.get<double>();
    else if (v.is_string())
      m[it.key()] = v.get<std::string>();
    else
      m[it.key()] = 0.5;  // arrays and objects are never a valid option value
  }
  return m;
}

Json OptionsToJson(const rules::OptionMap& options) {
  Json j;
  j["game"] = std::get<std::string>(options.at("game"));
  for (const auto& [k, v] : options) {
    if (k == "game") continue;
    std::visit(
        [&, key = k](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::nullptr_t>) {
            j[key] = nullptr;
          } else {
            j[key] = x;
          }
        },
        v);
  }
  return j;
}

Json MoveToJson(const Move& m) {
  Json j;
  j["seat"] = m.seat;
  switch (m.type) {
    case MoveType::kCall:
      j["call"] = m.value < 4 ? rules::SuitName(m.value) : std::string("?");
      break;
    case MoveType::kHide:
      j["hide"] = CardName(m.value);
      break;
    case MoveType::kPlay:
      j["play"] = CardName(m.value);
      break;
    case MoveType::kAsk:
      j["ask"] = true;
      break;
    case MoveType::kShow:
      j["show"] = true;
      break;
  }
  return j;
}

Json HandsToJson(const Round& round) {
  Json hands = Json::array();
  for (int s = 0; s < 4; ++s) {
    rules::CardSet first = round.first_packet(s);
    rules::CardSet rest = round.dealt(s) & ~first;
    std::string text = rules::CardSetText(first);
    if (!rest.empty()) {
      text.push_back(' ');
      text.append(rules::CardSetText(rest));
    }
    hands.push_back(text);
  }
  return hands;
}

// An input refused before any round is played: no rounds, a game not started, exit 2.
CliOutput RefusedInput(ErrorCode code, const std::string& message) {
  CliOutput out;
  out.json["ok"] = false;
  out.json["rounds"] = Json::array();
  out.json["game"] = {
      {"score", {0, 0}}, {"over", false}, {"winner", nullptr}, {"next_caller", nullptr}};
  out.json["error"] = ErrorJson(code, nullptr, nullptr, message);
  out.exit_code = 2;
  return out;
}

std::string HelpText() {
  return R"(usage:
  courtpiece-rules replay [--view SEAT]   < game.json
  courtpiece-rules selfplay --rules JSON --rounds N --seed HEX [--policy random|bot]
                            [--jsonl FILE] [--threads N] [--deal-stats on]
  courtpiece-rules deal --seed HEX [--trump S | --hide 7S] [--caller N] [--rules JSON]
  courtpiece-rules --help

replay    a whole game as JSON on stdin, every trick and result as one JSON document on
          stdout (REPLAY.md); exit 0 ok, 1 an illegal move, 2 bad_input/bad_rules/bad_deal.
selfplay  N independent rounds from a master seed, one JSON summary line; --deal-stats on
          adds "deal_stats": fair-deal reshuffles per checked round (mean, p50/p90/p99, max).
deal      the deal of a round seed: commitment, reshuffles, first packets, hands.

Rules (--rules and the replay input's "rules"): the options of RULES.md section 2, each for
the game types its table names; omitted options take their defaults. An option of another
game type is refused with bad_rules naming the option, even with its default value (e.g.
{"game": "classic", "pile": "3-2-2"}: option 'pile' does not apply to game 'classic'), and
so is an unknown option or a value out of range: rules are never silently ignored.
)";
}

CliOutput ReplayCommand(const std::vector<std::string>& args,
                        const std::function<std::string()>& read_input) {
  std::optional<int> view;
  if (!args.empty()) {
    if (args.size() != 2 || args[0] != "--view" || args[1].size() != 1 || args[1][0] < '0' ||
        args[1][0] > '3') {
      return RefusedInput(ErrorCode::kBadInput,
                          "usage: courtpiece-rules replay [--view SEAT], SEAT 0..3");
    }
    view = args[1][0] - '0';
  }
  return Replay(read_input(), view);
}

CliOutput Replay(const std::string& text, std::optional<int> view_seat) {
  CliOutput out;
  Input in;
  Json rounds_json = Json::array();
  if (auto e = ParseInput(text, &in)) return RefusedInput(e->code, e->message);
  rules::Game game(in.rules, in.first_dealer);
  Json error;
  bool settled = true;
  std::optional<Round> last, unbooked;
  for (size_t ri = 0; ri < in.rounds.size() && error.is_null(); ++ri) {
    const InputRound& ir = in.rounds[ri];
    if (game.over()) {
      error = ErrorJson(ErrorCode::kGameOver, ri, nullptr,
                        "round " + std::to_string(ri) + " is given after the game ended");
      break;
    }
    Round round = ir.seeded ? game.StartRound(ir.seed) : *game.StartRound(ir.hands);
    for (size_t mi = 0; mi < ir.moves.size(); ++mi) {
      absl::Status st = round.Apply(ir.moves[mi]);
      if (!st.ok()) {
        error = ErrorJson(rules::GetErrorCode(st), ri, mi,
                          std::string(st.message()) + " (move " + MoveText(ir.moves[mi]) + ")");
        break;
      }
    }
    if (error.is_null() && !round.over() && ri + 1 != in.rounds.size()) {
      error = ErrorJson(ErrorCode::kMissingMoves, ri, nullptr,
                        "the moves of round " + std::to_string(ri) + " stop before it ends");
    }
    // The round an error is in is given with its finished tricks and a null result, and
    // is not booked (REPLAY.md); except for round_over (a move after the round's end): that
    // round is finished, so it is given whole with its result and booked into the game.
    const bool round_over_error =
        !error.is_null() &&
        error["code"] == std::string(rules::ErrorCodeName(ErrorCode::kRoundOver));
    const bool booked = round.over() && (error.is_null() || round_over_error);
    Json rj = RoundJson(round);
    if (!booked) rj["result"] = nullptr;
    rounds_json.push_back(std::move(rj));
    if (booked) {
      game.FinishRound(round);
    } else {
      settled = false;
      unbooked = round;
    }
    last = round;
  }
  const bool ok = error.is_null();
  // After round_over the game is as after that round (settled, next_caller known unless
  // the game is over); after any other error next_caller is null.
  if (!ok && error["code"] != std::string(rules::ErrorCodeName(ErrorCode::kRoundOver)))
    settled = false;
  // Stack points are the game's score as they are paid, so an unbooked stack round shows
  // its points so far.
  const Round* live_stack = (unbooked && in.rules.game == GameType::kStack) ? &*unbooked : nullptr;
  if (view_seat) {
    Json v;
    v["ok"] = ok;
    if (last) {
      v.update(ViewJson(last->View(*view_seat), *last));
      if (unbooked) v["result"] = nullptr;
    } else {
      v["seat"] = *view_seat;
    }
    v["game"] = GameJson(game, settled, live_stack);
    if (!ok) v["error"] = error;
    out.json = v;
  } else {
    out.json["ok"] = ok;
    out.json["rounds"] = rounds_json;
    out.json["game"] = GameJson(game, settled, live_stack);
    if (!ok) out.json["error"] = error;
  }
  out.exit_code = ok ? 0 : 1;
  return out;
}

}  // namespace courtpiece::rules_cli
