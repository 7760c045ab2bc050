// The table as a deterministic state machine (RULES.md §4 and §5, docs/table.md).
//
// Inputs: player commands (Handle), the time (every input carries `now_ms`, a virtual
// absolute time in milliseconds; the host calls Advance(now) at NextDeadline()), wallet
// replies (OnWalletReply) and searching bots' moves (OnBotMove: the host runs the search the
// table asks for, PendingBotTurn/NewBotJob, off the table's thread). Outputs, drained with
// TakeEvents()/TakeEffects(): events addressed to a seat (built from that seat's engine view, so no
// stream carries a card its seat may not see) and effects for the host (wallet transfers, a game to
// record, a quit to record, a voice note report, the table closing). The machine owns no clock, no
// socket and no randomness: round seeds come from the host's SeedSource.
//
// Determinism: a Table restored from Snapshot() and fed the same inputs emits the same events
// and effects as the original. Thread-safety: none; one owner drives a table at a time.
#ifndef COURTPIECE_TABLE_TABLE_H_
#define COURTPIECE_TABLE_TABLE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "courtpiece/table/engine.h"

namespace courtpiece::table {

// Timings of RULES.md §4–5 (all in milliseconds).
inline constexpr int64_t kAutoStartMs = 7'000;
inline constexpr int64_t kCountInMs = 7'000;
inline constexpr int64_t kVoteSilenceMs = 20'000;
inline constexpr int64_t kKeepSeatInGameMs = 600'000;
inline constexpr int64_t kKeepSeatOutsideGameMs = 60'000;
inline constexpr int64_t kVoiceMaxMs = 7'000;
// A recording measured a little over 7 s (the encoder's last frame): moderation accepts it
// (docs/moderation.md "Limits"), and the table takes its real length, so the report window
// runs its full 5 s after it ends (§5.4).
inline constexpr int64_t kVoiceToleranceMs = 500;
inline constexpr int64_t kVoiceUploadGraceMs = 3'000;  // lock held this long past 7 s
// The players remembered as having used a round's voice allowance (§5.1): more than ever sit
// at one table in a round; past it the oldest is forgotten.
inline constexpr size_t kVoiceUsedByMax = 64;
inline constexpr int64_t kVoicePlayDelayMs = 1'000;
inline constexpr int64_t kVoiceReportWindowMs = 5'000;  // after the note ends (§5.4)
inline constexpr int kTimeoutsBeforeBot = 5;
// Table options' ranges (RULES.md §4.1).
inline constexpr int64_t kBetMinCoins = 25;
inline constexpr int64_t kBetMaxCoins = 1000;
inline constexpr int64_t kTurnTimeMinMs = 5'000;
inline constexpr int64_t kTurnTimeMaxMs = 30'000;

// The host draws each seed with a CSPRNG; `draw_index` (0, 1, 2, ... per table, kept in the
// snapshot) lets a deterministic source for tests and the tablesim give the same seeds again.
class SeedSource {
 public:
  virtual ~SeedSource() = default;
  virtual Seed Draw(uint64_t draw_index) = 0;
};
// SHA-256(master || table_id || draw_index): for tests, the tablesim and the benchmark.
class DeterministicSeedSource final : public SeedSource {
 public:
  DeterministicSeedSource(std::string master, std::string table_id)
      : master_(std::move(master)), table_id_(std::move(table_id)) {}
  Seed Draw(uint64_t draw_index) override;

