// DirectoryStore on Postgres (schema lobby, migrations/0002_directory.sql) through
// storage::PgPool. Each method is one statement (autocommit) or one short transaction; the
// code's one-holder rule is the primary key of lobby.directory_codes, and a reservation
// takes a cooled-off code back in the same statement (INSERT .. ON CONFLICT DO UPDATE
// .. WHERE free_at_ms <= now).
// Thread-safety: thread-safe (the pool is).
#ifndef COURTPIECE_SERVICES_LOBBY_PG_DIRECTORY_STORE_H_
#define COURTPIECE_SERVICES_LOBBY_PG_DIRECTORY_STORE_H_

#include "courtpiece/storage/pg_pool.h"
#include "services/lobby/directory_store.h"

namespace courtpiece::lobby {

class PgDirectoryStore final : public DirectoryStore {
 public:
  explicit PgDirectoryStore(storage::PgPool& pool) : pool_(pool) {}

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

 private:
  absl::StatusOr<std::optional<DirectoryTable>> FindOne(std::string_view where_sql,
                                                        const std::vector<storage::PgParam>& p);
  storage::PgPool& pool_;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_PG_DIRECTORY_STORE_H_
