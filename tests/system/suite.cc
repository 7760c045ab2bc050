#include "tests/system/suite.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/pg_pool.h"
#include "courtpiece/storage/redis_client.h"
#include "grpcpp/grpcpp.h"

namespace courtpiece::system_test {
namespace {

std::string LoopbackAddress() { return absl::StrCat("127.0.0.1:", common::FreeLoopbackPort()); }

int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::string AuditResult::ToString() const {
  return absl::StrCat("accounts=", ledger.accounts, " transfers=", ledger.transfers,
                      " sum_of_balances=", ledger.sum_of_balances, " house=", ledger.house_balance,
                      " problems=[", absl::StrJoin(ledger.problems, "; "), "] nonempty_pots=[",
                      absl::StrJoin(nonempty_pots, ", "), "]");
}

Suite::Suite(SuiteOptions options)
    : options_(std::move(options)), key_(auth::SigningKey::Generate("system")) {
  redis_db_ = options_.redis_db;
}

absl::StatusOr<std::unique_ptr<Suite>> Suite::Start(SuiteOptions options) {
  if (options.tables < 1 || options.tables > 8) {
    return absl::InvalidArgumentError("SuiteOptions.tables must be 1..8");
  }
  if (options.redis_db < 0) {
    const char* env = std::getenv("COURTPIECE_TEST_SYSTEM_REDIS_DB");
    options.redis_db = env == nullptr ? 16 : std::atoi(env);
  }
  if (options.redis_db < 0 || options.redis_db > 31) {
    return absl::InvalidArgumentError(
        "the system tests' Redis database must be 0..31 (deploy/local/redis.sh starts 32)");
  }
  // Ports are picked before the processes bind them (common::FreeLoopbackPort), so a test
  // running beside this one may take one first: Launch then says UNAVAILABLE, and the whole
  // suite starts again on new ports (at most 3 times).
  absl::Status s;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::unique_ptr<Suite> suite(new Suite(options));
    s = suite->Init();
    if (s.ok()) return suite;
    if (s.code() != absl::StatusCode::kUnavailable) return s;
  }
  return s;
}

absl::Status Suite::RunScript(Server& server, const std::string& command) {
  const std::string line =
      absl::StrCat(::courtpiece::common::SourceDir(), "/deploy/local/", server.script, " ", command,
                   " --port ", server.port, " --dir ", server.dir,
                   server.script == "postgres.sh" && command == "start" ? " --fast" : "", " > ",
                   server.dir, ".", command, ".log 2>&1");
  const int status = std::system(line.c_str());
  if (status != 0) {
    return absl::InternalError(absl::StrCat(line, ": exit status ", status));
  }
  server.running = command == "start";
  return absl::OkStatus();
}

absl::Status Suite::StartServers() {
  servers_dir_ = absl::StrCat(::getenv("TMPDIR") != nullptr ? ::getenv("TMPDIR") : "/tmp",
                              "/courtpiece_system_servers_", getpid(), "_", redis_db_);
  std::system(absl::StrCat("rm -rf ", servers_dir_, " && mkdir -p ", servers_dir_).c_str());
  servers_["postgres"] = {
      .script = "postgres.sh", .port = common::FreeLoopbackPort(), .dir = servers_dir_ + "/pg"};
  servers_["redis"] = {
      .script = "redis.sh", .port = common::FreeLoopbackPort(), .dir = servers_dir_ + "/redis"};
  for (auto& [name, server] : servers_) {
    absl::Status s = RunScript(server, "start");
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Suite::Init() {
  std::string pg_admin_url;  // "": the shared test server's (COURTPIECE_TEST_PG_URL)
  if (options_.own_servers) {
    absl::Status s = StartServers();
    if (!s.ok()) return s;
    redis_addr_ = absl::StrCat("127.0.0.1:", servers_["redis"].port);
    pg_admin_url =
        absl::StrCat("postgresql://postgres@127.0.0.1:", servers_["postgres"].port, "/postgres");
  } else {
    absl::StatusOr<std::string> redis = storage::RequiredTestEnv(storage::kTestRedisAddrEnv);
    if (!redis.ok()) return redis.status();
    redis_addr_ = *redis;
  }
  absl::StatusOr<storage::RedisOptions> ro = storage::ParseRedisAddr(redis_addr_);
  if (!ro.ok()) return ro.status();
  ro->db = redis_db_;
  {
    storage::RedisClient flush(*ro);
    absl::Status flushed = flush.Command({"FLUSHDB"}).status();
    if (!flushed.ok()) return flushed;
  }
  storage::TestDatabaseOptions db_options{
      .migrations = {
          {"wallet", ::courtpiece::common::SourceDir() + "/services/wallet/migrations"},
          {"lobby", ::courtpiece::common::SourceDir() + "/services/lobby/migrations"},
          {"moderation", ::courtpiece::common::SourceDir() + "/services/moderation/migrations"}}};
  absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db =
      pg_admin_url.empty() ? storage::TestDatabase::Create(std::move(db_options))
                           : storage::TestDatabase::CreateOn(pg_admin_url, std::move(db_options));
  if (!db.ok()) return db.status();
  db_ = *std::move(db);

  // A web root with an index page (the gateway serves the web client from it).
  web_root_ = absl::StrCat(::getenv("TMPDIR") != nullptr ? ::getenv("TMPDIR") : "/tmp",
                           "/courtpiece_system_web_", getpid(), "_", redis_db_);
  std::system(absl::StrCat("mkdir -p ", web_root_, "/assets").c_str());
  std::ofstream(web_root_ + "/index.html") << "<!doctype html><title>Court Piece</title>";

  wallet_addr_ = LoopbackAddress();
  lobby_addr_ = LoopbackAddress();
  moderation_addr_ = LoopbackAddress();
  gateway_addr_ = LoopbackAddress();
  http_addr_ = LoopbackAddress();
  const std::string log = "COURTPIECE_LOG_LEVEL=" + options_.log_level;
  const std::string redis_env = "COURTPIECE_REDIS_ADDR=" + redis_addr_;

  processes_["wallet"] = {
      .binary = "courtpiece-wallet",
      .address = wallet_addr_,
      .env = {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_WALLET_ADDR=" + wallet_addr_,
              "COURTPIECE_WALLET_METRICS_ADDR=off",
              absl::StrCat("COURTPIECE_WALLET_STARTING_GRANT=", options_.starting_grant),
              "COURTPIECE_WALLET_HOUSE_SHARDS=2", "COURTPIECE_WALLET_PG_POOL_SIZE=4", log}};
  order_.push_back("wallet");
  processes_["moderation"] = {
      .binary = "courtpiece-moderation",
      .address = moderation_addr_,
      .env = {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_MODERATION_ADDR=" + moderation_addr_,
              "COURTPIECE_MODERATION_METRICS_ADDR=off", redis_env,
              absl::StrCat("COURTPIECE_MODERATION_REDIS_DB=", redis_db_),
              "COURTPIECE_MODERATION_LOBBY_ADDR=" + lobby_addr_,
              "COURTPIECE_MODERATION_VERIFY_KEYS=" + key_.PublicText(),
              "COURTPIECE_MODERATION_PG_POOL_SIZE=4", log}};
  order_.push_back("moderation");
  for (int i = 0; i < options_.tables; ++i) {
    const std::string addr = LoopbackAddress();
    Process p{
        .binary = "courtpiece-table",
        .address = addr,
        .env = {redis_env, absl::StrCat("COURTPIECE_TABLE_REDIS_DB=", redis_db_),
                "COURTPIECE_TABLE_ADDR=" + addr,
                absl::StrCat("COURTPIECE_TABLE_INSTANCE_ID=system-", getpid(), "-", i),
                "COURTPIECE_TABLE_METRICS_ADDR=off", "COURTPIECE_TABLE_WALLET_ADDR=" + wallet_addr_,
                "COURTPIECE_TABLE_LOBBY_ADDR=" + lobby_addr_,
                "COURTPIECE_TABLE_MODERATION_ADDR=" + moderation_addr_,
                "COURTPIECE_TABLE_WORKERS=2", "COURTPIECE_TABLE_HEARTBEAT_TTL=1s",
                "COURTPIECE_TABLE_RPC_TIMEOUT=1s", "COURTPIECE_TABLE_COMMANDS_PER_SECOND=200",
                "COURTPIECE_TABLE_COMMANDS_BURST=200", log}};
    for (const std::string& e : options_.table_env) p.env.push_back(e);
    const std::string name = absl::StrCat("table", i);
    processes_[name] = std::move(p);
    order_.push_back(name);
  }
  processes_["lobby"] = {
      .binary = "courtpiece-lobby",
      .address = lobby_addr_,
      .env = {"COURTPIECE_PG_URL=" + db_->url(), "COURTPIECE_LOBBY_ADDR=" + lobby_addr_,
              "COURTPIECE_LOBBY_METRICS_ADDR=off", "COURTPIECE_LOBBY_WALLET_ADDR=" + wallet_addr_,
              redis_env, absl::StrCat("COURTPIECE_LOBBY_REDIS_DB=", redis_db_),
              "COURTPIECE_LOBBY_INVITE_BASE_URL=http://" + http_addr_,
              "COURTPIECE_LOBBY_SIGNING_KEY=" + key_.SeedText(), "COURTPIECE_LOBBY_PG_POOL_SIZE=4",
              "COURTPIECE_LOBBY_OPEN_TABLES_CACHE=0s", log}};
  order_.push_back("lobby");
  processes_["gateway"] = {
      .binary = "courtpiece-gateway",
      .address = gateway_addr_,
      .env = {
          "COURTPIECE_GATEWAY_ADDR=" + gateway_addr_, "COURTPIECE_GATEWAY_HTTP_ADDR=" + http_addr_,
          "COURTPIECE_GATEWAY_METRICS_ADDR=off", "COURTPIECE_GATEWAY_LOBBY_ADDR=" + lobby_addr_,
          "COURTPIECE_GATEWAY_MODERATION_ADDR=" + moderation_addr_, redis_env,
          absl::StrCat("COURTPIECE_GATEWAY_REDIS_DB=", redis_db_),
          "COURTPIECE_GATEWAY_VERIFY_KEYS=" + key_.PublicText(),
          "COURTPIECE_GATEWAY_WEB_ROOT=" + web_root_, "COURTPIECE_GATEWAY_COMMANDS_PER_SECOND=200",
          "COURTPIECE_GATEWAY_COMMANDS_BURST=200", log}};
  for (const std::string& e : options_.gateway_env) processes_["gateway"].env.push_back(e);
  order_.push_back("gateway");

  for (const std::string& name : order_) {
    absl::Status s = Launch(name, processes_[name]);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Suite::StopAll() {
  std::vector<std::string> unclean;
  // Front to back: the gateway first, so no client traffic reaches a stopped service.
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    Process& p = processes_[*it];
    if (p.pid <= 0) continue;
    kill(p.pid, SIGTERM);
    bool killed = false;
    const int code = WaitBounded(p.pid, &killed);
    p.pid = -1;
    if (killed) {
      std::fprintf(stderr, "suite: %s did not exit within %s of SIGTERM: SIGKILLed\n", it->c_str(),
                   absl::FormatDuration(options_.stop_timeout).c_str());
    } else if (code != 0) {
      unclean.push_back(absl::StrCat(*it, " exited ", code));
    }
  }
  if (unclean.empty()) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("on SIGTERM: ", absl::StrJoin(unclean, ", "), " (see its log)"));
}

Suite::~Suite() {
  StopAll().IgnoreError();
  if (!web_root_.empty()) std::system(absl::StrCat("rm -rf ", web_root_).c_str());
  if (servers_.empty()) return;
  // The database goes while its server still runs (it is dropped over a connection).
  if (servers_["postgres"].running) db_.reset();
  for (auto& [name, server] : servers_) {
    if (server.running) RunScript(server, "stop").IgnoreError();
  }
  std::system(absl::StrCat("rm -rf ", servers_dir_).c_str());
}

absl::Status Suite::Launch(const std::string& name, Process& p) {
  p.pid = common::Spawn({common::BinDir() + "/" + p.binary}, p.env);
  if (p.pid <= 0) {
    return absl::InternalError(absl::StrCat("cannot start ", common::BinDir(), "/", p.binary));
  }
  if (!common::WaitServing(p.address, options_.serve_timeout)) {
    return absl::DeadlineExceededError(absl::StrCat(name, " (", p.binary, " at ", p.address,
                                                    ") did not serve within ",
                                                    absl::FormatDuration(options_.serve_timeout)));
  }
  // What answered must be the process just started: another test's server that took the
  // port first answers health too (seen: the lobby could not listen, and the calls meant
  // for it got UNIMPLEMENTED from another test's service).
  int port = 0;
  if (!absl::SimpleAtoi(p.address.substr(p.address.rfind(':') + 1), &port) ||
      !common::ListensOn(p.pid, port)) {
    kill(p.pid, SIGKILL);
    common::WaitExit(p.pid);
    p.pid = -1;
    return absl::UnavailableError(absl::StrCat(name, " (", p.binary, ") does not listen on ",
                                               p.address, ": another process took the port"));
  }
  return absl::OkStatus();
}

int Suite::WaitBounded(pid_t pid, bool* killed) {
  const absl::Time deadline = absl::Now() + options_.stop_timeout;
  if (killed != nullptr) *killed = false;
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return ExitCode(status);
    if (r < 0) return -1;
    if (absl::Now() >= deadline) {
      kill(pid, SIGKILL);
      const int code = common::WaitExit(pid);
      // Not when it died of something else just before the SIGKILL (a crash is reported).
      if (killed != nullptr) *killed = code == 128 + SIGKILL;
      return code;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

absl::StatusOr<Suite::Process*> Suite::Find(const std::string& name) {
  auto it = processes_.find(name);
  if (it == processes_.end()) return absl::InvalidArgumentError("no process named " + name);
  return &it->second;
}

std::vector<std::string> Suite::Names() const { return order_; }

std::vector<std::string> Suite::TableNames() const {
  std::vector<std::string> out;
  for (int i = 0; i < options_.tables; ++i) out.push_back(absl::StrCat("table", i));
  return out;
}

absl::StatusOr<std::string> Suite::Address(const std::string& name) const {
  auto it = processes_.find(name);
  if (it == processes_.end()) return absl::InvalidArgumentError("no process named " + name);
  return it->second.address;
}

bool Suite::Running(const std::string& name) const {
  if (auto server = servers_.find(name); server != servers_.end()) return server->second.running;
  auto it = processes_.find(name);
  return it != processes_.end() && it->second.pid > 0;
}

absl::Status Suite::Kill9(const std::string& name) {
  if (servers_.count(name) > 0) {
    return absl::InvalidArgumentError(name + ": the suite's own servers are stopped gracefully");
  }
  absl::StatusOr<Process*> p = Find(name);
  if (!p.ok()) return p.status();
  if ((*p)->pid <= 0) return absl::FailedPreconditionError(name + " is not running");
  kill((*p)->pid, SIGKILL);
  const int code = common::WaitExit((*p)->pid);
  (*p)->pid = -1;
  if (code != 128 + SIGKILL) {
    return absl::InternalError(absl::StrCat(name, " exited ", code, " before the SIGKILL"));
  }
  return absl::OkStatus();
}

absl::Status Suite::Stop(const std::string& name) {
  if (auto server = servers_.find(name); server != servers_.end()) {
    if (!server->second.running) return absl::FailedPreconditionError(name + " is not running");
    return RunScript(server->second, "stop");
  }
  absl::StatusOr<Process*> p = Find(name);
  if (!p.ok()) return p.status();
  if ((*p)->pid <= 0) return absl::FailedPreconditionError(name + " is not running");
  kill((*p)->pid, SIGTERM);
  const int code = WaitBounded((*p)->pid);
  (*p)->pid = -1;
  if (code != 0) return absl::InternalError(absl::StrCat(name, " exited ", code, " on SIGTERM"));
  return absl::OkStatus();
}

absl::Status Suite::StartProcess(const std::string& name) {
  if (auto server = servers_.find(name); server != servers_.end()) {
    if (server->second.running) return absl::FailedPreconditionError(name + " is running");
    return RunScript(server->second, "start");
  }
  absl::StatusOr<Process*> p = Find(name);
  if (!p.ok()) return p.status();
  if ((*p)->pid > 0) return absl::FailedPreconditionError(name + " is running");
  return Launch(name, **p);
}

absl::Status Suite::Restart(const std::string& name) {
  if (Running(name)) {
    absl::Status s = Stop(name);
    if (!s.ok()) return s;
  }
  return StartProcess(name);
}

uint16_t Suite::gateway_http_port() const {
  return static_cast<uint16_t>(std::stoi(http_addr_.substr(http_addr_.rfind(':') + 1)));
}

std::string Suite::SignToken(const std::string& player_id, bool admin, absl::Duration ttl) const {
  const auth::TokenSigner signer(key_, RealClock::Instance());
  return signer.Sign(player_id, admin ? auth::Role::kAdmin : auth::Role::kPlayer, ttl);
}

std::unique_ptr<client::v1::CourtPiece::Stub> Suite::NewClient() const {
  return client::v1::CourtPiece::NewStub(
      grpc::CreateChannel(gateway_addr_, grpc::InsecureChannelCredentials()));
}

std::unique_ptr<gateway::testing::HttpClient> Suite::NewHttp() const {
  return std::make_unique<gateway::testing::HttpClient>("127.0.0.1", gateway_http_port());
}

gateway::testing::ScriptedPlayer::Dialer Suite::GrpcDialer(const std::string& access_token) const {
  // A fresh channel per dial, as the WebSocket dialer makes a fresh connection: a shared
  // channel that failed to connect while the gateway restarted stays in gRPC's reconnect
  // backoff (up to 120 s) and answers UNAVAILABLE at once meanwhile.
  return [address = gateway_addr_, authorization = "Bearer " + access_token]()
             -> absl::StatusOr<std::unique_ptr<gateway::testing::PlayTransport>> {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    return gateway::testing::GrpcDialer(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args),
        authorization)();
  };
}

gateway::testing::ScriptedPlayer::Dialer Suite::WebSocketDialer() const {
  gateway::testing::WsOptions options;
  options.port = gateway_http_port();
  return gateway::testing::WebSocketDialer(options);
}

absl::StatusOr<AuditResult> Suite::Audit() const {
  storage::PgPool pool({.url = db_->url(),
                        .size_max = 1,
                        .statement_timeout_ms = 0,
                        .application_name = "courtpiece-system-audit"});
  AuditResult out;
  absl::StatusOr<wallet::AuditReport> report = wallet::AuditLedger(pool);
  if (!report.ok()) return report.status();
  out.ledger = *std::move(report);
  absl::Status s = pool.Run([&](storage::PgTransaction& tx) -> absl::Status {
    absl::StatusOr<storage::PgResult> r = tx.Exec(
        "SELECT id, balance FROM wallet.accounts WHERE kind = 'pot' AND balance <> 0 ORDER BY id");
    if (!r.ok()) return r.status();
    for (const storage::PgRow& row : r->rows()) {
      absl::StatusOr<std::string> id = row.String(0);
      absl::StatusOr<int64_t> balance = row.Int64(1);
      if (!id.ok()) return id.status();
      if (!balance.ok()) return balance.status();
      out.nonempty_pots.push_back(absl::StrCat(*id, "=", *balance));
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

}  // namespace courtpiece::system_test
