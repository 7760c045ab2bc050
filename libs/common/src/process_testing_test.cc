// FreeLoopbackPort: a port below the kernel's ephemeral range that can be bound, and a
// different one most of the time (tests running side by side each pick their own).
#include "courtpiece/common/process_testing.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>

#include "gtest/gtest.h"

namespace courtpiece::common {
namespace {

TEST(FreeLoopbackPortTest, IsBelowTheEphemeralRangeAndBindable) {
  for (int i = 0; i < 20; ++i) {
    const int port = FreeLoopbackPort();
    ASSERT_GE(port, 20'000);
    ASSERT_LE(port, 32'767);
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << port;
    close(fd);
  }
}

TEST(FreeLoopbackPortTest, PicksSpreadOut) {
  std::set<int> ports;
  for (int i = 0; i < 100; ++i) ports.insert(FreeLoopbackPort());
  EXPECT_GE(ports.size(), 90u);  // 100 random picks among 12,768: a repeat is rare
}

}  // namespace
}  // namespace courtpiece::common
