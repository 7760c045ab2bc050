// courtpiece-admin: the operator's tool for admin roles. Talks to Postgres directly
// (COURTPIECE_PG_URL); there is no API for any of this, on purpose.
//
//   courtpiece-admin grant PLAYER --reason TEXT [--operator NAME]
//   courtpiece-admin revoke PLAYER --reason TEXT [--operator NAME]
//   courtpiece-admin list
//   courtpiece-admin token PLAYER [--ttl 15m]
//
// grant/revoke set the player's role and append an audit row (lobby.admin_grants: who =
// --operator or the OS user, when, what, why) in one transaction. The change reaches the
// player's session at its next Refresh (within one access-token lifetime).
// list prints the admins, one per line: player id, name, last granted at, by whom (tabs).
// token mints an admin access token for an operator from the signing key in the
// environment (COURTPIECE_LOBBY_SIGNING_KEY or _FILE), for PLAYER, who must be an admin
// now; --ttl 1m..12h. The token goes to stdout, its expiry to stderr.
// Exit status: 0 done; 1 refused or failed (message on stderr); 2 usage or configuration.
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "courtpiece/auth/keys.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/storage/pg_pool.h"
#include "services/lobby/pg_player_store.h"

namespace courtpiece::lobby {
namespace {

constexpr char kUsage[] =
    "usage: courtpiece-admin grant PLAYER --reason TEXT [--operator NAME]\n"
    "       courtpiece-admin revoke PLAYER --reason TEXT [--operator NAME]\n"
    "       courtpiece-admin list\n"
    "       courtpiece-admin token PLAYER [--ttl 15m]\n"
    "environment: COURTPIECE_PG_URL; for token also COURTPIECE_LOBBY_SIGNING_KEY(_FILE)\n";

int Usage(const std::string& why) {
  std::fprintf(stderr, "courtpiece-admin: %s\n%s", why.c_str(), kUsage);
  return 2;
}

int Fail(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "courtpiece-admin: %s: %s\n", what.c_str(), status.ToString().c_str());
  return 1;
}

std::string OsUser() {
  if (const passwd* pw = getpwuid(geteuid()); pw != nullptr && pw->pw_name != nullptr) {
    return pw->pw_name;
  }
  const char* user = std::getenv("USER");
  return user != nullptr && *user != '\0' ? user : absl::StrCat("uid-", geteuid());
}

struct Args {
  std::string command;
  std::string player;
  std::map<std::string, std::string> flags;
};

// COMMAND [PLAYER] then --flag VALUE pairs; nullopt and a message on a usage error.
std::optional<Args> Parse(int argc, char** argv, std::string& why) {
  if (argc < 2) {
    why = "no command";
    return std::nullopt;
  }
  Args args;
  args.command = argv[1];
  int i = 2;
  if (args.command != "list") {
    if (argc < 3 || std::string(argv[2]).rfind("--", 0) == 0) {
      why = "PLAYER is required";
      return std::nullopt;
    }
    args.player = argv[2];
    i = 3;
  }
  for (; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag.rfind("--", 0) != 0 || i + 1 >= argc) {
      why = "bad argument " + flag;
      return std::nullopt;
    }
    args.flags[flag.substr(2)] = argv[i + 1];
  }
  return args;
}

int SetRole(PgPlayerStore& store, const Args& args, auth::Role role) {
  for (const auto& [flag, value] : args.flags) {
    if (flag != "reason" && flag != "operator") return Usage("unknown flag --" + flag);
  }
  auto reason = args.flags.find("reason");
  if (reason == args.flags.end() || reason->second.empty()) return Usage("--reason is required");
  auto op = args.flags.find("operator");
  const std::string operator_name = op != args.flags.end() ? op->second : OsUser();
  absl::Status s = store.SetRole(args.player, role, operator_name, reason->second);
  if (!s.ok()) return Fail(args.command, s);
  std::printf("%s: %s is now %s (by %s)\n", args.command.c_str(), args.player.c_str(),
              auth::RoleName(role), operator_name.c_str());
  return 0;
}

