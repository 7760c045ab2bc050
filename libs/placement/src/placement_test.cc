#include "courtpiece/placement/placement.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace courtpiece::placement {
namespace {

TEST(RegistryKeys, AreTheTableServiceLayout) {
  RegistryKeys keys("cp:");
  EXPECT_EQ(keys.OwnerKey("t-1"), "cp:{t-1}:owner");
  EXPECT_EQ(keys.StateKey("t-1"), "cp:{t-1}:state");
  EXPECT_EQ(keys.EventsKey("t-1"), "cp:{t-1}:events");
  EXPECT_EQ(keys.InstanceKey("a"), "cp:instance:a");
  EXPECT_EQ(keys.InstancesKey(), "cp:instances");
  EXPECT_EQ(keys.InstanceTablesKey("a"), "cp:instance-tables:a");
  EXPECT_EQ(keys.TablesKey(), "cp:tables");
  EXPECT_EQ(RegistryKeys("x:").OwnerKey("t"), "x:{t}:owner");
}

TEST(PickOwner, IsStableAndMovesOnlyTheRemovedInstancesKeys) {
  const std::vector<InstanceInfo> three = {{"a", "1"}, {"b", "2"}, {"c", "3"}};
  const std::vector<InstanceInfo> two = {{"a", "1"}, {"c", "3"}};
  std::map<std::string, int> count;
  for (int i = 0; i < 300; ++i) {
    const std::string t = "table-" + std::to_string(i);
    const std::string owner = PickOwner(t, three);
    ++count[owner];
    EXPECT_EQ(owner, PickOwner(t, {three[2], three[0], three[1]}));
    if (owner != "b") {
      EXPECT_EQ(PickOwner(t, two), owner);
    }
  }
  EXPECT_EQ(count.size(), 3u);
  for (const auto& [id, n] : count) EXPECT_GT(n, 50) << id;
  EXPECT_EQ(PickOwner("t", {}), "");
}

}  // namespace
}  // namespace courtpiece::placement
