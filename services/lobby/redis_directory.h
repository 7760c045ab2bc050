// The directory's Redis side: the code keys (CodeCache) and the table tier's registry read
// through libs/placement (TableRegistry). One pool of RedisClients, used round-robin.
//
// Keys: "<prefix>lobby:code:<code>" = the open table's entry (EncodeEntry) with no TTL, or
// the tombstone "closed" with a TTL of the cooling-off; the registry's keys are the table
// service's (libs/placement, prefix "cp:" in production).
// Thread-safety: thread-safe.
#ifndef COURTPIECE_SERVICES_LOBBY_REDIS_DIRECTORY_H_
#define COURTPIECE_SERVICES_LOBBY_REDIS_DIRECTORY_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "courtpiece/placement/placement.h"
#include "courtpiece/storage/redis_client.h"
#include "services/lobby/table_port.h"

namespace courtpiece::lobby {

struct RedisDirectoryOptions {
  storage::RedisOptions redis;
  int connections = 4;
  std::string key_prefix = "cp:";  // shared with the table tier's registry
};

class RedisClientPool {
 public:
  explicit RedisClientPool(const RedisDirectoryOptions& options);
  storage::RedisClient& Next();

 private:
  std::vector<std::unique_ptr<storage::RedisClient>> clients_;
  std::atomic<uint64_t> next_{0};
};

class RedisCodeCache final : public CodeCache {
 public:
  explicit RedisCodeCache(const RedisDirectoryOptions& options);
  absl::StatusOr<bool> Claim(std::string_view code, std::string_view value) override;
  absl::Status Put(std::string_view code, std::string_view value) override;
  absl::StatusOr<std::optional<std::string>> Get(std::string_view code) override;
  // One round trip (pipelined GETs).
  std::vector<absl::StatusOr<std::optional<std::string>>> GetMany(
      const std::vector<std::string>& codes) override;
  absl::Status Release(std::string_view code, std::string_view value) override;
  absl::Status Close(std::string_view code, std::string_view tombstone, int64_t ttl_ms) override;
  std::string CodeKey(std::string_view code) const;

 private:
  const std::string prefix_;
  RedisClientPool pool_;
};

// "<prefix>lobby:lock:<name>" = token, SET NX PX; released by a compare-and-delete.
class RedisSharedLock final : public SharedLock {
 public:
  explicit RedisSharedLock(const RedisDirectoryOptions& options);
  absl::StatusOr<bool> TryLock(std::string_view name, std::string_view token,
                               int64_t ttl_ms) override;
  absl::Status Unlock(std::string_view name, std::string_view token) override;

 private:
  const std::string prefix_;
  RedisClientPool pool_;
};

class RedisTableRegistry final : public TableRegistry {
 public:
  explicit RedisTableRegistry(const RedisDirectoryOptions& options);
  absl::StatusOr<std::vector<InstanceInfo>> LiveInstances() override;
  absl::StatusOr<placement::Owner> Owner(std::string_view table_id) override;
  // One round trip (pipelined HMGETs).
  std::vector<absl::StatusOr<placement::Owner>> Owners(
      const std::vector<std::string>& table_ids) override;

 private:
  const placement::RegistryKeys keys_;
  RedisClientPool pool_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_REDIS_DIRECTORY_H_
