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
  {
    // Unblocks a send to a peer that stopped reading (shutdown wakes a blocked send).
    std::lock_guard<std::mutex> lock(fds_mu_);
    for (int fd : {client_fd_, server_fd_}) {
      if (fd >= 0) shutdown(fd, SHUT_RDWR);
    }
  }
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void FreezableProxy::Run() {
  pollfd accept_poll{listen_fd_, POLLIN, 0};
  // accept() only once poll said a client waits (an interrupted poll is polled again), so
  // the destructor's stop is seen within 20 ms.
  while (!stop_ && poll(&accept_poll, 1, 20) <= 0) {
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
  {
    std::lock_guard<std::mutex> lock(fds_mu_);
    client_fd_ = client;
    server_fd_ = server;
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
      // MSG_NOSIGNAL: a peer that closed ends the forwarding, not the test binary (SIGPIPE).
      open = n > 0 && send(fds[1 - i].fd, buffer, static_cast<size_t>(n), MSG_NOSIGNAL) == n;
    }
  }
  std::lock_guard<std::mutex> lock(fds_mu_);
  close(client);
  close(server);
  client_fd_ = server_fd_ = -1;
}

}  // namespace courtpiece::common
