// A synchronous Redis client over hiredis, reporting absl::Status.
//
//   RedisClient redis(RedisOptions{.host = "127.0.0.1", .port = 6379});
//   ASSIGN_OR_RETURN(RedisReply r, redis.Command({"SET", key, value, "PX", "5000"}));
//   static const RedisScript kCas("return redis.call('GET', KEYS[1])");
//   ASSIGN_OR_RETURN(RedisReply v, redis.Eval(kCas, {key}, {}));
//
// Contract:
//  - Arguments are binary-safe (argv form); replies become RedisReply. A Redis error reply
//    becomes a status (RedisErrorToStatus): WRONGTYPE -> FailedPrecondition, ERR/syntax/
//    script errors -> InvalidArgument, BUSY/LOADING/READONLY/MASTERDOWN/TRYAGAIN ->
//    Unavailable, NOSCRIPT -> NotFound, OOM -> ResourceExhausted, any other prefix (e.g. an
//    application error raised by a script with redis.error_reply) -> FailedPrecondition.
//    Errors nested inside an array reply (EXEC, scripts) stay RedisReply::kError elements.
//  - I/O failure -> Unavailable, command timeout -> DeadlineExceeded; the connection is
//    dropped and the failing command is NOT retried (it may or may not have run). The next
//    command reconnects (reconnect_attempts_max tries, reconnect_backoff_ms apart). Before
//    sending, a connection the server already closed (restart, CLIENT KILL, idle timeout)
//    is noticed without a round trip and replaced, so only in-flight commands fail.
//  - The constructor does not connect; the first command does.
//  - Constructing a client makes the process ignore SIGPIPE (hiredis writes with write()).
//
// Thread-safety: thread-safe; commands on one client are serialized by an internal mutex
// (one connection). Use one client per thread for parallel throughput.
#ifndef COURTPIECE_STORAGE_REDIS_CLIENT_H_
#define COURTPIECE_STORAGE_REDIS_CLIENT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

struct redisContext;

namespace courtpiece::storage {

struct RedisReply {
  enum class Type { kNil, kInteger, kString, kArray, kStatus, kError };
  Type type = Type::kNil;
  int64_t integer = 0;               // kInteger
  std::string str;                   // kString (bulk, binary), kStatus, kError text
  std::vector<RedisReply> elements;  // kArray

  static RedisReply Nil() { return {}; }
  static RedisReply Integer(int64_t v) { return {Type::kInteger, v, {}, {}}; }
  static RedisReply String(std::string s) { return {Type::kString, 0, std::move(s), {}}; }
  static RedisReply Status(std::string s) { return {Type::kStatus, 0, std::move(s), {}}; }
  static RedisReply Error(std::string s) { return {Type::kError, 0, std::move(s), {}}; }
  static RedisReply Array(std::vector<RedisReply> e) { return {Type::kArray, 0, {}, std::move(e)}; }

  bool is_nil() const { return type == Type::kNil; }
  bool operator==(const RedisReply&) const = default;
};

// Maps a Redis error reply text ("WRONGTYPE Operation against ...") to a status.
absl::Status RedisErrorToStatus(absl::string_view error_text);

// Lowercase hex SHA1 of `data` (the id Redis gives a script).
std::string Sha1Hex(absl::string_view data);

// A Lua script with its SHA1 computed once.
class RedisScript {
 public:
  explicit RedisScript(std::string source) : source_(std::move(source)), sha_(Sha1Hex(source_)) {}
  const std::string& source() const { return source_; }
  const std::string& sha() const { return sha_; }

 private:
  std::string source_;
  std::string sha_;
};

struct RedisOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;            // SELECTed after every (re)connect
  std::string password;  // AUTH after connect when not empty
  int connect_timeout_ms = 1000;
  int command_timeout_ms = 1000;   // per command round trip
  int reconnect_attempts_max = 2;  // per command that finds the connection down
  int reconnect_backoff_ms = 50;
};

// "host:port" -> options with that host and port; InvalidArgument otherwise.
absl::StatusOr<RedisOptions> ParseRedisAddr(absl::string_view addr);

class RedisClient {
 public:
  explicit RedisClient(RedisOptions options);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // One command, argv form: {"SET", key, value}.
  absl::StatusOr<RedisReply> Command(const std::vector<std::string>& argv);
  // Several commands in one round trip (pipelined on the one connection). The outer status
  // is an I/O failure or timeout (the connection is dropped; any of the commands may or may
  // not have run); otherwise one result per command, in order, each as Command() would
  // give it (a Redis error reply is that element's status).
  absl::StatusOr<std::vector<absl::StatusOr<RedisReply>>> Pipeline(
      const std::vector<std::vector<std::string>>& commands);
  // Loads a script, returns its SHA1.
  absl::StatusOr<std::string> ScriptLoad(absl::string_view source);
  // EVALSHA sha; on NOSCRIPT, EVAL source (which also caches it on the server).
  absl::StatusOr<RedisReply> EvalSha(absl::string_view sha, absl::string_view source,
                                     const std::vector<std::string>& keys,
                                     const std::vector<std::string>& args);
  absl::StatusOr<RedisReply> Eval(const RedisScript& script, const std::vector<std::string>& keys,
                                  const std::vector<std::string>& args) {
    return EvalSha(script.sha(), script.source(), keys, args);
  }
  // Connects now if not connected (commands do this themselves).
  absl::Status Connect();

  int64_t reconnects() const;  // successful connects after the first
  const RedisOptions& options() const { return options_; }

 private:
  absl::Status ConnectLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ConnectOnceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<RedisReply> CommandLocked(const std::vector<std::string>& argv)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const RedisOptions options_;
  mutable absl::Mutex mu_;
  redisContext* ctx_ ABSL_GUARDED_BY(mu_) = nullptr;
  int64_t connects_ ABSL_GUARDED_BY(mu_) = 0;
};

// One answer per command of a Pipeline (`count` commands sent): `f(i, RedisReply)` (returning
// absl::StatusOr<T>) for command i's reply, else the error: the whole pipeline's for every
// command, or that command's own.
template <typename T, typename F>
std::vector<absl::StatusOr<T>> EachReply(
    absl::StatusOr<std::vector<absl::StatusOr<RedisReply>>> replies, size_t count, F f) {
  std::vector<absl::StatusOr<T>> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (!replies.ok()) {
      out.push_back(replies.status());
    } else if (!(*replies)[i].ok()) {
      out.push_back((*replies)[i].status());
    } else {
      out.push_back(f(i, std::move(*(*replies)[i])));
    }
  }
  return out;
}

}  // namespace courtpiece::storage

#endif  // COURTPIECE_STORAGE_REDIS_CLIENT_H_
