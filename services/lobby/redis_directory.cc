#include "services/lobby/redis_directory.h"

#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/check.h"
#include "courtpiece/common/status_macros.h"
#include "courtpiece/placement/registry_reader.h"

namespace courtpiece::lobby {
namespace {

using storage::RedisReply;

// KEYS: the code key. ARGV: the value we claimed it with. Deletes only our own claim.
const storage::RedisScript& ReleaseScript() {
  static const storage::RedisScript* script = new storage::RedisScript(R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
)lua");
  return *script;
}

// A GET's reply: the value, nullopt for none.
absl::StatusOr<std::optional<std::string>> ValueOf(RedisReply r) {
  if (r.is_nil()) return std::nullopt;
  if (r.type != RedisReply::Type::kString) {
    return absl::InternalError("unexpected Redis reply to GET code");
  }
  return std::move(r.str);
}

}  // namespace

RedisClientPool::RedisClientPool(const RedisDirectoryOptions& options) {
  COURTPIECE_CHECK(options.connections >= 1, "at least one Redis connection");
  for (int i = 0; i < options.connections; ++i) {
    clients_.push_back(std::make_unique<storage::RedisClient>(options.redis));
  }
}

storage::RedisClient& RedisClientPool::Next() {
  return *clients_[next_.fetch_add(1, std::memory_order_relaxed) % clients_.size()];
}

RedisCodeCache::RedisCodeCache(const RedisDirectoryOptions& options)
    : prefix_(options.key_prefix), pool_(options) {}

std::string RedisCodeCache::CodeKey(std::string_view code) const {
  return absl::StrCat(prefix_, "lobby:code:", common::ToAbsl(code));
}

absl::StatusOr<bool> RedisCodeCache::Claim(std::string_view code, std::string_view value) {
  ASSIGN_OR_RETURN(RedisReply r,
                   pool_.Next().Command({"SET", CodeKey(code), std::string(value), "NX"}));
  return !r.is_nil();
}

absl::Status RedisCodeCache::Put(std::string_view code, std::string_view value) {
  return pool_.Next().Command({"SET", CodeKey(code), std::string(value)}).status();
}

absl::StatusOr<std::optional<std::string>> RedisCodeCache::Get(std::string_view code) {
  ASSIGN_OR_RETURN(RedisReply r, pool_.Next().Command({"GET", CodeKey(code)}));
  return ValueOf(std::move(r));
}

std::vector<absl::StatusOr<std::optional<std::string>>> RedisCodeCache::GetMany(
    const std::vector<std::string>& codes) {
  if (codes.empty()) return {};
  std::vector<std::vector<std::string>> commands;
  commands.reserve(codes.size());
  for (const std::string& code : codes) commands.push_back({"GET", CodeKey(code)});
  return storage::EachReply<std::optional<std::string>>(
      pool_.Next().Pipeline(commands), codes.size(),
      [](size_t, RedisReply reply) { return ValueOf(std::move(reply)); });
}

absl::Status RedisCodeCache::Release(std::string_view code, std::string_view value) {
  return pool_.Next().Eval(ReleaseScript(), {CodeKey(code)}, {std::string(value)}).status();
}

absl::Status RedisCodeCache::Close(std::string_view code, std::string_view tombstone,
                                   int64_t ttl_ms) {
  return pool_.Next()
      .Command({"SET", CodeKey(code), std::string(tombstone), "PX", absl::StrCat(ttl_ms)})
      .status();
}

RedisSharedLock::RedisSharedLock(const RedisDirectoryOptions& options)
    : prefix_(options.key_prefix), pool_(options) {}

absl::StatusOr<bool> RedisSharedLock::TryLock(std::string_view name, std::string_view token,
                                              int64_t ttl_ms) {
  ASSIGN_OR_RETURN(
      RedisReply r,
      pool_.Next().Command({"SET", absl::StrCat(prefix_, "lobby:lock:", common::ToAbsl(name)),
                            std::string(token), "NX", "PX", absl::StrCat(ttl_ms)}));
  return !r.is_nil();
}

absl::Status RedisSharedLock::Unlock(std::string_view name, std::string_view token) {
  return pool_.Next()
      .Eval(ReleaseScript(), {absl::StrCat(prefix_, "lobby:lock:", common::ToAbsl(name))},
            {std::string(token)})
      .status();
}

RedisTableRegistry::RedisTableRegistry(const RedisDirectoryOptions& options)
    : keys_(options.key_prefix), pool_(options) {}

absl::StatusOr<std::vector<InstanceInfo>> RedisTableRegistry::LiveInstances() {
  return placement::ReadLiveInstances(pool_.Next(), keys_);
}

absl::StatusOr<placement::Owner> RedisTableRegistry::Owner(std::string_view table_id) {
  return placement::ReadOwner(pool_.Next(), keys_, table_id);
}

std::vector<absl::StatusOr<placement::Owner>> RedisTableRegistry::Owners(
    const std::vector<std::string>& table_ids) {
  return placement::ReadOwners(pool_.Next(), keys_, table_ids);
}

}  // namespace courtpiece::lobby
