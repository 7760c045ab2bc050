// --mode=record: LobbyRecords.RecordGame as a table sends it (no token): each client is one
// table `bench-<run>-<client>` whose two people (seats 0 and 1) finish game after game, so
// every call is a new key `<table>:game:<n>` that counts for both players' stats.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_status.h"
#include "courtpiece/common/ids.h"
#include "courtpiece/lobby/v1/records.grpc.pb.h"
#include "tools/lobby_bench/bench.h"
#include "tools/lobby_bench/session.h"

namespace courtpiece::lobby_bench {
namespace {

namespace v1 = ::courtpiece::lobby::v1;

class RecordMode final : public BenchMode {
 public:
  RecordMode(const BenchOptions& options,
             const std::vector<std::shared_ptr<grpc::Channel>>& channels)
      : options_(options), run_(common::RandomHexId(6)) {
    for (const auto& channel : channels) stubs_.push_back(v1::LobbyRecords::NewStub(channel));
  }

  absl::Status Call(int client, int64_t iteration) override {
    const std::string table = absl::StrCat("bench-", run_, "-", client);
    const uint64_t game_no = static_cast<uint64_t>(iteration) + 1;
    v1::RecordGameRequest request;
    request.set_key(absl::StrCat(table, ":game:", game_no));
    request.set_table_id(table);
    request.set_game_no(game_no);
    request.set_counts_for_stats(true);
    request.set_winning_team(static_cast<int32_t>(game_no % 2));
    request.set_game("classic");
    for (int team = 0; team < 2; ++team) {
      request.add_scores(team == request.winning_team() ? 1 : 0);
      request.add_courts(0);
      request.add_goon_courts(0);
      v1::PlayerResult* p = request.add_players();
      p->set_player(absl::StrCat(table, "-p", team));
      p->set_seat(team);  // seat 0 is team 0, seat 1 team 1
      p->set_won(team == request.winning_team());
    }
    v1::RecordReply reply;
    std::unique_ptr<grpc::ClientContext> context = NewContext(options_);
    return common::FromGrpcStatus(
        stubs_[client % stubs_.size()]->RecordGame(context.get(), request, &reply));
  }

 private:
  const BenchOptions options_;
  const std::string run_;
  std::vector<std::unique_ptr<v1::LobbyRecords::Stub>> stubs_;
};

}  // namespace

std::unique_ptr<BenchMode> MakeRecordMode(
    const BenchOptions& options, const std::vector<std::shared_ptr<grpc::Channel>>& channels) {
  return std::make_unique<RecordMode>(options, channels);
}

}  // namespace courtpiece::lobby_bench
