#include "tools/lobby_bench/session.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "courtpiece/common/grpc_status.h"

namespace courtpiece::lobby_bench {

namespace v1 = ::courtpiece::lobby::v1;

std::unique_ptr<grpc::ClientContext> NewContext(const BenchOptions& options,
                                                const std::string& access_token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + options.call_deadline));
  if (!access_token.empty()) context->AddMetadata("authorization", "Bearer " + access_token);
  return context;
}

absl::StatusOr<v1::Session> SignInGuest(v1::Accounts::Stub& accounts, const BenchOptions& options,
                                        const std::string& device,
                                        const std::string& display_name) {
  v1::GuestLoginRequest request;
  request.set_device_secret(device);
  request.set_display_name(display_name);
  v1::Session session;
  std::unique_ptr<grpc::ClientContext> context = NewContext(options);
  grpc::Status s = accounts.GuestLogin(context.get(), request, &session);
  if (!s.ok()) return common::FromGrpcStatus(s);
  return session;
}

absl::StatusOr<v1::TableRef> CreateClassicTable(v1::Directory::Stub& directory,
                                                const BenchOptions& options,
                                                const std::string& access_token,
                                                const std::string& request_id) {
  v1::CreateTableRequest request;
  request.set_request_id(request_id);
  v1::TableOptions* t = request.mutable_options();
  t->set_game_options(R"({"game":"classic","target":1})");
  t->set_bet_coins(100);
  t->set_turn_time_ms(15'000);
  t->set_public_(false);
  v1::TableRef table;
  std::unique_ptr<grpc::ClientContext> context = NewContext(options, access_token);
  grpc::Status s = directory.CreateTable(context.get(), request, &table);
  if (!s.ok()) return common::FromGrpcStatus(s);
  return table;
}

std::string BenchDevice(const std::string& run, int client, int64_t n, char fill) {
  return absl::StrCat("bench-", run, "-", client, "-", n, "-", std::string(24, fill));
}

absl::Status ClientTokens::SignIn(const BenchOptions& options,
                                  const std::vector<std::shared_ptr<grpc::Channel>>& channels,
                                  const std::string& run) {
  std::unique_ptr<v1::Accounts::Stub> accounts = v1::Accounts::NewStub(channels.front());
  tokens_.clear();
  for (int c = 0; c < options.clients; ++c) {
    absl::StatusOr<v1::Session> session =
        SignInGuest(*accounts, options, BenchDevice(run, c, 0, 's'), absl::StrCat("Bench ", c));
    if (!session.ok()) {
      return absl::Status(session.status().code(),
                          absl::StrCat("sign-in: ", session.status().message()));
    }
    tokens_.push_back(session->access_token());
  }
  return absl::OkStatus();
}

uint64_t MixCall(int client, int64_t iteration) {
  // splitmix64 of the pair.
  uint64_t z = (static_cast<uint64_t>(client) << 40) ^ static_cast<uint64_t>(iteration);
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace courtpiece::lobby_bench
