// Scrapes GET /metrics from the real exposer on loopback.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_split.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::common {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The whole HTTP/1.0 response (status line, headers, body) of GET `path`.
std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    ADD_FAILURE() << "connect to 127.0.0.1:" << port << " failed";
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  EXPECT_EQ(send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string response;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) response.append(buf, n);
  close(fd);
  return response;
}

// The lines of `body` that mention our metrics (the exposer adds its own exposer_* series).
std::string OurLines(const std::string& body) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(body, '\n')) {
    if (line.find("courtpiece_") != absl::string_view::npos) {
      out.append(line.data(), line.size());
      out.push_back('\n');
    }
  }
  return out;
}

TEST(MetricsHttpTest, ScrapeReturnsExactSeries) {
  absl::StatusOr<std::unique_ptr<Metrics>> created =
      Metrics::Create({.service = "lobby", .listen_address = "127.0.0.1:0"});
  ASSERT_THAT(created, IsOk());
  Metrics& metrics = **created;
  ASSERT_GT(metrics.port(), 0);
  metrics.Counter("guest_logins", "Guest logins.").WithLabels({{"result", "ok"}}).Increment(3);
  metrics.LatencyHistogram("pg", "Postgres time.", {0.1})
      .WithLabels({{"query", "insert"}})
      .Observe(0.25);

  const std::string response = HttpGet(metrics.port(), "/metrics");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(response, HasSubstr("Content-Type: text/plain"));
  const std::string body = response.substr(response.find("\r\n\r\n") + 4);
  EXPECT_EQ(OurLines(body),
            "# HELP courtpiece_lobby_guest_logins_total Guest logins.\n"
            "# TYPE courtpiece_lobby_guest_logins_total counter\n"
            "courtpiece_lobby_guest_logins_total{result=\"ok\"} 3\n"
            "# HELP courtpiece_lobby_pg_seconds Postgres time.\n"
            "# TYPE courtpiece_lobby_pg_seconds histogram\n"
            "courtpiece_lobby_pg_seconds_count{query=\"insert\"} 1\n"
            "courtpiece_lobby_pg_seconds_sum{query=\"insert\"} 0.25\n"
            "courtpiece_lobby_pg_seconds_bucket{query=\"insert\",le=\"0.1\"} 0\n"
            "courtpiece_lobby_pg_seconds_bucket{query=\"insert\",le=\"+Inf\"} 1\n");
}

TEST(MetricsHttpTest, PortInUseIsUnavailable) {
  absl::StatusOr<std::unique_ptr<Metrics>> first =
      Metrics::Create({.service = "lobby", .listen_address = "127.0.0.1:0"});
  ASSERT_THAT(first, IsOk());
  const std::string taken = "127.0.0.1:" + std::to_string((*first)->port());
  EXPECT_THAT(Metrics::Create({.service = "lobby", .listen_address = taken}),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr(taken)));
}

}  // namespace
}  // namespace courtpiece::common
