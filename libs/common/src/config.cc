#include "courtpiece/common/config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "courtpiece/common/absl_compat.h"

namespace courtpiece::common {

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

EnvLookup MapEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

EnvConfig::EnvConfig(EnvLookup lookup) : lookup_(std::move(lookup)) {}

std::optional<std::string> EnvConfig::Lookup(std::string_view name) const {
  read_.emplace(name);
  std::optional<std::string> value = lookup_(std::string(name));
  if (value.has_value() && value->empty()) return std::nullopt;
  return value;
}

void EnvConfig::AddError(std::string_view name, std::string_view value, std::string_view allowed) {
  errors_.push_back(
      absl::StrCat(ToAbsl(name), "=\"", ToAbsl(value), "\": allowed ", ToAbsl(allowed)));
}

std::string EnvConfig::String(std::string_view name, std::string_view default_value) {
  return Lookup(name).value_or(std::string(default_value));
}

std::string EnvConfig::RequiredString(std::string_view name) {
  std::optional<std::string> value = Lookup(name);
  if (!value.has_value()) {
    errors_.push_back(absl::StrCat(ToAbsl(name), " is required but unset or empty"));
    return "";
  }
  return *value;
}

int64_t EnvConfig::Int(std::string_view name, int64_t default_value, int64_t min, int64_t max) {
  std::optional<std::string> value = Lookup(name);
  if (!value.has_value()) return default_value;
  int64_t parsed = 0;
  if (!absl::SimpleAtoi(*value, &parsed) || parsed < min || parsed > max) {
    AddError(name, *value, absl::StrCat("an integer in [", min, ", ", max, "]"));
    return default_value;
  }
  return parsed;
}

absl::Duration EnvConfig::Duration(std::string_view name, absl::Duration default_value,
                                   absl::Duration min, absl::Duration max) {
  std::optional<std::string> value = Lookup(name);
  if (!value.has_value()) return default_value;
  absl::Duration parsed;
  if (!absl::ParseDuration(*value, &parsed) || parsed < min || parsed > max) {
    AddError(name, *value,
             absl::StrCat("a duration with a unit (e.g. 250ms, 5s, 2m) in [",
                          absl::FormatDuration(min), ", ", absl::FormatDuration(max), "]"));
    return default_value;
  }
  return parsed;
}

bool EnvConfig::Bool(std::string_view name, bool default_value) {
  std::optional<std::string> value = Lookup(name);
  if (!value.has_value()) return default_value;
  const std::string lower = absl::AsciiStrToLower(*value);
  if (lower == "true" || lower == "1" || lower == "yes" || lower == "on") return true;
  if (lower == "false" || lower == "0" || lower == "no" || lower == "off") return false;
  AddError(name, *value, "true/false, 1/0, yes/no or on/off");
  return default_value;
}

std::string EnvConfig::OneOf(std::string_view name, std::string_view default_value,
                             const std::vector<std::string>& allowed) {
  std::optional<std::string> value = Lookup(name);
  if (!value.has_value()) return std::string(default_value);
  for (const std::string& candidate : allowed) {
    if (*value == candidate) return *value;
  }
  AddError(name, *value, absl::StrCat("one of {", absl::StrJoin(allowed, ", "), "}"));
  return std::string(default_value);
}

namespace {

// A host name's or an identifier's character: [A-Za-z0-9_.-].
bool IsNameChar(char c) { return absl::ascii_isalnum(c) || c == '.' || c == '-' || c == '_'; }

bool IsValidListenAddress(const std::string& value) {
  const size_t colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  int port = -1;
  const std::string port_text = value.substr(colon + 1);
  if (port_text.empty() || port_text.size() > 5 ||
      !std::all_of(port_text.begin(), port_text.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(port_text, &port) || port > 65535) {
    return false;
  }
  const std::string host = value.substr(0, colon);
  if (host.front() == '[') {  // [IPv6]
    return host.size() > 2 && host.back() == ']' &&
           std::all_of(host.begin() + 1, host.end() - 1,
                       [](char c) { return absl::ascii_isxdigit(c) || c == ':' || c == '.'; });
  }
  return std::all_of(host.begin(), host.end(), IsNameChar);
}

// 0.0.0.0, ::, any other spelling of them ([::0], 0:0::0), and "0": listen-only wildcards.
bool IsUnspecifiedHost(std::string host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "0") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return v4.s_addr == 0;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return std::all_of(std::begin(v6.s6_addr), std::end(v6.s6_addr),
                       [](unsigned char b) { return b == 0; });
  }
  return false;
}

}  // namespace

std::string EnvConfig::ListenAddress(std::string_view name, std::string_view default_value,
                                     bool allow_off) {
  std::optional<std::string> value = Lookup(name);
  if (!value.has_value()) return std::string(default_value);
  if (allow_off && *value == "off") return "";
  if (!IsValidListenAddress(*value)) {
    AddError(name, *value,
             absl::StrCat("HOST:PORT (e.g. 127.0.0.1:9101, 0.0.0.0:9101, [::1]:9101), port in "
                          "[0, 65535]",
                          allow_off ? ", or off" : ""));
    return std::string(default_value);
  }
  return *value;
}

std::string EnvConfig::DialAddress(std::string_view name, std::string_view default_value) {
  std::optional<std::string> value = Lookup(name);
  if (!value.has_value()) return std::string(default_value);
  const size_t colon = value->rfind(':');
  int port = 0;
  const bool ok = IsValidListenAddress(*value) &&
                  absl::SimpleAtoi(value->substr(colon + 1), &port) && port >= 1 &&
                  !IsUnspecifiedHost(value->substr(0, colon));
  if (!ok) {
    AddError(name, *value,
             "HOST:PORT that other processes can dial (e.g. 10.0.0.5:7002, table-1:7002, "
             "[::1]:7002), port in [1, 65535], not a wildcard host");
    return std::string(default_value);
  }
  return *value;
}

std::string EnvConfig::Identifier(std::string_view name, std::string_view default_value,
                                  int max_chars) {
  std::optional<std::string> value = Lookup(name);
  if (!value.has_value()) return std::string(default_value);
  const bool ok = static_cast<int>(value->size()) <= max_chars &&
                  std::all_of(value->begin(), value->end(), IsNameChar);
  if (!ok) {
    AddError(name, *value, absl::StrCat("1..", max_chars, " characters of [A-Za-z0-9_.-]"));
    return std::string(default_value);
  }
  return *value;
}

void EnvConfig::Retired(std::string_view name, std::string_view replacement) {
  read_.emplace(name);
  if (!lookup_(std::string(name)).has_value()) return;
  errors_.push_back(
      absl::StrCat(ToAbsl(name), " is no longer read; set ", ToAbsl(replacement), " instead"));
}

void EnvConfig::Known(std::string_view name) { read_.emplace(name); }

std::vector<std::string> EnvConfig::Unread(const char* const* environment,
                                           std::string_view prefix) const {
  std::set<std::string> out;
  for (const char* const* e = environment; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    if (!read_.contains(name)) out.emplace(name);
  }
  return {out.begin(), out.end()};
}

absl::Status EnvConfig::Finish() const {
  if (errors_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("bad configuration: ", absl::StrJoin(errors_, "; ")));
}

}  // namespace courtpiece::common
