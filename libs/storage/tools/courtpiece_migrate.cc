// courtpiece-migrate: applies NNNN_name.sql migrations of one schema (see migrations.h).
//
//   courtpiece-migrate --pg-url URL --schema NAME --dir DIR [--lock-timeout-ms N]
//
// Exit status: 0 applied or up to date; 1 refused or failed (message on stderr); 2 usage.
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/numbers.h"
#include "courtpiece/storage/migrations.h"

namespace {

int Usage(const char* why) {
  std::fprintf(stderr,
               "courtpiece-migrate: %s\n"
               "usage: courtpiece-migrate --pg-url URL --schema NAME --dir DIR"
               " [--lock-timeout-ms N]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  courtpiece::storage::MigrateOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") return Usage("help");
    if (i + 1 >= argc) return Usage(("missing value for " + flag).c_str());
    const char* value = argv[++i];
    if (flag == "--pg-url") {
      options.pg_url = value;
    } else if (flag == "--schema") {
      options.schema = value;
    } else if (flag == "--dir") {
      options.dir = value;
    } else if (flag == "--lock-timeout-ms") {
      if (!absl::SimpleAtoi(value, &options.lock_timeout_ms) || options.lock_timeout_ms <= 0) {
        return Usage("--lock-timeout-ms wants a positive integer");
      }
    } else {
      return Usage(("unknown flag " + flag).c_str());
    }
  }
  if (options.pg_url.empty() || options.schema.empty() || options.dir.empty()) {
    return Usage("--pg-url, --schema and --dir are required");
  }
  absl::StatusOr<courtpiece::storage::MigrateReport> report =
      courtpiece::storage::ApplyMigrations(options);
  if (!report.ok()) {
    std::fprintf(stderr, "courtpiece-migrate: schema %s: %s\n", options.schema.c_str(),
                 report.status().ToString().c_str());
    return 1;
  }
  for (const std::string& f : report->applied) {
    std::printf("courtpiece-migrate: %s: applied %s\n", options.schema.c_str(), f.c_str());
  }
  for (const auto& unknown : report->unknown_applied) {
    std::printf("courtpiece-migrate: %s: note: version %lld (%s) is recorded but has no file\n",
                options.schema.c_str(), static_cast<long long>(unknown.version),
                unknown.name.c_str());
  }
  std::printf("courtpiece-migrate: %s: %zu applied, %d already applied\n", options.schema.c_str(),
              report->applied.size(), report->already_applied);
  return 0;
}
