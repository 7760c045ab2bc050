// Small measurement helpers of courtpiece-table-load (courtpiece-load compiles them too):
// exact latency samples (sorted at the end of a phase), error counts by code, a process's
// RSS and CPU time from /proc, and a /metrics scrape.
// Thread-safety: Samples and Counts are safe from any thread; the functions are stateless.
#ifndef COURTPIECE_TOOLS_TABLE_LOAD_STATS_H_
#define COURTPIECE_TOOLS_TABLE_LOAD_STATS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace courtpiece::table_load {

// Latencies in microseconds, kept whole: a phase of 5,000 tables at one action a second
// for a minute is 300,000 samples (2.4 MB), so exact percentiles cost nothing worth saving.
class Samples {
 public:
  void Add(int64_t micros);
  struct Summary {
    size_t count = 0;
    double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  };
  Summary Take();                  // summarises and clears
  std::vector<int64_t> TakeRaw();  // returns and clears

 private:
  std::mutex mu_;
  std::vector<int64_t> micros_;
};

Samples::Summary Summarize(std::vector<int64_t> micros);

// Nearest-rank percentile (q in [0, 1]) of sorted values; 0 for none.
int64_t Percentile(const std::vector<int64_t>& sorted, double q);

class Counts {
 public:
  void Add(const std::string& key, int64_t n = 1);
  std::map<std::string, int64_t> Take();  // returns and clears
  std::string Format(const std::map<std::string, int64_t>& counts) const;

 private:
  std::mutex mu_;
  std::map<std::string, int64_t> counts_;
};

// VmRSS of /proc/<pid>/status in bytes.
absl::StatusOr<int64_t> ReadRssBytes(int pid);

// The fields of /proc/<pid>/stat the load tools read ("self": the calling process).
struct ProcStat {
  int ppid = 0;
  int64_t ticks = 0;           // utime + stime: every thread, in clock ticks
  int64_t children_ticks = 0;  // cutime + cstime: its children that ended and were waited for
};
std::optional<ProcStat> ReadProcStat(const std::string& pid);
double TicksToSeconds(int64_t ticks);  // clock ticks (sysconf(_SC_CLK_TCK)) to seconds

// CPU seconds (user + system, all threads) a process has used so far; 0 is the calling
// process.
absl::StatusOr<double> ReadCpuSeconds(int pid);

// GET http://<host:port>/metrics (loopback, blocking, 2 s timeout).
absl::StatusOr<std::string> FetchMetrics(const std::string& host_port);

// The sum of every sample of `name` (all label sets) in a Prometheus text exposition.
double SumMetric(const std::string& exposition, const std::string& name);

}  // namespace courtpiece::table_load

#endif  // COURTPIECE_TOOLS_TABLE_LOAD_STATS_H_
