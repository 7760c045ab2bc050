// TableHarness: drives one Table in virtual time with a fake ledger wallet, for tests, the
// tablesim and the benchmark. Not for production. Thread-safety: none.
#ifndef COURTPIECE_TABLE_TESTING_H_
#define COURTPIECE_TABLE_TESTING_H_

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "courtpiece/table/fake_engine.h"
#include "courtpiece/table/table.h"

namespace courtpiece::table {

class TableHarness {
 public:
  // `engines` defaults to a FakeEngineFactory owned by the harness.
  explicit TableHarness(TableOptions options, std::string master_seed = "seed",
                        EngineFactory* engines = nullptr, int64_t host_balance = 100'000,
                        int64_t start_ms = 1'000'000);

  Table& table() { return *table_; }
  int64_t now() const { return now_; }
  // Applies a command at now(), then answers awaited transfers. Returns the table's status.
  absl::Status Do(Command c);
  absl::Status Join(const std::string& player, int64_t balance = 100'000);
  absl::Status Simple(CommandType type, const std::string& player, int seat = -1);
  absl::Status Vote(const std::string& player, bool yes);
  absl::Status Play(const std::string& player, const Move& move);
  // Moves virtual time to `t` (>= now), firing every deadline on the way.
  void AdvanceTo(int64_t t);
  void Run(int64_t ms) { AdvanceTo(now_ + ms); }
  // Runs until the table waits on a person (a turn or nothing due), up to `max_ms`.
  void RunUntilIdle(int64_t max_ms = 3'600'000);
  // Plays every turn waiting on a connected person with the engine's AutoMove, until the
  // round in play (if any) is over or waits on something else.
  void PlayPeople();
  // Drains outputs, applies transfers to the ledger and answers awaited ones.
  void Pump();
  // Replaces the table by one restored from its own snapshot.
  void SnapshotRestore();

  // Everything seen so far.
  std::vector<Event> events;
  std::vector<Effect> effects;
  std::vector<int64_t> event_times, effect_times;
  // The order in which they came out: {false, i} = events[i], {true, i} = effects[i].
  std::vector<std::pair<bool, size_t>> order;
  // The fake wallet's ledger. Unknown accounts start at 0; the house may go negative.
  std::map<std::string, int64_t> balances;
  // Scripted wallet replies: when non-empty, the next awaited transfer gets the front one
  // instead of the ledger's own judgement. `short_players` empty = refuse naming nobody.
  struct Reply {
    bool ok = true;
    std::vector<std::string> short_players;
  };
  std::deque<Reply> scripted_replies;
  bool auto_reply = true;  // false: awaited transfers stay pending until Reply() is called
  absl::Status ReplyNow(const Reply& reply);
  // Searching bots (Table::PendingBotTurn): Pump runs the table's job at once and answers
  // with its move, as a host with an idle pool would. false: the move stays awaited until
  // AnswerBot(), or its deadline plays the heuristic's.
  bool answer_bots = true;
  int bot_moves_answered = 0;  // by Pump or AnswerBot
  // Answers the awaited bot turn with `move` (nullopt: the heuristic's), at now(), then Pump.
  absl::Status AnswerBot(const std::optional<Move>& move);

  // Helpers for assertions.
  std::vector<Event> EventsOfType(std::string_view type) const;
  std::vector<Effect> EffectsOfType(EffectType type) const;
  std::vector<std::string> Quits() const;
  int64_t Sum() const;  // sum of every ledger balance (the sum of initial grants)

 private:
  void Absorb();
  void Settle(const Transfer& t);
  std::unique_ptr<FakeEngineFactory> own_engines_;
  EngineFactory* engines_;
  std::unique_ptr<SeedSource> seeds_;
  std::unique_ptr<Table> table_;
  int64_t now_ = 1'000'000;
  int64_t granted_ = 0;
};

}  // namespace courtpiece::table

#endif  // COURTPIECE_TABLE_TESTING_H_
