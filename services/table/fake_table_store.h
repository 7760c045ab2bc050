// FakeTableStore: an in-memory TableStore with the same contract as RedisTableStore, for unit
// tests. One mutex makes every call atomic; heartbeat TTLs run on an injected Clock, so a
// test expires an instance with FakeClock::Advance instead of sleeping. Failure injection:
//   FailNext(n, status)  the next n calls (any method) fail with `status` (default
//                        Unavailable) before doing anything;
//   LoseNextReplies(n)   the next n calls that succeed apply their write and then return
//                        Unavailable, like a connection that breaks after the script ran.
//
// Also here: ValidateStoreArgs helpers shared with RedisTableStore, so both refuse the same
// bad input with the same InvalidArgument before doing anything.
//
// Thread-safety: safe for concurrent use (one std::mutex).
#ifndef COURTPIECE_SERVICES_TABLE_FAKE_TABLE_STORE_H_
#define COURTPIECE_SERVICES_TABLE_FAKE_TABLE_STORE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "services/table/table_store.h"

namespace courtpiece::table_service {

// Table and instance ids: 1..kStoreIdLengthMax chars of [A-Za-z0-9_.-] (no braces, so an id
// is always a valid Redis hash tag). InvalidArgument naming `what` otherwise.
inline constexpr size_t kStoreIdLengthMax = 64;
absl::Status ValidateStoreId(std::string_view what, std::string_view id);
// An owner as passed to Save/Remove: a valid instance id and epoch >= 1.
absl::Status ValidateOwner(const Owner& owner);

class FakeTableStore final : public TableStore {
 public:
  explicit FakeTableStore(const Clock& clock) : clock_(clock) {}

  absl::Status Heartbeat(const InstanceInfo& self, int64_t ttl_ms) override;
  absl::Status Deregister(std::string_view instance_id) override;
  absl::StatusOr<std::vector<InstanceInfo>> LiveInstances() override;
  absl::StatusOr<std::vector<std::string>> KnownInstances() override;
  absl::Status Forget(std::string_view instance_id) override;

  absl::StatusOr<Owner> Create(std::string_view table_id, std::string_view instance,
                               std::string_view state) override;
  absl::StatusOr<Owner> GetOwner(std::string_view table_id) override;
  absl::StatusOr<Owner> Claim(std::string_view table_id, std::string_view instance,
                              int64_t expected_epoch) override;
  absl::StatusOr<std::vector<std::string>> TablesOf(std::string_view instance_id) override;
  absl::StatusOr<std::vector<std::string>> AllTables() override;

  absl::Status Save(std::string_view table_id, const Owner& owner, std::string_view state,
                    const std::vector<std::string>& new_events, int events_max) override;
  absl::StatusOr<StoredTableBytes> Load(std::string_view table_id) override;
  absl::Status Remove(std::string_view table_id, const Owner& owner) override;

  void FailNext(int count, absl::Status status = absl::UnavailableError("injected failure"));
  void LoseNextReplies(int count);

  // Test views.
  int calls() const;  // every call of the interface, failed or not

 private:
  struct Table {
    Owner owner;
    std::string state;
    std::deque<std::string> events;
  };
  struct Live {
    std::string addr;
    absl::Time expires_at;
  };

  // Counts the call; returns `valid` when it is an error (bad input is refused before any
  // injected failure, as RedisTableStore refuses it before any I/O), else consumes FailNext.
  absl::Status BeginLocked(absl::Status valid);
  // Maps a successful result to the lost-reply failure while LoseNextReplies lasts.
  absl::Status FinishLocked(absl::Status done);
  template <typename T>
  absl::StatusOr<T> FinishLocked(T value) {
    if (absl::Status s = FinishLocked(absl::OkStatus()); !s.ok()) return s;
    return value;
  }

  const Clock& clock_;
  // std::mutex, not absl::Mutex: Debian's Abseil is not TSan-instrumented.
  mutable std::mutex mu_;  // guards every member below
  std::map<std::string, Table, std::less<>> tables_;
  std::map<std::string, Live, std::less<>> live_;
  std::set<std::string, std::less<>> known_;
  std::map<std::string, std::set<std::string>, std::less<>> index_;  // instance -> tables
  int fail_next_ = 0;
  absl::Status fail_status_;
  int lose_replies_ = 0;
  int calls_ = 0;
};

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_FAKE_TABLE_STORE_H_
