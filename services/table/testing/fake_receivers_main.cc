// courtpiece-fake-receivers: the lobby's LobbyRecords and moderation's ReportIntake, faked
// (testing/fake_receivers.h), on one address, for scripts and the load tool.
//
//   courtpiece-fake-receivers --listen=127.0.0.1:0 [--refuse_first=N]
//
// stdout, JSON lines: first {"listening":"127.0.0.1:<port>"}, then one line per answered call
// ({"kind":...,"key":...,"replayed":...,"code":...,"request":{...}}). SIGTERM/SIGINT: drain,
// exit 0. Exit 1 when the address cannot be bound.
#include <cstdio>
#include <mutex>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "courtpiece/common/shutdown_signal.h"
#include "services/table/testing/fake_receivers.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "host:port to serve on (port 0: any free port)");
ABSL_FLAG(int, refuse_first, 0, "answer UNAVAILABLE to the first N calls");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  courtpiece::common::ShutdownSignal& signal = courtpiece::common::ShutdownSignal::Install();
  std::mutex out_mu;
  auto print = [&out_mu](const std::string& line) {
    std::lock_guard<std::mutex> lock(out_mu);
    std::fputs(line.c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  };
  auto receivers =
      courtpiece::table_service::testing::FakeReceivers::Start(absl::GetFlag(FLAGS_listen), print);
  if (!receivers.ok()) {
    std::fprintf(stderr, "courtpiece-fake-receivers: %s\n",
                 std::string(receivers.status().message()).c_str());
    return 1;
  }
  (*receivers)->RefuseNext(absl::GetFlag(FLAGS_refuse_first));
  print("{\"listening\":\"" + (*receivers)->address() + "\"}");
  signal.Wait();
  (*receivers)->server().Shutdown(absl::Now() + absl::Seconds(2));
  return 0;
}
