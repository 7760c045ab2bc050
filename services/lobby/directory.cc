#include "services/lobby/directory.h"

#include <algorithm>
#include <future>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/check.h"
#include "courtpiece/common/status_macros.h"
#include "courtpiece/placement/placement.h"
#include "courtpiece/rules/rules.h"
#include "courtpiece/table/rules_engine.h"
#include "courtpiece/table/table.h"
#include "nlohmann/json.hpp"

namespace courtpiece::lobby {
namespace {

namespace pb = ::courtpiece::table::v1;
using common::ToAbsl;

constexpr char kOwnerAddrPayload[] = "courtpiece-owner-addr";
constexpr int kLimitDefault = 50;
constexpr int kLimitMax = 200;

bool SixDigits(std::string_view s) {
  if (s.size() != 6) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool ValidRequestId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string NewTableId() {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  thread_local absl::BitGen gen;
  std::string id = "t-";
  for (int i = 0; i < 20; ++i) id.push_back(kAlphabet[absl::Uniform(gen, 0, 36)]);
  return id;
}

// The level's name as stored and given back: "" is "easy" (the caller's name was checked).
std::string BotLevelName(std::string_view name) {
  return std::string(bots::LevelName(table::ParseBotLevel(name).value_or(bots::Level::kEasy)));
}

bool SameOptions(const DirectoryTable& row, const NewTable& t) {
  return row.game_options == t.game_options && row.bet_coins == t.bet_coins &&
         row.turn_time_ms == t.turn_time_ms && row.listed == t.listed &&
         row.bot_level == BotLevelName(t.bot_level);
}

absl::Status ValidateQuery(const TableQuery& q) {
  if (!q.game.empty()) {
    absl::StatusOr<std::string> g = GameTypeOf(absl::StrCat("{\"game\":\"", q.game, "\"}"));
    if (!g.ok() || q.game.find('"') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("game: unknown game type \"", q.game, "\""));
    }
  }
  if (q.bet_min_coins < 0 || q.bet_max_coins < 0) {
    return absl::InvalidArgumentError("bet_min_coins, bet_max_coins: must be >= 0");
  }
  if (q.bet_max_coins > 0 && q.bet_min_coins > q.bet_max_coins) {
    return absl::InvalidArgumentError("bet_min_coins: greater than bet_max_coins");
  }
  if (q.limit < 0) return absl::InvalidArgumentError("limit: must be >= 0");
  return table::ParseBotLevel(q.bot_level).status();
}

bool Fits(const OpenTableEntry& e, const TableQuery& q) {
  if (q.bet_min_coins > 0 && e.table.bet_coins < q.bet_min_coins) return false;
  if (q.bet_max_coins > 0 && e.table.bet_coins > q.bet_max_coins) return false;
  if (!q.bot_level.empty() && e.table.bot_level != BotLevelName(q.bot_level)) return false;
  if (!q.game.empty()) {
    absl::StatusOr<std::string> g = GameTypeOf(e.table.game_options);
    if (!g.ok() || *g != q.game) return false;
  }
  return true;
}

void FullestFirst(std::vector<OpenTableEntry>& v) {
  std::sort(v.begin(), v.end(), [](const OpenTableEntry& a, const OpenTableEntry& b) {
    if (a.seats_taken != b.seats_taken) return a.seats_taken > b.seats_taken;
    return a.table.table_id < b.table.table_id;
  });
}

}  // namespace

// --- codes -----------------------------------------------------------------------------------

std::string RandomCodeSource::Next() {
  thread_local absl::BitGen gen;
  return absl::StrFormat("%06d", absl::Uniform(gen, 0, 1'000'000));
}

std::string ListCodeSource::Next() {
  absl::MutexLock lock(&mu_);
  if (codes_.empty()) return "000000";
  return codes_[next_++ % codes_.size()];
}

std::string EncodeEntry(const DirectoryTable& row) {
  nlohmann::json j = {{"t", row.table_id},       {"c", row.code},         {"h", row.host_player},
                      {"r", row.request_id},     {"g", row.game_options}, {"b", row.bet_coins},
                      {"tt", row.turn_time_ms},  {"l", row.listed},       {"o", row.owner_instance},
                      {"at", row.created_at_ms}, {"bl", row.bot_level}};
  return j.dump();
}

absl::StatusOr<DirectoryTable> DecodeEntry(std::string_view value) {
  nlohmann::json j = nlohmann::json::parse(value, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return absl::InternalError("bad directory entry");
  DirectoryTable row;
  try {
    row.table_id = j.at("t").get<std::string>();
    row.code = j.at("c").get<std::string>();
    row.host_player = j.at("h").get<std::string>();
    row.request_id = j.at("r").get<std::string>();
    row.game_options = j.at("g").get<std::string>();
    row.bet_coins = j.at("b").get<int64_t>();
    row.turn_time_ms = j.at("tt").get<int64_t>();
    row.listed = j.at("l").get<bool>();
    row.owner_instance = j.at("o").get<std::string>();
    row.created_at_ms = j.at("at").get<int64_t>();
    row.bot_level = j.value("bl", std::string("easy"));  // entries from before the level
  } catch (const nlohmann::json::exception&) {
    return absl::InternalError("bad directory entry");
  }
  return row;
}

absl::StatusOr<std::string> GameTypeOf(std::string_view game_options) {
  absl::StatusOr<rules::Rules> r = table::ParseRulesJson(game_options);
  if (!r.ok()) return r.status();
  return std::string(rules::GameTypeName(r->game));
}

// --- the directory ---------------------------------------------------------------------------

Directory::Directory(DirectoryOptions options, Clock& clock, DirectoryStore& store,
                     CodeCache& codes, TableRegistry& registry, TablePort& tables,
                     table::EngineFactory& engines, CodeSource& code_source,
                     SharedLock* quick_join_lock, WalletPort* wallet)
    : options_(std::move(options)),
      clock_(clock),
      store_(store),
      codes_(codes),
      registry_(registry),
      tables_(tables),
      engines_(engines),
      code_source_(code_source),
      quick_join_lock_(quick_join_lock),
      wallet_(wallet) {}

Directory::~Directory() = default;

int64_t Directory::NowMs() const { return absl::ToUnixMillis(clock_.Now()); }
absl::Time Directory::Deadline() const {
  return clock_.Now() + absl::Milliseconds(options_.table_rpc_timeout_ms);
}

std::string Directory::InviteLink(std::string_view code) const {
  return absl::StrCat(options_.invite_base_url, "/t/", ToAbsl(code));
}

absl::StatusOr<std::string> Directory::ParseCodeOrLink(std::string_view in) const {
  if (SixDigits(in)) return std::string(in);
  const std::string prefix = absl::StrCat(options_.invite_base_url, "/t/");
  std::string_view rest = in;
  if (rest.size() > prefix.size() && rest.substr(0, prefix.size()) == prefix) {
    rest.remove_prefix(prefix.size());
    if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
    if (SixDigits(rest)) return std::string(rest);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("code: must be 6 digits or an invite link ", prefix, "<code>"));
}

TableRef Directory::RefOf(const DirectoryTable& row) const {
  TableRef ref;
  ref.table_id = row.table_id;
  ref.code = row.code;
  ref.invite_link = InviteLink(row.code);
  ref.owner_instance = row.owner_instance;
  ref.game_options = row.game_options;
  ref.bet_coins = row.bet_coins;
  ref.turn_time_ms = row.turn_time_ms;
  ref.listed = row.listed;
  ref.bot_level = row.bot_level;
  ref.host_player = row.host_player;
  return ref;
}

TableRef Directory::RefOf(const pb::TableInfo& info) const {
  TableRef ref;
  ref.table_id = info.table_id();
  ref.code = info.code();
  ref.invite_link = InviteLink(info.code());
  ref.owner_instance = info.owner_instance();
  ref.owner_addr = info.owner_addr();
  ref.game_options = info.game_options();
  ref.bet_coins = info.bet_coins();
  ref.turn_time_ms = info.turn_time_ms();
  ref.listed = info.listed();
  ref.bot_level = BotLevelName(info.bot_level());
  ref.host_player = info.host_player();
  return ref;
}

absl::StatusOr<std::vector<InstanceInfo>> Directory::Live(bool fresh) {
  const int64_t now = NowMs();
  if (!fresh) {
    absl::MutexLock lock(&cache_mu_);
    if (live_at_ms_ >= 0 && now - live_at_ms_ < options_.live_instances_cache_ms) return live_;
  }
  absl::StatusOr<std::vector<InstanceInfo>> live = registry_.LiveInstances();
  if (!live.ok()) {
    return absl::UnavailableError(
        absl::StrCat("the table registry is unreachable: ", live.status().message()));
  }
  absl::MutexLock lock(&cache_mu_);
  live_ = *live;
  live_at_ms_ = now;
  return live_;
}

// --- CreateTable -------------------------------------------------------------------------------

absl::StatusOr<TableRef> Directory::CreateTable(std::string_view caller, const NewTable& t) {
  if (!ValidRequestId(t.request_id)) {
    return absl::InvalidArgumentError("request_id: must be 1..64 chars of [A-Za-z0-9_-]");
  }
  const absl::Status options_ok = table::ValidateTableOptions({.table_id = "t",
                                                               .host_player = std::string(caller),
                                                               .bet_coins = t.bet_coins,
                                                               .turn_time_ms = t.turn_time_ms,
                                                               .game_options = t.game_options});
  if (!options_ok.ok()) return options_ok;
  if (absl::Status s = table::ParseBotLevel(t.bot_level).status(); !s.ok()) return s;
  if (t.game_options.size() > 1024) {
    return absl::InvalidArgumentError("game_options: longer than 1024 bytes");
  }
  if (absl::Status s = engines_.Validate(t.game_options); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("game_options: ", s.message()));
  }
  ASSIGN_OR_RETURN(std::optional<DirectoryTable> existing,
                   store_.FindByRequest(caller, t.request_id));
  if (existing.has_value()) {
    if (!SameOptions(*existing, t)) {
      return absl::AlreadyExistsError("request_id: already used with other options");
    }
    if (existing->closed_at_ms == 0 &&
        NowMs() - existing->created_at_ms >= options_.resolve_close_grace_ms) {
      // A late retry: a table without an owner record by now has closed (or never got
      // made); never make it again under its old id and code.
      absl::StatusOr<placement::Owner> owner = registry_.Owner(existing->table_id);
      if (owner.status().code() == absl::StatusCode::kNotFound) {
        (void)MarkClosed(existing->table_id);
        return absl::NotFoundError("the table of this request has closed: use a new request_id");
      }
    }
    return EnsureCreated(*existing);
  }
  // The host sits down at seat 0: to sit down a player needs twice the bet (§4.5), as the
  // table asks of everyone who joins. Checked before a code is reserved, so a refusal
  // leaves nothing behind.
  if (wallet_ != nullptr) {
    absl::StatusOr<int64_t> coins = wallet_->GetBalance(std::string(caller), Deadline());
    if (coins.status().code() == absl::StatusCode::kNotFound) {
      return absl::FailedPreconditionError("the player has no coin account");
    }
    if (!coins.ok()) return absl::UnavailableError("the wallet is unreachable: try again");
    if (*coins < 2 * t.bet_coins) {
      return absl::FailedPreconditionError(
          absl::StrCat("sitting down needs ", 2 * t.bet_coins, " coins, you have ", *coins));
    }
  }
  ASSIGN_OR_RETURN(std::vector<InstanceInfo> live, Live(/*fresh=*/true));
  if (live.empty()) return absl::UnavailableError("no table instance is live: retry later");
  DirectoryTable row{.table_id = NewTableId(),
                     .host_player = std::string(caller),
                     .request_id = t.request_id,
                     .game_options = t.game_options,
                     .bet_coins = t.bet_coins,
                     .turn_time_ms = t.turn_time_ms,
                     .listed = t.listed,
                     .bot_level = BotLevelName(t.bot_level),
                     .created_at_ms = NowMs()};
  row.owner_instance = placement::PickOwner(row.table_id, live);
  ASSIGN_OR_RETURN(std::string code, ReserveCode(row));
  absl::StatusOr<InsertedTable> inserted = store_.InsertTable(row);
  if (!inserted.ok() || !inserted->inserted) {
    // Undo the reservation: the insert failed, or a concurrent duplicate made the table.
    (void)codes_.Release(code, EncodeEntry(row));
    (void)store_.ReleaseCode(code, row.table_id);
    if (!inserted.ok()) return inserted.status();
    if (!SameOptions(inserted->table, t)) {
      return absl::AlreadyExistsError("request_id: already used with other options");
    }
  }
  return EnsureCreated(inserted->table);
}

absl::StatusOr<std::string> Directory::ReserveCode(DirectoryTable& row) {
  for (int i = 0; i < options_.code_tries_max; ++i) {
    row.code = code_source_.Next();
    const std::string value = EncodeEntry(row);
    absl::StatusOr<bool> claimed = codes_.Claim(row.code, value);
    if (!claimed.ok()) {
      return absl::UnavailableError(absl::StrCat("redis: ", claimed.status().message()));
    }
    if (!*claimed) continue;
    absl::StatusOr<bool> reserved = store_.ReserveCode(row.code, row.table_id, NowMs());
    if (!reserved.ok() || !*reserved) (void)codes_.Release(row.code, value);
    if (!reserved.ok()) return reserved.status();
    if (*reserved) return row.code;
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("no free join code found in ", options_.code_tries_max, " tries: retry later"));
}

absl::StatusOr<TableRef> Directory::EnsureCreated(DirectoryTable row) {
  if (row.closed_at_ms != 0) return absl::NotFoundError("the table of this request has closed");
  ASSIGN_OR_RETURN(std::vector<InstanceInfo> live, Live(/*fresh=*/false));
  auto find = [&live](std::string_view id) -> const InstanceInfo* {
    for (const InstanceInfo& i : live) {
      if (i.id == id) return &i;
    }
    return nullptr;
  };
  const InstanceInfo* at = find(row.owner_instance);
  if (at == nullptr) {  // the instance it was placed on is gone: place it again
    ASSIGN_OR_RETURN(live, Live(/*fresh=*/true));
    if (live.empty()) return absl::UnavailableError("no table instance is live: retry later");
    at = find(row.owner_instance);
    if (at == nullptr) {
      row.owner_instance = placement::PickOwner(row.table_id, live);
      RETURN_IF_ERROR(store_.UpdateOwner(row.table_id, row.owner_instance));
      at = find(row.owner_instance);
    }
  }
  pb::CreateTableRequest request;
  request.set_table_id(row.table_id);
  request.set_host_player(row.host_player);
  request.set_bet_coins(row.bet_coins);
  request.set_turn_time_ms(row.turn_time_ms);
  request.set_game_options(row.game_options);
  request.set_code(row.code);
  request.set_listed(row.listed);
  request.set_bot_level(row.bot_level);
  absl::StatusOr<pb::CreateTableResponse> created = tables_.CreateTable(*at, request, Deadline());
  if (!created.ok()) {
    const absl::StatusCode code = created.status().code();
    if (code == absl::StatusCode::kInvalidArgument) {  // the lobby checked first: a bug
      return absl::InternalError(absl::StrCat("the table refused: ", created.status().message()));
    }
    return absl::UnavailableError(absl::StrCat("table instance ", at->id,
                                               " did not create the table (retry with the same "
                                               "request_id): ",
                                               created.status().message()));
  }
  TableRef ref = RefOf(created->table());
  if (ref.owner_addr.empty()) ref.owner_addr = at->addr;
  ref.listed = row.listed;
  {
    absl::MutexLock lock(&cache_mu_);
    open_at_ms_ = -1;  // a new table: the next list asks the instances
  }
  return ref;
}

// --- ResolveCode / MarkClosed --------------------------------------------------------------------

absl::StatusOr<TableRef> Directory::ResolveCode(std::string_view code_or_link) {
  return std::move(ResolveCodes({std::string(code_or_link)}).front());
}

std::vector<absl::StatusOr<TableRef>> Directory::ResolveCodes(
    const std::vector<std::string>& codes_or_links) {
  std::vector<absl::StatusOr<TableRef>> out(codes_or_links.size(),
                                            absl::InternalError("not resolved"));
  // The parsed ones: their index in `out`, then their rows.
  std::vector<size_t> index;
  std::vector<std::string> codes;
  for (size_t i = 0; i < codes_or_links.size(); ++i) {
    absl::StatusOr<std::string> code = ParseCodeOrLink(codes_or_links[i]);
    if (!code.ok()) {
      out[i] = code.status();
      continue;
    }
    index.push_back(i);
    codes.push_back(*std::move(code));
  }
  std::vector<absl::StatusOr<std::optional<std::string>>> cached = codes_.GetMany(codes);
  COURTPIECE_CHECK(cached.size() == codes.size(), "CodeCache::GetMany answers every code");
  std::vector<size_t> row_index;
  std::vector<DirectoryTable> rows;
  std::vector<std::string> table_ids;
  for (size_t k = 0; k < codes.size(); ++k) {
    absl::StatusOr<DirectoryTable> row = OpenRowOf(codes[k], cached[k]);
    if (!row.ok()) {
      out[index[k]] = row.status();
      continue;
    }
    row_index.push_back(index[k]);
    table_ids.push_back(row->table_id);
    rows.push_back(*std::move(row));
  }
  std::vector<absl::StatusOr<placement::Owner>> owners = registry_.Owners(table_ids);
  COURTPIECE_CHECK(owners.size() == rows.size(), "TableRegistry::Owners answers every id");
  for (size_t k = 0; k < rows.size(); ++k) out[row_index[k]] = ResolveEntry(rows[k], owners[k]);
  return out;
}

absl::StatusOr<DirectoryTable> Directory::OpenRowOf(
    const std::string& code, const absl::StatusOr<std::optional<std::string>>& cached) {
  if (cached.ok() && cached->has_value()) {
    if (**cached == kClosedTombstone) return absl::NotFoundError("the table of this code closed");
    absl::StatusOr<DirectoryTable> decoded = DecodeEntry(**cached);
    if (decoded.ok()) return decoded;
  }
  // Redis does not know it (or is down): Postgres decides.
  ASSIGN_OR_RETURN(std::optional<DirectoryTable> row, store_.FindOpenByCode(code));
  if (!row.has_value()) return absl::NotFoundError(absl::StrCat("no table has code ", code));
  if (cached.ok()) (void)codes_.Put(code, EncodeEntry(*row));
  return *std::move(row);
}

absl::StatusOr<TableRef> Directory::ResolveEntry(const DirectoryTable& row,
                                                 const absl::StatusOr<placement::Owner>& owner) {
  if (!owner.ok()) {
    if (owner.status().code() != absl::StatusCode::kNotFound) {
      return absl::UnavailableError(
          absl::StrCat("the table registry is unreachable: ", owner.status().message()));
    }
    if (NowMs() - row.created_at_ms >= options_.resolve_close_grace_ms) {
      (void)MarkClosed(row.table_id);  // the owner says it is gone
      return absl::NotFoundError("the table of this code closed");
    }
    return absl::NotFoundError("the table of this code is not open yet: retry");
  }
  TableRef ref = RefOf(row);
  ref.owner_instance = owner->instance;
  ASSIGN_OR_RETURN(std::vector<InstanceInfo> live, Live(/*fresh=*/false));
  for (const InstanceInfo& i : live) {
    if (i.id == owner->instance) ref.owner_addr = i.addr;
  }
  if (ref.owner_addr.empty()) {  // a new owner, or one that just died: look again
    ASSIGN_OR_RETURN(live, Live(/*fresh=*/true));
    for (const InstanceInfo& i : live) {
      if (i.id == owner->instance) ref.owner_addr = i.addr;
    }
  }
  if (ref.owner_addr.empty()) {
    return absl::UnavailableError("the table's instance is being replaced: retry");
  }
  return ref;
}

absl::Status Directory::MarkClosed(std::string_view table_id) {
  ASSIGN_OR_RETURN(std::optional<DirectoryTable> row, store_.FindTable(table_id));
  if (!row.has_value()) {
    return absl::NotFoundError(absl::StrCat("no table ", ToAbsl(table_id)));
  }
  const int64_t now = NowMs();
  int64_t closed_at = row->closed_at_ms;
  if (closed_at == 0) {
    RETURN_IF_ERROR(store_.MarkClosed(table_id, now, now + options_.code_cooloff_ms).status());
    closed_at = now;
  }
  // While the cooling-off runs the code cannot have a new holder: (re)write the tombstone.
  const int64_t left_ms = closed_at + options_.code_cooloff_ms - now;
  if (left_ms > 0) RETURN_IF_ERROR(codes_.Close(row->code, kClosedTombstone, left_ms));
  return absl::OkStatus();
}

// --- open tables, quick join, my tables
// -----------------------------------------------------------

absl::StatusOr<std::vector<pb::TableInfo>> Directory::FanOut(const pb::ListTablesRequest& r) {
  ASSIGN_OR_RETURN(std::vector<InstanceInfo> live, Live(/*fresh=*/false));
  if (live.empty()) return absl::UnavailableError("no table instance is live: retry later");
  if (static_cast<int>(live.size()) > options_.fanout_instances_max) {
    live.resize(static_cast<size_t>(options_.fanout_instances_max));
  }
  const absl::Time deadline = Deadline();
  std::vector<std::future<absl::StatusOr<std::vector<pb::TableInfo>>>> calls;
  calls.reserve(live.size());
  for (const InstanceInfo& at : live) {
    calls.push_back(std::async(std::launch::async, [this, at, &r, deadline] {
      return tables_.ListTables(at, r, deadline);
    }));
  }
  std::vector<pb::TableInfo> out;
  int answered = 0;
  absl::Status last;
  for (auto& call : calls) {
    absl::StatusOr<std::vector<pb::TableInfo>> got = call.get();
    if (!got.ok()) {
      last = got.status();
      continue;
    }
    ++answered;
    for (pb::TableInfo& t : *got) out.push_back(std::move(t));
  }
  if (answered == 0) {
    return absl::UnavailableError(absl::StrCat("no table instance answered: ", last.message()));
  }
  return out;
}

absl::StatusOr<std::vector<OpenTableEntry>> Directory::OpenTables(bool fresh) {
  const int64_t now = NowMs();
  if (!fresh) {
    absl::MutexLock lock(&cache_mu_);
    if (open_at_ms_ >= 0 && now - open_at_ms_ < options_.open_tables_cache_ms) return open_;
  }
  pb::ListTablesRequest request;
  request.set_open_only(true);
  ASSIGN_OR_RETURN(std::vector<pb::TableInfo> infos, FanOut(request));
  std::vector<OpenTableEntry> out;
  for (const pb::TableInfo& info : infos) {
    OpenTableEntry e{.table = RefOf(info), .phase = info.phase()};
    for (const pb::SeatInfo& s : info.seats()) e.seats_taken += s.kind() != "empty" ? 1 : 0;
    out.push_back(std::move(e));
  }
  FullestFirst(out);
  absl::MutexLock lock(&cache_mu_);
  open_ = out;
  open_at_ms_ = now;
  return out;
}

absl::StatusOr<std::vector<OpenTableEntry>> Directory::ListOpenTables(const TableQuery& query) {
  RETURN_IF_ERROR(ValidateQuery(query));
  const int limit = query.limit == 0 ? kLimitDefault : std::min(query.limit, kLimitMax);
  ASSIGN_OR_RETURN(std::vector<OpenTableEntry> all, OpenTables(/*fresh=*/false));
  std::vector<OpenTableEntry> out;
  for (OpenTableEntry& e : all) {
    if (static_cast<int>(out.size()) >= limit) break;
    if (Fits(e, query)) out.push_back(std::move(e));
  }
  return out;
}

absl::StatusOr<TableRef> Directory::QuickJoin(std::string_view caller, const TableQuery& query,
                                              std::string_view request_id) {
  if (query.game.empty()) return absl::InvalidArgumentError("game: required");
  RETURN_IF_ERROR(ValidateQuery(query));
  // A range no table can have would make a table outside it (RULES.md §4.1: 25..1000).
  if (query.bet_max_coins > 0 && query.bet_max_coins < table::kBetMinCoins) {
    return absl::InvalidArgumentError(
        absl::StrCat("bet_max_coins: below the smallest bet (", table::kBetMinCoins, ")"));
  }
  if (query.bet_min_coins > table::kBetMaxCoins) {
    return absl::InvalidArgumentError(
        absl::StrCat("bet_min_coins: above the largest bet (", table::kBetMaxCoins, ")"));
  }
  if (!request_id.empty() && !ValidRequestId(request_id)) {
    return absl::InvalidArgumentError("request_id: must be 1..64 chars of [A-Za-z0-9_-]");
  }
  absl::Mutex* lock_of_game;
  {
    absl::MutexLock lock(&quick_mu_);
    std::unique_ptr<absl::Mutex>& m = quick_locks_[query.game];
    if (m == nullptr) m = std::make_unique<absl::Mutex>();
    lock_of_game = m.get();
  }
  absl::MutexLock game_lock(lock_of_game);
  if (quick_join_lock_ == nullptr) return QuickJoinLocked(caller, query, request_id);
  const std::string name = absl::StrCat("quick-join:", query.game);
  const std::string token = NewTableId();
  bool held = false;
  for (int i = 0; i < options_.quick_join_lock_tries_max && !held; ++i) {
    absl::StatusOr<bool> got =
        quick_join_lock_->TryLock(name, token, options_.quick_join_lock_ttl_ms);
    if (!got.ok()) break;  // Redis trouble: go on with this process's lock only
    held = *got;
    if (!held) absl::SleepFor(absl::Milliseconds(5));
  }
  absl::StatusOr<TableRef> out = QuickJoinLocked(caller, query, request_id);
  if (held) (void)quick_join_lock_->Unlock(name, token);
  return out;
}

absl::StatusOr<TableRef> Directory::QuickJoinLocked(std::string_view caller,
                                                    const TableQuery& query,
                                                    std::string_view request_id) {
  ASSIGN_OR_RETURN(std::vector<OpenTableEntry> open, OpenTables(/*fresh=*/true));
  absl::Status coins_short;
  int tried = 0;
  for (const OpenTableEntry& e : open) {
    if (!Fits(e, query)) continue;
    if (tried++ >= options_.quick_join_tries_max) break;
    const InstanceInfo at{.id = e.table.owner_instance, .addr = e.table.owner_addr};
    absl::StatusOr<pb::JoinTableResponse> joined =
        tables_.JoinTable(at, e.table.table_id, caller, Deadline());
    if (joined.ok()) {
      TableRef ref = RefOf(joined->table());
      if (ref.owner_addr.empty()) ref.owner_addr = at.addr;
      ref.seat = joined->seat();
      absl::MutexLock lock(&cache_mu_);
      open_at_ms_ = -1;
      return ref;
    }
    const absl::Status& s = joined.status();
    if (s.code() == absl::StatusCode::kFailedPrecondition &&
        !s.GetPayload(kOwnerAddrPayload).has_value()) {
      coins_short = s;  // too few coins for this bet; a cheaper table may still do
    }
    // Full, gone, moved, unreachable: the next one.
  }
  if (!coins_short.ok()) return coins_short;
  // Nothing fits: a new public table with the defaults of its game type.
  int64_t bet = options_.quick_join_bet_coins;
  if (query.bet_max_coins > 0) bet = std::min(bet, query.bet_max_coins);
  bet = std::max(bet, query.bet_min_coins);
  bet = std::clamp<int64_t>(bet, table::kBetMinCoins, table::kBetMaxCoins);
  NewTable t{
      .request_id = request_id.empty() ? NewTableId() : absl::StrCat("qj-", ToAbsl(request_id)),
      .game_options = absl::StrCat("{\"game\":\"", query.game, "\"}"),
      .bet_coins = bet,
      .turn_time_ms = options_.quick_join_turn_time_ms,
      .listed = true,
      .bot_level = query.bot_level};
  if (t.request_id.size() > 64) t.request_id.resize(64);
  ASSIGN_OR_RETURN(TableRef ref, CreateTable(caller, t));
  ref.seat = 0;  // the host sits at seat 0
  return ref;
}

absl::StatusOr<std::vector<TableRef>> Directory::MyTables(std::string_view caller) {
  pb::ListTablesRequest request;
  request.set_player(std::string(caller));
  ASSIGN_OR_RETURN(std::vector<pb::TableInfo> infos, FanOut(request));
  std::vector<TableRef> out;
  for (const pb::TableInfo& info : infos) {
    TableRef ref = RefOf(info);
    for (const pb::SeatInfo& s : info.seats()) {
      if (s.kind() == "person" && s.player() == caller) ref.seat = s.seat();
    }
    out.push_back(std::move(ref));
  }
  std::sort(out.begin(), out.end(),
            [](const TableRef& a, const TableRef& b) { return a.table_id < b.table_id; });
  return out;
}

}  // namespace courtpiece::lobby