 private:
  std::string master_, table_id_;
};
std::string Sha256Hex(const Seed& seed);
std::string SeedHex(const Seed& seed);

struct TableOptions {
  std::string table_id;           // also names the pot accounts: pot:<table_id>:<round>
  std::string host_player;        // the creator, seated at seat 0
  int64_t bet_coins = 25;         // 25..1000
  int64_t turn_time_ms = 15'000;  // 5000..30000
  std::string game_options;       // opaque to the table, validated by the EngineFactory
  // How the seats the bots took play (docs/bots.md). A person's seat played for them (a
  // timed-out turn, away, five timeouts) plays at bots::kTimeoutLevel whatever this is.
  bots::Level bot_level = bots::Level::kEasy;
};

// "easy" (also ""), "normal" or "strong"; InvalidArgument "bot_level must be easy, normal or
// strong" otherwise (the name clients and the lobby use).
absl::StatusOr<bots::Level> ParseBotLevel(std::string_view name);

// How long the table waits for a searching bot's move (its budget, table time) before the
// heuristic plays instead. Above the search's wall time on a loaded 2-core machine (p99
// normal 35..120 ms, strong 170..510 ms: docs/bots.md), so the fallback stays rare.
inline constexpr int64_t kBotBudgetNormalMs = 300;
inline constexpr int64_t kBotBudgetStrongMs = 1'000;
int64_t BotBudgetMs(bots::Level level);

// A searching bot's move the table waits for (Table::PendingBotTurn).
struct BotTurn {
  uint64_t id = 0;                           // 1, 2, ... per table; OnBotMove must name it
  int seat = -1;                             // the seat to act
  bots::Level level = bots::Level::kNormal;  // never easy (easy plays at once)
  bool timed_out = false;   // a person's turn ran out (kept even if they come back)
  int64_t deadline_ms = 0;  // then the heuristic plays (Advance)
};

// The checks Table::Create makes on its options (not the game options, which the EngineFactory
// checks): InvalidArgument naming the option and its range.
absl::Status ValidateTableOptions(const TableOptions& options);

enum class CommandType : uint8_t {
  kJoin = 0,
  kLeave,
  kDisconnect,
  kReconnect,
  kStartNow,
  kRemoveBot,
  kAskBot,
  kVote,
  kSwapPartner,
  kEndEarly,
  kMove,
  kVoiceStart,
  kVoiceSent,
  kVoiceDiscard,
  kReport,
  kTakeBack,  // after five timeouts: take the seat back from the bot (§4.7)
};
std::string_view CommandTypeName(CommandType type);
std::optional<CommandType> ParseCommandType(std::string_view name);

struct Command {
  CommandType type = CommandType::kJoin;
  std::string player;
  int seat = -1;              // kRemoveBot, kAskBot: the seat; kSwapPartner: opponent 1 or 3
  bool yes = true;            // kVote
  Move move;                  // kMove (call, hide, play, ask, show)
  std::string note_id;        // kVoiceSent, kReport
  int64_t duration_ms = 0;    // kVoiceSent
  int64_t balance_coins = 0;  // kJoin: the player's balance as the host read it
  // kJoin: seated by the lobby before the player's stream is open: away (disconnected) from
  // the start, so the others see "seated" then "away", not a start begun and cancelled.
  bool away = false;
};

// One event for one seat's stream. `seq` grows by one per event of the table.
struct Event {
  uint64_t seq = 0;
  int to_seat = -1;
  std::string to_player;  // the person at to_seat when the event was emitted (the recipient)
  std::string type;
  int seat = -1;  // the seat the event is about
  std::string player;
  std::vector<std::string> cards;
  std::string detail;
  int64_t value = 0;
};

struct TransferLeg {
  std::string account;       // "player:<id>", "house", "pot:<table>:<round>"
  int64_t amount_coins = 0;  // negative = debit
};
enum class TransferStep : uint8_t { kStake = 0, kCourtStake = 1, kPayout = 2, kRefund = 3 };
std::string_view TransferStepName(TransferStep step);
struct Transfer {
  std::string key;  // idempotency key "<table>:<round>:<step>[:<attempt>]"
  TransferStep step = TransferStep::kStake;
  std::vector<TransferLeg> legs;  // sum to zero
  // Stakes only: every debited player account must hold at least this before the transfer,
  // else the wallet refuses it and names those players (RULES.md §4.5).
  int64_t min_balance_coins = 0;
  bool awaited = false;  // the table waits for OnWalletReply with this key
};

struct PlayerResult {
  std::string player;
  int seat = -1;
  bool won = false;
};
struct GameRecord {
  uint64_t game_no = 0;
  bool counts_for_stats = false;  // two or more people and not ended early
  bool ended_early = false;
  int winning_team = -1;  // -1 when ended early
  std::array<int, 2> scores{0, 0};
  std::vector<PlayerResult> players;  // people only
  // Per team (index = team): the game's rounds the team won with a Court of any kind
  // (IsCourtKind), and of those the Goon Courts (RoundOutcome::goon; docs/lobby.md).
  std::array<int, 2> courts{0, 0};
  std::array<int, 2> goon_courts{0, 0};
};
// The game type named by the table's game options ({"game":"hidden",...}); "classic" when
// they name none (FakeEngine's only game; the rules engine requires "game").
std::string GameTypeOf(std::string_view game_options);

enum class EffectType : uint8_t {
  kTransfer = 0,
  kRecordGame,
  kRecordQuit,
  kReport,
  kClose,
  kRecordRound,  // a round ended or was abandoned: its seed, always, for dispute audit
};
struct RoundRecord {
  uint64_t round_no = 0;
  std::string seed_hex;   // the round seed (hex); streams may not all have it (docs/table.md)
  std::string result;     // "<kind> <score0>-<score1>", or "abandoned"
  int seed_only_to = -1;  // the only seat sent the seed, -1 = every seat
};
std::string_view EffectTypeName(EffectType type);
struct Effect {
  EffectType type = EffectType::kTransfer;
  Transfer transfer;            // kTransfer
  GameRecord game;              // kRecordGame
  std::string player;           // kRecordQuit: who quit; kReport: the reporter
  uint64_t game_no = 0;         // kRecordQuit: the game walked out of
  std::string game_type;        // kRecordGame, kRecordQuit: GameTypeOf(the game options)
  std::string note_id, author;  // kReport
  uint64_t note_round = 0;      // kReport: the round the note belongs to (its voice round)
  RoundRecord round;            // kRecordRound
};

enum class SeatKind : uint8_t { kEmpty = 0, kPerson = 1, kBot = 2 };
struct SeatState {
  SeatKind kind = SeatKind::kEmpty;
  std::string player;
  bool connected = true;
  bool left = false;          // pressed Leave during a round: a bot plays until it ends
  int64_t keep_until_ms = 0;  // away between rounds: the seat is kept until then
  int timeouts_in_row = 0;
  bool bot_driving = false;  // five timeouts in a row: a bot plays until the player acts
  bool voice_used = false;
  bool end_early = false;
  bool Away() const { return kind == SeatKind::kPerson && (!connected || left); }
};

enum class Phase : uint8_t {
  kWaiting = 0,     // before a game, between games, or a game waiting for a seat
  kCountIn = 1,     // 7 s before a round; leaving is free
  kStaking = 2,     // awaiting the stake transfer
  kPlaying = 3,     // a round in play
  kCourtStake = 4,  // awaiting the losing seats' second stake
  kClosed = 5,
};

struct Vote {
  bool active = false;
  bool swap = false;  // false: a bot for `seat`; true: host's partner swap with `seat`
  int seat = -1;
  std::string asker;
  int64_t deadline_ms = 0;
  std::vector<std::string> pending;  // people yet to answer
};

struct VoiceNote {
  std::string note_id, author;
  int author_seat = -1;
  uint64_t round = 0;  // its voice round (§5.1: a count-in belongs to the round it opens)
  int64_t play_at_ms = 0, report_until_ms = 0;
  std::vector<std::string> reporters;
};

class Table {
 public:
  static absl::StatusOr<std::unique_ptr<Table>> Create(const TableOptions& options,
                                                       EngineFactory* engines, SeedSource* seeds,
                                                       int64_t now_ms);
  static absl::StatusOr<std::unique_ptr<Table>> Restore(std::string_view snapshot,
                                                        EngineFactory* engines, SeedSource* seeds);

