#include "services/table/redis_table_store.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/check.h"
#include "courtpiece/common/status_macros.h"
#include "courtpiece/placement/registry_reader.h"
#include "services/table/fake_table_store.h"

namespace courtpiece::table_service {
namespace {

using common::ToAbsl;

using storage::RedisReply;
using storage::RedisScript;

// Every script reads the owner record first and answers {outcome, ...} as values:
//   'ok' | 'missing' (no owner record) | 'exists' / 'lost' / 'fenced' + current owner.

// KEYS: owner, state, events. ARGV: instance, state.
const RedisScript& CreateScript() {
  static const RedisScript* script = new RedisScript(R"lua(
local cur = redis.call('HMGET', KEYS[1], 'instance', 'epoch')
if cur[1] then return {'exists', cur[1], cur[2]} end
redis.call('HSET', KEYS[1], 'instance', ARGV[1], 'epoch', '1')
redis.call('SET', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
return {'ok'}
)lua");
  return *script;
}

// KEYS: owner. ARGV: instance, expected epoch. Answers 'ok' + the previous owner + new epoch.
const RedisScript& ClaimScript() {
  static const RedisScript* script = new RedisScript(R"lua(
local cur = redis.call('HMGET', KEYS[1], 'instance', 'epoch')
if not cur[1] then return {'missing'} end
if cur[2] ~= ARGV[2] then return {'lost', cur[1], cur[2]} end
local epoch = tostring(tonumber(cur[2]) + 1)
redis.call('HSET', KEYS[1], 'instance', ARGV[1], 'epoch', epoch)
return {'ok', cur[1], epoch}
)lua");
  return *script;
}

// KEYS: owner, state, events. ARGV: instance, epoch, state, events_max, events...
// Events are pushed in chunks so unpack() stays far from Lua's C stack limit.
const RedisScript& SaveScript() {
  static const RedisScript* script = new RedisScript(R"lua(
local cur = redis.call('HMGET', KEYS[1], 'instance', 'epoch')
if not cur[1] then return {'missing'} end
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then return {'fenced', cur[1], cur[2]} end
redis.call('SET', KEYS[2], ARGV[3])
local i = 5
while i <= #ARGV do
  local last = math.min(i + 99, #ARGV)
  redis.call('RPUSH', KEYS[3], unpack(ARGV, i, last))
  i = last + 1
end
local max = tonumber(ARGV[4])
if max == 0 then redis.call('DEL', KEYS[3]) else redis.call('LTRIM', KEYS[3], -max, -1) end
return {'ok'}
)lua");
  return *script;
}

// KEYS: owner, state, events. Answers 'ok', instance, epoch, state, {events}.
const RedisScript& LoadScript() {
  static const RedisScript* script = new RedisScript(R"lua(
local cur = redis.call('HMGET', KEYS[1], 'instance', 'epoch')
if not cur[1] then return {'missing'} end
local state = redis.call('GET', KEYS[2])
if not state then state = '' end
return {'ok', cur[1], cur[2], state, redis.call('LRANGE', KEYS[3], 0, -1)}
)lua");
  return *script;
}

// KEYS: owner, state, events. ARGV: instance, epoch.
const RedisScript& RemoveScript() {
  static const RedisScript* script = new RedisScript(R"lua(
local cur = redis.call('HMGET', KEYS[1], 'instance', 'epoch')
if not cur[1] then return {'missing'} end
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then return {'fenced', cur[1], cur[2]} end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return {'ok'}
)lua");
  return *script;
}

absl::Status Unexpected(std::string_view what, const RedisReply& reply) {
  return absl::InternalError(absl::StrCat("unexpected Redis reply to ", ToAbsl(what), " (type ",
                                          static_cast<int>(reply.type), ")"));
}

// The outcome word of a script's reply, checking it has at least `size_min` string elements.
absl::StatusOr<std::string> Outcome(std::string_view what, const RedisReply& reply) {
  if (reply.type != RedisReply::Type::kArray || reply.elements.empty() ||
      reply.elements[0].type != RedisReply::Type::kString) {
    return Unexpected(what, reply);
  }
  return reply.elements[0].str;
}

// elements[first] = instance, elements[first + 1] = epoch.
absl::StatusOr<Owner> OwnerAt(std::string_view what, const RedisReply& reply, size_t first) {
  if (reply.elements.size() < first + 2) return Unexpected(what, reply);
  const RedisReply& instance = reply.elements[first];
  const RedisReply& epoch = reply.elements[first + 1];
  Owner owner;
  if (instance.type != RedisReply::Type::kString || epoch.type != RedisReply::Type::kString ||
      !absl::SimpleAtoi(epoch.str, &owner.epoch)) {
    return Unexpected(what, reply);
  }
  owner.instance = instance.str;
  return owner;
}

absl::Status UnknownTable(std::string_view table_id) {
  return absl::NotFoundError(absl::StrCat("unknown table ", ToAbsl(table_id)));
}

absl::Status Fenced(std::string_view table_id, const Owner& now, const Owner& caller) {
  return absl::FailedPreconditionError(
      absl::StrCat("fenced: table ", ToAbsl(table_id), " is owned by ", now.instance, " at epoch ",
                   now.epoch, ", not by ", caller.instance, " at epoch ", caller.epoch));
}

// The answer of a fenced write script (Save, Remove).
absl::Status FencedWriteOutcome(std::string_view what, std::string_view table_id,
                                const Owner& caller, const RedisReply& reply) {
  ASSIGN_OR_RETURN(std::string outcome, Outcome(what, reply));
  if (outcome == "ok") return absl::OkStatus();
  if (outcome == "missing") return UnknownTable(table_id);
  if (outcome == "fenced") {
    ASSIGN_OR_RETURN(Owner now, OwnerAt(what, reply, 1));
    return Fenced(table_id, now, caller);
  }
  return Unexpected(what, reply);
}

absl::StatusOr<std::vector<std::string>> StringArray(std::string_view what,
                                                     const RedisReply& reply) {
  if (reply.type != RedisReply::Type::kArray) return Unexpected(what, reply);
  std::vector<std::string> out;
  out.reserve(reply.elements.size());
  for (const RedisReply& e : reply.elements) {
    if (e.type != RedisReply::Type::kString) return Unexpected(what, reply);
    out.push_back(e.str);
  }
  return out;
}

}  // namespace

RedisTableStore::RedisTableStore(RedisTableStoreOptions options)
    : keys_(std::move(options.key_prefix)) {
  COURTPIECE_CHECK(options.connections >= 1, "RedisTableStore needs at least one connection");
  for (int i = 0; i < options.connections; ++i) {
    clients_.push_back(std::make_unique<storage::RedisClient>(options.redis));
  }
}

storage::RedisClient& RedisTableStore::Client() {
  return *clients_[next_client_.fetch_add(1, std::memory_order_relaxed) % clients_.size()];
}

absl::Status RedisTableStore::Heartbeat(const InstanceInfo& self, int64_t ttl_ms) {
  RETURN_IF_ERROR(ValidateStoreId("instance id", self.id));
  if (self.addr.empty()) return absl::InvalidArgumentError("instance addr is empty");
  if (ttl_ms < 1) {
    return absl::InvalidArgumentError(absl::StrCat("ttl_ms must be >= 1, got ", ttl_ms));
  }
  storage::RedisClient& redis = Client();
  RETURN_IF_ERROR(redis.Command({"SADD", InstancesKey(), self.id}).status());
  return redis.Command({"SET", InstanceKey(self.id), self.addr, "PX", absl::StrCat(ttl_ms)})
      .status();
}

absl::Status RedisTableStore::Deregister(std::string_view instance_id) {
  RETURN_IF_ERROR(ValidateStoreId("instance id", instance_id));
  return Client().Command({"DEL", InstanceKey(instance_id)}).status();
}

absl::StatusOr<std::vector<InstanceInfo>> RedisTableStore::LiveInstances() {
  // One GET per instance, not MGET: the registry keys are in different slots (Cluster).
  return placement::ReadLiveInstances(Client(), keys_);
}

absl::StatusOr<std::vector<std::string>> RedisTableStore::KnownInstances() {
  return placement::ReadKnownInstances(Client(), keys_);
}

absl::Status RedisTableStore::Forget(std::string_view instance_id) {
  RETURN_IF_ERROR(ValidateStoreId("instance id", instance_id));
  storage::RedisClient& redis = Client();
  RETURN_IF_ERROR(redis.Command({"SREM", InstancesKey(), std::string(instance_id)}).status());
  return redis.Command({"DEL", InstanceTablesKey(instance_id)}).status();
}

absl::StatusOr<Owner> RedisTableStore::Create(std::string_view table_id, std::string_view instance,
                                              std::string_view state) {
  RETURN_IF_ERROR(ValidateStoreId("table id", table_id));
  RETURN_IF_ERROR(ValidateStoreId("instance id", instance));
  storage::RedisClient& redis = Client();
  const std::string t(table_id);
  // Indexes first: a crash after them leaves names without a table, never a table unnamed.
  RETURN_IF_ERROR(redis.Command({"SADD", TablesKey(), t}).status());
  ASSIGN_OR_RETURN(RedisReply added, redis.Command({"SADD", InstanceTablesKey(instance), t}));
  ASSIGN_OR_RETURN(RedisReply reply,
                   redis.Eval(CreateScript(), {OwnerKey(t), StateKey(t), EventsKey(t)},
                              {std::string(instance), std::string(state)}));
  ASSIGN_OR_RETURN(std::string outcome, Outcome("create", reply));
  if (outcome == "ok") return Owner{std::string(instance), 1};
  if (outcome == "exists") {
    ASSIGN_OR_RETURN(Owner now, OwnerAt("create", reply, 1));
    if (now.instance != instance && added == RedisReply::Integer(1)) {  // only our own SADD
      (void)redis.Command({"SREM", InstanceTablesKey(instance), t});    // best effort
    }
    return absl::AlreadyExistsError(absl::StrCat("table ", ToAbsl(table_id), " exists (owner ",
                                                 now.instance, " at epoch ", now.epoch, ")"));
  }
  return Unexpected("create", reply);
}

absl::StatusOr<Owner> RedisTableStore::GetOwner(std::string_view table_id) {
  RETURN_IF_ERROR(ValidateStoreId("table id", table_id));
  return placement::ReadOwner(Client(), keys_, table_id);
}

absl::StatusOr<Owner> RedisTableStore::Claim(std::string_view table_id, std::string_view instance,
                                             int64_t expected_epoch) {
  RETURN_IF_ERROR(ValidateStoreId("table id", table_id));
  RETURN_IF_ERROR(ValidateStoreId("instance id", instance));
  if (expected_epoch < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected_epoch must be >= 1, got ", expected_epoch));
  }
  storage::RedisClient& redis = Client();
  const std::string t(table_id);
  ASSIGN_OR_RETURN(RedisReply added, redis.Command({"SADD", InstanceTablesKey(instance), t}));
  // Undoes our SADD after a failed claim, only when it was ours (best effort).
  auto undo = [&] {
    if (added == RedisReply::Integer(1)) {
      (void)redis.Command({"SREM", InstanceTablesKey(instance), t});
    }
  };
  ASSIGN_OR_RETURN(RedisReply reply,
                   redis.Eval(ClaimScript(), {OwnerKey(t)},
                              {std::string(instance), absl::StrCat(expected_epoch)}));
  ASSIGN_OR_RETURN(std::string outcome, Outcome("claim", reply));
  if (outcome == "ok") {
    ASSIGN_OR_RETURN(Owner previous, OwnerAt("claim", reply, 1));
    if (previous.instance != instance) {
      (void)redis.Command({"SREM", InstanceTablesKey(previous.instance), t});  // best effort
    }
    // The script answered the previous owner and the new epoch.
    return Owner{std::string(instance), previous.epoch};
  }
  if (outcome == "missing") {
    undo();
    return UnknownTable(table_id);
  }
  if (outcome == "lost") {
    ASSIGN_OR_RETURN(Owner now, OwnerAt("claim", reply, 1));
    if (now.instance != instance) undo();
    return absl::AbortedError(absl::StrCat("claim lost: table ", ToAbsl(table_id), " is at epoch ",
                                           now.epoch, " (owner ", now.instance, "), not ",
                                           expected_epoch));
  }
  return Unexpected("claim", reply);
}

absl::StatusOr<std::vector<std::string>> RedisTableStore::TablesOf(std::string_view instance_id) {
  RETURN_IF_ERROR(ValidateStoreId("instance id", instance_id));
  ASSIGN_OR_RETURN(RedisReply reply,
                   Client().Command({"SMEMBERS", InstanceTablesKey(instance_id)}));
  ASSIGN_OR_RETURN(std::vector<std::string> ids, StringArray("SMEMBERS instance-tables", reply));
  std::sort(ids.begin(), ids.end());
  return ids;
}

absl::StatusOr<std::vector<std::string>> RedisTableStore::AllTables() {
  storage::RedisClient& redis = Client();
  std::set<std::string> ids;  // SSCAN may return an element more than once
  std::string cursor = "0";
  do {
    ASSIGN_OR_RETURN(RedisReply reply,
                     redis.Command({"SSCAN", TablesKey(), cursor, "COUNT", "1000"}));
    if (reply.type != RedisReply::Type::kArray || reply.elements.size() != 2 ||
        reply.elements[0].type != RedisReply::Type::kString) {
      return Unexpected("SSCAN tables", reply);
    }
    ASSIGN_OR_RETURN(std::vector<std::string> page, StringArray("SSCAN tables", reply.elements[1]));
    ids.insert(page.begin(), page.end());
    cursor = reply.elements[0].str;
  } while (cursor != "0");
  return std::vector<std::string>(ids.begin(), ids.end());
}

absl::Status RedisTableStore::Save(std::string_view table_id, const Owner& owner,
                                   std::string_view state,
                                   const std::vector<std::string>& new_events, int events_max) {
  RETURN_IF_ERROR(ValidateStoreId("table id", table_id));
  RETURN_IF_ERROR(ValidateOwner(owner));
  if (events_max < 0) {
    return absl::InvalidArgumentError(absl::StrCat("events_max must be >= 0, got ", events_max));
  }
  std::vector<std::string> args;
  args.reserve(4 + new_events.size());
  args.push_back(owner.instance);
  args.push_back(absl::StrCat(owner.epoch));
  args.emplace_back(state);
  args.push_back(absl::StrCat(events_max));
  args.insert(args.end(), new_events.begin(), new_events.end());
  ASSIGN_OR_RETURN(
      RedisReply reply,
      Client().Eval(SaveScript(), {OwnerKey(table_id), StateKey(table_id), EventsKey(table_id)},
                    args));
  return FencedWriteOutcome("save", table_id, owner, reply);
}

std::vector<absl::Status> RedisTableStore::SaveMany(const std::vector<SaveRequest>& requests,
                                                    int events_max) {
  std::vector<absl::Status> out(requests.size());
  std::vector<std::vector<std::string>> commands;
  std::vector<size_t> sent;  // index in requests of each command
  const RedisScript& script = SaveScript();
  for (size_t i = 0; i < requests.size(); ++i) {
    const SaveRequest& r = requests[i];
    absl::Status valid = ValidateStoreId("table id", r.table_id);
    if (valid.ok()) valid = ValidateOwner(r.owner);
    if (valid.ok() && events_max < 0) {
      valid = absl::InvalidArgumentError(absl::StrCat("events_max must be >= 0, got ", events_max));
    }
    if (!valid.ok()) {
      out[i] = valid;
      continue;
    }
    std::vector<std::string> argv = {"EVALSHA",
                                     script.sha(),
                                     "3",
                                     OwnerKey(r.table_id),
                                     StateKey(r.table_id),
                                     EventsKey(r.table_id),
                                     r.owner.instance,
                                     absl::StrCat(r.owner.epoch),
                                     r.state,
                                     absl::StrCat(events_max)};
    argv.insert(argv.end(), r.new_events.begin(), r.new_events.end());
    commands.push_back(std::move(argv));
    sent.push_back(i);
  }
  if (commands.empty()) return out;
  absl::StatusOr<std::vector<absl::StatusOr<storage::RedisReply>>> replies =
      Client().Pipeline(commands);
  for (size_t k = 0; k < sent.size(); ++k) {
    const SaveRequest& r = requests[sent[k]];
    if (!replies.ok()) {
      out[sent[k]] = replies.status();
      continue;
    }
    const absl::StatusOr<storage::RedisReply>& reply = (*replies)[k];
    if (!reply.ok() && reply.status().code() == absl::StatusCode::kNotFound) {
      // NOSCRIPT (a restarted or flushed server): this one alone, through EVAL.
      out[sent[k]] = Save(r.table_id, r.owner, r.state, r.new_events, events_max);
      continue;
    }
    out[sent[k]] =
        reply.ok() ? FencedWriteOutcome("save", r.table_id, r.owner, *reply) : reply.status();
  }
  return out;
}

absl::StatusOr<StoredTableBytes> RedisTableStore::Load(std::string_view table_id) {
  RETURN_IF_ERROR(ValidateStoreId("table id", table_id));
  ASSIGN_OR_RETURN(
      RedisReply reply,
      Client().Eval(LoadScript(), {OwnerKey(table_id), StateKey(table_id), EventsKey(table_id)},
                    {}));
  ASSIGN_OR_RETURN(std::string outcome, Outcome("load", reply));
  if (outcome == "missing") return UnknownTable(table_id);
  if (outcome != "ok" || reply.elements.size() != 5 ||
      reply.elements[3].type != RedisReply::Type::kString) {
    return Unexpected("load", reply);
  }
  StoredTableBytes out;
  ASSIGN_OR_RETURN(out.owner, OwnerAt("load", reply, 1));
  out.state = std::move(reply.elements[3].str);
  ASSIGN_OR_RETURN(out.events, StringArray("load events", reply.elements[4]));
  return out;
}

absl::Status RedisTableStore::Remove(std::string_view table_id, const Owner& owner) {
  RETURN_IF_ERROR(ValidateStoreId("table id", table_id));
  RETURN_IF_ERROR(ValidateOwner(owner));
  storage::RedisClient& redis = Client();
  const std::string t(table_id);
  ASSIGN_OR_RETURN(RedisReply reply,
                   redis.Eval(RemoveScript(), {OwnerKey(t), StateKey(t), EventsKey(t)},
                              {owner.instance, absl::StrCat(owner.epoch)}));
  RETURN_IF_ERROR(FencedWriteOutcome("remove", table_id, owner, reply));
  // Indexes after the truth, best effort: a stale name resolves to NotFound by GetOwner.
  (void)redis.Command({"SREM", InstanceTablesKey(owner.instance), t});
  (void)redis.Command({"SREM", TablesKey(), t});
  return absl::OkStatus();
}

}  // namespace courtpiece::table_service
