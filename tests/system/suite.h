// The whole Court Piece suite on one machine, for system tests: the real binaries from the
// build's bin directory (courtpiece-wallet, -lobby, -table x N, -moderation, -gateway), each
// configured by environment as deploy/ does, on free loopback ports, over a fresh Postgres
// database and a private Redis database index.
//
//   absl::StatusOr<std::unique_ptr<Suite>> suite = Suite::Start({.tables = 2});
//   ASSERT_TRUE(suite.ok()) << suite.status();
//   auto client = (*suite)->NewClient();               // CourtPiece through the gateway
//   ASSERT_TRUE((*suite)->Kill9("table0").ok());       // or Stop / Restart
//   absl::StatusOr<AuditResult> audit = (*suite)->Audit();
//
// Contract:
//  - Start() reads COURTPIECE_TEST_PG_URL and COURTPIECE_TEST_REDIS_ADDR and answers
//    FailedPrecondition when either is unset (tests fail, never skip). It makes a fresh
//    database (storage::TestDatabase: the wallet, lobby and moderation schemas migrated from
//    the source tree; dropped by the destructor), FLUSHDBs Redis database
//    `options.redis_db` (so each test binary needs its own index: two binaries on one index
//    would wipe each other), makes a signing key pair, and starts every process in
//    dependency order, waiting for each to answer gRPC health SERVING.
//  - Process names: "wallet", "lobby", "moderation", "gateway", "table0" .. "table<N-1>",
//    and with own_servers "postgres" and "redis" (Stop, StartProcess and Restart only: the
//    scripts' graceful stop, then a start on the same port and data directory; Kill9 is
//    InvalidArgument for them). A name outside these is InvalidArgument.
//  - Kill9(name): SIGKILL, waits for the exit. Stop(name): SIGTERM, waits for the exit
//    (SIGKILL after stop_timeout). Restart(name): Stop when running, then starts the same
//    binary on the same ports with the same environment (a table keeps its instance id) and
//    waits for it to serve. Start(name) after Kill9/Stop does the same without the stop.
//  - StopAll() stops every process still running, front to back (SIGTERM, bounded wait,
//    SIGKILL), and says which did not exit 0 on SIGTERM by themselves (a crash at shutdown:
//    the fixtures' TearDown expects none). The destructor does the same, silently.
//  - Audit(): the wallet's ledger audit (services/wallet/audit.h) over the suite's database
//    plus every pot account whose balance is not zero.
// Thread-safety: Start/Kill9/Stop/Restart and the destructor from one thread (the test's);
// the const accessors and the client factories from any thread while no process is being
// started or stopped.
#ifndef COURTPIECE_TESTS_SYSTEM_SUITE_H_
#define COURTPIECE_TESTS_SYSTEM_SUITE_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/auth/keys.h"
#include "courtpiece/client/v1/client.grpc.pb.h"
#include "courtpiece/storage/testing.h"
#include "services/gateway/testing/http_client.h"
#include "services/gateway/testing/scripted_player.h"
#include "services/wallet/audit.h"

namespace courtpiece::system_test {

struct SuiteOptions {
  int tables = 2;  // table instances, 1..8
  // Private Redis database index, flushed at Start (0..15); -1: COURTPIECE_TEST_SYSTEM_REDIS_DB
  // or 15.
  int redis_db = -1;
  int64_t starting_grant = 5'000;                    // coins a new player gets
  std::string log_level = "warn";                    // COURTPIECE_LOG_LEVEL of every process
  absl::Duration serve_timeout = absl::Seconds(20);  // per process, to answer health
  absl::Duration stop_timeout = absl::Seconds(10);   // SIGTERM to exit, then SIGKILL
  // Extra "K=V" entries for the table instances (e.g. COURTPIECE_TABLE_ADOPT_GRACE=2s).
  std::vector<std::string> table_env;
  // Extra "K=V" entries for the gateway (e.g. COURTPIECE_GATEWAY_TOKEN_SKEW=0s).
  std::vector<std::string> gateway_env;
  // Runs a Postgres and a Redis of the suite's own (deploy/local/postgres.sh --fast and
  // redis.sh, AOF, on free ports in a temporary directory) instead of the shared test servers,
  // so that a test may stop and restart them: the names "postgres" and "redis".
  bool own_servers = false;
};

struct AuditResult {
  wallet::AuditReport ledger;
  std::vector<std::string> nonempty_pots;  // "pot:<table>:<round>=<balance>"
  bool ok() const { return ledger.ok() && nonempty_pots.empty(); }
  std::string ToString() const;
};

class Suite {
 public:
  static absl::StatusOr<std::unique_ptr<Suite>> Start(SuiteOptions options = {});
  ~Suite();
  Suite(const Suite&) = delete;
  Suite& operator=(const Suite&) = delete;

