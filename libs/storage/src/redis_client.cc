#include "courtpiece/storage/redis_client.h"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "redis_internal.h"

namespace courtpiece::storage {
namespace {

timeval ToTimeval(int ms) {
  timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

void IgnoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] { std::signal(SIGPIPE, SIG_IGN); });
}

}  // namespace

RedisClient::RedisClient(RedisOptions options) : options_(std::move(options)) {
  IgnoreSigpipeOnce();
}

RedisClient::~RedisClient() {
  absl::MutexLock lock(&mu_);
  DropLocked();
}

void RedisClient::DropLocked() {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

absl::Status RedisClient::ConnectOnceLocked() {
  redisContext* ctx = redisConnectWithTimeout(options_.host.c_str(), options_.port,
                                              ToTimeval(options_.connect_timeout_ms));
  if (ctx == nullptr || ctx->err != 0) {
    absl::Status s =
        absl::UnavailableError(absl::StrCat("redis connect ", options_.host, ":", options_.port,
                                            ": ", ctx == nullptr ? "out of memory" : ctx->errstr));
    if (ctx != nullptr) redisFree(ctx);
    return s;
  }
  redisSetTimeout(ctx, ToTimeval(options_.command_timeout_ms));
  ctx_ = ctx;
  if (!options_.password.empty()) {
    absl::StatusOr<RedisReply> auth = CommandLocked({"AUTH", options_.password});
    if (!auth.ok()) {
      DropLocked();
      return auth.status();
    }
  }
  if (options_.db != 0) {
    absl::StatusOr<RedisReply> select = CommandLocked({"SELECT", std::to_string(options_.db)});
    if (!select.ok()) {
      DropLocked();
      return select.status();
    }
  }
  ++connects_;
  return absl::OkStatus();
}

absl::Status RedisClient::ConnectLocked() {
  absl::Status s;
  const int attempts = std::max(1, options_.reconnect_attempts_max);
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (attempt > 0) absl::SleepFor(absl::Milliseconds(options_.reconnect_backoff_ms));
    s = ConnectOnceLocked();
    if (s.ok()) return s;
  }
  return s;
}

absl::Status RedisClient::Connect() {
  absl::MutexLock lock(&mu_);
  if (ctx_ != nullptr) return absl::OkStatus();
  return ConnectLocked();
}

absl::StatusOr<RedisReply> RedisClient::CommandLocked(const std::vector<std::string>& argv) {
  if (argv.empty()) return absl::InvalidArgumentError("redis: empty command");
  // An idle connection has nothing to read unless the server closed it (restart, CLIENT
  // KILL, timeout); reconnect before sending rather than fail a command never sent.
  if (ctx_ != nullptr) {
    pollfd pending{ctx_->fd, POLLIN, 0};
    if (ctx_->fd < 0 || ::poll(&pending, 1, 0) != 0) DropLocked();
  }
  if (ctx_ == nullptr) {
    absl::Status s = ConnectLocked();
    if (!s.ok()) return s;
  }
  std::vector<const char*> args;
  std::vector<size_t> lens;
  args.reserve(argv.size());
  lens.reserve(argv.size());
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  errno = 0;
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(ctx_, static_cast<int>(args.size()), args.data(), lens.data()));
  if (reply == nullptr) {
    const bool timed_out = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    const std::string what = absl::StrCat("redis ", argv[0], " on ", options_.host, ":",
                                          options_.port, ": ", ctx_->errstr);
    DropLocked();
    if (timed_out) {
      return absl::DeadlineExceededError(
          absl::StrCat(what, " (no reply within ", options_.command_timeout_ms, " ms)"));
    }
    return absl::UnavailableError(what);
  }
  absl::StatusOr<RedisReply> result = internal::TopLevelReply(*reply);
  freeReplyObject(reply);
  return result;
}

absl::StatusOr<std::vector<absl::StatusOr<RedisReply>>> RedisClient::Pipeline(
    const std::vector<std::vector<std::string>>& commands) {
  std::vector<absl::StatusOr<RedisReply>> out;
  if (commands.empty()) return out;
  for (const auto& argv : commands) {
    if (argv.empty()) return absl::InvalidArgumentError("redis: empty command in a pipeline");
  }
  absl::MutexLock lock(&mu_);
  if (ctx_ != nullptr) {
    pollfd pending{ctx_->fd, POLLIN, 0};
    if (ctx_->fd < 0 || ::poll(&pending, 1, 0) != 0) DropLocked();
  }
  if (ctx_ == nullptr) {
    absl::Status s = ConnectLocked();
    if (!s.ok()) return s;
  }
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& argv : commands) {
    args.clear();
    lens.clear();
    for (const std::string& a : argv) {
      args.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_, static_cast<int>(args.size()), args.data(), lens.data()) !=
        REDIS_OK) {
      DropLocked();
      return absl::InternalError("redis: out of memory building a pipeline");
    }
  }
  out.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    errno = 0;
    void* raw = nullptr;
    if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) {
      const bool timed_out = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
      const std::string what = absl::StrCat("redis pipeline of ", commands.size(), " on ",
                                            options_.host, ":", options_.port, ": ", ctx_->errstr);
      DropLocked();
      if (timed_out) return absl::DeadlineExceededError(what);
      return absl::UnavailableError(what);
    }
    auto* reply = static_cast<redisReply*>(raw);
    out.push_back(internal::TopLevelReply(*reply));
    freeReplyObject(reply);
  }
  return out;
}

absl::StatusOr<RedisReply> RedisClient::Command(const std::vector<std::string>& argv) {
  absl::MutexLock lock(&mu_);
  return CommandLocked(argv);
}

absl::StatusOr<std::string> RedisClient::ScriptLoad(absl::string_view source) {
  absl::StatusOr<RedisReply> r = Command({"SCRIPT", "LOAD", std::string(source)});
  if (!r.ok()) return r.status();
  if (r->type != RedisReply::Type::kString) {
    return absl::InternalError("redis: SCRIPT LOAD did not return a string");
  }
  return r->str;
}

absl::StatusOr<RedisReply> RedisClient::EvalSha(absl::string_view sha, absl::string_view source,
                                                const std::vector<std::string>& keys,
                                                const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"EVALSHA", std::string(sha), std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  absl::MutexLock lock(&mu_);
  absl::StatusOr<RedisReply> r = CommandLocked(argv);
  if (r.ok() || r.status().code() != absl::StatusCode::kNotFound) return r;
  argv[0] = "EVAL";
  argv[1] = std::string(source);
  return CommandLocked(argv);
}

int64_t RedisClient::reconnects() const {
  absl::MutexLock lock(&mu_);
  return connects_ > 0 ? connects_ - 1 : 0;
}

}  // namespace courtpiece::storage
