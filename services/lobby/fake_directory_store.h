// DirectoryStore in memory, with the same rules as the Postgres store (directory_store.h).
// Thread-safety: thread-safe.
#ifndef COURTPIECE_SERVICES_LOBBY_FAKE_DIRECTORY_STORE_H_
#define COURTPIECE_SERVICES_LOBBY_FAKE_DIRECTORY_STORE_H_

#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "services/lobby/directory_store.h"

namespace courtpiece::lobby {

class FakeDirectoryStore final : public DirectoryStore {
 public:
  absl::StatusOr<bool> ReserveCode(std::string_view code, std::string_view table_id,
                                   int64_t now_ms) override;
  absl::Status ReleaseCode(std::string_view code, std::string_view table_id) override;
  absl::StatusOr<InsertedTable> InsertTable(const DirectoryTable& table) override;
  absl::StatusOr<std::optional<DirectoryTable>> FindByRequest(std::string_view host_player,
                                                              std::string_view request_id) override;
  absl::StatusOr<std::optional<DirectoryTable>> FindOpenByCode(std::string_view code) override;
  absl::StatusOr<std::optional<DirectoryTable>> FindTable(std::string_view table_id) override;
  absl::Status UpdateOwner(std::string_view table_id, std::string_view instance) override;
  absl::StatusOr<bool> MarkClosed(std::string_view table_id, int64_t now_ms,
                                  int64_t code_free_at_ms) override;

  void SetDown(bool down);  // every call Unavailable while down
  size_t tables() const;

 private:
  struct CodeRow {
    std::string table_id;
    int64_t free_at_ms = 0;  // 0: held
  };
  absl::Status Check() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  mutable absl::Mutex mu_;
  bool down_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, CodeRow> codes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, DirectoryTable> tables_ ABSL_GUARDED_BY(mu_);
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_FAKE_DIRECTORY_STORE_H_
