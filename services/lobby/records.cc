#include "services/lobby/records.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <set>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"

namespace courtpiece::lobby {
namespace {

constexpr size_t kIdMaxChars = 64;  // as the table service's ids
constexpr size_t kResultMaxChars = 64;
constexpr int kScoreMax = 100'000;
constexpr size_t kPlayersMax = 4;

absl::Status Invalid(std::string_view field, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(common::ToAbsl(field), ": ", common::ToAbsl(why)));
}

absl::Status ExpectKey(std::string_view key, const std::string& expected) {
  if (key != expected) {
    return Invalid("key", absl::StrCat("must be \"", expected, "\""));
  }
  return absl::OkStatus();
}

absl::Status TwoInts(std::string_view field, const std::vector<int>& v) {
  if (v.size() != 2) return Invalid(field, "must hold exactly two values (one per team)");
  for (int x : v) {
    if (x < 0 || x > kScoreMax)
      return Invalid(field, absl::StrCat("each must be in 0..", kScoreMax));
  }
  return absl::OkStatus();
}

// Canonical encoding: every field length-prefixed, in a fixed order.
class Canon {
 public:
  explicit Canon(std::string_view kind) { Add(kind); }
  Canon& Add(std::string_view s) {
    absl::StrAppend(&out_, s.size(), ":", common::ToAbsl(s), ";");
    return *this;
  }
  Canon& Add(int64_t v) { return Add(std::string_view(absl::StrCat(v))); }
  Canon& AddU(uint64_t v) { return Add(std::string_view(absl::StrCat(v))); }
  Canon& Add(const std::vector<int>& v) {
    Add(static_cast<int64_t>(v.size()));
    for (int x : v) Add(static_cast<int64_t>(x));
    return *this;
  }
  std::string Hash() const {
    std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
    crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(out_.data()),
                       out_.size());
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(digest.size() * 2);
    for (unsigned char b : digest) {
      hex.push_back(kHex[b >> 4]);
      hex.push_back(kHex[b & 15]);
    }
    return hex;
  }

 private:
  std::string out_;
};

bool Retryable(absl::StatusCode code) {
  return code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kAborted;
}

}  // namespace

bool IsGameType(std::string_view game) {
  return game == "classic" || game == "piles" || game == "hidden" || game == "kaat" ||
         game == "stack";
}

absl::Status ValidateId(std::string_view field, std::string_view id) {
  if (id.empty() || id.size() > kIdMaxChars) {
    return Invalid(field, absl::StrCat("must be 1..", kIdMaxChars, " characters"));
  }
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return Invalid(field, "may hold only [A-Za-z0-9_-]");
  }
  return absl::OkStatus();
}

std::string CanonicalHash(const GameRecordData& r) {
  Canon c("game");
  c.Add(r.key).Add(r.table_id).AddU(r.game_no).Add(r.game);
  c.Add(int64_t{r.counts_for_stats}).Add(int64_t{r.ended_early}).Add(int64_t{r.winning_team});
  c.Add(r.scores).Add(r.courts).Add(r.goon_courts);
  // Players in seat order: the same people in another list order are the same record.
  std::vector<GamePlayerRecord> players = r.players;
  std::sort(players.begin(), players.end(),
            [](const GamePlayerRecord& a, const GamePlayerRecord& b) { return a.seat < b.seat; });
  c.Add(static_cast<int64_t>(players.size()));
  for (const GamePlayerRecord& p : players) {
    c.Add(p.player).Add(int64_t{p.seat}).Add(int64_t{p.won});
  }
  return c.Hash();
}

std::string CanonicalHash(const QuitRecordData& r) {
  return Canon("quit").Add(r.key).Add(r.table_id).AddU(r.game_no).Add(r.player).Add(r.game).Hash();
}

std::string CanonicalHash(const RoundRecordData& r) {
  return Canon("round")
      .Add(r.key)
      .Add(r.table_id)
      .AddU(r.round)
      .Add(r.seed_hex)
      .Add(r.result)
      .Add(int64_t{r.seed_only_to})
      .Hash();
}

std::string CanonicalHash(const TableClosedData& r) {
  return Canon("closed").Add(r.key).Add(r.table_id).Hash();
}