  // Fires every deadline up to `now_ms`, then applies `command`. Errors are the player's
  // (InvalidArgument, FailedPrecondition, NotFound, PermissionDenied) and change nothing.
  absl::Status Handle(const Command& command, int64_t now_ms);
  // Fires every deadline up to `now_ms`, in order, each at its own time.
  void Advance(int64_t now_ms);
  // The wallet's answer to an awaited transfer. `short_players`: players whose balance was
  // below the transfer's min_balance_coins or who could not pay.
  absl::Status OnWalletReply(std::string_view key, bool ok,
                             const std::vector<std::string>& short_players, int64_t now_ms);

  // Searching bots. When a bot's seat (at a normal or strong table), or a person's seat
  // played for them (bots::kTimeoutLevel), is to act and the engine Searches(), the table
  // does not play at once: it waits for the move, PendingBotTurn() says which, until its
  // deadline_ms (BotBudgetMs of the level), when the heuristic (AutoMove) plays instead. The
  // host runs NewBotJob() off the table's thread and answers with OnBotMove. Meanwhile a
  // `move` of that seat's person is refused (FailedPrecondition); a person back at an away
  // or bot-driven seat ends the wait (their turn starts); a timed-out turn's wait is kept.
  std::optional<BotTurn> PendingBotTurn() const;
  // The search for PendingBotTurn(): the engine's job over that seat's view only; its seed
  // is derived from the table id, the round and the turn's id (never from the round seed).
  // Precondition: PendingBotTurn().
  std::unique_ptr<BotJob> NewBotJob() const;
  // Fires every deadline up to `now_ms`, then plays `move` for the awaited turn `id`; no
  // move (the host could not run the search) or one the engine refuses plays the heuristic's
  // instead. NotFound for an id not awaited (late: the budget ran out, or stale), changing
  // nothing.
  absl::Status OnBotMove(uint64_t id, const std::optional<Move>& move, int64_t now_ms);

