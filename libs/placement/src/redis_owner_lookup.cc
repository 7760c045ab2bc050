#include "courtpiece/placement/redis_owner_lookup.h"

#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/placement/registry_reader.h"

namespace courtpiece::placement {
namespace {

absl::Status AsUnavailable(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kUnavailable) return status;
  return absl::UnavailableError(absl::StrCat("owner lookup: ", status.ToString()));
}

}  // namespace

absl::StatusOr<std::string> RedisOwnerLookup::Lookup(std::string_view table_id) {
  absl::StatusOr<Owner> owner = ReadOwner(redis_, keys_, table_id);
  if (!owner.ok()) {
    if (owner.status().code() == absl::StatusCode::kNotFound) return owner.status();
    return AsUnavailable(owner.status());
  }
  absl::StatusOr<storage::RedisReply> addr =
      redis_.Command({"GET", keys_.InstanceKey(owner->instance)});
  if (!addr.ok()) return AsUnavailable(addr.status());
  if (addr->type != storage::RedisReply::Type::kString || addr->str.empty()) {
    return absl::UnavailableError(absl::StrCat("owner ", owner->instance, " of table ",
                                               common::ToAbsl(table_id), " is not live"));
  }
  return addr->str;
}

}  // namespace courtpiece::placement
