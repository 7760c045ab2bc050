#include "courtpiece/common/process_testing.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>

extern char** environ;

namespace courtpiece::common {

std::string SourceDir() { return COURTPIECE_SOURCE_DIR; }

std::string BinDir() { return std::filesystem::read_symlink("/proc/self/exe").parent_path(); }

namespace {

// True if 127.0.0.1:`port` could be bound just now (then it is released again); `port` 0
// asks the kernel for one and stores it.
bool TryBind(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(*port));
  socklen_t len = sizeof(addr);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  if (ok) *port = ntohs(addr.sin_port);
  return ok;
}

// The port reservations of this process: a write lock on byte `port` of the shared file
// PortReservationFile(), held until the process exits (the kernel drops a process's fcntl
// locks when it ends, however it ends, and a spawned child does not inherit them). False if
// another live process holds that port, or this process reserved it before.
bool Reserve(int port) {
  static std::mutex mu;
  static std::set<int>* const reserved = new std::set<int>();
  // Never closed: closing any descriptor of the file drops every lock this process holds on
  // it. Readable and writable by every user (whoever created it), when this process may.
  static const int fd = [] {
    const int f = open(PortReservationFile().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (f >= 0) fchmod(f, 0666);
    return f;
  }();
  std::lock_guard<std::mutex> lock(mu);
  if (reserved->count(port) > 0) return false;
  if (fd >= 0) {
    struct flock range {};
    range.l_type = F_WRLCK;
    range.l_whence = SEEK_SET;
    range.l_start = port;
    range.l_len = 1;
    if (fcntl(fd, F_SETLK, &range) != 0) return false;  // another process's port
  }  // no file (unwritable temp directory): unreserved, as before reservations existed
  reserved->insert(port);
  return true;
}

}  // namespace

std::string PortReservationFile() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  return (dir / "courtpiece-test-ports.lock").string();
}

int FreeLoopbackPort() {
  // Below the kernel's ephemeral range (32768..60999 by default), which every outgoing
  // connection of a busy test suite draws from: a port the kernel handed out for bind(0)
  // could be given to a client socket before the server binds it ("Address already in
  // use"). A random port under that range is only ever taken by another test's pick.
  constexpr int kLowest = 20'000, kHighest = 32'767, kTries = 64;
  static std::mutex mu;
  static std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(getpid()));
  for (int i = 0; i < kTries; ++i) {
    int port = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      port = std::uniform_int_distribution<int>(kLowest, kHighest)(rng);
    }
    if (TryBind(&port) && Reserve(port)) return port;
  }
  int port = 0;
  return TryBind(&port) ? port : 0;
}

bool ListensOn(pid_t pid, int port) {
  // Inodes of the sockets listening on `port`: /proc/net/tcp lines are "sl local rem st
  // ... uid timeout inode", local = "ADDR:PORT" in hex, st 0A = LISTEN.
  std::set<std::string> inodes;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      if (!(fields >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
            timeout >> inode)) {
        continue;
      }
      const size_t colon = local.rfind(':');
      if (colon == std::string::npos || state != "0A") continue;
      if (std::stoi(local.substr(colon + 1), nullptr, 16) == port) inodes.insert(inode);
    }
  }
  if (inodes.empty()) return false;
  std::error_code ec;
  for (const auto& fd : std::filesystem::directory_iterator(
           std::filesystem::path("/proc") / std::to_string(pid) / "fd", ec)) {
    std::error_code link_ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), link_ec).string();
    if (link_ec || !target.starts_with("socket:[")) continue;
    if (inodes.count(target.substr(8, target.size() - 9)) > 0) return true;
  }
  return false;
}

pid_t Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  if (argv.empty()) return -1;
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> argv_c, env_c;
  for (const std::string& a : argv) argv_c.push_back(const_cast<char*>(a.c_str()));
  for (const std::string& e : env) env_c.push_back(const_cast<char*>(e.c_str()));
  argv_c.push_back(nullptr);
  env_c.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv_c[0], nullptr, nullptr, argv_c.data(), env_c.data()) != 0) return -1;
  return pid;
}

int WaitExit(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace courtpiece::common
