#include "services/lobby/fake_table_port.h"

#include <array>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"

namespace courtpiece::lobby {
namespace {
namespace pb = ::courtpiece::table::v1;
constexpr std::array<int, 3> kJoinOrder = {2, 1, 3};
}  // namespace

void FakeTableTier::AddInstance(const std::string& id) {
  absl::MutexLock lock(&mu_);
  instances_[id] = false;
}
void FakeTableTier::Kill(const std::string& id) {
  absl::MutexLock lock(&mu_);
  instances_.erase(id);
  for (auto it = tables_.begin(); it != tables_.end();) {
    it = it->second.owner_instance() == id ? tables_.erase(it) : std::next(it);
  }
}
void FakeTableTier::SetDown(const std::string& id, bool down) {
  absl::MutexLock lock(&mu_);
  instances_[id] = down;
}
void FakeTableTier::SetBalance(const std::string& player, int64_t coins) {
  absl::MutexLock lock(&mu_);
  balances_[player] = coins;
}
void FakeTableTier::CloseTable(const std::string& table_id) {
  absl::MutexLock lock(&mu_);
  tables_.erase(table_id);
}
int FakeTableTier::creates() const {
  absl::MutexLock lock(&mu_);
  return creates_;
}
size_t FakeTableTier::tables() const {
  absl::MutexLock lock(&mu_);
  return tables_.size();
}
void FakeTableTier::SetRegistryDown(bool down) {
  absl::MutexLock lock(&mu_);
  registry_down_ = down;
}

absl::Status FakeTableTier::Reach(const InstanceInfo& at) const {
  auto it = instances_.find(at.id);
  if (it == instances_.end() || it->second || at.addr != at.id + ":7002") {
    return absl::UnavailableError(absl::StrCat("instance ", at.id, " unreachable"));
  }
  return absl::OkStatus();
}

absl::StatusOr<pb::CreateTableResponse> FakeTableTier::CreateTable(
    const InstanceInfo& at, const pb::CreateTableRequest& request, absl::Time /*deadline*/) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Reach(at); !s.ok()) return s;
  pb::CreateTableResponse out;
  auto it = tables_.find(request.table_id());
  if (it != tables_.end()) {
    *out.mutable_table() = it->second;
    return out;
  }
  ++creates_;
  pb::TableInfo t;
  t.set_table_id(request.table_id());
  t.set_code(request.code());
  t.set_host_player(request.host_player());
  t.set_bet_coins(request.bet_coins());
  t.set_turn_time_ms(request.turn_time_ms());
  t.set_game_options(request.game_options());
  t.set_listed(request.listed());
  t.set_bot_level(request.bot_level().empty() ? "easy" : request.bot_level());
  t.set_phase("waiting");
  t.set_owner_instance(at.id);
  t.set_owner_addr(at.addr);
  t.set_owner_epoch(1);
  for (int s = 0; s < 4; ++s) {
    pb::SeatInfo* seat = t.add_seats();
    seat->set_seat(s);
    seat->set_kind(s == 0 ? "person" : "empty");
    if (s == 0) {
      seat->set_player(request.host_player());
      seat->set_connected(true);
    }
  }
  tables_[t.table_id()] = t;
  *out.mutable_table() = t;
  out.set_created(true);
  return out;
}

absl::StatusOr<pb::JoinTableResponse> FakeTableTier::JoinTable(const InstanceInfo& at,
                                                               std::string_view table_id,
                                                               std::string_view player,
                                                               absl::Time /*deadline*/) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Reach(at); !s.ok()) return s;
  auto it = tables_.find(std::string(table_id));
  if (it == tables_.end()) return absl::NotFoundError("no such table");
  pb::TableInfo& t = it->second;
  if (t.owner_instance() != at.id) {
    absl::Status s =
        absl::FailedPreconditionError(absl::StrCat("owned by instance ", t.owner_instance()));
    s.SetPayload("courtpiece-owner-addr", absl::Cord(t.owner_addr()));
    return s;
  }
  pb::JoinTableResponse out;
  for (const pb::SeatInfo& s : t.seats()) {
    if (s.kind() == "person" && s.player() == player) {
      out.set_seat(s.seat());
      *out.mutable_table() = t;
      return out;
    }
  }
  auto b = balances_.find(std::string(player));
  const int64_t balance = b == balances_.end() ? 1000 : b->second;
  if (balance < 2 * t.bet_coins()) {
    return absl::FailedPreconditionError(
        absl::StrCat("sitting down needs ", 2 * t.bet_coins(), " coins"));
  }
  for (int s : kJoinOrder) {
    pb::SeatInfo* seat = t.mutable_seats(s);
    if (seat->kind() != "empty") continue;
    seat->set_kind("person");
    seat->set_player(std::string(player));
    seat->set_connected(false);
    seat->set_away(true);
    out.set_seat(s);
    *out.mutable_table() = t;
    return out;
  }
  return absl::ResourceExhaustedError("the table is full");
}

