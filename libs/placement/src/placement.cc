#include "courtpiece/placement/placement.h"

#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"

namespace courtpiece::placement {

using common::ToAbsl;

std::string RegistryKeys::OwnerKey(std::string_view t) const {
  return absl::StrCat(prefix_, "{", ToAbsl(t), "}:owner");
}
std::string RegistryKeys::StateKey(std::string_view t) const {
  return absl::StrCat(prefix_, "{", ToAbsl(t), "}:state");
}
std::string RegistryKeys::EventsKey(std::string_view t) const {
  return absl::StrCat(prefix_, "{", ToAbsl(t), "}:events");
}
std::string RegistryKeys::InstanceKey(std::string_view id) const {
  return absl::StrCat(prefix_, "instance:", ToAbsl(id));
}
std::string RegistryKeys::InstancesKey() const { return absl::StrCat(prefix_, "instances"); }
std::string RegistryKeys::InstanceTablesKey(std::string_view id) const {
  return absl::StrCat(prefix_, "instance-tables:", ToAbsl(id));
}
std::string RegistryKeys::TablesKey() const { return absl::StrCat(prefix_, "tables"); }

uint64_t HashPair(std::string_view a, std::string_view b) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix(a);
  mix("/");
  mix(b);
  // A final avalanche so that near-equal ids spread (splitmix64's finaliser).
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

std::string PickOwner(std::string_view key, const std::vector<InstanceInfo>& instances) {
  std::string best;
  uint64_t best_score = 0;
  for (const InstanceInfo& i : instances) {
    const uint64_t score = HashPair(key, i.id);
    if (best.empty() || score > best_score || (score == best_score && i.id < best)) {
      best = i.id;
      best_score = score;
    }
  }
  return best;
}

}  // namespace courtpiece::placement
