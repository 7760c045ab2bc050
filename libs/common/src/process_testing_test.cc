// FreeLoopbackPort: a port below the kernel's ephemeral range that can be bound, never the
// same one twice, and reserved against every other process while this one lives.
// ListensOn: true only for the process that holds the listening socket.
#include "courtpiece/common/process_testing.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
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

TEST(FreeLoopbackPortTest, NeverGivesOneProcessTheSamePortTwice) {
  std::set<int> ports;
  for (int i = 0; i < 200; ++i) ports.insert(FreeLoopbackPort());
  EXPECT_EQ(ports.size(), 200u);
}

// Another process sees this process's lock on the port's byte of the reservation file (and
// so its own FreeLoopbackPort skips the port), until this process exits.
TEST(FreeLoopbackPortTest, APickedPortIsReservedAgainstOtherProcesses) {
  const int port = FreeLoopbackPort();
  ASSERT_GE(port, 20'000);
  const pid_t parent = getpid();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int fd = open(PortReservationFile().c_str(), O_RDWR);
    struct flock range {};
    range.l_type = F_WRLCK;
    range.l_whence = SEEK_SET;
    range.l_start = port;
    range.l_len = 1;
    if (fd < 0 || fcntl(fd, F_GETLK, &range) != 0) _exit(2);
    _exit(range.l_type == F_WRLCK && range.l_pid == parent ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "port " << port << " is not locked by this process";
}

}  // namespace
}  // namespace courtpiece::common

namespace courtpiece::common {
namespace {

// A socket of this process bound to a free port, listening or not.
int BoundSocket(int* port, bool listen_too) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      (listen_too && listen(fd, 4) != 0)) {
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

TEST(ListensOnTest, OnlyTheProcessHoldingTheListeningSocket) {
  int port = 0;
  const int fd = BoundSocket(&port, /*listen_too=*/true);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(ListensOn(getpid(), port));
  EXPECT_FALSE(ListensOn(getppid(), port));  // the port is ours, not our parent's
  EXPECT_FALSE(ListensOn(getpid(), port == 65535 ? port - 1 : port + 1));
  close(fd);
  EXPECT_FALSE(ListensOn(getpid(), port));  // closed: nobody listens
}

TEST(ListensOnTest, ABoundSocketThatDoesNotListenIsNotListening) {
  int port = 0;
  const int fd = BoundSocket(&port, /*listen_too=*/false);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(ListensOn(getpid(), port));
  close(fd);
}

TEST(ListensOnTest, AProcessThatIsGoneListensOnNothing) {
  EXPECT_FALSE(ListensOn(/*pid=*/-1, 80));
  EXPECT_FALSE(ListensOn(/*pid=*/0x3fffffff, 80));
}

}  // namespace
}  // namespace courtpiece::common
