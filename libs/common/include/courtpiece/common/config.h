// Declarative configuration from environment variables. Read every variable, then ask once
// for all the errors:
//
//   EnvConfig env;                                          // reads the process environment
//   std::string pg_url = env.RequiredString("COURTPIECE_PG_URL");
//   int64_t port = env.Int("COURTPIECE_GRPC_PORT", 7001, 0, 65535);
//   absl::Duration turn = env.Duration("COURTPIECE_TURN_TIMEOUT", absl::Seconds(30),
//                                      absl::Seconds(1), absl::Minutes(5));
//   bool bots = env.Bool("COURTPIECE_BOTS", true);
//   std::string level = env.OneOf("COURTPIECE_LOG_LEVEL", "info", {"debug", "info", ...});
//   RETURN_IF_ERROR(env.Finish());  // one InvalidArgument naming every bad variable
//
// Contract: a variable that is unset or empty takes its default. A bad value is recorded
// (name, value, what is allowed) and the getter returns the default, so reading continues
// and Finish() reports all problems at once. Defaults are not range-checked (programmer's
// job). Tests inject the environment with MapEnv({...}).
// Thread-safety: an EnvConfig is not thread-safe; use it from one thread at startup.
#ifndef COURTPIECE_COMMON_CONFIG_H_
#define COURTPIECE_COMMON_CONFIG_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace courtpiece::common {

// Returns the value of a variable, or nullopt when it is unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment (getenv).
EnvLookup ProcessEnv();
// A fixed environment, for tests.
EnvLookup MapEnv(std::map<std::string, std::string> vars);

class EnvConfig {
 public:
  explicit EnvConfig(EnvLookup lookup = ProcessEnv());

  std::string String(std::string_view name, std::string_view default_value);
  // Unset or empty is an error.
  std::string RequiredString(std::string_view name);
  // A base-10 integer in [min, max].
  int64_t Int(std::string_view name, int64_t default_value, int64_t min, int64_t max);
  // A duration with a unit (absl::ParseDuration: "250ms", "1.5s", "2m", "1h") in [min, max].
  absl::Duration Duration(std::string_view name, absl::Duration default_value, absl::Duration min,
                          absl::Duration max);
  // true/false, 1/0, yes/no, on/off (case-insensitive).
  bool Bool(std::string_view name, bool default_value);
  // One of `allowed` (exact match).
  std::string OneOf(std::string_view name, std::string_view default_value,
                    const std::vector<std::string>& allowed);

  // A listen address "HOST:PORT": HOST an IPv4 address, a host name or a bracketed IPv6
  // address ("[::1]"), PORT 0..65535 (0: any free port). With allow_off, "off" means "do
  // not listen" and returns "".
  std::string ListenAddress(std::string_view name, std::string_view default_value,
                            bool allow_off = false);
  // An address other processes dial, "HOST:PORT" as ListenAddress but PORT 1..65535 and
  // HOST not a wildcard (0.0.0.0, [::]): e.g. what an instance advertises. Unset: default.
  std::string DialAddress(std::string_view name, std::string_view default_value);
  // An identifier: 1..max_chars characters of [A-Za-z0-9_.-]. Unset: default.
  std::string Identifier(std::string_view name, std::string_view default_value, int max_chars);
  // A variable that is no longer read: setting it is an error naming its replacement (so
  // an old deployment fails loudly instead of being silently ignored).
  void Retired(std::string_view name, std::string_view replacement);

  // A variable this service reads by other means (a key through auth::ReadEnvOrFile, with
  // its _FILE twin): not reported by Unread().
  void Known(std::string_view name);

  // OK, or InvalidArgument whose message lists every bad variable, in reading order.
  absl::Status Finish() const;

  // The names set in `environment` (NAME=VALUE strings ending with a null pointer, as
  // `environ`) that start with `prefix` and that this config never read nor was told of:
  // most likely misspelt, as COURTPIECE_TABLE_WORKER for COURTPIECE_TABLE_WORKERS. Sorted.
  // A service logs them as a warning at start (another version's variable must not stop it).
  std::vector<std::string> Unread(const char* const* environment, std::string_view prefix) const;
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  // The value of `name`, or nullopt when unset or empty.
  std::optional<std::string> Lookup(std::string_view name) const;
  void AddError(std::string_view name, std::string_view value, std::string_view allowed);

  EnvLookup lookup_;
  std::vector<std::string> errors_;
  mutable std::set<std::string, std::less<>> read_;  // every name looked up
};

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_CONFIG_H_