absl::Status ValidateGame(const GameRecordData& r) {
  if (absl::Status s = ValidateId("table_id", r.table_id); !s.ok()) return s;
  if (r.game_no == 0) return Invalid("game_no", "must be at least 1");
  if (absl::Status s = ExpectKey(r.key, absl::StrCat(r.table_id, ":game:", r.game_no)); !s.ok()) {
    return s;
  }
  if (!IsGameType(r.game)) return Invalid("game", "must be classic, piles, hidden, kaat or stack");
  if (absl::Status s = TwoInts("scores", r.scores); !s.ok()) return s;
  if (absl::Status s = TwoInts("courts", r.courts); !s.ok()) return s;
  if (absl::Status s = TwoInts("goon_courts", r.goon_courts); !s.ok()) return s;
  for (int t = 0; t < 2; ++t) {
    if (r.goon_courts[t] > r.courts[t]) {
      return Invalid("goon_courts", "a team's Goon Courts are among its Courts (<= courts)");
    }
  }
  if (r.ended_early) {
    if (r.winning_team != -1) return Invalid("winning_team", "must be -1 for a game ended early");
    if (r.counts_for_stats) {
      return Invalid("counts_for_stats", "a game ended early never counts (RULES.md 4.12)");
    }
  } else if (r.winning_team != 0 && r.winning_team != 1) {
    return Invalid("winning_team", "must be 0 or 1 for a finished game");
  }
  if (r.players.size() > kPlayersMax) return Invalid("players", "at most four");
  std::set<int> seats;
  std::set<std::string> people;
  for (const GamePlayerRecord& p : r.players) {
    if (absl::Status s = ValidateId("players.player", p.player); !s.ok()) return s;
    if (p.seat < 0 || p.seat > 3) return Invalid("players.seat", "must be 0..3");
    if (!seats.insert(p.seat).second) return Invalid("players.seat", "a seat appears twice");
    if (!people.insert(p.player).second) return Invalid("players.player", "a player appears twice");
    if (p.won != (p.seat % 2 == r.winning_team)) {
      return Invalid("players.won", "must be true exactly for the seats of the winning team");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateQuit(const QuitRecordData& r) {
  if (absl::Status s = ValidateId("table_id", r.table_id); !s.ok()) return s;
  if (absl::Status s = ValidateId("player", r.player); !s.ok()) return s;
  if (r.game_no == 0) return Invalid("game_no", "must be at least 1");
  if (absl::Status s =
          ExpectKey(r.key, absl::StrCat(r.table_id, ":quit:", r.game_no, ":", r.player));
      !s.ok()) {
    return s;
  }
  if (!IsGameType(r.game)) return Invalid("game", "must be classic, piles, hidden, kaat or stack");
  return absl::OkStatus();
}

absl::Status ValidateRound(const RoundRecordData& r) {
  if (absl::Status s = ValidateId("table_id", r.table_id); !s.ok()) return s;
  if (r.round == 0) return Invalid("round", "must be at least 1");
  if (absl::Status s = ExpectKey(r.key, absl::StrCat(r.table_id, ":round:", r.round)); !s.ok()) {
    return s;
  }
  if (r.seed_hex.size() != 64 || !std::all_of(r.seed_hex.begin(), r.seed_hex.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      })) {
    return Invalid("seed_hex", "must be 64 lowercase hex digits");
  }
  if (r.result.empty() || r.result.size() > kResultMaxChars) {
    return Invalid("result", absl::StrCat("must be 1..", kResultMaxChars, " characters"));
  }
  for (char c : r.result) {
    if (c < 0x20 || c > 0x7e) return Invalid("result", "must be printable ASCII");
  }
  if (r.seed_only_to < -1 || r.seed_only_to > 3) return Invalid("seed_only_to", "must be -1..3");
  return absl::OkStatus();
}

absl::Status ValidateTableClosed(const TableClosedData& r) {
  if (absl::Status s = ValidateId("table_id", r.table_id); !s.ok()) return s;
  return ExpectKey(r.key, absl::StrCat(r.table_id, ":closed"));
}

Records::Records(RecordsStore& store, const Clock& clock, RecordsOptions options,
                 TableClosedFn on_table_closed)
    : store_(store),
      clock_(clock),
      options_(options),
      on_table_closed_(std::move(on_table_closed)) {}

template <typename Fn>
auto Records::WithRetries(absl::Time deadline, Fn fn) -> decltype(fn()) {
  decltype(fn()) result = absl::DeadlineExceededError("the deadline passed before the store call");
  for (int attempt = 1; attempt <= std::max(1, options_.store_attempts_max); ++attempt) {
    // DeadlineExceeded before the first call, else the last failure.
    if (clock_.Now() >= deadline) return result;
    result = fn();
    if (result.ok() || !Retryable(result.status().code())) return result;
  }
  return result;
}

absl::StatusOr<int> Records::Limit(std::string_view name, int limit, int fallback, int max) const {
  if (limit == 0) return fallback;
  if (limit < 0 || limit > max)
    return Invalid(name, absl::StrCat("must be 0 (default) or 1..", max));
  return limit;
}

absl::StatusOr<ApplyResult> Records::RecordGame(const GameRecordData& record, absl::Time deadline) {
  if (absl::Status s = ValidateGame(record); !s.ok()) return s;
  const std::string hash = CanonicalHash(record);
  const absl::Time at = clock_.Now();
  return WithRetries(deadline, [&] { return store_.ApplyGame(record, hash, at, deadline); });
}

absl::StatusOr<ApplyResult> Records::RecordQuit(const QuitRecordData& record, absl::Time deadline) {
  if (absl::Status s = ValidateQuit(record); !s.ok()) return s;
  const std::string hash = CanonicalHash(record);
  const absl::Time at = clock_.Now();
  return WithRetries(deadline, [&] { return store_.ApplyQuit(record, hash, at, deadline); });
}

absl::StatusOr<ApplyResult> Records::RecordRound(const RoundRecordData& record,
                                                 absl::Time deadline) {
  if (absl::Status s = ValidateRound(record); !s.ok()) return s;
  const std::string hash = CanonicalHash(record);
  const absl::Time at = clock_.Now();
  return WithRetries(deadline, [&] { return store_.ApplyRound(record, hash, at, deadline); });
}

absl::StatusOr<ApplyResult> Records::RecordTableClosed(const TableClosedData& record,
                                                       absl::Time deadline) {
  if (absl::Status s = ValidateTableClosed(record); !s.ok()) return s;
  const std::string hash = CanonicalHash(record);
  const absl::Time at = clock_.Now();
  absl::StatusOr<ApplyResult> r =
      WithRetries(deadline, [&] { return store_.ApplyTableClosed(record, hash, at, deadline); });
  if (r.ok() && on_table_closed_) on_table_closed_(record.table_id);
  return r;
}

absl::StatusOr<StatsView> Records::Stats(std::string_view player, absl::Time deadline) {
  if (absl::Status s = ValidateId("player_id", player); !s.ok()) return s;
  absl::StatusOr<std::vector<GameTypeStats>> rows =
      WithRetries(deadline, [&] { return store_.Stats(player, deadline); });
  if (!rows.ok()) return rows.status();
  StatsView view{.player_id = std::string(player), .by_game = std::move(*rows), .total = {}};
  std::sort(view.by_game.begin(), view.by_game.end(),
            [](const GameTypeStats& a, const GameTypeStats& b) { return a.game < b.game; });
  for (const GameTypeStats& g : view.by_game) {
    view.total.played += g.played;
    view.total.won += g.won;
    view.total.lost += g.lost;
    view.total.quits += g.quits;
    view.total.courts += g.courts;
    view.total.goon_courts += g.goon_courts;
  }
  return view;
}

absl::StatusOr<std::vector<PlayerGameResult>> Records::RecentResults(std::string_view player,
                                                                     int limit,
                                                                     absl::Time deadline) {
  if (absl::Status s = ValidateId("player_id", player); !s.ok()) return s;
  absl::StatusOr<int> n =
      Limit("limit", limit, options_.recent_results_default, options_.recent_results_max);
  if (!n.ok()) return n.status();
  return WithRetries(deadline, [&] { return store_.RecentResults(player, *n, deadline); });
}

absl::StatusOr<std::vector<QuitRow>> Records::Quits(std::string_view player, int limit,
                                                    absl::Time deadline) {
  if (absl::Status s = ValidateId("player_id", player); !s.ok()) return s;
  absl::StatusOr<int> n = Limit("limit", limit, options_.quits_default, options_.quits_max);
  if (!n.ok()) return n.status();
  return WithRetries(deadline, [&] { return store_.Quits(player, *n, deadline); });
}

absl::StatusOr<int64_t> Records::QuitsTotal(std::string_view player, absl::Time deadline) {
  if (absl::Status s = ValidateId("player_id", player); !s.ok()) return s;
  return WithRetries(deadline, [&] { return store_.QuitsTotal(player, deadline); });
}

absl::StatusOr<std::vector<RoundRow>> Records::Rounds(std::string_view table_id,
                                                      uint64_t after_round, int limit,
                                                      absl::Time deadline) {
  if (absl::Status s = ValidateId("table_id", table_id); !s.ok()) return s;
  absl::StatusOr<int> n = Limit("limit", limit, options_.rounds_default, options_.rounds_max);
  if (!n.ok()) return n.status();
  return WithRetries(deadline, [&] { return store_.Rounds(table_id, after_round, *n, deadline); });
}

}  // namespace courtpiece::lobby
