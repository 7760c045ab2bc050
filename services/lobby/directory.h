// The directory: creating tables (placement on a live table instance, a unique 6-digit
// code), resolving codes and invite links, the open (public) tables, quick join, and the
// tables a player sits at (docs/lobby.md, "Directory").
//
// Contract:
//  - CreateTable: InvalidArgument naming the option (request_id, bet_coins, turn_time_ms,
//    game_options: the rules library's own message), Unavailable when no table instance is
//    live (or the store, Redis or the instance is unreachable: retry with the same
//    request_id), ResourceExhausted when no free code was found in code_tries_max draws.
//    Idempotent by (caller, request_id): a retry answers the same table (and finishes its
//    creation on the table tier if an earlier try stopped half way); the same request_id
//    with other options is AlreadyExists.
//  - ResolveCode: 6 digits or "<invite_base_url>/t/<code>"; NotFound for an unknown code or
//    a closed table (a table whose owner record is gone is marked closed here);
//    InvalidArgument for anything else. Redis only, when Redis knows the code.
//  - MarkClosed: idempotent; the code is free again after code_cooloff_ms.
//  - ListOpenTables / QuickJoin / MyTables ask every live instance (at most
//    fanout_instances_max, in parallel, each call with table_rpc_timeout_ms); instances that
//    do not answer are left out; Unavailable when none is live or none answers.
// Thread-safety: thread-safe; calls block on their I/O (bounded by the deadlines above).
#ifndef COURTPIECE_SERVICES_LOBBY_DIRECTORY_H_
#define COURTPIECE_SERVICES_LOBBY_DIRECTORY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/table/engine.h"
#include "services/lobby/directory_store.h"
#include "services/lobby/table_port.h"
#include "services/lobby/wallet_port.h"

namespace courtpiece::lobby {

using ::courtpiece::Clock;

struct DirectoryOptions {
  std::string invite_base_url = "http://localhost:8080";  // links are <base>/t/<code>
  int64_t code_cooloff_ms = 24 * 3'600'000;  // a closed table's code is reusable after this
  int code_tries_max = 20;                   // code draws per CreateTable before giving up
  int64_t table_rpc_timeout_ms = 2'000;      // each call to a table instance
  int fanout_instances_max = 64;             // instances asked by one list / quick join
  int64_t open_tables_cache_ms = 1'000;      // ListOpenTables answers from this old a fan-out
  int64_t live_instances_cache_ms = 1'000;   // ResolveCode's view of the live instances
  // A code whose table has no owner record yet is not closed by ResolveCode before this
  // (its CreateTable may still be on its way to the instance).
  int64_t resolve_close_grace_ms = 60'000;
  int quick_join_tries_max = 8;              // open tables tried before creating one
  int64_t quick_join_bet_coins = 100;        // a new quick-join table's bet (clamped)
  int64_t quick_join_turn_time_ms = 15'000;  // ... and turn time
  // The lock shared by lobbies for quick joins of one game type (with a SharedLock):
  int64_t quick_join_lock_ttl_ms = 10'000;  // it expires after this whatever happens
  int quick_join_lock_tries_max = 600;      // tries 5 ms apart (~3 s), then goes on without
};

// Where codes come from: uniform over 000000..999999 in production; tests inject a small
// space to exhaust it.
class CodeSource {
 public:
  virtual ~CodeSource() = default;
  virtual std::string Next() = 0;  // 6 digits
};
class RandomCodeSource final : public CodeSource {
 public:
  std::string Next() override;
};
// Cycles through a fixed list (tests).
class ListCodeSource final : public CodeSource {
 public:
  explicit ListCodeSource(std::vector<std::string> codes) : codes_(std::move(codes)) {}
  std::string Next() override;

 private:
  absl::Mutex mu_;
  std::vector<std::string> codes_;
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

struct NewTable {
  std::string request_id;
  std::string game_options;
  int64_t bet_coins = 0;
  int64_t turn_time_ms = 0;
  bool listed = false;
  std::string bot_level;  // "easy" (also ""), "normal", "strong"
};

struct TableRef {
  std::string table_id;
  std::string code;
  std::string invite_link;
  std::string owner_instance;
  std::string owner_addr;
  std::string game_options;
  int64_t bet_coins = 0;
  int64_t turn_time_ms = 0;
  bool listed = false;
  std::string bot_level = "easy";
  std::string host_player;
  int seat = -1;
};

struct OpenTableEntry {
  TableRef table;
  int seats_taken = 0;
  std::string phase;
};

struct TableQuery {
  std::string game;  // "" any
  int64_t bet_min_coins = 0;
  int64_t bet_max_coins = 0;  // 0: no bound
  int limit = 0;              // 0: 50; at most 200
  // "" any level (a table QuickJoin creates has easy bots); "easy", "normal" or "strong":
  // only tables whose bots play at that level (and a table QuickJoin creates gets it).
  std::string bot_level;
};

class Directory {
 public:
  // `quick_join_lock` may be null: quick joins are then serialised in this process only.
  // `wallet` may be null: then a new table's host is not checked for twice the bet (RULES.md
  // §4.5; the table still unseats a short host at the count-in).
  Directory(DirectoryOptions options, Clock& clock, DirectoryStore& store, CodeCache& codes,
            TableRegistry& registry, TablePort& tables, table::EngineFactory& engines,
            CodeSource& code_source, SharedLock* quick_join_lock = nullptr,
            WalletPort* wallet = nullptr);
  ~Directory();

