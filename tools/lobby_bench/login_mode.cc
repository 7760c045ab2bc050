// --mode=login: GuestLogin calls. With --login_new_devices (default) every call is a new
// device: a new player, a wallet OpenAccount (the starting grant), tokens; without it each
// client signs in again with one of its own devices made in Prepare() (the returning path).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_status.h"
#include "courtpiece/common/ids.h"
#include "courtpiece/lobby/v1/lobby.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "tools/lobby_bench/bench.h"

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
        if (absl::Status s = Login(c, KnownDevice(c, d)); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

  absl::Status Call(int client, int64_t iteration) override {
    if (options_.login_new_devices) {
      return Login(client, absl::StrCat("bench-", run_, "-", client, "-", iteration, "-",
                                        std::string(24, 'n')));
    }
    return Login(client, KnownDevice(client, static_cast<int>(iteration % kDevicesPerClient)));
  }

 private:
  std::string KnownDevice(int client, int d) const {
    return absl::StrCat("bench-", run_, "-known-", client, "-", d, "-", std::string(24, 'k'));
  }

  absl::Status Login(int client, const std::string& device) {
    v1::GuestLoginRequest request;
    request.set_device_secret(device);
    request.set_display_name(absl::StrCat("Bench ", client));
    v1::Session session;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_deadline));
    grpc::Status s = stubs_[client % stubs_.size()]->GuestLogin(&context, request, &session);
    return common::FromGrpcStatus(s);
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
