#include "courtpiece/placement/registry_reader.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/status_macros.h"

namespace courtpiece::placement {
namespace {

using storage::RedisReply;

absl::Status Unexpected(std::string_view what, const RedisReply& reply) {
  return absl::InternalError(absl::StrCat("unexpected reply to ", common::ToAbsl(what), " (type ",
                                          static_cast<int>(reply.type), ")"));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ReadKnownInstances(storage::RedisClient& redis,
                                                            const RegistryKeys& keys) {
  ASSIGN_OR_RETURN(RedisReply reply, redis.Command({"SMEMBERS", keys.InstancesKey()}));
  if (reply.type != RedisReply::Type::kArray) return Unexpected("SMEMBERS instances", reply);
  std::vector<std::string> ids;
  ids.reserve(reply.elements.size());
  for (RedisReply& e : reply.elements) {
    if (e.type != RedisReply::Type::kString) return Unexpected("SMEMBERS instances", reply);
    ids.push_back(std::move(e.str));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

absl::StatusOr<std::vector<InstanceInfo>> ReadLiveInstances(storage::RedisClient& redis,
                                                            const RegistryKeys& keys) {
  ASSIGN_OR_RETURN(std::vector<std::string> known, ReadKnownInstances(redis, keys));
  std::vector<InstanceInfo> out;
  for (std::string& id : known) {
    ASSIGN_OR_RETURN(RedisReply addr, redis.Command({"GET", keys.InstanceKey(id)}));
    if (addr.is_nil()) continue;
    if (addr.type != RedisReply::Type::kString) return Unexpected("GET instance", addr);
    out.push_back({std::move(id), std::move(addr.str)});
  }
  return out;
}

absl::StatusOr<Owner> OwnerFromReply(const RedisReply& reply, std::string_view table_id) {
  if (reply.type != RedisReply::Type::kArray || reply.elements.size() != 2) {
    return Unexpected("HMGET owner", reply);
  }
  if (reply.elements[0].is_nil()) {
    return absl::NotFoundError(absl::StrCat("unknown table ", common::ToAbsl(table_id)));
  }
  const RedisReply& instance = reply.elements[0];
  const RedisReply& epoch = reply.elements[1];
  Owner owner;
  if (instance.type != RedisReply::Type::kString || epoch.type != RedisReply::Type::kString ||
      !absl::SimpleAtoi(epoch.str, &owner.epoch)) {
    return Unexpected("HMGET owner", reply);
  }
  owner.instance = instance.str;
  return owner;
}

absl::StatusOr<Owner> ReadOwner(storage::RedisClient& redis, const RegistryKeys& keys,
                                std::string_view table_id) {
  ASSIGN_OR_RETURN(RedisReply reply,
                   redis.Command({"HMGET", keys.OwnerKey(table_id), "instance", "epoch"}));
  return OwnerFromReply(reply, table_id);
}

std::vector<absl::StatusOr<Owner>> ReadOwners(storage::RedisClient& redis, const RegistryKeys& keys,
                                              const std::vector<std::string>& table_ids) {
  if (table_ids.empty()) return {};
  std::vector<std::vector<std::string>> commands;
  commands.reserve(table_ids.size());
  for (const std::string& id : table_ids) {
    commands.push_back({"HMGET", keys.OwnerKey(id), "instance", "epoch"});
  }
  return storage::EachReply<Owner>(
      redis.Pipeline(commands), table_ids.size(),
      [&](size_t i, const RedisReply& reply) { return OwnerFromReply(reply, table_ids[i]); });
}

}  // namespace courtpiece::placement
