// courtpiece-wallet-bench --addr HOST:PORT --clients N --seconds S
// N concurrent clients each play rounds at their own table: one transfer puts four stakes
// into the round's pot (two players and two bots, the bots' stakes from the house), one
// transfer pays the pot out to the winners (the players or, every other round, the house).
// Prints transfers/s and the p50/p99 latency of a transfer. Exit 1 if any transfer failed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "grpcpp/grpcpp.h"

ABSL_FLAG(std::string, addr, "127.0.0.1:7004", "wallet gRPC address");
ABSL_FLAG(int, clients, 16, "concurrent clients (one table each)");
ABSL_FLAG(int, seconds, 10, "run time");
ABSL_FLAG(int, bet, 25, "coins per seat per round");
ABSL_FLAG(int, deadline_ms, 5000, "deadline of each RPC");

namespace courtpiece::wallet {
namespace {

namespace v1 = ::courtpiece::wallet::v1;

struct ClientStats {
  std::vector<double> latencies_ms;
  int64_t errors = 0;
  std::string first_error;
};

void AddLeg(v1::TransferRequest& r, const std::string& account, v1::Side side, int64_t amount) {
  v1::Leg* leg = r.add_legs();
  leg->set_account_id(account);
  leg->set_side(side);
  leg->set_amount(amount);
}

class BenchClient {
 public:
  BenchClient(std::shared_ptr<grpc::Channel> channel, std::string run, int index)
      : stub_(v1::Wallet::NewStub(channel)),
        table_(absl::StrCat("bench-", run, "-", index)),
        p0_(absl::StrCat("player:", table_, "-p0")),
        p2_(absl::StrCat("player:", table_, "-p2")) {}

  bool Open() {
    for (const std::string& account : {p0_, p2_}) {
      v1::OpenAccountRequest request;
      request.set_player_id(account.substr(7));
      v1::OpenAccountResponse response;
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      grpc::Status s = stub_->OpenAccount(&context, request, &response);
      if (!s.ok()) {
        std::fprintf(stderr, "OpenAccount: %s\n", s.error_message().c_str());
        return false;
      }
    }
    return true;
  }

  void Run(absl::Time until, ClientStats& stats) {
    const int64_t bet = absl::GetFlag(FLAGS_bet);
    for (int64_t round = 0; absl::Now() < until; ++round) {
      const std::string pot = absl::StrCat("pot:", table_, ":", round);
      v1::TransferRequest stakes = Base(round, "stakes");
      AddLeg(stakes, p0_, v1::SIDE_DEBIT, bet);
      AddLeg(stakes, p2_, v1::SIDE_DEBIT, bet);
      AddLeg(stakes, "house", v1::SIDE_DEBIT, 2 * bet);
      AddLeg(stakes, pot, v1::SIDE_CREDIT, 4 * bet);
      if (!Send(stakes, stats)) continue;
      v1::TransferRequest payout = Base(round, "payout");
      AddLeg(payout, pot, v1::SIDE_DEBIT, 4 * bet);
      if (round % 2 == 0) {
        AddLeg(payout, p0_, v1::SIDE_CREDIT, 2 * bet);
        AddLeg(payout, p2_, v1::SIDE_CREDIT, 2 * bet);
      } else {
        AddLeg(payout, "house", v1::SIDE_CREDIT, 4 * bet);
      }
      Send(payout, stats);
    }
  }

 private:
  v1::TransferRequest Base(int64_t round, const std::string& step) {
    v1::TransferRequest r;
    r.set_idempotency_key(absl::StrCat("table:", table_, ":round:", round, ":", step));
    r.set_table_id(table_);
    r.set_round(round);
    r.set_reason(step);
    return r;
  }

  bool Send(const v1::TransferRequest& request, ClientStats& stats) {
    v1::TransferResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(absl::GetFlag(FLAGS_deadline_ms)));
    const absl::Time start = absl::Now();
    grpc::Status s = stub_->Transfer(&context, request, &response);
    stats.latencies_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
    if (s.ok()) return true;
    if (stats.errors++ == 0)
      stats.first_error = absl::StrCat(s.error_code(), " ", s.error_message());
    return false;
  }

  std::unique_ptr<v1::Wallet::Stub> stub_;
  const std::string table_;
  const std::string p0_;
  const std::string p2_;
};

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

int Run() {
  const int clients = std::max(1, absl::GetFlag(FLAGS_clients));
  const absl::Duration duration = absl::Seconds(std::max(1, absl::GetFlag(FLAGS_seconds)));
  const std::string run = absl::StrCat(absl::ToUnixMicros(absl::Now()));
  std::vector<std::unique_ptr<BenchClient>> bench_clients;
  for (int i = 0; i < clients; ++i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // one connection per client
    bench_clients.push_back(std::make_unique<BenchClient>(
        grpc::CreateCustomChannel(absl::GetFlag(FLAGS_addr), grpc::InsecureChannelCredentials(),
                                  args),
        run, i));
    if (!bench_clients.back()->Open()) return 1;
  }
  std::vector<ClientStats> stats(clients);
  std::vector<std::thread> threads;
  const absl::Time start = absl::Now();
  const absl::Time until = start + duration;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] { bench_clients[i]->Run(until, stats[i]); });
  }
  for (std::thread& t : threads) t.join();
  const double elapsed_s = absl::ToDoubleSeconds(absl::Now() - start);
  std::vector<double> all;
  int64_t errors = 0;
  for (const ClientStats& s : stats) {
    all.insert(all.end(), s.latencies_ms.begin(), s.latencies_ms.end());
    errors += s.errors;
    if (s.errors > 0) std::fprintf(stderr, "error: %s\n", s.first_error.c_str());
  }
  std::sort(all.begin(), all.end());
  const int64_t ok = static_cast<int64_t>(all.size()) - errors;
  std::printf(
      "clients=%d seconds=%.1f transfers=%lld errors=%lld transfers_per_s=%.1f p50_ms=%.2f "
      "p99_ms=%.2f\n",
      clients, elapsed_s, static_cast<long long>(ok), static_cast<long long>(errors),
      static_cast<double>(ok) / elapsed_s, Percentile(all, 0.50), Percentile(all, 0.99));
  return errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace courtpiece::wallet

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return courtpiece::wallet::Run();
}
