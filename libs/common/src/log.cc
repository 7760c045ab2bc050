#include "courtpiece/common/log.h"

#include <cstdio>
#include <mutex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "courtpiece/common/absl_compat.h"
#include "nlohmann/json.hpp"

namespace courtpiece::common {

// std::mutex, not absl::Mutex: Debian's prebuilt Abseil is not TSan-instrumented, so TSan
// cannot see absl::Mutex and would report every logged line as a race.
struct Logger::Output {
  std::mutex mu;
  LogSink sink;
};

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "unknown";
}

absl::StatusOr<LogLevel> ParseLogLevel(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(ToAbsl(name));
  for (LogLevel level : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (lower == LogLevelName(level)) return level;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("log level \"", ToAbsl(name), "\": allowed one of {debug, info, warn, error}"));
}

LogLevel ReadLogLevel(EnvConfig& env, std::string_view variable) {
  const std::string name = env.OneOf(variable, "info", {"debug", "info", "warn", "error"});
  return ParseLogLevel(name).value_or(LogLevel::kInfo);
}

LogSink StderrSink() {
  return [](std::string_view line) {
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  };
}

Logger::Logger(std::string component, LogLevel min_level, LogSink sink, const Clock& clock)
    : Logger(std::move(component), min_level, std::make_shared<Output>(), &clock) {
  output_->sink = std::move(sink);
}

Logger::Logger(std::string component, LogLevel min_level, std::shared_ptr<Output> output,
               const Clock* clock)
    : component_(std::move(component)),
      min_level_(min_level),
      output_(std::move(output)),
      clock_(clock) {}

Logger Logger::WithComponent(std::string component) const {
  return Logger(std::move(component), min_level_, output_, clock_);
}

std::string Logger::Format(LogLevel level, std::string_view msg,
                           std::initializer_list<LogField> fields) const {
  nlohmann::ordered_json line;
  line["ts"] = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", clock_->Now(), absl::UTCTimeZone());
  line["level"] = LogLevelName(level);
  line["component"] = component_;
  line["msg"] = std::string(msg);
  for (const LogField& field : fields) {
    std::string key = field.key();
    if (key == "ts" || key == "level" || key == "component" || key == "msg") key = "_" + key;
    std::visit([&](const auto& value) { line[key] = value; }, field.value());
  }
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void Logger::Log(LogLevel level, std::string_view msg,
                 std::initializer_list<LogField> fields) const {
  if (!Enabled(level)) return;
  const std::string line = Format(level, msg, fields);
  std::lock_guard<std::mutex> lock(output_->mu);
  output_->sink(line);
}

void WarnUnknownSettings(const Logger& log, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    log.Warn("unknown setting: this service does not read it (misspelt?)", {{"name", name}});
  }
}

}  // namespace courtpiece::common