int List(PgPlayerStore& store) {
  absl::StatusOr<std::vector<AdminEntry>> admins = store.ListAdmins();
  if (!admins.ok()) return Fail("list", admins.status());
  for (const AdminEntry& a : *admins) {
    std::printf("%s\t%s\t%s\t%s\n", a.player_id.c_str(), a.display_name.c_str(),
                absl::FormatTime(absl::RFC3339_sec, a.granted_at, absl::UTCTimeZone()).c_str(),
                a.granted_by.c_str());
  }
  return 0;
}

int Token(PgPlayerStore& store, const Args& args) {
  absl::Duration ttl = absl::Minutes(15);
  for (const auto& [flag, value] : args.flags) {
    if (flag != "ttl") return Usage("unknown flag --" + flag);
    if (!absl::ParseDuration(value, &ttl) || ttl < absl::Minutes(1) || ttl > absl::Hours(12)) {
      return Usage("--ttl must be a duration in 1m..12h");
    }
  }
  absl::StatusOr<std::optional<std::string>> text =
      auth::ReadEnvOrFile("COURTPIECE_LOBBY_SIGNING_KEY");
  if (!text.ok()) return Usage(std::string(text.status().message()));
  if (!text->has_value()) return Usage("COURTPIECE_LOBBY_SIGNING_KEY (or _FILE) is not set");
  absl::StatusOr<auth::SigningKey> key = auth::SigningKey::Parse(**text);
  if (!key.ok()) return Usage(std::string(key.status().message()));
  absl::StatusOr<PlayerRecord> player =
      store.GetPlayer(args.player, absl::Now() + absl::Seconds(10));
  if (!player.ok()) return Fail("token", player.status());
  if (player->role != auth::Role::kAdmin) {
    return Fail("token", absl::FailedPreconditionError(
                             absl::StrCat(args.player, " is not an admin (grant it first)")));
  }
  auth::TokenSigner signer(*std::move(key), RealClock::Instance());
  auth::Claims claims;
  const std::string token = signer.Sign(args.player, auth::Role::kAdmin, ttl, &claims);
  std::printf("%s\n", token.c_str());
  std::fprintf(stderr, "courtpiece-admin: admin token for %s, expires %s\n", args.player.c_str(),
               absl::FormatTime(absl::RFC3339_sec, absl::FromUnixMillis(claims.expires_at_ms),
                                absl::UTCTimeZone())
                   .c_str());
  return 0;
}

int Run(int argc, char** argv) {
  std::string why;
  std::optional<Args> args = Parse(argc, argv, why);
  if (!args.has_value()) return Usage(why);
  if (args->command != "grant" && args->command != "revoke" && args->command != "list" &&
      args->command != "token") {
    return Usage("unknown command " + args->command);
  }
  if (!args->player.empty() && !auth::IsValidPlayerId(args->player)) {
    return Usage("PLAYER must be 1..64 chars of [A-Za-z0-9_-]");
  }
  const char* url = std::getenv("COURTPIECE_PG_URL");
  if (url == nullptr || *url == '\0') return Usage("COURTPIECE_PG_URL is not set");
  storage::PgPool pool({.url = url,
                        .size_max = 1,
                        .acquire_timeout_ms = 10000,
                        .statement_timeout_ms = 10000,
                        .application_name = "courtpiece-admin"});
  PgPlayerStore store(pool);
  if (args->command == "grant") return SetRole(store, *args, auth::Role::kAdmin);
  if (args->command == "revoke") return SetRole(store, *args, auth::Role::kPlayer);
  if (args->command == "list")
    return args->flags.empty() ? List(store) : Usage("list takes no flags");
  return Token(store, *args);
}

}  // namespace
}  // namespace courtpiece::lobby

int main(int argc, char** argv) { return courtpiece::lobby::Run(argc, argv); }
