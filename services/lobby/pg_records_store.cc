#include "services/lobby/pg_records_store.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/client_errors.h"
#include "courtpiece/common/status_macros.h"

namespace courtpiece::lobby {
namespace {

using storage::PgParam;
using storage::PgResult;
using storage::PgRow;
using storage::PgTransaction;

constexpr int kRetryAttemptsMax = 3;  // writes: Aborted only; reads also Unavailable

std::string IntArray(const std::vector<int>& items) {
  return absl::StrCat("{", absl::StrJoin(items, ","), "}");
}

std::string BoolArray(const std::vector<bool>& items) {
  std::vector<std::string> text;
  for (bool b : items) text.push_back(b ? "t" : "f");
  return absl::StrCat("{", absl::StrJoin(text, ","), "}");
}

absl::Status Unexpected(const absl::Status& status) {
  if (status.ok() || !common::IsClientMessageCode(status.code())) return status;
  return absl::InternalError(status.message());
}

int64_t Ms(absl::Time t) { return absl::ToUnixMillis(t); }

}  // namespace

absl::StatusOr<ApplyResult> PgRecordsStore::Apply(std::string_view key, std::string_view kind,
                                                  std::string_view content_hash, absl::Time at,
                                                  const WriteFn& write) {
  ApplyResult result;
  bool conflict = false;
  absl::Status status =
      pool_.RunWithRetry(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
        result = ApplyResult{};
        conflict = false;
        ASSIGN_OR_RETURN(PgResult claimed,
                         tx.Exec("INSERT INTO lobby.record_keys (key, kind, content_hash, "
                                 "recorded_at_ms) VALUES ($1, $2, $3, $4) "
                                 "ON CONFLICT (key) DO NOTHING",
                                 {key, kind, content_hash, Ms(at)}));
        if (claimed.affected_rows() == 1) return write(tx);
        ASSIGN_OR_RETURN(PgRow row, tx.ExecOneRow("SELECT kind, content_hash FROM "
                                                  "lobby.record_keys WHERE key = $1",
                                                  {key}));
        ASSIGN_OR_RETURN(std::string stored_kind, row.String(0));
        ASSIGN_OR_RETURN(std::string stored_hash, row.String(1));
        if (stored_kind != kind || stored_hash != content_hash) {
          conflict = true;
          return absl::AlreadyExistsError(absl::StrCat("the key ", common::ToAbsl(key),
                                                       " was recorded before with other content"));
        }
        result.replayed = true;
        return absl::OkStatus();
      });
  if (conflict) return status;
  if (!status.ok()) return Unexpected(status);
  return result;
}

absl::StatusOr<ApplyResult> PgRecordsStore::ApplyGame(const GameRecordData& r,
                                                      std::string_view hash, absl::Time at,
                                                      absl::Time) {
  // Players in id order: the stats rows are locked in one global order.
  std::vector<GamePlayerRecord> players = r.players;
  std::sort(
      players.begin(), players.end(),
      [](const GamePlayerRecord& a, const GamePlayerRecord& b) { return a.player < b.player; });
  std::vector<std::string> ids;
  std::vector<int> seats, courts, goons;
  std::vector<bool> won;
  for (const GamePlayerRecord& p : players) {
    ids.push_back(p.player);
    seats.push_back(p.seat);
    won.push_back(p.won);
    courts.push_back(r.courts[p.seat % 2]);
    goons.push_back(r.goon_courts[p.seat % 2]);
  }
  return Apply(r.key, "game", hash, at, [&](PgTransaction& tx) -> absl::Status {
    RETURN_IF_ERROR(
        tx.Exec("INSERT INTO lobby.record_games (table_id, game_no, game, counts_for_stats, "
                "ended_early, winning_team, scores, courts, goon_courts, recorded_at_ms) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7::int[], $8::int[], $9::int[], $10)",
                {r.table_id, r.game_no, r.game, r.counts_for_stats, r.ended_early, r.winning_team,
                 IntArray(r.scores), IntArray(r.courts), IntArray(r.goon_courts), Ms(at)})
            .status());
    if (ids.empty()) return absl::OkStatus();
    RETURN_IF_ERROR(
        tx.Exec("INSERT INTO lobby.record_game_players (player_id, table_id, "
                "game_no, seat, won) SELECT u.p, $4, $5, u.s, u.w FROM "
                "unnest($1::text[], $2::int[], $3::boolean[]) AS u(p, s, w) "
                "ORDER BY u.s",
                {storage::PgTextArray(ids), IntArray(seats), BoolArray(won), r.table_id, r.game_no})
            .status());
    if (!r.counts_for_stats) return absl::OkStatus();
    return tx
        .Exec(
            "INSERT INTO lobby.player_stats AS ps (player_id, game, played, won, lost, "
            "courts, goon_courts) SELECT u.p, $5, 1, u.w::int, (NOT u.w)::int, u.c, u.g "
            "FROM unnest($1::text[], $2::boolean[], $3::int[], $4::int[]) AS u(p, w, c, g) "
            "ORDER BY u.p "
            "ON CONFLICT (player_id, game) DO UPDATE SET played = ps.played + 1, "
            "won = ps.won + EXCLUDED.won, lost = ps.lost + EXCLUDED.lost, "
            "courts = ps.courts + EXCLUDED.courts, "
            "goon_courts = ps.goon_courts + EXCLUDED.goon_courts",
            {storage::PgTextArray(ids), BoolArray(won), IntArray(courts), IntArray(goons), r.game})
        .status();
  });
}

