#include "courtpiece/table/fake_engine.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace courtpiece::table {
namespace {

constexpr char kRanks[] = "23456789TJQKA";
constexpr char kSuits[] = "CDHS";

int Suit(int card) { return card / 13; }
int Rank(int card) { return card % 13; }

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t SeedWord(const Seed& seed) {
  uint64_t s = 0;
  for (int i = 0; i < 32; ++i) s = s * 131 + seed[i];
  return s;
}

std::vector<std::string> Names(const std::vector<int>& cards) {
  std::vector<std::string> out;
  out.reserve(cards.size());
  for (int c : cards) out.push_back(CardName(c));
  return out;
}

struct FakeOptions {
  int target = 5;
  bool search = false;
};

absl::StatusOr<FakeOptions> ParseFakeOptions(std::string_view options) {
  FakeOptions out;
  while (!options.empty()) {
    size_t comma = options.find(',');
    std::string_view kv = options.substr(0, comma);
    options = comma == std::string_view::npos ? "" : options.substr(comma + 1);
    size_t eq = kv.find('=');
    std::string_view key = kv.substr(0, eq);
    std::string_view val = eq == std::string_view::npos ? "" : kv.substr(eq + 1);
    if (key != "target" && key != "search") {
      return absl::InvalidArgumentError(absl::StrCat(
          "fake engine: unknown option '", std::string(key), "' (allowed: target, search)"));
    }
    int v = 0;
    auto r = std::from_chars(val.data(), val.data() + val.size(), v);
    if (key == "search") {
      if (r.ec != std::errc() || r.ptr != val.data() + val.size() || v < 0 || v > 1) {
        return absl::InvalidArgumentError("fake engine: search must be 0 or 1");
      }
      out.search = v == 1;
      continue;
    }
    if (r.ec != std::errc() || v < 1 || v > 100) {
      return absl::InvalidArgumentError("fake engine: target must be 1..100");
    }
    out.target = v;
  }
  return out;
}

// The fake "searching" bot: the highest legal card (AutoMove plays the lowest), so a test
// tells a searched move from the fallback; it calls as AutoMove does.
class FakeSearchJob final : public BotJob {
 public:
  FakeSearchJob(Move call, std::vector<int> legal)
      : call_(std::move(call)), legal_(std::move(legal)) {}
  Move Run() override {
    if (legal_.empty()) return call_;
    int high = *std::max_element(legal_.begin(), legal_.end(),
                                 [](int a, int b) { return Rank(a) < Rank(b); });
    return {MoveKind::kPlay, CardName(high)};
  }

 private:
  Move call_;
  std::vector<int> legal_;
};

}  // namespace

std::string_view MoveKindName(MoveKind kind) {
  switch (kind) {
    case MoveKind::kCall:
      return "call";
    case MoveKind::kHide:
      return "hide";
    case MoveKind::kPlay:
      return "play";
    case MoveKind::kAsk:
      return "ask";
    case MoveKind::kShow:
      return "show";
  }
  return "?";
}

bool IsCourtKind(std::string_view kind) {
  return kind == "court" || kind == "goon_court" || kind == "kot" || kind == "four_point" ||
         kind == "six_point";
}

std::string CardName(int card) { return std::string{kRanks[Rank(card)], kSuits[Suit(card)]}; }

int ParseCard(std::string_view name) {
  if (name.size() != 2) return -1;
  const char* r = std::find(kRanks, kRanks + 13, name[0]);
  const char* s = std::find(kSuits, kSuits + 4, name[1]);
  if (r == kRanks + 13 || s == kSuits + 4) return -1;
  return static_cast<int>(s - kSuits) * 13 + static_cast<int>(r - kRanks);
}

FakeEngine::FakeEngine(int target_points, int first_dealer, bool search)
    : target_(target_points),
      search_(search),
      dealer_(first_dealer),
      caller_((first_dealer + 1) % 4) {}

absl::Status FakeEngine::StartRound(const Seed& seed) {
  if (phase_ != Phase::kNone || GameOver()) {
    return absl::FailedPreconditionError("fake engine: round already in play or game over");
  }
  std::array<int, 52> deck;
  for (int i = 0; i < 52; ++i) deck[i] = i;
  uint64_t st = SeedWord(seed);
  for (int i = 51; i > 0; --i) {
    int j = static_cast<int>(SplitMix(st) % static_cast<uint64_t>(i + 1));
    std::swap(deck[i], deck[j]);
  }
  for (int s = 0; s < 4; ++s) {
    int seat = (caller_ + s) % 4;
    dealt_[seat].assign(deck.begin() + s * 13, deck.begin() + s * 13 + 13);
    hand_[seat] = dealt_[seat];
  }
  trump_ = -1;
  trick_.clear();
  tricks_ = {0, 0};
  tricks_played_ = 0;
  outcome_ = {};
  phase_ = Phase::kCalling;
  to_act_ = caller_;
  leader_ = caller_;
  EmitAll({"round", caller_, {}, "caller"});
  std::vector<int> five(hand_[caller_].begin(), hand_[caller_].begin() + 5);
  Emit(caller_, {"hand", caller_, Names(five), "first_five"});
  return absl::OkStatus();
}