  // --- processes -------------------------------------------------------------------------
  std::vector<std::string> Names() const;
  std::vector<std::string> TableNames() const;                         // "table0", ...
  absl::StatusOr<std::string> Address(const std::string& name) const;  // gRPC HOST:PORT
  bool Running(const std::string& name) const;
  absl::Status Kill9(const std::string& name);
  absl::Status Stop(const std::string& name);
  absl::Status Restart(const std::string& name);
  absl::Status StartProcess(const std::string& name);  // after Kill9 / Stop
  // Every process still running: SIGTERM front to back. INTERNAL naming each that exited
  // with a code other than 0 or died of a signal (one SIGKILLed after stop_timeout is not
  // counted: slow, not broken; it is printed to stderr).
  absl::Status StopAll();

  // --- what clients and tests need ---------------------------------------------------------
  const std::string& gateway_address() const { return gateway_addr_; }  // gRPC
  const std::string& gateway_http_address() const { return http_addr_; }
  uint16_t gateway_http_port() const;
  const auth::SigningKey& signing_key() const { return key_; }
  // A token signed with the suite's key (the lobby's), e.g. an admin's or a short-lived one.
  std::string SignToken(const std::string& player_id, bool admin, absl::Duration ttl) const;
  const std::string& db_url() const { return db_->url(); }
  const std::string& redis_addr() const { return redis_addr_; }
  int redis_db() const { return redis_db_; }
  int64_t starting_grant() const { return options_.starting_grant; }

  // CourtPiece through the gateway (its own channel per call).
  std::unique_ptr<client::v1::CourtPiece::Stub> NewClient() const;
  // HTTP JSON to the gateway (one keep-alive connection).
  std::unique_ptr<gateway::testing::HttpClient> NewHttp() const;
  // Play-stream dialers for a scripted player: gRPC with `access_token` in the metadata, or
  // a WebSocket (the token goes in the player's open: ScriptedPlayerOptions).
  gateway::testing::ScriptedPlayer::Dialer GrpcDialer(const std::string& access_token) const;
  gateway::testing::ScriptedPlayer::Dialer WebSocketDialer() const;

  absl::StatusOr<AuditResult> Audit() const;

 private:
  struct Process {
    std::string binary;  // file name in the bin dir
    std::string address;
    std::vector<std::string> env;
    pid_t pid = -1;
  };

  struct Server {        // a deploy/local script's server (own_servers)
    std::string script;  // "postgres.sh" / "redis.sh"
    int port = 0;
    std::string dir;
    bool running = false;
  };

  explicit Suite(SuiteOptions options);
  absl::Status Init();
  absl::Status StartServers();
  absl::Status RunScript(Server& server, const std::string& command);
  absl::StatusOr<Process*> Find(const std::string& name);
  absl::Status Launch(const std::string& name, Process& p);
  // Exit status; SIGKILLs after stop_timeout (then *killed, when given, is true).
  int WaitBounded(pid_t pid, bool* killed = nullptr);

  const SuiteOptions options_;
  std::unique_ptr<storage::TestDatabase> db_;
  std::string redis_addr_, wallet_addr_, lobby_addr_, moderation_addr_, gateway_addr_, http_addr_,
      web_root_;
  const auth::SigningKey key_;
  int redis_db_ = 15;
  std::map<std::string, Process> processes_;
  std::string servers_dir_;                // own_servers: their data, removed at the end
  std::map<std::string, Server> servers_;  // own_servers: "postgres", "redis"
  std::vector<std::string> order_;         // start order
};

}  // namespace courtpiece::system_test

#endif  // COURTPIECE_TESTS_SYSTEM_SUITE_H_
