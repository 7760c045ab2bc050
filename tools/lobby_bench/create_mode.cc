// --mode=create: Directory.CreateTable of a private classic table with a fresh request_id,
// each client as its own guest (signed in once in Prepare()). Every call places a table on
// one of the live courtpiece-table instances and reserves a code.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/ids.h"
#include "tools/lobby_bench/bench.h"
#include "tools/lobby_bench/session.h"

namespace courtpiece::lobby_bench {
namespace {

namespace v1 = ::courtpiece::lobby::v1;

class CreateMode final : public BenchMode {
 public:
  CreateMode(const BenchOptions& options,
             const std::vector<std::shared_ptr<grpc::Channel>>& channels)
      : options_(options), channels_(channels), run_(common::RandomHexId(6)) {
    for (const auto& channel : channels) stubs_.push_back(v1::Directory::NewStub(channel));
  }

  absl::Status Prepare() override { return tokens_.SignIn(options_, channels_, run_); }

  absl::Status Call(int client, int64_t iteration) override {
    return CreateClassicTable(*stubs_[client % stubs_.size()], options_, tokens_.of(client),
                              absl::StrCat("bench-", run_, "-", client, "-", iteration))
        .status();
  }

 private:
  const BenchOptions options_;
  const std::vector<std::shared_ptr<grpc::Channel>> channels_;
  const std::string run_;
  std::vector<std::unique_ptr<v1::Directory::Stub>> stubs_;
  ClientTokens tokens_;
};

}  // namespace

std::unique_ptr<BenchMode> MakeCreateMode(
    const BenchOptions& options, const std::vector<std::shared_ptr<grpc::Channel>>& channels) {
  return std::make_unique<CreateMode>(options, channels);
}

}  // namespace courtpiece::lobby_bench
