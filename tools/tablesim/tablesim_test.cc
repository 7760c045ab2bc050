// courtpiece-tablesim on bad scenarios: the real binary prints one clear line on stderr, nothing
// on stdout, and exits 2 (docs/tablesim.md); ReadScenario refuses the same inputs in-process.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/process_testing.h"
#include "scenario.h"

namespace courtpiece::tablesim {
namespace {

struct RunResult {
  int status = -1;
  std::string out, err;
};

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs the binary on `scenario` (written to a file), collecting stdout, stderr and the status.
RunResult RunBinary(const std::string& scenario) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tablesim_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "s.json", std::ios::binary) << scenario;
  std::string cmd = (common::BinDir() + "/courtpiece-tablesim") + " " + (dir / "s.json").string() +
                    " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  int raw = std::system(cmd.c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = Slurp(dir / "out");
  r.err = Slurp(dir / "err");
  std::filesystem::remove_all(dir);
  return r;
}

std::string WithTable(const std::string& table_fields) {
  return R"({"table": {"table_id": "t", "host": "alice", )" + table_fields +
         R"(, "game": {"game": "classic", "target": 1}}, "commands": [{"at": 0, "type": "join", "player": "bob"}]})";
}

TEST(TablesimBadScenario, BetOfTwentyFour) {
  RunResult r = RunBinary(WithTable(R"("bet": 24, "turn_time_ms": 10000)"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "courtpiece-tablesim: table.bet must be an integer 25..1000 (got 24)\n");
  EXPECT_EQ(r.out, "");
}

TEST(TablesimBadScenario, BetOfOneThousandAndOne) {
  RunResult r = RunBinary(WithTable(R"("bet": 1001, "turn_time_ms": 10000)"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "courtpiece-tablesim: table.bet must be an integer 25..1000 (got 1001)\n");
  EXPECT_EQ(r.out, "");
}

TEST(TablesimBadScenario, TurnTimeOf4999) {
  RunResult r = RunBinary(WithTable(R"("bet": 100, "turn_time_ms": 4999)"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "courtpiece-tablesim: table.turn_time_ms must be an integer 5000..30000 (got 4999)\n");
  EXPECT_EQ(r.out, "");
}

TEST(TablesimBadScenario, TurnTimeOf30001) {
  RunResult r = RunBinary(WithTable(R"("bet": 100, "turn_time_ms": 30001)"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "courtpiece-tablesim: table.turn_time_ms must be an integer 5000..30000 (got 30001)\n");
  EXPECT_EQ(r.out, "");
}

TEST(TablesimBadScenario, ABotLevelOtherThanTheThreeNames) {
  RunResult r = RunBinary(WithTable(R"("bet": 100, "bot_level": "hard")"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "courtpiece-tablesim: table.bot_level must be easy, normal or strong\n");
  EXPECT_EQ(r.out, "");
  r = RunBinary(WithTable(R"("bet": 100, "bot_level": 2)"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("table.bot_level"), std::string::npos) << r.err;
  for (const char* level : {"easy", "normal", "strong"}) {
    r = RunBinary(WithTable(absl::StrCat(R"("bet": 100, "bot_level": ")", level, "\"")));
    EXPECT_EQ(r.status, 0) << level << r.err;
  }
}

TEST(TablesimBadScenario, TheRangesEdgesRun) {
  for (std::string fields :
       {R"("bet": 25, "turn_time_ms": 5000)", R"("bet": 1000, "turn_time_ms": 30000)"}) {
    RunResult r = RunBinary(WithTable(fields));
    EXPECT_EQ(r.status, 0) << fields << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("\"kind\":\"end\""), std::string::npos);
  }
}

TEST(TablesimBadScenario, NotJsonAndNotAFile) {
  RunResult r = RunBinary("{\"table\": ");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "courtpiece-tablesim: the scenario is not a JSON object\n");
  int raw = std::system(
      ((common::BinDir() + "/courtpiece-tablesim") + " /nonexistent/x.json 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(raw), 2);
}

// In-process: every kind of bad field is a message naming it, never an abort.
std::string Err(const std::string& text) {
  absl::StatusOr<Scenario> sc = ReadScenario(text);
  if (sc.ok()) return "OK";
  EXPECT_EQ(sc.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(sc.status().message());
}

TEST(ReadScenario, NamesTheBadField) {
  EXPECT_EQ(Err("[]"), "the scenario is not a JSON object");
  EXPECT_EQ(Err(R"({"table": {"bet": "100"}})"),
            "table.bet must be an integer 25..1000 (got \"100\")");
  EXPECT_EQ(Err(R"({"table": {"bet": 100.5}})"),
            "table.bet must be an integer 25..1000 (got 100.5)");
  EXPECT_EQ(Err(R"({"table": {"bet": 18446744073709551615}})"),
            "table.bet must be an integer 25..1000 (got 18446744073709551615)");
  EXPECT_EQ(Err(R"({"table": {"host": ""}})"),
            "table.host must be a non-empty string of at most 256 bytes (got \"\")");
  EXPECT_EQ(Err(R"({"table": {"bets": 100}})"), "table: unknown field \"bets\"");
  EXPECT_EQ(Err(R"({"engine": "dice"})"), "engine must be \"rules\" or \"fake\" (got \"dice\")");
  EXPECT_EQ(Err(R"({"table": {"game": {"game": "chess"}}})").substr(0, 12), "table.game: ");
  EXPECT_EQ(Err(R"({"balances": {"bob": -1}})"),
            "balances.bob must be an integer 0..1000000000000 (got -1)");
  EXPECT_EQ(Err(R"({"wallet": [{"ok": 1}]})"), "wallet[0].ok must be true or false (got 1)");
  EXPECT_EQ(Err(R"({"commands": [{"at": 5, "type": "leave"}, {"at": 4, "type": "leave"}]})"),
            "commands[1].at: commands must be in time order (4 < 5)");
  EXPECT_EQ(Err(R"({"commands": [{"at": 86400001, "type": "leave"}]})"),
            "commands[0].at must be an integer 0..86400000 (got 86400001)");
  EXPECT_EQ(Err(R"({"commands": [{"type": "dance"}]})"),
            "commands[0].type: unknown command \"dance\"");
  EXPECT_EQ(Err(R"({"commands": [{"type": "move"}]})"),
            "commands[0].type: unknown command \"move\"");
  EXPECT_EQ(Err(R"({"commands": [{"player": "x"}]})"), "commands[0].type is required");
  EXPECT_EQ(Err(R"({"commands": [{"type": "remove_bot", "seat": 4}]})"),
            "commands[0].seat must be an integer -1..3 (got 4)");
  EXPECT_EQ(Err(R"({"commands": [{"type": "vote", "yes": "no"}]})"),
            "commands[0].yes must be true or false (got \"no\")");
  EXPECT_EQ(Err(R"({"run_until_ms": -1})"), "run_until_ms must be an integer 0..86400000 (got -1)");
  EXPECT_EQ(Err(R"({"engine": "fake", "table": {"fake_options": "target=0"}})").substr(0, 20),
            "table.fake_options: ");
  EXPECT_EQ(Err(R"({"table": {"bet": 25, "turn_time_ms": 5000}})"), "OK");
}

TEST(ReadScenario, TheExamplesAreGood) {
  for (const auto& e :
       std::filesystem::directory_iterator(common::SourceDir() + "/tools/tablesim/examples")) {
    EXPECT_EQ(Err(Slurp(e.path())), "OK") << e.path();
  }
}

}  // namespace
}  // namespace courtpiece::tablesim
