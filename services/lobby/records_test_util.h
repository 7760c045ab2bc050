// Test helpers for the records part: well-formed sample records.
#ifndef COURTPIECE_SERVICES_LOBBY_RECORDS_TEST_UTIL_H_
#define COURTPIECE_SERVICES_LOBBY_RECORDS_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "services/lobby/records_store.h"

namespace courtpiece::lobby::testing {

// A finished classic game won by team 0 (seats 0, 2) 5-2, team 0 with 2 Courts of which 1
// Goon Court, team 1 with 1 Court; `a` at seat 0 (won), `b` at seat 1 (lost).
inline GameRecordData Game(const std::string& table, uint64_t game_no,
                           const std::string& a = "alice", const std::string& b = "bob") {
  return GameRecordData{.key = absl::StrCat(table, ":game:", game_no),
                        .table_id = table,
                        .game_no = game_no,
                        .game = "classic",
                        .counts_for_stats = true,
                        .ended_early = false,
                        .winning_team = 0,
                        .scores = {5, 2},
                        .courts = {2, 1},
                        .goon_courts = {1, 0},
                        .players = {{a, 0, true}, {b, 1, false}}};
}

inline QuitRecordData Quit(const std::string& table, uint64_t game_no, const std::string& player,
                           const std::string& game = "classic") {
  return QuitRecordData{.key = absl::StrCat(table, ":quit:", game_no, ":", player),
                        .table_id = table,
                        .game_no = game_no,
                        .player = player,
                        .game = game};
}

inline RoundRecordData Round(const std::string& table, uint64_t round) {
  return RoundRecordData{.key = absl::StrCat(table, ":round:", round),
                         .table_id = table,
                         .round = round,
                         .seed_hex = std::string(64, 'a'),
                         .result = "normal 1-0",
                         .seed_only_to = -1};
}

inline TableClosedData Closed(const std::string& table) {
  return TableClosedData{.key = absl::StrCat(table, ":closed"), .table_id = table};
}

}  // namespace courtpiece::lobby::testing

#endif  // COURTPIECE_SERVICES_LOBBY_RECORDS_TEST_UTIL_H_
