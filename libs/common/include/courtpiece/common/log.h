// Structured logging: one JSON object per line, to stderr or an injected sink.
//
//   Logger log("lobby", LogLevel::kInfo);
//   log.Info("table created", {{"table_id", id}, {"seats", 4}, {"bots", true}});
//   // {"ts":"2026-11-29T18:00:00.123Z","level":"info","component":"lobby",
//   //  "msg":"table created","table_id":"t-1","seats":4,"bots":true}
//
// Keys ts, level, component, msg come first; fields follow in the given order (a field that
// reuses one of those four names is written as "_<name>"). Invalid UTF-8 is replaced, never
// thrown. Lines below the logger's level are dropped before any formatting.
// Thread-safety: a Logger is safe to use from many threads; each line reaches the sink whole
// (the sink is called under a mutex shared by copies of the Logger). StderrSink() is safe.
#ifndef COURTPIECE_COMMON_LOG_H_
#define COURTPIECE_COMMON_LOG_H_

#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/config.h"

namespace courtpiece::common {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// "debug", "info", "warn", "error".
const char* LogLevelName(LogLevel level);
// Accepts the names above (case-insensitive); anything else is InvalidArgument.
absl::StatusOr<LogLevel> ParseLogLevel(std::string_view name);
// Reads COURTPIECE_LOG_LEVEL (default info); a bad value becomes an error in `env`.
LogLevel ReadLogLevel(EnvConfig& env, std::string_view variable = "COURTPIECE_LOG_LEVEL");

// One key/value pair of a log line.
class LogField {
 public:
  using Value = std::variant<std::string, int64_t, uint64_t, double, bool>;

  LogField(std::string_view key, std::string_view value) : key_(key), value_(std::string(value)) {}
  LogField(std::string_view key, const char* value) : key_(key), value_(std::string(value)) {}
  LogField(std::string_view key, const std::string& value) : key_(key), value_(value) {}
  LogField(std::string_view key, absl::string_view value) : key_(key), value_(std::string(value)) {}
  LogField(std::string_view key, bool value) : key_(key), value_(value) {}
  LogField(std::string_view key, double value) : key_(key), value_(value) {}
  template <std::signed_integral T>
  LogField(std::string_view key, T value) : key_(key), value_(static_cast<int64_t>(value)) {}
  template <std::unsigned_integral T>
  requires(!std::same_as<T, bool>) LogField(std::string_view key, T value)
      : key_(key), value_(static_cast<uint64_t>(value)) {}
  // The status as text ("OK" or "NOT_FOUND: no such table").
  LogField(std::string_view key, const absl::Status& status)
      : key_(key), value_(status.ToString()) {}

  const std::string& key() const { return key_; }
  const Value& value() const { return value_; }

 private:
  std::string key_;
  Value value_;
};

// Receives one complete line, including its trailing '\n'.
using LogSink = std::function<void(std::string_view line)>;
// Writes each line to stderr with a single fwrite, then flushes.
LogSink StderrSink();

class Logger {
 public:
  // `clock` must outlive the Logger.
  Logger(std::string component, LogLevel min_level, LogSink sink = StderrSink(),
         const Clock& clock = RealClock::Instance());

  bool Enabled(LogLevel level) const { return level >= min_level_; }
  void Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {}) const;
  void Debug(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kDebug, msg, fields);
  }
  void Info(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kInfo, msg, fields);
  }
  void Warn(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kWarn, msg, fields);
  }
  void Error(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    Log(LogLevel::kError, msg, fields);
  }

  // A logger for another component sharing this one's level, sink, lock and clock.
  Logger WithComponent(std::string component) const;

  // The line Log() would write (without checking the level). Exposed for tests.
  std::string Format(LogLevel level, std::string_view msg,
                     std::initializer_list<LogField> fields) const;

 private:
  struct Output;
  Logger(std::string component, LogLevel min_level, std::shared_ptr<Output> output,
         const Clock* clock);

  std::string component_;
  LogLevel min_level_;
  std::shared_ptr<Output> output_;
  const Clock* clock_;
};

// One warning per name of EnvConfig::Unread() (a setting set but never read: misspelt?),
// logged by a service at start.
void WarnUnknownSettings(const Logger& log, const std::vector<std::string>& names);

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_LOG_H_
