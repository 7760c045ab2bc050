// Counts the web front's open connections, in all and per client IP, and refuses a new one
// past either limit (docs/gateway.md "HTTP and WebSocket front").
//
// Contract: TryAcquire answers a ticket that holds one slot until it is destroyed, or
// nullptr when `connections_max` are open (reason "total") or `per_ip_max` from that IP are
// open (reason "per_ip"; the reason is written to *refused_reason when given). The
// limiter must outlive its tickets.
// Thread-safety: safe from many threads.
#ifndef COURTPIECE_SERVICES_GATEWAY_CONN_LIMITER_H_
#define COURTPIECE_SERVICES_GATEWAY_CONN_LIMITER_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace courtpiece::gateway {

class ConnLimiter {
 public:
  class Ticket {
   public:
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

   private:
    friend class ConnLimiter;
    Ticket(ConnLimiter* limiter, std::string ip) : limiter_(limiter), ip_(std::move(ip)) {}
    ConnLimiter* limiter_;
    std::string ip_;
  };

  ConnLimiter(size_t connections_max, size_t per_ip_max)
      : connections_max_(connections_max), per_ip_max_(per_ip_max) {}

  std::unique_ptr<Ticket> TryAcquire(std::string_view ip, std::string* refused_reason = nullptr);

  size_t open() const;
  size_t open_from(std::string_view ip) const;

 private:
  void Release(const std::string& ip);

  const size_t connections_max_;
  const size_t per_ip_max_;
  mutable std::mutex mu_;
  size_t open_ = 0;
  std::unordered_map<std::string, size_t> by_ip_;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_CONN_LIMITER_H_
