#include "services/table/fake_table_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "courtpiece/common/absl_compat.h"

namespace courtpiece::table_service {
namespace {

using common::ToAbsl;

bool IdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

absl::Status Fenced(std::string_view table_id, const Owner& now, const Owner& caller) {
  return absl::FailedPreconditionError(
      absl::StrCat("fenced: table ", ToAbsl(table_id), " is owned by ", now.instance, " at epoch ",
                   now.epoch, ", not by ", caller.instance, " at epoch ", caller.epoch));
}

absl::Status UnknownTable(std::string_view table_id) {
  return absl::NotFoundError(absl::StrCat("unknown table ", ToAbsl(table_id)));
}

}  // namespace

absl::Status ValidateStoreId(std::string_view what, std::string_view id) {
  if (id.empty() || id.size() > kStoreIdLengthMax || !std::all_of(id.begin(), id.end(), IdChar)) {
    return absl::InvalidArgumentError(absl::StrCat(
        ToAbsl(what), " must be 1..", kStoreIdLengthMax, " characters of [A-Za-z0-9_.-], got \"",
        absl::CHexEscape(ToAbsl(id).substr(0, kStoreIdLengthMax + 1)), "\""));
  }
  return absl::OkStatus();
}

absl::Status ValidateOwner(const Owner& owner) {
  if (absl::Status s = ValidateStoreId("owner instance id", owner.instance); !s.ok()) return s;
  if (owner.epoch < 1) {
    return absl::InvalidArgumentError(absl::StrCat("owner epoch must be >= 1, got ", owner.epoch));
  }
  return absl::OkStatus();
}

void FakeTableStore::FailNext(int count, absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_ = count;
  fail_status_ = std::move(status);
}

void FakeTableStore::LoseNextReplies(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  lose_replies_ = count;
}

int FakeTableStore::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

absl::Status FakeTableStore::BeginLocked(absl::Status valid) {
  ++calls_;
  if (!valid.ok()) return valid;
  if (fail_next_ > 0) {
    --fail_next_;
    return fail_status_;
  }
  return absl::OkStatus();
}

absl::Status FakeTableStore::FinishLocked(absl::Status done) {
  if (done.ok() && lose_replies_ > 0) {
    --lose_replies_;
    return absl::UnavailableError("injected: reply lost after the call was applied");
  }
  return done;
}

absl::Status FakeTableStore::Heartbeat(const InstanceInfo& self, int64_t ttl_ms) {
  absl::Status valid = ValidateStoreId("instance id", self.id);
  if (valid.ok() && self.addr.empty()) valid = absl::InvalidArgumentError("instance addr is empty");
  if (valid.ok() && ttl_ms < 1) {
    valid = absl::InvalidArgumentError(absl::StrCat("ttl_ms must be >= 1, got ", ttl_ms));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(valid); !s.ok()) return s;
  known_.insert(self.id);
  live_[self.id] = {self.addr, clock_.Now() + absl::Milliseconds(ttl_ms)};
  return FinishLocked(absl::OkStatus());
}

absl::Status FakeTableStore::Deregister(std::string_view instance_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(ValidateStoreId("instance id", instance_id)); !s.ok()) return s;
  if (auto it = live_.find(instance_id); it != live_.end()) live_.erase(it);
  return FinishLocked(absl::OkStatus());
}

absl::StatusOr<std::vector<InstanceInfo>> FakeTableStore::LiveInstances() {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(absl::OkStatus()); !s.ok()) return s;
  std::vector<InstanceInfo> out;
  const absl::Time now = clock_.Now();
  for (const std::string& id : known_) {
    auto it = live_.find(id);
    if (it != live_.end() && now < it->second.expires_at) out.push_back({id, it->second.addr});
  }
  return FinishLocked(std::move(out));
}

absl::StatusOr<std::vector<std::string>> FakeTableStore::KnownInstances() {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(absl::OkStatus()); !s.ok()) return s;
  return FinishLocked(std::vector<std::string>(known_.begin(), known_.end()));
}

absl::Status FakeTableStore::Forget(std::string_view instance_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(ValidateStoreId("instance id", instance_id)); !s.ok()) return s;
  if (auto it = known_.find(instance_id); it != known_.end()) known_.erase(it);
  if (auto it = index_.find(instance_id); it != index_.end()) index_.erase(it);
  return FinishLocked(absl::OkStatus());
}