absl::StatusOr<ApplyResult> PgRecordsStore::ApplyQuit(const QuitRecordData& r,
                                                      std::string_view hash, absl::Time at,
                                                      absl::Time) {
  return Apply(r.key, "quit", hash, at, [&](PgTransaction& tx) -> absl::Status {
    RETURN_IF_ERROR(tx.Exec("INSERT INTO lobby.record_quits (player_id, table_id, game_no, game, "
                            "recorded_at_ms) VALUES ($1, $2, $3, $4, $5)",
                            {r.player, r.table_id, r.game_no, r.game, Ms(at)})
                        .status());
    return tx
        .Exec(
            "INSERT INTO lobby.player_stats AS ps (player_id, game, quits) VALUES ($1, $2, 1) "
            "ON CONFLICT (player_id, game) DO UPDATE SET quits = ps.quits + 1",
            {r.player, r.game})
        .status();
  });
}

absl::StatusOr<ApplyResult> PgRecordsStore::ApplyRound(const RoundRecordData& r,
                                                       std::string_view hash, absl::Time at,
                                                       absl::Time) {
  return Apply(r.key, "round", hash, at, [&](PgTransaction& tx) -> absl::Status {
    return tx
        .Exec(
            "INSERT INTO lobby.record_rounds (table_id, round, seed_hex, result, seed_only_to, "
            "recorded_at_ms) VALUES ($1, $2, $3, $4, $5, $6)",
            {r.table_id, r.round, r.seed_hex, r.result, r.seed_only_to, Ms(at)})
        .status();
  });
}

absl::StatusOr<ApplyResult> PgRecordsStore::ApplyTableClosed(const TableClosedData& r,
                                                             std::string_view hash, absl::Time at,
                                                             absl::Time) {
  return Apply(r.key, "closed", hash, at, [&](PgTransaction& tx) -> absl::Status {
    return tx
        .Exec("INSERT INTO lobby.record_tables_closed (table_id, closed_at_ms) VALUES ($1, $2)",
              {r.table_id, Ms(at)})
        .status();
  });
}

