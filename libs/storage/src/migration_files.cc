// Pure parts of migrations: names, ordering, checksums, planning; and reading the dir.
#include <sodium.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/storage/migrations.h"

namespace courtpiece::storage {
namespace {

constexpr int kVersionDigitsMin = 4;

bool IsNameChar(char c) { return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_'; }

}  // namespace

absl::StatusOr<MigrationFile> ParseMigrationFileName(absl::string_view filename) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("migration file '", filename, "': ", why,
                                                   " (want NNNN_name.sql, name [a-z0-9_]+)"));
  };
  if (!absl::EndsWith(filename, ".sql")) return bad("does not end in .sql");
  const absl::string_view stem = filename.substr(0, filename.size() - 4);
  const size_t underscore = stem.find('_');
  if (underscore == absl::string_view::npos) return bad("no '_' after the version");
  const absl::string_view digits = stem.substr(0, underscore);
  const absl::string_view name = stem.substr(underscore + 1);
  if (digits.size() < kVersionDigitsMin ||
      !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit)) {
    return bad("version is not 4 or more digits");
  }
  if (name.empty() || !std::all_of(name.begin(), name.end(), IsNameChar)) {
    return bad("bad name");
  }
  MigrationFile file;
  if (!absl::SimpleAtoi(digits, &file.version)) return bad("version out of range");
  file.name = std::string(name);
  file.filename = std::string(filename);
  return file;
}

absl::StatusOr<std::vector<MigrationFile>> OrderMigrations(std::vector<MigrationFile> files) {
  std::sort(files.begin(), files.end(),
            [](const MigrationFile& a, const MigrationFile& b) { return a.version < b.version; });
  for (size_t i = 1; i < files.size(); ++i) {
    if (files[i].version == files[i - 1].version) {
      return absl::InvalidArgumentError(absl::StrCat("migration version ", files[i].version,
                                                     " used twice: ", files[i - 1].filename,
                                                     " and ", files[i].filename));
    }
  }
  return files;
}

std::string MigrationChecksum(absl::string_view sql) {
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(sql.data()), sql.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : digest) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
  }
  return out;
}

absl::StatusOr<std::vector<MigrationFile>> LoadMigrationDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("migration dir '", dir, "' not found"));
  }
  std::vector<MigrationFile> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string filename = entry.path().filename().string();
    if (!entry.is_regular_file() || !absl::EndsWith(filename, ".sql")) continue;
    absl::StatusOr<MigrationFile> file = ParseMigrationFileName(filename);
    if (!file.ok()) return file.status();
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream sql;
    sql << in.rdbuf();
    if (!in.good() && !in.eof()) {
      return absl::InternalError(absl::StrCat("cannot read ", entry.path().string()));
    }
    file->sql = sql.str();
    file->checksum = MigrationChecksum(file->sql);
    files.push_back(*std::move(file));
  }
  if (ec) return absl::InternalError(absl::StrCat("listing ", dir, ": ", ec.message()));
  return OrderMigrations(std::move(files));
}

absl::StatusOr<MigrationPlan> PlanMigrations(const std::vector<MigrationFile>& files,
                                             const std::vector<AppliedMigration>& applied) {
  std::map<int64_t, const AppliedMigration*> recorded;
  for (const AppliedMigration& a : applied) recorded[a.version] = &a;
  MigrationPlan plan;
  for (const MigrationFile& f : files) {
    auto it = recorded.find(f.version);
    if (it == recorded.end()) {
      plan.pending.push_back(f);
      continue;
    }
    if (it->second->checksum != f.checksum) {
      return absl::FailedPreconditionError(absl::StrCat(
          "migration ", f.filename, " was changed after it was applied (recorded checksum ",
          it->second->checksum.substr(0, 12), ", file ", f.checksum.substr(0, 12),
          "); restore it and add a new migration instead"));
    }
    recorded.erase(it);
  }
  for (const auto& [version, a] : recorded) plan.unknown_applied.push_back(*a);
  return plan;
}

}  // namespace courtpiece::storage
