#include "services/lobby/fake_directory_store.h"

#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"

namespace courtpiece::lobby {

absl::Status FakeDirectoryStore::Check() const {
  if (down_) return absl::UnavailableError("the fake directory store is down");
  return absl::OkStatus();
}

void FakeDirectoryStore::SetDown(bool down) {
  absl::MutexLock lock(&mu_);
  down_ = down;
}

size_t FakeDirectoryStore::tables() const {
  absl::MutexLock lock(&mu_);
  return tables_.size();
}

absl::StatusOr<bool> FakeDirectoryStore::ReserveCode(std::string_view code,
                                                     std::string_view table_id, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  auto it = codes_.find(std::string(code));
  if (it != codes_.end() && (it->second.free_at_ms == 0 || it->second.free_at_ms > now_ms)) {
    return false;
  }
  codes_[std::string(code)] = CodeRow{.table_id = std::string(table_id)};
  return true;
}

absl::Status FakeDirectoryStore::ReleaseCode(std::string_view code, std::string_view table_id) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  auto it = codes_.find(std::string(code));
  if (it == codes_.end() || it->second.table_id != table_id) return absl::OkStatus();
  if (tables_.count(std::string(table_id)) > 0) return absl::OkStatus();
  codes_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<InsertedTable> FakeDirectoryStore::InsertTable(const DirectoryTable& table) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  for (const auto& [id, t] : tables_) {
    if (t.host_player == table.host_player && t.request_id == table.request_id) {
      return InsertedTable{.table = t, .inserted = false};
    }
  }
  if (tables_.count(table.table_id) > 0) return absl::AlreadyExistsError("table id exists");
  tables_[table.table_id] = table;
  return InsertedTable{.table = table, .inserted = true};
}

absl::StatusOr<std::optional<DirectoryTable>> FakeDirectoryStore::FindByRequest(
    std::string_view host_player, std::string_view request_id) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  for (const auto& [id, t] : tables_) {
    if (t.host_player == host_player && t.request_id == request_id) return t;
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<DirectoryTable>> FakeDirectoryStore::FindOpenByCode(
    std::string_view code) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  for (const auto& [id, t] : tables_) {
    if (t.code == code && t.closed_at_ms == 0) return t;
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<DirectoryTable>> FakeDirectoryStore::FindTable(
    std::string_view table_id) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  auto it = tables_.find(std::string(table_id));
  if (it == tables_.end()) return std::nullopt;
  return it->second;
}

absl::Status FakeDirectoryStore::UpdateOwner(std::string_view table_id, std::string_view instance) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  auto it = tables_.find(std::string(table_id));
  if (it == tables_.end()) {
    return absl::NotFoundError(absl::StrCat("no table ", common::ToAbsl(table_id)));
  }
  it->second.owner_instance = std::string(instance);
  return absl::OkStatus();
}

absl::StatusOr<bool> FakeDirectoryStore::MarkClosed(std::string_view table_id, int64_t now_ms,
                                                    int64_t code_free_at_ms) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  auto it = tables_.find(std::string(table_id));
  if (it == tables_.end()) {
    return absl::NotFoundError(absl::StrCat("no table ", common::ToAbsl(table_id)));
  }
  if (it->second.closed_at_ms != 0) return false;
  it->second.closed_at_ms = now_ms;
  auto code = codes_.find(it->second.code);
  if (code != codes_.end() && code->second.table_id == table_id) {
    code->second.free_at_ms = code_free_at_ms;
  }
  return true;
}

}  // namespace courtpiece::lobby