int FakeEngine::ToAct() const {
  return (phase_ == Phase::kCalling || phase_ == Phase::kPlaying) ? to_act_ : -1;
}

std::vector<int> FakeEngine::LegalCards(int seat) const {
  const std::vector<int>& h = hand_[seat];
  if (trick_.empty()) return h;
  int led = Suit(trick_.front().second);
  std::vector<int> follow;
  for (int c : h) {
    if (Suit(c) == led) follow.push_back(c);
  }
  return follow.empty() ? h : follow;
}

absl::Status FakeEngine::Apply(int seat, const Move& move) {
  if (seat != ToAct()) return absl::FailedPreconditionError("not your turn");
  if (phase_ == Phase::kCalling) {
    if (move.kind != MoveKind::kCall || move.card.size() != 1) {
      return absl::InvalidArgumentError("expected a call of a suit (C, D, H or S)");
    }
    const char* s = std::find(kSuits, kSuits + 4, move.card[0]);
    if (s == kSuits + 4) return absl::InvalidArgumentError("bad suit");
    trump_ = static_cast<int>(s - kSuits);
    EmitAll({"trump", seat, {}, std::string(1, kSuits[trump_])});
    for (int p = 0; p < 4; ++p) Emit(p, {"hand", p, Names(hand_[p]), "full"});
    phase_ = Phase::kPlaying;
    return absl::OkStatus();
  }
  if (move.kind != MoveKind::kPlay) return absl::InvalidArgumentError("expected a card to play");
  int card = ParseCard(move.card);
  std::vector<int> legal = LegalCards(seat);
  if (card < 0 || std::find(legal.begin(), legal.end(), card) == legal.end()) {
    return absl::InvalidArgumentError(absl::StrCat("card ", move.card, " is not legal"));
  }
  std::vector<int>& h = hand_[seat];
  h.erase(std::find(h.begin(), h.end(), card));
  trick_.emplace_back(seat, card);
  EmitAll({"played", seat, {CardName(card)}, ""});
  if (trick_.size() == 4) {
    ResolveTrick();
  } else {
    to_act_ = (seat + 1) % 4;
  }
  return absl::OkStatus();
}

void FakeEngine::ResolveTrick() {
  int led = Suit(trick_.front().second);
  auto score = [&](int c) {
    if (Suit(c) == trump_) return 100 + Rank(c);
    return Suit(c) == led ? Rank(c) : -1;
  };
  auto best = std::max_element(trick_.begin(), trick_.end(),
                               [&](auto& a, auto& b) { return score(a.second) < score(b.second); });
  int winner = best->first;
  tricks_[winner % 2]++;
  tricks_played_++;
  trick_.clear();
  EmitAll({"trick", winner, {}, absl::StrCat(tricks_[0], "-", tricks_[1])});
  to_act_ = winner;
  int caller_team = caller_ % 2;
  if (tricks_[0] == 7 || tricks_[1] == 7) {
    int win = tricks_[0] == 7 ? 0 : 1;
    bool court = tricks_[1 - win] == 0;
    const bool goon = court && win != caller_team;
    outcome_ = {win, court ? (goon ? "goon_court" : "court") : "normal", court ? 2 : 1, goon};
    phase_ = Phase::kOver;
    to_act_ = -1;
    EmitAll({"round_over", -1, {}, outcome_.kind});
  }
}

void FakeEngine::FinishRound() {
  if (phase_ != Phase::kOver) return;
  scores_[outcome_.winning_team] += outcome_.points;
  int caller_team = caller_ % 2;
  if (outcome_.winning_team != caller_team) caller_ = (caller_ + 1) % 4;
  dealer_ = (caller_ + 3) % 4;
  phase_ = Phase::kNone;
  for (auto& h : hand_) h.clear();
}

bool FakeEngine::GameOver() const {
  return phase_ == Phase::kNone && (scores_[0] >= target_ || scores_[1] >= target_);
}

Move FakeEngine::AutoMove(int seat) const {
  if (phase_ == Phase::kCalling) {
    std::array<int, 4> count{};
    for (int i = 0; i < 5; ++i) count[Suit(hand_[seat][i])]++;
    int best = static_cast<int>(std::max_element(count.begin(), count.end()) - count.begin());
    return {MoveKind::kCall, std::string(1, kSuits[best])};
  }
  std::vector<int> legal = LegalCards(seat);
  int low =
      *std::min_element(legal.begin(), legal.end(), [](int a, int b) { return Rank(a) < Rank(b); });
  return {MoveKind::kPlay, CardName(low)};
}