absl::StatusOr<Owner> FakeTableStore::Create(std::string_view table_id, std::string_view instance,
                                             std::string_view state) {
  absl::Status valid = ValidateStoreId("table id", table_id);
  if (valid.ok()) valid = ValidateStoreId("instance id", instance);
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(valid); !s.ok()) return s;
  if (auto it = tables_.find(table_id); it != tables_.end()) {
    return absl::AlreadyExistsError(absl::StrCat("table ", ToAbsl(table_id), " exists (owner ",
                                                 it->second.owner.instance, " at epoch ",
                                                 it->second.owner.epoch, ")"));
  }
  Table& table = tables_[std::string(table_id)];
  table.owner = {std::string(instance), 1};
  table.state = std::string(state);
  index_[std::string(instance)].insert(std::string(table_id));
  return FinishLocked(table.owner);
}

absl::StatusOr<Owner> FakeTableStore::GetOwner(std::string_view table_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(ValidateStoreId("table id", table_id)); !s.ok()) return s;
  auto it = tables_.find(table_id);
  if (it == tables_.end()) return UnknownTable(table_id);
  return FinishLocked(it->second.owner);
}

absl::StatusOr<Owner> FakeTableStore::Claim(std::string_view table_id, std::string_view instance,
                                            int64_t expected_epoch) {
  absl::Status valid = ValidateStoreId("table id", table_id);
  if (valid.ok()) valid = ValidateStoreId("instance id", instance);
  if (valid.ok() && expected_epoch < 1) {
    valid = absl::InvalidArgumentError(
        absl::StrCat("expected_epoch must be >= 1, got ", expected_epoch));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(valid); !s.ok()) return s;
  auto it = tables_.find(table_id);
  if (it == tables_.end()) return UnknownTable(table_id);
  Owner& owner = it->second.owner;
  if (owner.epoch != expected_epoch) {
    return absl::AbortedError(absl::StrCat("claim lost: table ", ToAbsl(table_id), " is at epoch ",
                                           owner.epoch, " (owner ", owner.instance, "), not ",
                                           expected_epoch));
  }
  if (auto old = index_.find(owner.instance); old != index_.end()) {
    old->second.erase(std::string(table_id));
  }
  owner = {std::string(instance), expected_epoch + 1};
  index_[owner.instance].insert(std::string(table_id));
  return FinishLocked(owner);
}

absl::StatusOr<std::vector<std::string>> FakeTableStore::TablesOf(std::string_view instance_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(ValidateStoreId("instance id", instance_id)); !s.ok()) return s;
  std::vector<std::string> out;
  if (auto it = index_.find(instance_id); it != index_.end()) {
    out.assign(it->second.begin(), it->second.end());
  }
  return FinishLocked(std::move(out));
}

absl::StatusOr<std::vector<std::string>> FakeTableStore::AllTables() {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(absl::OkStatus()); !s.ok()) return s;
  std::vector<std::string> out;
  for (const auto& [id, table] : tables_) out.push_back(id);
  return FinishLocked(std::move(out));
}

absl::Status FakeTableStore::Save(std::string_view table_id, const Owner& owner,
                                  std::string_view state,
                                  const std::vector<std::string>& new_events, int events_max) {
  absl::Status valid = ValidateStoreId("table id", table_id);
  if (valid.ok()) valid = ValidateOwner(owner);
  if (valid.ok() && events_max < 0) {
    valid = absl::InvalidArgumentError(absl::StrCat("events_max must be >= 0, got ", events_max));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(valid); !s.ok()) return s;
  auto it = tables_.find(table_id);
  if (it == tables_.end()) return UnknownTable(table_id);
  Table& table = it->second;
  if (table.owner != owner) return Fenced(table_id, table.owner, owner);
  table.state = std::string(state);
  table.events.insert(table.events.end(), new_events.begin(), new_events.end());
  while (table.events.size() > static_cast<size_t>(events_max)) table.events.pop_front();
  return FinishLocked(absl::OkStatus());
}

absl::StatusOr<StoredTableBytes> FakeTableStore::Load(std::string_view table_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(ValidateStoreId("table id", table_id)); !s.ok()) return s;
  auto it = tables_.find(table_id);
  if (it == tables_.end()) return UnknownTable(table_id);
  StoredTableBytes out;
  out.owner = it->second.owner;
  out.state = it->second.state;
  out.events.assign(it->second.events.begin(), it->second.events.end());
  return FinishLocked(std::move(out));
}

absl::Status FakeTableStore::Remove(std::string_view table_id, const Owner& owner) {
  absl::Status valid = ValidateStoreId("table id", table_id);
  if (valid.ok()) valid = ValidateOwner(owner);
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = BeginLocked(valid); !s.ok()) return s;
  auto it = tables_.find(table_id);
  if (it == tables_.end()) return UnknownTable(table_id);
  if (it->second.owner != owner) return Fenced(table_id, it->second.owner, owner);
  if (auto idx = index_.find(owner.instance); idx != index_.end()) {
    idx->second.erase(std::string(table_id));
  }
  tables_.erase(it);
  return FinishLocked(absl::OkStatus());
}

}  // namespace courtpiece::table_service
