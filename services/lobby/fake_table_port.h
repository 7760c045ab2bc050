// In-memory stand-ins for the table tier (table_port.h), for the directory's unit tests:
//  - FakeTableTier: TablePort + TableRegistry over simulated instances. A table lives on
//    the instance that created it; JoinTable seats in the order 2, 1, 3 (as libs/table),
//    needs twice the bet (SetBalance; unknown players have 1000), RESOURCE_EXHAUSTED when
//    full, FAILED_PRECONDITION + the owner-addr payload on the wrong instance. An instance
//    can be made unreachable (SetDown) or dead (Kill: not live, its tables gone).
//  - FakeCodeCache: the Redis code keys with TTLs on an injected Clock.
// Thread-safety: thread-safe.
#ifndef COURTPIECE_SERVICES_LOBBY_FAKE_TABLE_PORT_H_
#define COURTPIECE_SERVICES_LOBBY_FAKE_TABLE_PORT_H_

#include <map>
#include <set>
#include <string>

#include "absl/synchronization/mutex.h"
#include "courtpiece/common/clock.h"
#include "services/lobby/table_port.h"

namespace courtpiece::lobby {

class FakeTableTier final : public TablePort, public TableRegistry {
 public:
  void AddInstance(const std::string& id);  // live, addr "<id>:7002"
  void Kill(const std::string& id);
  void SetDown(const std::string& id, bool down);
  void SetBalance(const std::string& player, int64_t coins);
  // Removes a table (it closed on its instance).
  void CloseTable(const std::string& table_id);
  int creates() const;
  size_t tables() const;

  absl::StatusOr<table::v1::CreateTableResponse> CreateTable(
      const InstanceInfo& at, const table::v1::CreateTableRequest& request,
      absl::Time deadline) override;
  absl::StatusOr<table::v1::JoinTableResponse> JoinTable(const InstanceInfo& at,
                                                         std::string_view table_id,
                                                         std::string_view player,
                                                         absl::Time deadline) override;
  absl::StatusOr<std::vector<table::v1::TableInfo>> ListTables(
      const InstanceInfo& at, const table::v1::ListTablesRequest& request,
      absl::Time deadline) override;
  absl::StatusOr<table::v1::TableInfo> GetTable(const InstanceInfo& at, std::string_view table_id,
                                                absl::Time deadline) override;

  absl::StatusOr<std::vector<InstanceInfo>> LiveInstances() override;
  absl::StatusOr<placement::Owner> Owner(std::string_view table_id) override;
  void SetRegistryDown(bool down);

 private:
  absl::Status Reach(const InstanceInfo& at) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  mutable absl::Mutex mu_;
  std::map<std::string, bool> instances_ ABSL_GUARDED_BY(mu_);  // id -> down
  std::map<std::string, table::v1::TableInfo> tables_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> balances_ ABSL_GUARDED_BY(mu_);
  int creates_ ABSL_GUARDED_BY(mu_) = 0;
  bool registry_down_ ABSL_GUARDED_BY(mu_) = false;
};

class FakeCodeCache final : public CodeCache {
 public:
  explicit FakeCodeCache(Clock& clock) : clock_(clock) {}
  absl::StatusOr<bool> Claim(std::string_view code, std::string_view value) override;
  absl::Status Put(std::string_view code, std::string_view value) override;
  absl::StatusOr<std::optional<std::string>> Get(std::string_view code) override;
  absl::Status Release(std::string_view code, std::string_view value) override;
  absl::Status Close(std::string_view code, std::string_view tombstone, int64_t ttl_ms) override;
  void SetDown(bool down);
  void Forget(const std::string& code);  // as if Redis lost the key
  int gets() const;

 private:
  struct Entry {
    std::string value;
    int64_t expires_ms = 0;  // 0: never
  };
  absl::Status Check() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Clock& clock_;
  mutable absl::Mutex mu_;
  bool down_ ABSL_GUARDED_BY(mu_) = false;
  int gets_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Entry> keys_ ABSL_GUARDED_BY(mu_);
};

// SharedLock in memory (no expiry: tests release what they take).
class FakeSharedLock final : public SharedLock {
 public:
  absl::StatusOr<bool> TryLock(std::string_view name, std::string_view token,
                               int64_t ttl_ms) override;
  absl::Status Unlock(std::string_view name, std::string_view token) override;
  int taken() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> held_ ABSL_GUARDED_BY(mu_);
  int taken_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_FAKE_TABLE_PORT_H_
