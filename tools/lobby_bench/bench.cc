#include "tools/lobby_bench/bench.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"

namespace courtpiece::lobby_bench {
namespace {

double PercentileMs(const std::vector<int64_t>& sorted_us, double q) {
  if (sorted_us.empty()) return 0;
  size_t rank = static_cast<size_t>(q * static_cast<double>(sorted_us.size()));
  rank = std::min(rank, sorted_us.size() - 1);
  return static_cast<double>(sorted_us[rank]) / 1000.0;
}

struct ClientResult {
  std::vector<int64_t> latencies_us;
  std::map<std::string, int64_t> errors;
  std::string first_error;
};

void Record(ClientResult& r, const absl::Status& s, absl::Duration took) {
  if (s.ok()) {
    r.latencies_us.push_back(absl::ToInt64Microseconds(took));
  } else {
    ++r.errors[std::string(absl::StatusCodeToString(s.code()))];
    if (r.first_error.empty()) r.first_error = s.ToString();
  }
}

// One thread per client, each calling back to back until `end`.
void RunThreads(BenchMode& mode, absl::Time end, std::vector<ClientResult>& results) {
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < static_cast<int>(results.size()); ++c) {
    threads.emplace_back([&, c] {
      while (!go.load()) std::this_thread::yield();
      for (int64_t i = 0; absl::Now() < end; ++i) {
        const absl::Time t0 = absl::Now();
        absl::Status s = mode.Call(c, i);
        Record(results[c], s, absl::Now() - t0);
      }
    });
  }
  go = true;
  for (std::thread& t : threads) t.join();
}

// Each client has one call in flight (StartCall) and starts the next from the last one's
// answer, until `end`; returns when every client's last call has answered.
class AsyncLoop {
 public:
  AsyncLoop(BenchMode& mode, absl::Time end, std::vector<ClientResult>& results)
      : mode_(mode), end_(end), results_(results) {}
  void Run() {
    running_ = static_cast<int>(results_.size());
    for (int c = 0; c < static_cast<int>(results_.size()); ++c) Next(c, 0);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return running_ == 0; });
  }

 private:
  // Starts client c's call i, and then whatever calls answered inline meanwhile: an answer
  // that comes on the starting thread itself (gRPC may fail a call at once, e.g. with
  // nothing listening) only queues its client's next call, so nothing recurses.
  void Next(int c, int64_t i) {
    thread_local std::vector<std::pair<int, int64_t>>* inline_next = nullptr;
    if (inline_next != nullptr) {
      inline_next->emplace_back(c, i);
      return;
    }
    std::vector<std::pair<int, int64_t>> todo{{c, i}};
    inline_next = &todo;
    while (!todo.empty()) {
      const auto [client, iteration] = todo.back();
      todo.pop_back();
      Start(client, iteration);
    }
    inline_next = nullptr;
  }
  void Start(int c, int64_t i) {
    if (absl::Now() >= end_) {
      std::lock_guard<std::mutex> lock(mu_);
      if (--running_ == 0) cv_.notify_all();
      return;
    }
    const absl::Time t0 = absl::Now();
    mode_.StartCall(c, i, [this, c, i, t0](absl::Status s) {
      Record(results_[c], s, absl::Now() - t0);  // one client's calls never overlap
      Next(c, i + 1);
    });
  }

  BenchMode& mode_;
  const absl::Time end_;
  std::vector<ClientResult>& results_;
  std::mutex mu_;
  std::condition_variable cv_;
  int running_ = 0;  // clients whose loop goes on; guarded by mu_ once Run started them
};

void RunAsync(BenchMode& mode, absl::Time end, std::vector<ClientResult>& results) {
  AsyncLoop(mode, end, results).Run();
}

}  // namespace

const std::map<std::string, ModeFactory>& Modes() {
  static const auto* modes = new std::map<std::string, ModeFactory>{
      {"login", MakeLoginMode},
      {"resolve", MakeResolveMode},
      {"create", MakeCreateMode},
      {"record", MakeRecordMode},
  };
  return *modes;
}

absl::StatusOr<BenchReport> RunBench(const BenchOptions& options) {
  auto factory = Modes().find(options.mode);
  if (factory == Modes().end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown mode ", options.mode));
  }
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < std::max(1, options.channels); ++i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection per channel
    args.SetInt("courtpiece.bench_channel", i);
    channels.push_back(
        grpc::CreateCustomChannel(options.addr, grpc::InsecureChannelCredentials(), args));
  }
  std::unique_ptr<BenchMode> mode = factory->second(options, channels);
  if (absl::Status s = mode->Prepare(); !s.ok()) return s;

  if (options.async && !mode->HasStartCall()) {
    return absl::InvalidArgumentError(absl::StrCat("mode ", options.mode, " has no --async"));
  }
  std::vector<ClientResult> results(options.clients);
  const absl::Time start = absl::Now();
  const absl::Time end = start + options.duration;
  if (options.async) {
    RunAsync(*mode, end, results);
  } else {
    RunThreads(*mode, end, results);
  }
  BenchReport report;
  report.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::vector<int64_t> all;
  for (ClientResult& r : results) {
    all.insert(all.end(), r.latencies_us.begin(), r.latencies_us.end());
    for (const auto& [code, n] : r.errors) report.errors[code] += n;
    if (report.first_error.empty()) report.first_error = r.first_error;
  }
  std::sort(all.begin(), all.end());
  report.calls_ok = static_cast<int64_t>(all.size());
  report.p50_ms = PercentileMs(all, 0.50);
  report.p99_ms = PercentileMs(all, 0.99);
  report.max_ms = all.empty() ? 0 : static_cast<double>(all.back()) / 1000.0;
  return report;
}

}  // namespace courtpiece::lobby_bench
