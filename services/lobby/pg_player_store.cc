#include "services/lobby/pg_player_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/client_errors.h"
#include "courtpiece/common/status_macros.h"

namespace courtpiece::lobby {
namespace {

using storage::PgParam;
using storage::PgResult;
using storage::PgRow;
using storage::PgTransaction;

constexpr int kAttemptsMax = 3;

// A database error the store did not expect: its text is for the log only, so a code whose
// message would reach the client as written becomes Internal (as in the wallet's store).
absl::Status Unexpected(const absl::Status& status) {
  if (status.ok() || !common::IsClientMessageCode(status.code())) return status;
  return absl::InternalError(status.message());
}

PgParam Micros(absl::Time t) { return PgParam(absl::ToUnixMicros(t)); }

// The player columns every statement returns, in ParsePlayer's order.
#define COURTPIECE_PLAYER_COLS(p)                          \
  p "id, " p "display_name, " p "avatar_id, " p "role, " p \
    "wallet_opened, (extract(epoch "                       \
    "FROM " p "created_at) * 1000000)::bigint"
// A unix-microseconds parameter as a timestamptz, exactly.
#define COURTPIECE_TS(n) "(timestamptz 'epoch' + $" #n "::bigint * interval '1 microsecond')"

absl::StatusOr<PlayerRecord> ParsePlayer(const PgRow& row) {
  PlayerRecord p;
  ASSIGN_OR_RETURN(p.player_id, row.String(0));
  ASSIGN_OR_RETURN(p.display_name, row.String(1));
  ASSIGN_OR_RETURN(int64_t avatar, row.Int64(2));
  p.avatar_id = static_cast<int>(avatar);
  ASSIGN_OR_RETURN(std::string role, row.String(3));
  ASSIGN_OR_RETURN(p.role, auth::ParseRole(role));
  ASSIGN_OR_RETURN(p.wallet_opened, row.Bool(4));
  ASSIGN_OR_RETURN(int64_t created_us, row.Int64(5));
  p.created_at = absl::FromUnixMicros(created_us);
  return p;
}

absl::StatusOr<PlayerRecord> ParseOne(const absl::StatusOr<PgResult>& result) {
  if (!result.ok()) return Unexpected(result.status());
  if (result->empty()) return absl::NotFoundError("unknown player");
  absl::StatusOr<PlayerRecord> p = ParsePlayer(result->row(0));
  if (!p.ok()) return absl::InternalError(p.status().message());
  return p;
}

// One statement: the device row (new, or its last login bumped) and, when it is new, the
// player; when it is known and its wallet opened, the new refresh token ($6, $7) for it and
// the player's expired tokens dropped. When a concurrent sign-in of the same device
// committed the device after this statement's snapshot was taken, ON CONFLICT sees it but
// the join does not: no row comes back, and the caller runs the statement again (a new
// snapshot sees both rows).
constexpr char kSignInSql[] =
    "WITH d AS ("
    "  INSERT INTO lobby.devices (secret_hash, player_id, created_at, last_login_at)"
    "  VALUES ($1, $2, " COURTPIECE_TS(5) ", " COURTPIECE_TS(5) ")"
    "  ON CONFLICT (secret_hash) DO UPDATE SET last_login_at = EXCLUDED.last_login_at"
    "  RETURNING player_id, (xmax = 0) AS inserted),"
    " np AS ("
    "  INSERT INTO lobby.players (id, display_name, avatar_id, created_at, updated_at)"
    "  SELECT $2, $3, $4::int, " COURTPIECE_TS(5) ", " COURTPIECE_TS(5) " FROM d WHERE d.inserted"
    "  RETURNING *),"
    " ep AS (SELECT p.* FROM d JOIN lobby.players p ON p.id = d.player_id WHERE NOT d.inserted),"
    " tok AS ("
    "  INSERT INTO lobby.refresh_tokens (token_hash, player_id, issued_at, expires_at)"
    "  SELECT $6::bytea, ep.id, " COURTPIECE_TS(5) ", " COURTPIECE_TS(7) " FROM ep"
    "   WHERE ep.wallet_opened AND $6::bytea IS NOT NULL RETURNING 1),"
    " gone AS (DELETE FROM lobby.refresh_tokens WHERE player_id IN (SELECT id FROM ep)"
    "   AND $6::bytea IS NOT NULL AND expires_at <= " COURTPIECE_TS(5) ")"
    " SELECT " COURTPIECE_PLAYER_COLS("np.") ", true, false FROM np"
    " UNION ALL"
    " SELECT " COURTPIECE_PLAYER_COLS("ep.") ", false, EXISTS (SELECT 1 FROM tok) FROM ep";

// The player (marked wallet_opened with $3), a new refresh token for it, and the player's
// expired tokens dropped, in one statement. No row: unknown player.
constexpr char kIssueRefreshSql[] =
    "WITH opened AS ("
    "  UPDATE lobby.players SET wallet_opened = true, updated_at = " COURTPIECE_TS(4)
    "   WHERE id = $1 AND $3::boolean AND NOT wallet_opened RETURNING id),"
    " p AS (SELECT id, display_name, avatar_id, role,"
    "         wallet_opened OR EXISTS (SELECT 1 FROM opened) AS wallet_opened, created_at"
    "       FROM lobby.players WHERE id = $1),"
    " ins AS (INSERT INTO lobby.refresh_tokens (token_hash, player_id, issued_at, expires_at)"
    "         SELECT $2, id, " COURTPIECE_TS(4) ", " COURTPIECE_TS(5) " FROM p RETURNING 1),"
    " gone AS (DELETE FROM lobby.refresh_tokens"
    "          WHERE player_id = $1 AND expires_at <= " COURTPIECE_TS(4) ")"
    " SELECT " COURTPIECE_PLAYER_COLS("p.") " FROM p";

// Uses up $1 (locked, so of two concurrent refreshes with it one waits and then sees it
// used) and stores $2 for the same player. The first column says what happened.
constexpr char kRotateSql[] =
    "WITH old AS ("
    "  SELECT token_hash, player_id, expires_at, used_at FROM lobby.refresh_tokens"
    "   WHERE token_hash = $1 FOR UPDATE),"
    " used AS ("
    "  UPDATE lobby.refresh_tokens t SET used_at = " COURTPIECE_TS(3) " FROM old"
    "   WHERE t.token_hash = old.token_hash AND old.used_at IS NULL"
    "     AND old.expires_at > " COURTPIECE_TS(3) " RETURNING t.player_id),"
    " ins AS (INSERT INTO lobby.refresh_tokens (token_hash, player_id, issued_at, expires_at)"
    "         SELECT $2, player_id, " COURTPIECE_TS(3) ", " COURTPIECE_TS(4) " FROM used"
    "         RETURNING 1)"
    " SELECT " COURTPIECE_PLAYER_COLS("p.") ","
    "   CASE WHEN old.used_at IS NOT NULL THEN 'used'"
    "        WHEN old.expires_at <= " COURTPIECE_TS(3) " THEN 'expired' ELSE 'ok' END"
    "  FROM old JOIN lobby.players p ON p.id = old.player_id";

constexpr char kGetPlayerSql[] =
    "SELECT " COURTPIECE_PLAYER_COLS("") " FROM lobby.players WHERE id = $1";

// COLLATE "C": byte order, as std::string sorts (the fake store).
constexpr char kGetPlayersSql[] = "SELECT " COURTPIECE_PLAYER_COLS(
    "") " FROM lobby.players WHERE id = ANY($1::text[]) ORDER BY id COLLATE \"C\"";

constexpr char kUpdateProfileSql[] =
    "UPDATE lobby.players SET display_name = coalesce($2, display_name),"
    " avatar_id = coalesce($3::int, avatar_id), updated_at = " COURTPIECE_TS(
        4) " WHERE id = $1 RETURNING " COURTPIECE_PLAYER_COLS("");

}  // namespace

absl::StatusOr<SignInResult> PgPlayerStore::SignIn(const std::string& device_hash,
                                                   const NewPlayer& candidate,
                                                   const std::optional<RefreshTokenRecord>& token,
                                                   absl::Time now, absl::Time) {
  PgParam token_hash = std::optional<std::string>();
  PgParam token_expiry = std::optional<std::string>();
  if (token.has_value()) {
    token_hash = PgParam::Bytes(token->token_hash);
    token_expiry = Micros(token->expires_at);
  }
  for (int attempt = 0; attempt < kAttemptsMax; ++attempt) {
    // Aborted (a deadlock, a serialization failure) rolled the statement back: re-run it.
    absl::StatusOr<PgResult> result = pool_.ExecAutocommit(
        kSignInSql,
        {PgParam::Bytes(device_hash), candidate.player_id, candidate.display_name,
         candidate.avatar_id, Micros(now), token_hash, token_expiry},
        kAttemptsMax);
    if (!result.ok()) {
      // AlreadyExists: the candidate's random id is taken; the domain draws another.
      if (result.status().code() == absl::StatusCode::kAlreadyExists) return result.status();
      return Unexpected(result.status());
    }
    if (result->empty()) continue;  // a concurrent first sign-in of this device: look again
    SignInResult out;
    absl::StatusOr<PlayerRecord> player = ParsePlayer(result->row(0));
    absl::StatusOr<bool> created = result->row(0).Bool(6);
    absl::StatusOr<bool> issued = result->row(0).Bool(7);
    if (!player.ok() || !created.ok() || !issued.ok()) {
      return absl::InternalError("SignIn: malformed row");
    }
    out.player = *std::move(player);
    out.created = *created;
    out.refresh_issued = *issued;
    return out;
  }
  return absl::AbortedError("SignIn: the device's player did not become visible; retry");
}

absl::StatusOr<PlayerRecord> PgPlayerStore::IssueRefreshToken(const RefreshTokenRecord& token,
                                                              bool mark_wallet_opened,
                                                              absl::Time now, absl::Time) {
  return ParseOne(pool_.ExecAutocommit(kIssueRefreshSql,
                                       {token.player_id, PgParam::Bytes(token.token_hash),
                                        mark_wallet_opened, Micros(now), Micros(token.expires_at)},
                                       kAttemptsMax));
}

absl::StatusOr<PlayerRecord> PgPlayerStore::RotateRefreshToken(const std::string& old_hash,
                                                               const RefreshTokenRecord& next,
                                                               absl::Time now, absl::Time) {
  absl::StatusOr<PgResult> result =
      pool_.ExecAutocommit(kRotateSql,
                           {PgParam::Bytes(old_hash), PgParam::Bytes(next.token_hash), Micros(now),
                            Micros(next.expires_at)},
                           kAttemptsMax);
  if (!result.ok()) return Unexpected(result.status());
  if (result->empty()) return absl::UnauthenticatedError("unknown refresh token");
  absl::StatusOr<std::string> outcome = result->row(0).String(6);
  if (!outcome.ok()) return absl::InternalError("RotateRefreshToken: malformed row");
  if (*outcome != "ok") return absl::UnauthenticatedError(absl::StrCat(*outcome, " refresh token"));
  return ParseOne(result);
}

absl::StatusOr<PlayerRecord> PgPlayerStore::GetPlayer(const std::string& player_id, absl::Time) {
  absl::StatusOr<PgResult> result;
  absl::Status status = pool_.RunIdempotent(kAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
    result = tx.Exec(kGetPlayerSql, {player_id});
    return result.status();
  });
  if (!status.ok()) return Unexpected(status);
  return ParseOne(result);
}