  // Emits to the player's seat everything it may see now (what a reconnect gets), changing
  // nothing: for a new connection of a player the table still counts as connected (the
  // host's own reconnect after a failover). PermissionDenied when not seated.
  absl::Status SendView(std::string_view player);

  std::optional<int64_t> NextDeadline() const;
  std::optional<std::string> AwaitedTransferKey() const;
  std::vector<Event> TakeEvents();
  std::vector<Effect> TakeEffects();
  // The whole state, as protos/courtpiece/table/v1/table_state.proto. Outputs not yet taken
  // are not part of it: drain TakeEvents()/TakeEffects() first.
  std::string Snapshot() const;

  Phase phase() const { return phase_; }
  const SeatState& seat(int s) const { return seats_[s]; }
  const std::string& host() const { return host_; }
  bool game_active() const { return game_active_; }
  uint64_t round_no() const { return round_no_; }
  const GameEngine* engine() const { return engine_.get(); }
  const Vote& vote() const { return vote_; }
  int recording_seat() const { return recording_seat_; }
  // The round whose voice allowance SeatState::voice_used is, and so the round a note
  // recorded now belongs to: round_no() + 1 from a count-in on, else round_no() (§5.1).
  uint64_t voice_round() const { return voice_round_; }
  // The voice round of the note being recorded (recording_seat() >= 0): the round it was
  // started in, even if a count-in began meanwhile (§5.1).
  uint64_t recording_round() const { return recording_round_; }
  // Whether `player` used the allowance of voice_round(), seated now or not (leaving and
  // sitting down again does not give it back, §5.1).
  bool VoiceUsedBy(std::string_view player) const;
  // People (not bots) seated, away or not: voice notes need two (§5.1).
  int PeopleSeated() const;
  // An announced note still kept for reports (kept at least until its report window
  // closes; pruned when a later note is announced after that), or nullptr.
  const VoiceNote* FindNote(std::string_view note_id) const;
  const TableOptions& options() const { return options_; }

 private:
  Table(const TableOptions& options, EngineFactory* engines, SeedSource* seeds);
  struct State;  // serialisation helper (table_snapshot.cc)
  friend struct State;

  // Commands.
  absl::Status Dispatch(int s, const Command& c, int64_t now);
  absl::Status Join(const Command& c, int64_t now);
  absl::Status Leave(int s, int64_t now);
  absl::Status Disconnect(int s, int64_t now);
  absl::Status Reconnect(int s, int64_t now);
  absl::Status StartNow(int s, int64_t now);
  absl::Status RemoveBot(int s, int target, int64_t now);
  absl::Status AskBot(int s, int target, int64_t now);
  absl::Status SwapPartner(int s, int target, int64_t now);
  absl::Status CastVote(int s, bool yes, int64_t now);
  absl::Status EndEarly(int s, int64_t now);
  absl::Status PlayMove(int s, const Move& move, int64_t now);
  absl::Status VoiceStart(int s, int64_t now);
  absl::Status VoiceSent(int s, const Command& c, int64_t now);
  absl::Status VoiceDiscard(int s, int64_t now);
  absl::Status Report(int s, const Command& c, int64_t now);

  // Flow.
  void FireDue(int64_t t);
  void Reschedule(int64_t now);  // auto start / count-in after any seat change
  void StartGame(int64_t now);
  void EndCountIn(int64_t now);
  void StartRound(int64_t now);
  // The stake was accepted but a seated person is away (§4.3): awaits the transfer undoing it
  // (key `<table>:<round>:stake_refund:<attempt>`), staying in kStaking until it is accepted.
  void ReturnStake(const Transfer& stake);
  void DriveTurns(int64_t now);
  void ApplyMove(int s, const Move& move, int64_t now);
  // Plays the machine's move for seat `s` (a bot, or a person's seat played for them): the
  // heuristic at once (true), or a searching bot's, awaited (false: bot_wait_ is set).
  bool PlayForSeat(int s, bool timed_out, int64_t now);
  bots::Level LevelFor(int s) const;
  void EndRound(int64_t now);
  void Payout(int64_t now);
  void AfterRound(bool game_over, int64_t now);
  // Seats away outside a round in a running game: left → freed (a quit when the game
  // counts); disconnected → kept kKeepSeatInGameMs.
  void SettleAwaySeats(int64_t now);
  // The seat's person acted: a bot driving after five timeouts hands the seat back (§4.7).
  void ReleaseBot(int s, int64_t now);
  // The voice allowance belongs to round `round` (its count-in included, §5.1): a new round
  // gives every seat its note back.
  void BeginVoiceRound(uint64_t round);
  void FinishGame(bool ended_early, int64_t now);
  void ResolveVote(bool passed, int64_t now);
  void ExpireKeptSeat(int s, int64_t now);
  void FreeSeat(int s, std::string_view reason, bool quit);
  void MaybeClose();
  void MaybeFinishEarly(int64_t now);
  void ReleaseVoiceLock(int64_t now, std::string_view why);
  // Publishes the round seed to every seat but, when `only_to` >= 0, to that seat alone;
  // always records it in a kRecordRound effect.
  void PublishSeed(int only_to, std::string result);

