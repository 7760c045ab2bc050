// In-memory TablePort and LobbyPort for unit tests, with the table's voice rules as
// table_service.proto states them (CheckVoiceLock's reasons in order; AnnounceVoiceNote
// idempotent by note id, then round_over, then no_lock) and failure injection.
// Thread-safety: thread-safe (one mutex each).
#ifndef COURTPIECE_SERVICES_MODERATION_FAKE_PORTS_H_
#define COURTPIECE_SERVICES_MODERATION_FAKE_PORTS_H_

#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "courtpiece/common/clock.h"
#include "services/moderation/lobby_port.h"
#include "services/moderation/table_port.h"

namespace courtpiece::moderation {

class FakeTablePort final : public TablePort {
 public:
  enum class Method { kCheckVoiceLock, kAnnounceVoiceNote, kGetTable };

  // `clock` (may be null) sets play_at_ms = now + 1 s.
  explicit FakeTablePort(const Clock* clock = nullptr) : clock_(clock) {}

  // A table at `round` (phase "playing"), no seats taken.
  void AddTable(const std::string& table_id, uint64_t round = 1);
  void RemoveTable(const std::string& table_id);
  void Seat(const std::string& table_id, int seat, const std::string& player,
            const std::string& kind = "person");
  void Unseat(const std::string& table_id, const std::string& player);
  // voice_start: `player` holds the lock.
  void GiveLock(const std::string& table_id, const std::string& player);
  // The lock expired (or the holder discarded: with `use_allowance`).
  void DropLock(const std::string& table_id, bool use_allowance = false);
  // A new round: no lock, every allowance unused.
  void NextRound(const std::string& table_id);
  // The next `times` calls of `method` fail with `status` (before any effect).
  void FailNext(Method method, absl::Status status, int times = 1);

  std::vector<Announcement> announced(const std::string& table_id) const;
  int calls(Method method) const;

  absl::StatusOr<VoiceLock> CheckVoiceLock(const std::string& table_id, const std::string& player,
                                           absl::Time deadline) override;
  absl::StatusOr<Announced> AnnounceVoiceNote(const Announcement& note,
                                              absl::Time deadline) override;
  absl::StatusOr<TableView> GetTable(const std::string& table_id, absl::Time deadline) override;

 private:
  struct Table {
    TableView view;
    std::string lock_holder;
    std::set<std::string> allowance_used;  // this round's: sent or discarded
    std::vector<Announcement> announced;   // every round's
  };
  // The injected failure for `method`, if any (consumed). Caller holds mu_.
  absl::Status Injected(Method method);
  Table* Find(const std::string& table_id);

  const Clock* clock_;
  mutable std::mutex mu_;
  std::map<std::string, Table> tables_;
  std::map<Method, std::deque<absl::Status>> failures_;
  std::map<Method, int> calls_;
};

class FakeLobbyPort final : public LobbyPort {
 public:
  void AddPlayer(LobbyPlayer player, std::vector<LobbyQuit> quits = {});
  // Every later call fails with `status` (OkStatus() heals).
  void SetFailure(absl::Status status);
  // The authorization value of the last call.
  std::string last_authorization() const;

  absl::StatusOr<LobbyPlayer> GetPlayer(const std::string& authorization,
                                        const std::string& player_id, absl::Time deadline) override;
  absl::StatusOr<std::vector<LobbyQuit>> ListQuits(const std::string& authorization,
                                                   const std::string& player_id, int limit,
                                                   absl::Time deadline) override;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::pair<LobbyPlayer, std::vector<LobbyQuit>>> players_;
  absl::Status failure_;
  std::string last_authorization_;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_FAKE_PORTS_H_
