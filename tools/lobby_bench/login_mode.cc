// --mode=login: GuestLogin calls. With --login_new_devices (default) every call is a new
// device: a new player, a wallet OpenAccount (the starting grant), tokens; without it each
// client signs in again with one of its own devices made in Prepare() (the returning path).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/ids.h"
#include "tools/lobby_bench/bench.h"
#include "tools/lobby_bench/session.h"

namespace courtpiece::lobby_bench {
namespace {

namespace v1 = ::courtpiece::lobby::v1;

constexpr int kDevicesPerClient = 16;  // the returning path cycles through these

class LoginMode final : public BenchMode {
 public:
  LoginMode(const BenchOptions& options,
            const std::vector<std::shared_ptr<grpc::Channel>>& channels)
      : options_(options), run_(common::RandomHexId(6)) {
    for (const auto& channel : channels) stubs_.push_back(v1::Accounts::NewStub(channel));
  }

  absl::Status Prepare() override {
    if (options_.login_new_devices) return absl::OkStatus();
    for (int c = 0; c < options_.clients; ++c) {
      for (int d = 0; d < kDevicesPerClient; ++d) {
        if (absl::Status s = Login(c, BenchDevice(run_, c, d, 'k')); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

  absl::Status Call(int client, int64_t iteration) override {
    if (options_.login_new_devices) return Login(client, BenchDevice(run_, client, iteration, 'n'));
    return Login(client, BenchDevice(run_, client, iteration % kDevicesPerClient, 'k'));
  }

 private:
  absl::Status Login(int client, const std::string& device) {
    return SignInGuest(*stubs_[client % stubs_.size()], options_, device,
                       absl::StrCat("Bench ", client))
        .status();
  }

  const BenchOptions options_;
  const std::string run_;
  std::vector<std::unique_ptr<v1::Accounts::Stub>> stubs_;
};

}  // namespace

std::unique_ptr<BenchMode> MakeLoginMode(
    const BenchOptions& options, const std::vector<std::shared_ptr<grpc::Channel>>& channels) {
  return std::make_unique<LoginMode>(options, channels);
}

}  // namespace courtpiece::lobby_bench