absl::StatusOr<std::vector<pb::TableInfo>> FakeTableTier::ListTables(
    const InstanceInfo& at, const pb::ListTablesRequest& request, absl::Time /*deadline*/) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Reach(at); !s.ok()) return s;
  std::vector<pb::TableInfo> out;
  for (const auto& [id, t] : tables_) {
    if (t.owner_instance() != at.id) continue;
    bool empty = false, seated = false;
    for (const pb::SeatInfo& s : t.seats()) {
      empty = empty || s.kind() == "empty";
      seated = seated || (s.kind() == "person" && s.player() == request.player());
    }
    if (request.open_only() && (!t.listed() || !empty || t.phase() == "closed")) continue;
    if (!request.player().empty() && !seated) continue;
    out.push_back(t);
  }
  return out;
}

absl::StatusOr<pb::TableInfo> FakeTableTier::GetTable(const InstanceInfo& at,
                                                      std::string_view table_id,
                                                      absl::Time /*deadline*/) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Reach(at); !s.ok()) return s;
  auto it = tables_.find(std::string(table_id));
  if (it == tables_.end()) return absl::NotFoundError("no such table");
  return it->second;
}

absl::StatusOr<std::vector<InstanceInfo>> FakeTableTier::LiveInstances() {
  absl::MutexLock lock(&mu_);
  if (registry_down_) return absl::UnavailableError("registry down");
  std::vector<InstanceInfo> out;
  for (const auto& [id, down] : instances_) out.push_back({id, id + ":7002"});
  return out;
}

absl::StatusOr<placement::Owner> FakeTableTier::Owner(std::string_view table_id) {
  absl::MutexLock lock(&mu_);
  if (registry_down_) return absl::UnavailableError("registry down");
  auto it = tables_.find(std::string(table_id));
  if (it == tables_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown table ", common::ToAbsl(table_id)));
  }
  return placement::Owner{it->second.owner_instance(), 1};
}

// --- FakeCodeCache -------------------------------------------------------------------------

absl::Status FakeCodeCache::Check() {
  if (down_) return absl::UnavailableError("the fake redis is down");
  const int64_t now = absl::ToUnixMillis(clock_.Now());
  for (auto it = keys_.begin(); it != keys_.end();) {
    it = it->second.expires_ms != 0 && it->second.expires_ms <= now ? keys_.erase(it)
                                                                    : std::next(it);
  }
  return absl::OkStatus();
}
void FakeCodeCache::SetDown(bool down) {
  absl::MutexLock lock(&mu_);
  down_ = down;
}
void FakeCodeCache::Forget(const std::string& code) {
  absl::MutexLock lock(&mu_);
  keys_.erase(code);
}
int FakeCodeCache::gets() const {
  absl::MutexLock lock(&mu_);
  return gets_;
}
absl::StatusOr<bool> FakeCodeCache::Claim(std::string_view code, std::string_view value) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  return keys_.emplace(std::string(code), Entry{std::string(value), 0}).second;
}
absl::Status FakeCodeCache::Put(std::string_view code, std::string_view value) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  keys_[std::string(code)] = Entry{std::string(value), 0};
  return absl::OkStatus();
}
absl::StatusOr<std::optional<std::string>> FakeCodeCache::Get(std::string_view code) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  ++gets_;
  auto it = keys_.find(std::string(code));
  if (it == keys_.end()) return std::nullopt;
  return it->second.value;
}
absl::Status FakeCodeCache::Release(std::string_view code, std::string_view value) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  auto it = keys_.find(std::string(code));
  if (it != keys_.end() && it->second.value == value) keys_.erase(it);
  return absl::OkStatus();
}
absl::Status FakeCodeCache::Close(std::string_view code, std::string_view tombstone,
                                  int64_t ttl_ms) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Check(); !s.ok()) return s;
  keys_[std::string(code)] =
      Entry{std::string(tombstone), absl::ToUnixMillis(clock_.Now()) + ttl_ms};
  return absl::OkStatus();
}

absl::StatusOr<bool> FakeSharedLock::TryLock(std::string_view name, std::string_view token,
                                             int64_t /*ttl_ms*/) {
  absl::MutexLock lock(&mu_);
  if (!held_.emplace(std::string(name), std::string(token)).second) return false;
  ++taken_;
  return true;
}
absl::Status FakeSharedLock::Unlock(std::string_view name, std::string_view token) {
  absl::MutexLock lock(&mu_);
  auto it = held_.find(std::string(name));
  if (it != held_.end() && it->second == token) held_.erase(it);
  return absl::OkStatus();
}
int FakeSharedLock::taken() const {
  absl::MutexLock lock(&mu_);
  return taken_;
}

}  // namespace courtpiece::lobby
