// RecordsStore: where the lobby keeps what tables record (games, quits, round seeds, closes)
// and what it derives from them (stats per player and game type). The domain (records.h)
// validates and decides; the store applies. Plain structs in and out.
//
// Contract of every Apply*:
//  - ONE transaction. The record's key is stored with its kind and `content_hash` (the
//    domain's hash of the canonical content) under a unique constraint.
//  - A new key: the record and its consequences are stored (ApplyGame: the result rows, and
//    when counts_for_stats the per-player stats of the game type; ApplyQuit: the quit and
//    the player's quit count of the game type), replayed = false.
//  - A key applied before with the same hash: nothing changes, replayed = true.
//  - A key applied before with another hash (or as another kind): AlreadyExists, nothing
//    changes.
//  - Unavailable / Aborted / DeadlineExceeded: maybe applied; the domain retries with the
//    same key (a retry of a committed record answers replayed = true).
// Reads: NotFound is never returned for "no rows" (empty results instead).
// Thread-safety: implementations are safe for concurrent use; concurrent Apply* of the same
// key apply it once.
#ifndef COURTPIECE_SERVICES_LOBBY_RECORDS_STORE_H_
#define COURTPIECE_SERVICES_LOBBY_RECORDS_STORE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace courtpiece::lobby {

struct GamePlayerRecord {
  std::string player;
  int seat = -1;
  bool won = false;
};

// RecordGame, as validated by the domain (vectors hold exactly two, team-indexed).
struct GameRecordData {
  std::string key;  // "<table>:game:<game_no>"
  std::string table_id;
  uint64_t game_no = 0;
  std::string game;  // "classic", "piles", "hidden", "kaat", "stack"
  bool counts_for_stats = false;
  bool ended_early = false;
  int winning_team = -1;  // -1 when ended early
  std::vector<int> scores;
  std::vector<int> courts;                // per team: rounds won with a Court of any kind
  std::vector<int> goon_courts;           // per team: of those, goon_court ones
  std::vector<GamePlayerRecord> players;  // people only
};

struct QuitRecordData {
  std::string key;  // "<table>:quit:<game_no>:<player>"
  std::string table_id;
  uint64_t game_no = 0;
  std::string player;
  std::string game;
};

struct RoundRecordData {
  std::string key;  // "<table>:round:<round>"
  std::string table_id;
  uint64_t round = 0;
  std::string seed_hex;
  std::string result;
  int seed_only_to = -1;
};

struct TableClosedData {
  std::string key;  // "<table>:closed"
  std::string table_id;
};

struct ApplyResult {
  bool replayed = false;
};

struct GameTypeStats {
  std::string game;  // "" for a total
  int64_t played = 0;
  int64_t won = 0;
  int64_t lost = 0;
  int64_t quits = 0;
  int64_t courts = 0;
  int64_t goon_courts = 0;
};

// One game as seen by one of its players.
struct PlayerGameResult {
  std::string table_id;
  uint64_t game_no = 0;
  std::string game;
  std::vector<int> scores;
  int winning_team = -1;
  bool won = false;
  bool counts_for_stats = false;
  absl::Time recorded_at;
};

struct QuitRow {
  std::string table_id;
  uint64_t game_no = 0;
  std::string game;
  absl::Time recorded_at;
};

struct RoundRow {
  uint64_t round = 0;
  std::string seed_hex;
  std::string result;
  int seed_only_to = -1;
  absl::Time recorded_at;
};

class RecordsStore {
 public:
  virtual ~RecordsStore() = default;

  virtual absl::StatusOr<ApplyResult> ApplyGame(const GameRecordData& record,
                                                std::string_view content_hash, absl::Time at,
                                                absl::Time deadline) = 0;
  virtual absl::StatusOr<ApplyResult> ApplyQuit(const QuitRecordData& record,
                                                std::string_view content_hash, absl::Time at,
                                                absl::Time deadline) = 0;
  virtual absl::StatusOr<ApplyResult> ApplyRound(const RoundRecordData& record,
                                                 std::string_view content_hash, absl::Time at,
                                                 absl::Time deadline) = 0;
  virtual absl::StatusOr<ApplyResult> ApplyTableClosed(const TableClosedData& record,
                                                       std::string_view content_hash, absl::Time at,
                                                       absl::Time deadline) = 0;

  // The player's stats, one entry per game type with any record, sorted by game.
  virtual absl::StatusOr<std::vector<GameTypeStats>> Stats(std::string_view player,
                                                           absl::Time deadline) = 0;
  // The player's games (every recorded one, counting or not), newest first.
  virtual absl::StatusOr<std::vector<PlayerGameResult>> RecentResults(std::string_view player,
                                                                      int limit,
                                                                      absl::Time deadline) = 0;
  // The player's quits, newest first; and how many there are in all.
  virtual absl::StatusOr<std::vector<QuitRow>> Quits(std::string_view player, int limit,
                                                     absl::Time deadline) = 0;
  virtual absl::StatusOr<int64_t> QuitsTotal(std::string_view player, absl::Time deadline) = 0;
  // The table's round records with round > after_round, oldest first.
  virtual absl::StatusOr<std::vector<RoundRow>> Rounds(std::string_view table_id,
                                                       uint64_t after_round, int limit,
                                                       absl::Time deadline) = 0;
  // Whether the table's close was recorded.
  virtual absl::StatusOr<bool> TableClosed(std::string_view table_id, absl::Time deadline) = 0;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_RECORDS_STORE_H_