absl::StatusOr<std::vector<PlayerRecord>> PgPlayerStore::GetPlayers(
    const std::vector<std::string>& player_ids, absl::Time) {
  // One round trip (autocommit, prepared); a read, so a broken connection (Unavailable) is
  // retried too, bounded like RunIdempotent.
  absl::StatusOr<PgResult> result;
  for (int attempt = 0; attempt < kAttemptsMax; ++attempt) {
    result = pool_.ExecAutocommit(kGetPlayersSql, {storage::PgTextArray(player_ids)}, kAttemptsMax);
    if (result.ok() || result.status().code() != absl::StatusCode::kUnavailable) break;
  }
  if (!result.ok()) return Unexpected(result.status());
  std::vector<PlayerRecord> out;
  out.reserve(result->size());
  for (const PgRow& row : result->rows()) {
    absl::StatusOr<PlayerRecord> player = ParsePlayer(row);
    if (!player.ok()) return absl::InternalError(player.status().message());
    out.push_back(*std::move(player));
  }
  return out;
}

absl::StatusOr<PlayerRecord> PgPlayerStore::UpdateProfile(const std::string& player_id,
                                                          const std::optional<std::string>& name,
                                                          std::optional<int> avatar_id,
                                                          absl::Time now, absl::Time) {
  std::optional<std::string> avatar;
  if (avatar_id.has_value()) avatar = std::to_string(*avatar_id);
  return ParseOne(pool_.ExecAutocommit(kUpdateProfileSql, {player_id, name, avatar, Micros(now)},
                                       kAttemptsMax));
}