  absl::StatusOr<TableRef> CreateTable(std::string_view caller, const NewTable& table);
  absl::StatusOr<TableRef> ResolveCode(std::string_view code_or_link);
  // ResolveCode of each, in order (ResolveCode is this with one code); the Redis reads of
  // the whole batch in two round trips (the codes, then the owner records).
  std::vector<absl::StatusOr<TableRef>> ResolveCodes(
      const std::vector<std::string>& codes_or_links);
  absl::Status MarkClosed(std::string_view table_id);
  absl::StatusOr<std::vector<OpenTableEntry>> ListOpenTables(const TableQuery& query);
  // query.limit is ignored; request_id as CreateTable's (for the table it may create).
  absl::StatusOr<TableRef> QuickJoin(std::string_view caller, const TableQuery& query,
                                     std::string_view request_id);
  absl::StatusOr<std::vector<TableRef>> MyTables(std::string_view caller);

  const DirectoryOptions& options() const { return options_; }
  std::string InviteLink(std::string_view code) const;
  // The code of "<code>" or "<base>/t/<code>"; InvalidArgument otherwise.
  absl::StatusOr<std::string> ParseCodeOrLink(std::string_view code_or_link) const;

 private:
  absl::StatusOr<std::string> ReserveCode(DirectoryTable& row);
  absl::StatusOr<TableRef> EnsureCreated(DirectoryTable row);
  absl::StatusOr<TableRef> QuickJoinLocked(std::string_view caller, const TableQuery& query,
                                           std::string_view request_id);
  absl::StatusOr<std::vector<InstanceInfo>> Live(bool fresh);
  absl::StatusOr<std::vector<table::v1::TableInfo>> FanOut(const table::v1::ListTablesRequest& r);
  absl::StatusOr<std::vector<OpenTableEntry>> OpenTables(bool fresh);
  // The open table of `code` given Redis' answer for it (Postgres when Redis lacks it).
  absl::StatusOr<DirectoryTable> OpenRowOf(
      const std::string& code, const absl::StatusOr<std::optional<std::string>>& cached);
  absl::StatusOr<TableRef> ResolveEntry(const DirectoryTable& row,
                                        const absl::StatusOr<placement::Owner>& owner);
  TableRef RefOf(const table::v1::TableInfo& info) const;
  TableRef RefOf(const DirectoryTable& row) const;
  absl::Time Deadline() const;
  int64_t NowMs() const;

  const DirectoryOptions options_;
  Clock& clock_;
  DirectoryStore& store_;
  CodeCache& codes_;
  TableRegistry& registry_;
  TablePort& tables_;
  table::EngineFactory& engines_;
  CodeSource& code_source_;
  SharedLock* quick_join_lock_;
  WalletPort* wallet_;

  absl::Mutex cache_mu_;
  std::vector<InstanceInfo> live_ ABSL_GUARDED_BY(cache_mu_);
  int64_t live_at_ms_ ABSL_GUARDED_BY(cache_mu_) = -1;
  std::vector<OpenTableEntry> open_ ABSL_GUARDED_BY(cache_mu_);
  int64_t open_at_ms_ ABSL_GUARDED_BY(cache_mu_) = -1;

  // Quick joins of one game type run one at a time in this process (and, with a SharedLock,
  // across lobbies), so players arriving together fill one table before a second is made
  // (docs/lobby.md).
  absl::Mutex quick_mu_;
  std::map<std::string, std::unique_ptr<absl::Mutex>> quick_locks_ ABSL_GUARDED_BY(quick_mu_);
};

// The Redis value of an open code (a DirectoryTable as JSON) and its closed tombstone.
std::string EncodeEntry(const DirectoryTable& row);
absl::StatusOr<DirectoryTable> DecodeEntry(std::string_view value);
inline constexpr char kClosedTombstone[] = "closed";

// The game type named by game options JSON ("classic", ...); InvalidArgument if bad.
absl::StatusOr<std::string> GameTypeOf(std::string_view game_options);

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_DIRECTORY_H_
