// --mode=resolve: Directory.ResolveCode of a random code among --resolve_tables tables made
// in Prepare() (private classic tables spread over the clients' guests), each call with the
// caller's own token. The lobby answers from Redis (the code key, then the owner record).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_status.h"
#include "courtpiece/common/ids.h"
#include "tools/lobby_bench/bench.h"
#include "tools/lobby_bench/session.h"

namespace courtpiece::lobby_bench {
namespace {

namespace v1 = ::courtpiece::lobby::v1;

class ResolveMode final : public BenchMode {
 public:
  ResolveMode(const BenchOptions& options,
              const std::vector<std::shared_ptr<grpc::Channel>>& channels)
      : options_(options), channels_(channels), run_(common::RandomHexId(6)) {
    for (const auto& channel : channels) stubs_.push_back(v1::Directory::NewStub(channel));
  }

  absl::Status Prepare() override {
    if (absl::Status s = tokens_.SignIn(options_, channels_, run_); !s.ok()) return s;
    for (int i = 0; i < options_.resolve_tables; ++i) {
      const int host = i % options_.clients;
      absl::StatusOr<v1::TableRef> table = CreateClassicTable(
          *stubs_.front(), options_, tokens_.of(host), absl::StrCat("bench-", run_, "-", i));
      if (!table.ok()) {
        return absl::Status(table.status().code(),
                            absl::StrCat("create table ", i, ": ", table.status().message()));
      }
      codes_.push_back(table->code());
    }
    return absl::OkStatus();
  }

  absl::Status Call(int client, int64_t iteration) override {
    v1::ResolveCodeRequest request;
    request.set_code(codes_[MixCall(client, iteration) % codes_.size()]);
    v1::TableRef table;
    std::unique_ptr<grpc::ClientContext> context = NewContext(options_, tokens_.of(client));
    return common::FromGrpcStatus(
        stubs_[client % stubs_.size()]->ResolveCode(context.get(), request, &table));
  }

  bool HasStartCall() const override { return true; }
  void StartCall(int client, int64_t iteration,
                 absl::AnyInvocable<void(absl::Status) &&> done) override {
    struct Pending {
      std::unique_ptr<grpc::ClientContext> context;
      v1::ResolveCodeRequest request;
      v1::TableRef table;
      absl::AnyInvocable<void(absl::Status) &&> done;
    };
    auto* p = new Pending{NewContext(options_, tokens_.of(client)), {}, {}, std::move(done)};
    p->request.set_code(codes_[MixCall(client, iteration) % codes_.size()]);
    stubs_[client % stubs_.size()]->async()->ResolveCode(
        p->context.get(), &p->request, &p->table, [p](grpc::Status s) {
          // The call's objects go before `done`, which may be the run's last answer.
          absl::AnyInvocable<void(absl::Status)&&> answer = std::move(p->done);
          delete p;
          std::move(answer)(common::FromGrpcStatus(s));
        });
  }

 private:
  const BenchOptions options_;
  const std::vector<std::shared_ptr<grpc::Channel>> channels_;
  const std::string run_;
  std::vector<std::unique_ptr<v1::Directory::Stub>> stubs_;
  ClientTokens tokens_;
  std::vector<std::string> codes_;
};

}  // namespace

std::unique_ptr<BenchMode> MakeResolveMode(
    const BenchOptions& options, const std::vector<std::shared_ptr<grpc::Channel>>& channels) {
  return std::make_unique<ResolveMode>(options, channels);
}

}  // namespace courtpiece::lobby_bench
