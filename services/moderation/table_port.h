// What the moderation service asks of the table tier (docs/moderation.md, table_service.proto):
// whether a player holds the recording lock (CheckVoiceLock), the announcement of a stored
// note (AnnounceVoiceNote) and who is seated at a table now (GetTable), each by table id.
// The real one (grpc_table_port.h) finds the table's owner in the Redis registry and follows
// one owner-elsewhere redirect; the in-memory one is FakeTablePort (fake_ports.h).
//
// Contract (every implementation):
// - NOT_FOUND: unknown table (never created, or closed and gone).
// - UNAVAILABLE: the owner is not live, unreachable, draining, or did not answer before
//   `deadline` (the caller may retry: every call is idempotent).
// - AnnounceVoiceNote: FAILED_PRECONDITION whose message starts with the table's reason word
//   ("no_lock: ...", "round_over: ...") when the table refuses; replayed when the note id was
//   announced already. INVALID_ARGUMENT for a malformed request (a programmer error here).
// Thread-safety: implementations are thread-safe.
#ifndef COURTPIECE_SERVICES_MODERATION_TABLE_PORT_H_
#define COURTPIECE_SERVICES_MODERATION_TABLE_PORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace courtpiece::moderation {

// CheckVoiceLockResponse, as plain C++.
struct VoiceLock {
  bool may_send = false;  // holds the lock and the round's allowance is unused
  uint64_t round = 0;     // the table's current round (the note's round)
  int seat = -1;
  std::string reason;  // when !may_send: "not_seated", "alone", "allowance_used", "no_lock"
};

struct Announcement {
  std::string table_id;
  std::string player;
  uint64_t round = 0;
  std::string note_id;
  int64_t duration_ms = 0;  // 1..7500 (7 s and the tolerance)
};
struct Announced {
  int64_t play_at_ms = 0;
  bool replayed = false;
};

// The part of TableInfo moderation reads: who sits where.
struct SeatView {
  int seat = 0;
  std::string kind;  // "empty", "person", "bot"
  std::string player;
};
struct TableView {
  std::string table_id;
  uint64_t round = 0;
  std::string phase;
  std::vector<SeatView> seats;

  // Whether `player` is seated here as a person.
  bool Seated(const std::string& player) const {
    for (const SeatView& s : seats) {
      if (s.kind == "person" && s.player == player) return true;
    }
    return false;
  }
};

class TablePort {
 public:
  virtual ~TablePort() = default;
  virtual absl::StatusOr<VoiceLock> CheckVoiceLock(const std::string& table_id,
                                                   const std::string& player,
                                                   absl::Time deadline) = 0;
  virtual absl::StatusOr<Announced> AnnounceVoiceNote(const Announcement& note,
                                                      absl::Time deadline) = 0;
  virtual absl::StatusOr<TableView> GetTable(const std::string& table_id, absl::Time deadline) = 0;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_TABLE_PORT_H_
