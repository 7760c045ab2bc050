// FakeWalletPort: an in-memory WalletPort (wallet_port.h) for unit tests: accounts opened
// with `starting_grant` coins, failure injection (FailNext) and call counts.
// Thread-safety: thread-safe.
#ifndef COURTPIECE_SERVICES_LOBBY_FAKE_WALLET_PORT_H_
#define COURTPIECE_SERVICES_LOBBY_FAKE_WALLET_PORT_H_

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "services/lobby/wallet_port.h"

namespace courtpiece::lobby {

class FakeWalletPort final : public WalletPort {
 public:
  explicit FakeWalletPort(int64_t starting_grant = 1000) : starting_grant_(starting_grant) {}

  absl::StatusOr<int64_t> OpenAccount(const std::string& player_id, absl::Time) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++open_calls_;
    if (absl::Status s = Injected(); !s.ok()) return s;
    auto [it, created] = balances_.emplace(player_id, starting_grant_);
    if (created) ++grants_paid_;
    return it->second;
  }
  absl::StatusOr<int64_t> GetBalance(const std::string& player_id, absl::Time) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Status s = Injected(); !s.ok()) return s;
    auto it = balances_.find(player_id);
    if (it == balances_.end()) return absl::NotFoundError("unknown account");
    return it->second;
  }

  void FailNext(int calls, absl::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_calls_ = calls;
    fail_status_ = std::move(status);
  }
  int open_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return open_calls_;
  }
  int grants_paid() const {
    std::lock_guard<std::mutex> lock(mu_);
    return grants_paid_;
  }

 private:
  absl::Status Injected() {
    if (fail_calls_ == 0) return absl::OkStatus();
    --fail_calls_;
    return fail_status_;
  }

  const int64_t starting_grant_;
  mutable std::mutex mu_;
  std::map<std::string, int64_t> balances_;
  int open_calls_ = 0;
  int grants_paid_ = 0;
  int fail_calls_ = 0;
  absl::Status fail_status_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_FAKE_WALLET_PORT_H_
