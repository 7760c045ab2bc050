// courtpiece-wallet-audit --pg-url URL
// Recomputes every balance from the ledger's entries and checks conservation and
// non-negativity (see audit.h). Exit 0: consistent; 1: inconsistent (problems printed);
// 2: usage or connection error.
#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "courtpiece/storage/pg_pool.h"
#include "services/wallet/audit.h"

// "--pg-url URL" or "--pg-url=URL"; empty when absent or anything else is given.
std::string PgUrlArgument(int argc, char** argv) {
  std::string url;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--pg-url" && i + 1 < argc) {
      url = argv[++i];
    } else if (absl::StartsWith(arg, "--pg-url=")) {
      url = arg.substr(9);
    } else {
      return "";
    }
  }
  return url;
}

int main(int argc, char** argv) {
  const std::string url = PgUrlArgument(argc, argv);
  if (url.empty()) {
    std::fprintf(stderr, "usage: courtpiece-wallet-audit --pg-url URL\n");
    return 2;
  }
  courtpiece::storage::PgPool pool({.url = url,
                                    .size_max = 1,
                                    .statement_timeout_ms = 0,
                                    .application_name = "courtpiece-wallet-audit"});
  absl::StatusOr<courtpiece::wallet::AuditReport> report = courtpiece::wallet::AuditLedger(pool);
  if (!report.ok()) {
    std::fprintf(stderr, "audit failed: %s\n", report.status().ToString().c_str());
    return 2;
  }
  std::printf("accounts=%lld transfers=%lld entries=%lld sum_of_balances=%lld house=%lld\n",
              static_cast<long long>(report->accounts), static_cast<long long>(report->transfers),
              static_cast<long long>(report->entries),
              static_cast<long long>(report->sum_of_balances),
              static_cast<long long>(report->house_balance));
  for (const std::string& problem : report->problems) std::printf("PROBLEM %s\n", problem.c_str());
  std::printf("%s\n", report->ok() ? "OK" : "MISMATCH");
  return report->ok() ? 0 : 1;
}