absl::Status PgPlayerStore::SetRole(const std::string& player_id, auth::Role role,
                                    const std::string& operator_name, const std::string& reason) {
  if (operator_name.empty() || operator_name.size() > 128) {
    return absl::InvalidArgumentError("operator must be 1..128 chars");
  }
  if (reason.empty() || reason.size() > 500) {
    return absl::InvalidArgumentError("reason must be 1..500 chars");
  }
  bool known = true;
  bool unchanged = false;
  absl::Status status = pool_.RunWithRetry(kAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
    ASSIGN_OR_RETURN(
        PgResult current,
        tx.Exec("SELECT role FROM lobby.players WHERE id = $1 FOR UPDATE", {player_id}));
    known = !current.empty();
    if (!known) return absl::NotFoundError(absl::StrCat("unknown player ", player_id));
    ASSIGN_OR_RETURN(std::string was, current.row(0).String(0));
    unchanged = was == auth::RoleName(role);
    if (unchanged) {
      return absl::FailedPreconditionError(
          absl::StrCat("player ", player_id, " is ", was, " already"));
    }
    RETURN_IF_ERROR(tx.Exec("UPDATE lobby.players SET role = $2, updated_at = now() WHERE id = $1",
                            {player_id, auth::RoleName(role)})
                        .status());
    return tx
        .Exec(
            "INSERT INTO lobby.admin_grants (player_id, action, operator, reason) "
            "VALUES ($1, $2, $3, $4)",
            {player_id, role == auth::Role::kAdmin ? "grant" : "revoke", operator_name, reason})
        .status();
  });
  if (!known || unchanged) return status;
  return Unexpected(status);
}

