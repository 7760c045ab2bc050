// "The round in play": the small interface the table drives a game of Court Piece through.
// The real implementation adapts libs/rules (rules_engine.h); FakeEngine (fake_engine.h) is a
// small classic-only engine for tests. The table never sees a hand except through the
// per-seat events an engine renders, so a seat's stream only carries what that seat may see.
//
// Contract: deterministic (the same seed and moves give the same events), no I/O.
// Thread-safety: none; owned and driven by one Table.
#ifndef COURTPIECE_TABLE_ENGINE_H_
#define COURTPIECE_TABLE_ENGINE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "courtpiece/bots/search_bot.h"

namespace courtpiece::table {

using Seed = std::array<uint8_t, 32>;

// A decision of the seat to act. `card` holds a card ("AS") for kPlay/kHide, a suit letter
// ("S") for kCall, and is empty for kAsk/kShow.
enum class MoveKind : uint8_t { kCall = 0, kHide = 1, kPlay = 2, kAsk = 3, kShow = 4 };
struct Move {
  MoveKind kind = MoveKind::kPlay;
  std::string card;
  bool operator==(const Move&) const = default;
};
std::string_view MoveKindName(MoveKind kind);

// What one seat learns from the engine: already filtered to that seat's view.
struct EngineEvent {
  std::string type;                // "hand", "trump", "played", "trick", "round_over", ...
  int seat = -1;                   // the seat the event is about, -1 for none
  std::vector<std::string> cards;  // only cards this seat may see
  std::string detail;              // e.g. the result kind
};

struct RoundOutcome {
  int winning_team = -1;  // 0 (seats 0,2), 1 (seats 1,3), -1 for a draw
  std::string kind;       // "normal", "court", "goon_court", "kot", "four_point", "six_point",
                          // "draw"
  int points = 0;
  // All 13 taken by the team that did not call (kaat: did not set the trump): a Goon Court,
  // also when four_point or six_point replaced its points (RULES.md 2.2, docs/lobby.md).
  bool goon = false;
};
// True for the kinds that pay double (RULES.md §4.6).
bool IsCourtKind(std::string_view kind);

// One searching bot's decision, made by GameEngine::NewBotJob for the seat to act. It owns
// copies of the game's rules and of that seat's view only (never the round), so it cannot
// reach a card the seat may not see, and it may run on any thread (the table service's bot
// pool), once. Run() is a pure function of what it holds: the same job gives the same move.
class BotJob {
 public:
  virtual ~BotJob() = default;
  // A legal move for the seat at the view the job was made from.
  virtual Move Run() = 0;
};

class GameEngine {
 public:
  virtual ~GameEngine() = default;
  // Deals a round from `seed`. Precondition: no round in play and !GameOver().
  virtual absl::Status StartRound(const Seed& seed) = 0;
  virtual bool InRound() const = 0;
  // The seat whose decision the round waits for; -1 when no round is in play or it is over.
  virtual int ToAct() const = 0;
  // Applies `move` for `seat`; InvalidArgument / FailedPrecondition when not legal.
  virtual absl::Status Apply(int seat, const Move& move) = 0;
  // A legal move for the seat to act, chosen by the heuristic bot from that seat's view only.
  virtual Move AutoMove(int seat) const = 0;
  // The searching bot's decision for `seat` (the seat to act) at `level` (never easy), its
  // search seeded by `seed`; nullptr when this engine has no searching bot (the table then
  // plays AutoMove at once).
  virtual bool Searches() const { return false; }  // NewBotJob gives jobs
  virtual std::unique_ptr<BotJob> NewBotJob(int seat, bots::Level level, uint64_t seed) const {
    (void)seat, (void)level, (void)seed;
    return nullptr;
  }
  // Events since the last call, per seat (index = seat).
  virtual std::array<std::vector<EngineEvent>, 4> TakeEvents() = 0;
  // Everything `seat` may see now (for a reconnect).
  virtual std::vector<EngineEvent> ViewOf(int seat) const = 0;
  virtual bool RoundOver() const = 0;
  virtual RoundOutcome Outcome() const = 0;  // precondition: RoundOver()
  // The only seat that may learn the finished round's seed, or -1 for every seat. With the
  // seed anyone can rebuild every hand, so in a hidden round in which the caller threw a card
  // face down (nobody else ever sees it, RULES.md §2.3 D) only the caller may have it.
  // Precondition: a round in play or just over (before FinishRound()).
  virtual int SeedOnlyFor() const { return -1; }
  // Closes the finished round: scores it, picks the next caller. Precondition: RoundOver().
  virtual void FinishRound() = 0;
  virtual bool GameOver() const = 0;
  virtual std::array<int, 2> Scores() const = 0;
  virtual std::string Serialize() const = 0;
  virtual absl::Status Restore(std::string_view bytes) = 0;
};

// Makes a fresh game for the table's game options (validated when the table is created).
class EngineFactory {
 public:
  virtual ~EngineFactory() = default;
  virtual absl::StatusOr<std::unique_ptr<GameEngine>> NewGame(std::string_view options,
                                                              const Seed& first_dealer_seed) = 0;
  virtual absl::Status Validate(std::string_view options) = 0;
};

}  // namespace courtpiece::table

#endif  // COURTPIECE_TABLE_ENGINE_H_
