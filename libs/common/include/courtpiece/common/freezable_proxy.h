// A TCP forwarder for tests: between one client and a server on loopback, and able to
// freeze. Once frozen it moves no more bytes either way but keeps both sockets open, which is
// how a peer that lost its network without closing looks to the other side (its pings go
// unanswered, nothing it sends arrives).
//
// Contract: serves one connection (the first accepted) until destroyed; ok() is false when
// it could not listen, and accepted() says whether a client came. Freeze() from any thread.
// Thread-safety: Freeze, address and the getters from any thread.
#ifndef COURTPIECE_COMMON_FREEZABLE_PROXY_H_
#define COURTPIECE_COMMON_FREEZABLE_PROXY_H_

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

namespace courtpiece::common {

class FreezableProxy {
 public:
  explicit FreezableProxy(int server_port);  // 127.0.0.1:server_port
  ~FreezableProxy();
  FreezableProxy(const FreezableProxy&) = delete;
  FreezableProxy& operator=(const FreezableProxy&) = delete;

  bool ok() const { return port_ != 0; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  bool accepted() const { return accepted_; }
  void Freeze() { frozen_ = true; }

 private:
  void Run();

  const int server_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> accepted_{false};
  std::atomic<bool> frozen_{false};
  std::atomic<bool> stop_{false};
  std::mutex fds_mu_;
  int client_fd_ = -1;  // guarded by fds_mu_; -1 before the accept and after the close
  int server_fd_ = -1;  // guarded by fds_mu_
  std::thread thread_;
};

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_FREEZABLE_PROXY_H_
