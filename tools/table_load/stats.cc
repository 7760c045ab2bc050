#include "stats.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace courtpiece::table_load {

void Samples::Add(int64_t micros) {
  std::lock_guard<std::mutex> lock(mu_);
  micros_.push_back(micros);
}

int64_t Percentile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

std::vector<int64_t> Samples::TakeRaw() {
  std::vector<int64_t> v;
  std::lock_guard<std::mutex> lock(mu_);
  v.swap(micros_);
  return v;
}

Samples::Summary Samples::Take() { return Summarize(TakeRaw()); }

Samples::Summary Summarize(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  Samples::Summary s;
  s.count = v.size();
  s.p50_ms = static_cast<double>(Percentile(v, 0.50)) / 1000.0;
  s.p90_ms = static_cast<double>(Percentile(v, 0.90)) / 1000.0;
  s.p99_ms = static_cast<double>(Percentile(v, 0.99)) / 1000.0;
  s.max_ms = v.empty() ? 0 : static_cast<double>(v.back()) / 1000.0;
  return s;
}

void Counts::Add(const std::string& key, int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  counts_[key] += n;
}

std::map<std::string, int64_t> Counts::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, int64_t> out;
  out.swap(counts_);
  return out;
}

std::string Counts::Format(const std::map<std::string, int64_t>& counts) const {
  if (counts.empty()) return "none";
  std::string out;
  for (const auto& [key, n] : counts) absl::StrAppend(&out, out.empty() ? "" : " ", key, "=", n);
  return out;
}

absl::StatusOr<int64_t> ReadRssBytes(int pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  if (!in) return absl::NotFoundError(absl::StrCat("no /proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view view = line;
    if (!absl::ConsumePrefix(&view, "VmRSS:")) continue;
    absl::string_view rest = absl::StripAsciiWhitespace(view);
    absl::ConsumeSuffix(&rest, " kB");
    int64_t kib = 0;
    if (!absl::SimpleAtoi(rest, &kib)) break;
    return kib * 1024;
  }
  return absl::InternalError(absl::StrCat("no VmRSS in /proc/", pid, "/status"));
}

std::optional<ProcStat> ReadProcStat(const std::string& pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  // The command name (field 2) may hold spaces and parentheses: the rest follows the last ')'.
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::vector<absl::string_view> f =
      absl::StrSplit(absl::string_view(line).substr(paren + 1), ' ', absl::SkipEmpty());
  // f[0] is field 3 (state): ppid is field 4, utime 14, stime 15, cutime 16, cstime 17.
  int64_t t[4] = {0, 0, 0, 0};
  ProcStat out;
  if (f.size() < 15 || !absl::SimpleAtoi(f[1], &out.ppid)) return std::nullopt;
  for (size_t i = 0; i < 4; ++i) {
    if (!absl::SimpleAtoi(f[11 + i], &t[i])) return std::nullopt;
  }
  out.ticks = t[0] + t[1];
  out.children_ticks = t[2] + t[3];
  return out;
}

double TicksToSeconds(int64_t ticks) {
  return static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

absl::StatusOr<double> ReadCpuSeconds(int pid) {
  std::optional<ProcStat> st = ReadProcStat(pid == 0 ? "self" : std::to_string(pid));
  if (!st.has_value()) return absl::NotFoundError(absl::StrCat("no CPU time for process ", pid));
  return TicksToSeconds(st->ticks);
}

absl::StatusOr<std::string> FetchMetrics(const std::string& host_port) {
  const size_t colon = host_port.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(host_port.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(absl::StrCat("not HOST:PORT: ", host_port));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host_port.substr(0, colon).c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("not an IPv4 address: ", host_port));
  }
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  timeval timeout{.tv_sec = 2, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot connect to ", host_port));
  }
  const std::string request =
      absl::StrCat("GET /metrics HTTP/1.0\r\nHost: ", host_port, "\r\nConnection: close\r\n\r\n");
  if (send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("send failed");
  }
  std::string response;
  char buffer[16384];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof buffer, 0)) > 0) response.append(buffer, n);
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (n < 0 || body == std::string::npos || response.rfind("HTTP/1.", 0) != 0) {
    return absl::UnavailableError(absl::StrCat("bad /metrics answer from ", host_port));
  }
  return response.substr(body + 4);
}

double SumMetric(const std::string& exposition, const std::string& name) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (!absl::ConsumePrefix(&line, name)) continue;
    if (line.empty() || (line[0] != '{' && line[0] != ' ')) continue;  // a longer name
    const size_t space = line.rfind(' ');
    double value = 0;
    if (space != absl::string_view::npos && absl::SimpleAtod(line.substr(space + 1), &value)) {
      sum += value;
    }
  }
  return sum;
}

}  // namespace courtpiece::table_load