std::unique_ptr<BotJob> FakeEngine::NewBotJob(int seat, bots::Level level, uint64_t seed) const {
  (void)level, (void)seed;
  if (!search_) return nullptr;
  if (phase_ == Phase::kCalling)
    return std::make_unique<FakeSearchJob>(AutoMove(seat), std::vector<int>{});
  return std::make_unique<FakeSearchJob>(Move{}, LegalCards(seat));
}

void FakeEngine::Emit(int to, EngineEvent ev) { pending_[to].push_back(std::move(ev)); }
void FakeEngine::EmitAll(const EngineEvent& ev) {
  for (int s = 0; s < 4; ++s) pending_[s].push_back(ev);
}

std::array<std::vector<EngineEvent>, 4> FakeEngine::TakeEvents() {
  std::array<std::vector<EngineEvent>, 4> out;
  std::swap(out, pending_);
  return out;
}

std::vector<EngineEvent> FakeEngine::ViewOf(int seat) const {
  std::vector<EngineEvent> v;
  v.push_back({"score", -1, {}, absl::StrCat(scores_[0], "-", scores_[1])});
  if (phase_ == Phase::kNone) return v;
  v.push_back({"round", caller_, {}, "caller"});
  if (phase_ == Phase::kCalling) {
    if (seat == caller_) {
      std::vector<int> five(hand_[seat].begin(), hand_[seat].begin() + 5);
      v.push_back({"hand", seat, Names(five), "first_five"});
    }
    return v;
  }
  v.push_back({"trump", caller_, {}, std::string(1, kSuits[trump_])});
  v.push_back({"hand", seat, Names(hand_[seat]), "full"});
  for (auto& [s, c] : trick_) v.push_back({"played", s, {CardName(c)}, ""});
  return v;
}

std::string FakeEngine::Serialize() const {
  std::ostringstream o;
  o << target_ << ' ' << dealer_ << ' ' << scores_[0] << ' ' << scores_[1] << ' '
    << static_cast<int>(phase_) << ' ' << caller_ << ' ' << trump_ << ' ' << to_act_ << ' '
    << leader_ << ' ' << tricks_[0] << ' ' << tricks_[1] << ' ' << tricks_played_ << ' '
    << outcome_.winning_team << ' ' << (outcome_.kind.empty() ? "-" : outcome_.kind) << ' '
    << outcome_.points;
  for (int s = 0; s < 4; ++s) {
    o << ' ' << dealt_[s].size();
    for (int c : dealt_[s]) o << ' ' << c;
    o << ' ' << hand_[s].size();
    for (int c : hand_[s]) o << ' ' << c;
  }
  o << ' ' << trick_.size();
  for (auto& [s, c] : trick_) o << ' ' << s << ' ' << c;
  return o.str();
}

absl::Status FakeEngine::Restore(std::string_view bytes) {
  std::istringstream in{std::string(bytes)};
  int phase = 0;
  std::string kind;
  in >> target_ >> dealer_ >> scores_[0] >> scores_[1] >> phase >> caller_ >> trump_ >> to_act_ >>
      leader_ >> tricks_[0] >> tricks_[1] >> tricks_played_ >> outcome_.winning_team >> kind >>
      outcome_.points;
  phase_ = static_cast<Phase>(phase);
  outcome_.kind = kind == "-" ? "" : kind;
  for (int s = 0; s < 4; ++s) {
    size_t n = 0;
    in >> n;
    dealt_[s].resize(n);
    for (auto& c : dealt_[s]) in >> c;
    in >> n;
    hand_[s].resize(n);
    for (auto& c : hand_[s]) in >> c;
  }
  size_t n = 0;
  in >> n;
  trick_.resize(n);
  for (auto& [s, c] : trick_) in >> s >> c;
  if (!in) return absl::InvalidArgumentError("fake engine: corrupt snapshot");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<GameEngine>> FakeEngineFactory::NewGame(
    std::string_view options, const Seed& first_dealer_seed) {
  absl::StatusOr<FakeOptions> o = ParseFakeOptions(options);
  if (!o.ok()) return o.status();
  int dealer = static_cast<int>(SeedWord(first_dealer_seed) % 4);
  return std::unique_ptr<GameEngine>(std::make_unique<FakeEngine>(o->target, dealer, o->search));
}

absl::Status FakeEngineFactory::Validate(std::string_view options) {
  return ParseFakeOptions(options).status();
}

}  // namespace courtpiece::table