  // Helpers.
  int SeatOf(std::string_view player) const;
  bool AllSeatsReady() const;
  bool AnyoneAway() const;  // a seated person is disconnected or has left
  bool InRound() const {
    return phase_ == Phase::kStaking || phase_ == Phase::kPlaying || phase_ == Phase::kCourtStake;
  }
  bool GameCounts() const { return game_people_ >= 2; }
  // A running game of which a round was dealt: leaving is then a quit and a lost connection
  // is kept 10 min; before its first deal it is as before a game (§4.5 D, docs/table.md).
  bool GameUnderWay() const { return game_active_ && game_under_way_; }
  // Walking out now abandons a game that counts.
  bool QuitNow() const { return GameUnderWay() && GameCounts(); }
  std::string PotAccount() const;
  std::string SeatAccount(int s) const;
  void EmitAll(Event ev);
  void EmitTo(int s, Event ev);
  void FlushEngineEvents();
  // A reconnecting seat's snapshot of the table's own state (the engine sends the round's).
  void EmitTableView(int s);
  // Seats, the seed commitment, the engine's view, the table view: a reconnect's catch-up.
  void EmitSeatView(int s);
  // A reconnecting seat's view of the round seed (RULES.md §3 Publication): the commitment
  // of the game's current or last round, before its cards; the seed once that round ended,
  // if this seat's person was entitled to it.
  void EmitSeedCommitment(int s);
  void EmitSeedIfEntitled(int s);
  void EmitTransfer(Transfer t);

  TableOptions options_;
  EngineFactory* engines_;
  SeedSource* seeds_;
  std::unique_ptr<GameEngine> engine_;

  Phase phase_ = Phase::kWaiting;
  std::array<SeatState, 4> seats_;
  std::string host_;
  bool game_active_ = false;
  uint64_t game_no_ = 0;
  uint64_t round_no_ = 0;       // rounds started at this table; the staking round is +1
  uint64_t stake_attempt_ = 0;  // refused stake transfers of the staking round
  uint64_t draw_index_ = 0;
  int game_people_ = 0;
  bool game_under_way_ = false;  // a round of the running game was dealt
  int64_t next_game_at_ = 0;     // a game ended: the next may start by itself from then on
  uint64_t voice_round_ = 0;     // the round whose voice allowance SeatState::voice_used is
  // Who was sent the last round's seed: empty = every seat, else that player alone (a hidden
  // round with a face-down throw). A reconnect's catch-up view re-sends it by this.
  std::string seed_only_player_;
  Seed round_seed_{};
  int64_t auto_start_at_ = 0, count_in_until_ = 0, turn_deadline_ = 0;
  int turn_seat_ = -1;
  std::optional<BotTurn> bot_wait_;  // the searching bot's move awaited (PendingBotTurn)
  uint64_t bot_requests_ = 0;        // bot turns awaited so far: the last id given
  std::vector<TransferLeg> stakes_;  // what each account put into the current pot
  int64_t pot_coins_ = 0;
  std::string awaited_key_;
  Transfer awaited_;  // the awaited transfer (re-emitted with a new attempt when refused)
  RoundOutcome outcome_;
  bool outcome_game_over_ = false;
  std::array<int, 2> game_courts_{0, 0};       // the running game's Courts per team
  std::array<int, 2> game_goon_courts_{0, 0};  // of which Goon Courts
  uint32_t away_at_round_end_ = 0;  // bit s: seat s's person was away when the round ended
  Vote vote_;
  int recording_seat_ = -1;
  int64_t recording_until_ = 0;
  uint64_t recording_round_ = 0;  // the voice round the note being recorded belongs to
  // Who used the allowance of voice_round_ (at most kVoiceUsedByMax; cleared each round).
  std::vector<std::string> voice_used_by_;
  std::vector<VoiceNote> notes_;
  uint64_t seq_ = 0;
  std::vector<Event> events_;
  std::vector<Effect> effects_;
};

}  // namespace courtpiece::table

#endif  // COURTPIECE_TABLE_TABLE_H_
