#include "services/lobby/pg_directory_store.h"

#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/status_macros.h"

namespace courtpiece::lobby {
namespace {

using storage::PgParam;
using storage::PgResult;
using storage::PgRow;

constexpr char kColumns[] =
    "table_id, code, host_player, request_id, game_options, bet_coins, turn_time_ms, listed, "
    "owner_instance, created_at_ms, coalesce(closed_at_ms, 0), bot_level";

absl::StatusOr<DirectoryTable> RowOf(const PgRow& r) {
  DirectoryTable t;
  ASSIGN_OR_RETURN(t.table_id, r.String(0));
  ASSIGN_OR_RETURN(t.code, r.String(1));
  ASSIGN_OR_RETURN(t.host_player, r.String(2));
  ASSIGN_OR_RETURN(t.request_id, r.String(3));
  ASSIGN_OR_RETURN(t.game_options, r.String(4));
  ASSIGN_OR_RETURN(t.bet_coins, r.Int64(5));
  ASSIGN_OR_RETURN(t.turn_time_ms, r.Int64(6));
  ASSIGN_OR_RETURN(t.listed, r.Bool(7));
  ASSIGN_OR_RETURN(t.owner_instance, r.String(8));
  ASSIGN_OR_RETURN(t.created_at_ms, r.Int64(9));
  ASSIGN_OR_RETURN(t.closed_at_ms, r.Int64(10));
  ASSIGN_OR_RETURN(t.bot_level, r.String(11));
  return t;
}

absl::Status NeedId(std::string_view what, std::string_view id) {
  if (id.empty()) return absl::InvalidArgumentError(absl::StrCat(common::ToAbsl(what), ": empty"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> PgDirectoryStore::ReserveCode(std::string_view code, std::string_view table_id,
                                                   int64_t now_ms) {
  RETURN_IF_ERROR(NeedId("code", code));
  RETURN_IF_ERROR(NeedId("table_id", table_id));
  ASSIGN_OR_RETURN(
      PgResult r,
      pool_.ExecAutocommit(
          "INSERT INTO lobby.directory_codes (code, table_id, reserved_at_ms, free_at_ms) "
          "VALUES ($1, $2, $3, NULL) ON CONFLICT (code) DO UPDATE SET "
          "table_id = EXCLUDED.table_id, reserved_at_ms = EXCLUDED.reserved_at_ms, "
          "free_at_ms = NULL "
          "WHERE lobby.directory_codes.free_at_ms IS NOT NULL "
          "AND lobby.directory_codes.free_at_ms <= EXCLUDED.reserved_at_ms",
          {code, table_id, now_ms}, /*max_attempts=*/3));
  return r.affected_rows() == 1;
}

absl::Status PgDirectoryStore::ReleaseCode(std::string_view code, std::string_view table_id) {
  return pool_
      .ExecAutocommit(
          "DELETE FROM lobby.directory_codes c WHERE c.code = $1 AND c.table_id = $2 "
          "AND NOT EXISTS (SELECT 1 FROM lobby.directory_tables t WHERE t.table_id = $2)",
          {code, table_id}, 3)
      .status();
}

absl::StatusOr<InsertedTable> PgDirectoryStore::InsertTable(const DirectoryTable& t) {
  RETURN_IF_ERROR(NeedId("table_id", t.table_id));
  RETURN_IF_ERROR(NeedId("host_player", t.host_player));
  ASSIGN_OR_RETURN(
      PgResult inserted,
      pool_.ExecAutocommit(
          "INSERT INTO lobby.directory_tables (table_id, code, host_player, request_id, "
          "game_options, bet_coins, turn_time_ms, listed, owner_instance, created_at_ms, "
          "bot_level) "
          "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
          "ON CONFLICT (host_player, request_id) DO NOTHING",
          {t.table_id, t.code, t.host_player, t.request_id, t.game_options, t.bet_coins,
           t.turn_time_ms, t.listed, t.owner_instance, t.created_at_ms, t.bot_level},
          3));
  if (inserted.affected_rows() == 1) return InsertedTable{.table = t, .inserted = true};
  ASSIGN_OR_RETURN(std::optional<DirectoryTable> existing,
                   FindByRequest(t.host_player, t.request_id));
  if (!existing.has_value()) {
    return absl::AbortedError("the request's table vanished while inserting: retry");
  }
  return InsertedTable{.table = *existing, .inserted = false};
}

absl::StatusOr<std::optional<DirectoryTable>> PgDirectoryStore::FindOne(
    std::string_view where_sql, const std::vector<PgParam>& p) {
  std::optional<DirectoryTable> out;
  const std::string sql = absl::StrCat("SELECT ", kColumns, " FROM lobby.directory_tables WHERE ",
                                       common::ToAbsl(where_sql), " LIMIT 1");
  RETURN_IF_ERROR(pool_.RunIdempotent(3, [&](storage::PgTransaction& tx) -> absl::Status {
    ASSIGN_OR_RETURN(PgResult r, tx.Exec(sql, p));
    out.reset();
    if (!r.empty()) {
      ASSIGN_OR_RETURN(DirectoryTable t, RowOf(r.row(0)));
      out = std::move(t);
    }
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<std::optional<DirectoryTable>> PgDirectoryStore::FindByRequest(
    std::string_view host_player, std::string_view request_id) {
  return FindOne("host_player = $1 AND request_id = $2", {host_player, request_id});
}

absl::StatusOr<std::optional<DirectoryTable>> PgDirectoryStore::FindOpenByCode(
    std::string_view code) {
  return FindOne("code = $1 AND closed_at_ms IS NULL", {code});
}

absl::StatusOr<std::optional<DirectoryTable>> PgDirectoryStore::FindTable(
    std::string_view table_id) {
  return FindOne("table_id = $1", {table_id});
}

absl::Status PgDirectoryStore::UpdateOwner(std::string_view table_id, std::string_view instance) {
  ASSIGN_OR_RETURN(PgResult r,
                   pool_.ExecAutocommit("UPDATE lobby.directory_tables SET owner_instance = $2 "
                                        "WHERE table_id = $1",
                                        {table_id, instance}, 3));
  if (r.affected_rows() == 0) {
    return absl::NotFoundError(absl::StrCat("no table ", common::ToAbsl(table_id)));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> PgDirectoryStore::MarkClosed(std::string_view table_id, int64_t now_ms,
                                                  int64_t code_free_at_ms) {
  bool closed = false;
  RETURN_IF_ERROR(pool_.RunWithRetry(3, [&](storage::PgTransaction& tx) -> absl::Status {
    ASSIGN_OR_RETURN(PgResult r,
                     tx.Exec("UPDATE lobby.directory_tables SET closed_at_ms = $2 "
                             "WHERE table_id = $1 AND closed_at_ms IS NULL RETURNING code",
                             {table_id, now_ms}));
    closed = r.size() == 1;
    if (!closed) {
      ASSIGN_OR_RETURN(PgResult any, tx.Exec("SELECT 1 FROM lobby.directory_tables "
                                             "WHERE table_id = $1",
                                             {table_id}));
      if (any.empty()) {
        return absl::NotFoundError(absl::StrCat("no table ", common::ToAbsl(table_id)));
      }
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::string code, r.row(0).String(0));
    return tx
        .Exec(
            "UPDATE lobby.directory_codes SET free_at_ms = $3 "
            "WHERE code = $1 AND table_id = $2 AND free_at_ms IS NULL",
            {code, table_id, code_free_at_ms})
        .status();
  }));
  return closed;
}

}  // namespace courtpiece::lobby
