#include "courtpiece/common/freezable_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

namespace courtpiece::common {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

}  // namespace

FreezableProxy::FreezableProxy(int server_port) : server_port_(server_port) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = Loopback(0);
  socklen_t len = sizeof(addr);
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      listen(listen_fd_, 1) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return;  // ok() is false
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Run(); });
}

FreezableProxy::~FreezableProxy() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void FreezableProxy::Run() {
  pollfd accept_poll{listen_fd_, POLLIN, 0};
  while (!stop_ && poll(&accept_poll, 1, 20) == 0) {
  }
  if (stop_) return;
  const int client = accept(listen_fd_, nullptr, nullptr);
  if (client < 0) return;
  const int server = socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in addr = Loopback(server_port_);
  if (server < 0 || connect(server, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(client);
    if (server >= 0) close(server);
    return;
  }
  accepted_ = true;
  char buffer[16384];
  bool open = true;
  while (!stop_ && open) {
    if (frozen_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
    if (poll(fds, 2, 20) <= 0) continue;
    for (int i = 0; i < 2 && open; ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      open = n > 0 && write(fds[1 - i].fd, buffer, static_cast<size_t>(n)) == n;
    }
  }
  close(client);
  close(server);
}

}  // namespace courtpiece::common
