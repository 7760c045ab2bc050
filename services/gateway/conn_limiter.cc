#include "services/gateway/conn_limiter.h"

namespace courtpiece::gateway {

ConnLimiter::Ticket::~Ticket() { limiter_->Release(ip_); }

std::unique_ptr<ConnLimiter::Ticket> ConnLimiter::TryAcquire(std::string_view ip,
                                                             std::string* refused_reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (open_ >= connections_max_) {
    if (refused_reason != nullptr) *refused_reason = "total";
    return nullptr;
  }
  std::string key(ip);
  auto it = by_ip_.find(key);
  if (it != by_ip_.end() && it->second >= per_ip_max_) {
    if (refused_reason != nullptr) *refused_reason = "per_ip";
    return nullptr;
  }
  if (per_ip_max_ == 0) {
    if (refused_reason != nullptr) *refused_reason = "per_ip";
    return nullptr;
  }
  ++open_;
  ++by_ip_[key];
  return std::unique_ptr<Ticket>(new Ticket(this, std::move(key)));
}

void ConnLimiter::Release(const std::string& ip) {
  std::lock_guard<std::mutex> lock(mu_);
  --open_;
  auto it = by_ip_.find(ip);
  if (it != by_ip_.end() && --it->second == 0) by_ip_.erase(it);
}

size_t ConnLimiter::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

size_t ConnLimiter::open_from(std::string_view ip) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_ip_.find(std::string(ip));
  return it == by_ip_.end() ? 0 : it->second;
}

}  // namespace courtpiece::gateway