absl::StatusOr<std::vector<GameTypeStats>> PgRecordsStore::Stats(std::string_view player,
                                                                 absl::Time) {
  std::vector<GameTypeStats> out;
  absl::Status status =
      pool_.RunIdempotent(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
        out.clear();
        ASSIGN_OR_RETURN(PgResult rows,
                         tx.Exec("SELECT game, played, won, lost, quits, courts, goon_courts "
                                 "FROM lobby.player_stats WHERE player_id = $1 ORDER BY game",
                                 {player}));
        for (const PgRow& row : rows.rows()) {
          GameTypeStats s;
          ASSIGN_OR_RETURN(s.game, row.String(0));
          ASSIGN_OR_RETURN(s.played, row.Int64(1));
          ASSIGN_OR_RETURN(s.won, row.Int64(2));
          ASSIGN_OR_RETURN(s.lost, row.Int64(3));
          ASSIGN_OR_RETURN(s.quits, row.Int64(4));
          ASSIGN_OR_RETURN(s.courts, row.Int64(5));
          ASSIGN_OR_RETURN(s.goon_courts, row.Int64(6));
          out.push_back(std::move(s));
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return Unexpected(status);
  return out;
}

absl::StatusOr<std::vector<PlayerGameResult>> PgRecordsStore::RecentResults(std::string_view player,
                                                                            int limit, absl::Time) {
  std::vector<PlayerGameResult> out;
  absl::Status status =
      pool_.RunIdempotent(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
        out.clear();
        ASSIGN_OR_RETURN(PgResult rows,
                         tx.Exec("SELECT g.table_id, g.game_no, g.game, g.scores[1], g.scores[2], "
                                 "g.winning_team, p.won, g.counts_for_stats, g.recorded_at_ms "
                                 "FROM lobby.record_game_players p JOIN lobby.record_games g "
                                 "ON g.table_id = p.table_id AND g.game_no = p.game_no "
                                 "WHERE p.player_id = $1 ORDER BY p.id DESC LIMIT $2",
                                 {player, limit}));
        for (const PgRow& row : rows.rows()) {
          PlayerGameResult r;
          ASSIGN_OR_RETURN(r.table_id, row.String(0));
          ASSIGN_OR_RETURN(int64_t game_no, row.Int64(1));
          r.game_no = static_cast<uint64_t>(game_no);
          ASSIGN_OR_RETURN(r.game, row.String(2));
          ASSIGN_OR_RETURN(int64_t s0, row.Int64(3));
          ASSIGN_OR_RETURN(int64_t s1, row.Int64(4));
          r.scores = {static_cast<int>(s0), static_cast<int>(s1)};
          ASSIGN_OR_RETURN(int64_t winning_team, row.Int64(5));
          r.winning_team = static_cast<int>(winning_team);
          ASSIGN_OR_RETURN(r.won, row.Bool(6));
          ASSIGN_OR_RETURN(r.counts_for_stats, row.Bool(7));
          ASSIGN_OR_RETURN(int64_t at, row.Int64(8));
          r.recorded_at = absl::FromUnixMillis(at);
          out.push_back(std::move(r));
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return Unexpected(status);
  return out;
}

absl::StatusOr<std::vector<QuitRow>> PgRecordsStore::Quits(std::string_view player, int limit,
                                                           absl::Time) {
  std::vector<QuitRow> out;
  absl::Status status =
      pool_.RunIdempotent(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
        out.clear();
        ASSIGN_OR_RETURN(PgResult rows,
                         tx.Exec("SELECT table_id, game_no, game, recorded_at_ms FROM "
                                 "lobby.record_quits WHERE player_id = $1 ORDER BY id DESC "
                                 "LIMIT $2",
                                 {player, limit}));
        for (const PgRow& row : rows.rows()) {
          QuitRow q;
          ASSIGN_OR_RETURN(q.table_id, row.String(0));
          ASSIGN_OR_RETURN(int64_t game_no, row.Int64(1));
          q.game_no = static_cast<uint64_t>(game_no);
          ASSIGN_OR_RETURN(q.game, row.String(2));
          ASSIGN_OR_RETURN(int64_t at, row.Int64(3));
          q.recorded_at = absl::FromUnixMillis(at);
          out.push_back(std::move(q));
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return Unexpected(status);
  return out;
}

absl::StatusOr<int64_t> PgRecordsStore::QuitsTotal(std::string_view player, absl::Time) {
  int64_t total = 0;
  absl::Status status =
      pool_.RunIdempotent(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
        ASSIGN_OR_RETURN(PgRow row, tx.ExecOneRow("SELECT count(*) FROM lobby.record_quits "
                                                  "WHERE player_id = $1",
                                                  {player}));
        ASSIGN_OR_RETURN(total, row.Int64(0));
        return absl::OkStatus();
      });
  if (!status.ok()) return Unexpected(status);
  return total;
}

absl::StatusOr<std::vector<RoundRow>> PgRecordsStore::Rounds(std::string_view table_id,
                                                             uint64_t after_round, int limit,
                                                             absl::Time) {
  std::vector<RoundRow> out;
  absl::Status status =
      pool_.RunIdempotent(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
        out.clear();
        ASSIGN_OR_RETURN(PgResult rows,
                         tx.Exec("SELECT round, seed_hex, result, seed_only_to, recorded_at_ms "
                                 "FROM lobby.record_rounds WHERE table_id = $1 AND round > $2 "
                                 "ORDER BY round LIMIT $3",
                                 {table_id, after_round, limit}));
        for (const PgRow& row : rows.rows()) {
          RoundRow r;
          ASSIGN_OR_RETURN(int64_t round, row.Int64(0));
          r.round = static_cast<uint64_t>(round);
          ASSIGN_OR_RETURN(r.seed_hex, row.String(1));
          ASSIGN_OR_RETURN(r.result, row.String(2));
          ASSIGN_OR_RETURN(int64_t only_to, row.Int64(3));
          r.seed_only_to = static_cast<int>(only_to);
          ASSIGN_OR_RETURN(int64_t at, row.Int64(4));
          r.recorded_at = absl::FromUnixMillis(at);
          out.push_back(std::move(r));
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return Unexpected(status);
  return out;
}

absl::StatusOr<bool> PgRecordsStore::TableClosed(std::string_view table_id, absl::Time) {
  bool closed = false;
  absl::Status status =
      pool_.RunIdempotent(kRetryAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
        ASSIGN_OR_RETURN(PgRow row, tx.ExecOneRow("SELECT EXISTS (SELECT 1 FROM "
                                                  "lobby.record_tables_closed WHERE "
                                                  "table_id = $1)",
                                                  {table_id}));
        ASSIGN_OR_RETURN(closed, row.Bool(0));
        return absl::OkStatus();
      });
  if (!status.ok()) return Unexpected(status);
  return closed;
}

}  // namespace courtpiece::lobby
