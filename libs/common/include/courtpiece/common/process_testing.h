// Helpers for tests and tools that run real binaries: where the binaries and the source
// tree are, a free loopback port, spawning a process with extra environment, waiting for
// its exit.
// Thread-safety: every function is safe from any thread.
#ifndef COURTPIECE_COMMON_PROCESS_TESTING_H_
#define COURTPIECE_COMMON_PROCESS_TESTING_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace courtpiece::common {

// The directory of the running executable (build/bin: where the other binaries are).
std::string BinDir();
// The source tree this build was configured from (CMake's CMAKE_SOURCE_DIR, no trailing
// '/'): for tests and tools that read migrations, scripts or test data from it. Only this
// library's own small source is compiled with the path, so that a clone at another path
// recompiles this file alone and the large test sources stay ccache hits.
std::string SourceDir();
// A TCP port on 127.0.0.1 that was free a moment ago: a random one in 20000..32767 (below
// the kernel's ephemeral range, so no client socket takes it meanwhile) that could be
// bound and that no process has reserved, else one the kernel picks. The port stays
// reserved for this process until it exits: no other process calling FreeLoopbackPort
// (ctest's side-by-side tests, their tools) is given it, nor is this one again; so the
// server the caller starts on it cannot lose it to another test's pick. A program that
// binds ports by other means can still take it: good enough for tests, not for servers.
int FreeLoopbackPort();
// The file whose byte `port` a process write-locks (fcntl) to reserve `port`:
// <temp dir>/courtpiece-test-ports.lock, shared by every process of the machine.
std::string PortReservationFile();
// True if process `pid` holds a socket listening on TCP `port` (any local address, IPv4 or
// IPv6), read from /proc/net/tcp{,6} and /proc/<pid>/fd: a harness that started a server
// on a picked port checks that the server answering there is the one it started, not
// another test's that took the port first.
bool ListensOn(pid_t pid, int port);
// Starts argv[0] (a path) with this process's environment plus `extra_env` ("K=V"; later
// entries win for the same key in glibc's getenv order); -1 when it cannot be started.
pid_t Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env);
// Waits for the process; its exit status, or 128 + the signal that ended it.
int WaitExit(pid_t pid);

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_PROCESS_TESTING_H_
