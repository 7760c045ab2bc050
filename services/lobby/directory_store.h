// Where the directory keeps its tables and codes: Postgres (pg_directory_store.h, schema
// lobby, migrations/0002_directory.sql) or memory (fake_directory_store.h).
//
// Contract:
//  - A code has at most one holder: ReserveCode takes a code that is free (never used, or
//    its table closed and the cooling-off is over, free_at_ms <= now_ms) and answers false
//    (taking nothing) when another table holds it. Postgres enforces this with the primary
//    key on lobby.directory_codes(code), so two lobbies never hand out one code.
//  - InsertTable is idempotent by (host_player, request_id): when a row with that pair
//    exists, nothing is written and the existing row comes back with inserted = false.
//  - MarkClosed is idempotent: the first call sets closed_at_ms and the code's free_at_ms;
//    later calls change nothing (answer false).
//  - Errors: Unavailable when the database is unreachable (retry), NotFound for an unknown
//    table (UpdateOwner, MarkClosed), InvalidArgument for empty ids.
// Thread-safety: implementations are thread-safe.
#ifndef COURTPIECE_SERVICES_LOBBY_DIRECTORY_STORE_H_
#define COURTPIECE_SERVICES_LOBBY_DIRECTORY_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace courtpiece::lobby {

struct DirectoryTable {
  std::string table_id;
  std::string code;  // 6 digits
  std::string host_player;
  std::string request_id;    // the host's CreateTable request id (idempotency)
  std::string game_options;  // JSON, as the rules engine takes it
  int64_t bet_coins = 0;
  int64_t turn_time_ms = 0;
  bool listed = false;             // public
  std::string bot_level = "easy";  // "easy", "normal" or "strong" (docs/bots.md)
  std::string owner_instance;      // the table instance it was placed on
  int64_t created_at_ms = 0;
  int64_t closed_at_ms = 0;  // 0 while open
  bool operator==(const DirectoryTable&) const = default;
};

struct InsertedTable {
  DirectoryTable table;
  bool inserted = false;  // false: a row with the same (host_player, request_id) existed
};

class DirectoryStore {
 public:
  virtual ~DirectoryStore() = default;

  // Takes `code` for `table_id` when it is free at now_ms; false when it is held.
  virtual absl::StatusOr<bool> ReserveCode(std::string_view code, std::string_view table_id,
                                           int64_t now_ms) = 0;
  // Gives up a reservation that did not become a table (only while held by table_id and
  // no table row names it); OK when there is nothing to release.
  virtual absl::Status ReleaseCode(std::string_view code, std::string_view table_id) = 0;

  virtual absl::StatusOr<InsertedTable> InsertTable(const DirectoryTable& table) = 0;
  virtual absl::StatusOr<std::optional<DirectoryTable>> FindByRequest(
      std::string_view host_player, std::string_view request_id) = 0;
  // The open table holding `code` (closed ones are not answered).
  virtual absl::StatusOr<std::optional<DirectoryTable>> FindOpenByCode(std::string_view code) = 0;
  virtual absl::StatusOr<std::optional<DirectoryTable>> FindTable(std::string_view table_id) = 0;
  virtual absl::Status UpdateOwner(std::string_view table_id, std::string_view instance) = 0;
  // Closes the table at now_ms; its code is free from code_free_at_ms. True when this call
  // closed it.
  virtual absl::StatusOr<bool> MarkClosed(std::string_view table_id, int64_t now_ms,
                                          int64_t code_free_at_ms) = 0;
};

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_DIRECTORY_STORE_H_