absl::StatusOr<std::vector<AdminEntry>> PgPlayerStore::ListAdmins() {
  std::vector<AdminEntry> out;
  absl::Status status = pool_.RunIdempotent(kAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
    out.clear();
    ASSIGN_OR_RETURN(
        PgResult result,
        tx.Exec("SELECT p.id, p.display_name, (extract(epoch FROM g.at) * 1000000)::bigint,"
                " g.operator FROM lobby.players p LEFT JOIN LATERAL ("
                "  SELECT at, operator FROM lobby.admin_grants"
                "   WHERE player_id = p.id AND action = 'grant' ORDER BY id DESC LIMIT 1) g"
                " ON true WHERE p.role = 'admin' ORDER BY p.id"));
    for (const PgRow& row : result.rows()) {
      AdminEntry e;
      ASSIGN_OR_RETURN(e.player_id, row.String(0));
      ASSIGN_OR_RETURN(e.display_name, row.String(1));
      if (!row.IsNull(2)) {
        ASSIGN_OR_RETURN(int64_t us, row.Int64(2));
        e.granted_at = absl::FromUnixMicros(us);
        ASSIGN_OR_RETURN(e.granted_by, row.String(3));
      }
      out.push_back(std::move(e));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return Unexpected(status);
  return out;
}

absl::StatusOr<std::vector<AdminGrant>> PgPlayerStore::ListGrants(const std::string& player_id) {
  std::vector<AdminGrant> out;
  absl::Status status = pool_.RunIdempotent(kAttemptsMax, [&](PgTransaction& tx) -> absl::Status {
    out.clear();
    ASSIGN_OR_RETURN(PgResult result,
                     tx.Exec("SELECT player_id, action, operator, reason,"
                             " (extract(epoch FROM at) * 1000000)::bigint FROM lobby.admin_grants"
                             " WHERE $1 = '' OR player_id = $1 ORDER BY id",
                             {player_id}));
    for (const PgRow& row : result.rows()) {
      AdminGrant g;
      ASSIGN_OR_RETURN(g.player_id, row.String(0));
      ASSIGN_OR_RETURN(g.action, row.String(1));
      ASSIGN_OR_RETURN(g.operator_name, row.String(2));
      ASSIGN_OR_RETURN(g.reason, row.String(3));
      ASSIGN_OR_RETURN(int64_t us, row.Int64(4));
      g.at = absl::FromUnixMicros(us);
      out.push_back(std::move(g));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return Unexpected(status);
  return out;
}

}  // namespace courtpiece::lobby
