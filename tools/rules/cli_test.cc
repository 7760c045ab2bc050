// Runs the real courtpiece-rules binary on libs/rules/testdata/*.expected.json cases and on
// selfplay/deal, checking exact outputs (error messages aside) and exit codes.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "courtpiece/common/process_testing.h"
#include "courtpiece/common/test_scale.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "replay.h"

namespace {

using ::courtpiece::ScaledIterations;
using Json = nlohmann::json;
namespace fs = std::filesystem;

struct ExecResult {
  std::string out;
  int exit_code;
};

ExecResult Exec(const std::string& cmd) {
  ExecResult r;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

void StripMessages(Json& j) {
  if (j.is_object()) {
    if (j.contains("error") && j["error"].is_object()) j["error"].erase("message");
    for (auto& [k, v] : j.items()) StripMessages(v);
  }
}

const std::string kBin = courtpiece::common::BinDir() + "/courtpiece-rules";

// A scratch file of this process: the ctest entries of this binary run side by side (and
// other checkouts may run it at the same time), so names carry the process id. Every name
// handed out is removed when the test program ends (ScratchFiles below), whatever failed.
std::vector<std::string>& ScratchPaths() {
  static std::vector<std::string> paths;
  return paths;
}
std::string TempFile(const std::string& name) {
  std::string path = ::testing::TempDir() + "/cli_test_" + std::to_string(getpid()) + "_" + name;
  if (std::find(ScratchPaths().begin(), ScratchPaths().end(), path) == ScratchPaths().end()) {
    ScratchPaths().push_back(path);
  }
  return path;
}
class ScratchFiles : public ::testing::Environment {
 public:
  void TearDown() override {
    for (const std::string& path : ScratchPaths()) {
      std::error_code ignored;
      fs::remove(path, ignored);
    }
  }
};
const auto* const kScratchFiles = ::testing::AddGlobalTestEnvironment(new ScratchFiles);
const std::string kData = courtpiece::common::SourceDir() + "/libs/rules/testdata";

TEST(Cli, TestdataCases) {
  int cases = 0;
  for (const auto& e : fs::directory_iterator(kData)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 14 || name.substr(name.size() - 14) != ".expected.json") continue;
    std::ifstream in(e.path());
    Json want = Json::parse(in);
    std::string input = want.contains("input") ? want["input"].get<std::string>()
                                               : name.substr(0, name.size() - 14) + ".json";
    std::string args;
    for (const auto& a : want["args"]) args += " " + a.get<std::string>();
    ExecResult r = Exec(kBin + args + " < " + kData + "/" + input);
    EXPECT_EQ(r.exit_code, want["exit"].get<int>()) << name;
    Json got = Json::parse(r.out, nullptr, false);
    ASSERT_FALSE(got.is_discarded()) << name << ": " << r.out;
    Json expected = want["output"];
    StripMessages(got);
    StripMessages(expected);
    EXPECT_EQ(got, expected) << name << "\n got: " << got.dump() << "\nwant: " << expected.dump();
    ++cases;
  }
  EXPECT_GE(cases, 10);
}

TEST(Cli, NotJsonIsBadInput) {
  ExecResult r = Exec("echo '{nope' | " + kBin + " replay");
  EXPECT_EQ(r.exit_code, 2);
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["error"]["code"], "bad_input");
  EXPECT_TRUE(j["error"]["round"].is_null());
  EXPECT_TRUE(j["error"]["move"].is_null());
}

// Runs selfplay with --jsonl and replays the file's lines one by one (each line is a
// one-round game): every one is ok:true with a result. `replays` lines at most.
void ExpectSelfplayLinesReplay(const std::string& game, const std::string& flags, int rounds,
                               int replays) {
  const std::string file = TempFile("selfplay_" + game + ".jsonl");
  ExecResult r = Exec(kBin + " selfplay --rules '{\"game\":\"" + game + "\"}' --rounds " +
                      std::to_string(rounds) + " " + flags + " --jsonl " + file);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Json s = Json::parse(r.out);
  EXPECT_EQ(s["rounds"], rounds);
  long long kinds = 0;
  for (auto& [k, v] : s["kinds"].items()) kinds += v.get<long long>();
  EXPECT_EQ(kinds, rounds);
  std::ifstream in(file);
  std::string line;
  int n = 0;
  while (n < replays && std::getline(in, line)) {
    const std::string one = TempFile("one.json");
    std::ofstream(one) << line;
    ExecResult rr = Exec(kBin + " replay < " + one);
    ASSERT_EQ(rr.exit_code, 0) << line << "\n" << rr.out;
    Json j = Json::parse(rr.out);
    ASSERT_TRUE(j["ok"].get<bool>()) << line;
    ASSERT_FALSE(j["rounds"][0]["result"].is_null()) << line;
    ++n;
  }
  EXPECT_EQ(n, replays) << game;
}

// Random policy: 300 rounds per game type, a sample of 20 replayed (each is one process).
// The sanitizer pass replays a tenth of the sample (ScaledIterations: an ASan process
// start is most of a replay's cost there); the first tree replays all of it.
TEST(Cli, SelfplayRoundsReplayCleanly) {
  for (std::string game : {"classic", "piles", "hidden", "kaat", "stack"}) {
    ASSERT_NO_FATAL_FAILURE(ExpectSelfplayLinesReplay(game, "--seed " + std::string(64, '7'), 300,
                                                      ScaledIterations(20)));
  }
}

// --policy bot: 200 rounds per game type, every line replayed. One test per game type
// (BotPolicy/CliBot.RoundsReplayCleanly/<game>): tools/rules/CMakeLists.txt registers each
// as its own ctest entry, so they run side by side (a thousand replay processes in all;
// the sanitizer pass plays and replays a tenth, ScaledIterations).
class CliBot : public ::testing::TestWithParam<std::string> {};

TEST_P(CliBot, RoundsReplayCleanly) {
  const int rounds = ScaledIterations(200);
  ASSERT_NO_FATAL_FAILURE(
      ExpectSelfplayLinesReplay(GetParam(), "--policy bot --seed b07", rounds, rounds));
}

INSTANTIATE_TEST_SUITE_P(BotPolicy, CliBot,
                         ::testing::Values("classic", "piles", "hidden", "kaat", "stack"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// The rounds are split across threads, but the summary and the --jsonl file are the same
// for any thread count (each round stands alone; lines are written in round order, batch
// after batch: 10,001 rounds are two batches of --jsonl).
TEST(Cli, SelfplaySameOutputForAnyThreadCount) {
  const std::string base =
      kBin + " selfplay --rules '{\"game\":\"hidden\"}' --rounds 10001 --seed 5eed";
  std::string jsonl[2];
  Json summary[2];
  const int threads[2] = {1, 3};
  for (int k = 0; k < 2; ++k) {
    const std::string file = TempFile("selfplay_threads_" + std::to_string(threads[k]) + ".jsonl");
    ExecResult r = Exec(base + " --threads " + std::to_string(threads[k]) + " --jsonl " + file);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    summary[k] = Json::parse(r.out);
    std::ifstream in(file);
    jsonl[k].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_EQ(summary[0]["rounds"], 10001);
  EXPECT_EQ(summary[0]["kinds"], summary[1]["kinds"]);
  EXPECT_EQ(summary[0]["counts"], summary[1]["counts"]);
  EXPECT_EQ(std::count(jsonl[0].begin(), jsonl[0].end(), '\n'), 10001);  // two batches
  EXPECT_EQ(jsonl[0], jsonl[1]);
}

TEST(Cli, SelfplayRejectsBadThreadCount) {
  for (const std::string bad : {"0", "257", "x", "3x", "-1", "+2"}) {
    ExecResult r = Exec(
        kBin + " selfplay --rules '{\"game\":\"piles\"}' --rounds 5 --seed 1 --threads " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    Json j = Json::parse(r.out);
    EXPECT_EQ(j["error"]["code"], "bad_input") << bad;
    EXPECT_EQ(j["error"]["message"], "--threads must be 1..256") << bad;
  }
}

TEST(Cli, SelfplayRejectsBadRoundCount) {
  for (const std::string bad : {"0", "x", "3x", "-5", "1e3", "1000000000000000000000"}) {
    ExecResult r = Exec(kBin + " selfplay --rules '{\"game\":\"piles\"}' --seed 1 --rounds " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    Json j = Json::parse(r.out);
    EXPECT_EQ(j["error"]["code"], "bad_input") << bad;
    EXPECT_EQ(j["error"]["message"], "--rounds must be a positive integer") << bad;
  }
}

// Bad replay arguments are answered in JSON on stdout like any refused input (REPLAY.md:
// one JSON document on stdout), before stdin is read.
TEST(Cli, ReplayBadArgumentsAreJsonBadInput) {
  for (const std::string args : {"--view 4", "--view x", "--view", "--seat 1", "--view 1 2"}) {
    ExecResult r = Exec(kBin + " replay " + args + " < /dev/null");
    EXPECT_EQ(r.exit_code, 2) << args;
    Json j = Json::parse(r.out);
    EXPECT_EQ(j["ok"], false) << args;
    EXPECT_EQ(j["error"]["code"], "bad_input") << args;
    EXPECT_TRUE(j["error"]["round"].is_null()) << args;
    EXPECT_TRUE(j["error"]["move"].is_null()) << args;
  }
}

// Options of another game type are refused, never ignored: the help says so, and both
// replay and selfplay answer bad_rules naming the option.
TEST(Cli, HelpSaysOptionsOfAnotherGameTypeAreRefused) {
  ExecResult h = Exec(kBin + " --help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("An option of another\ngame type is refused with bad_rules naming the "
                       "option, even with its default value"),
            std::string::npos)
      << h.out;
  EXPECT_NE(h.out.find("option 'pile' does not apply to game 'classic'"), std::string::npos);
  EXPECT_NE(h.out.find("courtpiece-rules replay [--view SEAT]"), std::string::npos);
  EXPECT_NE(h.out.find("--deal-stats on"), std::string::npos);
  EXPECT_EQ(Exec(kBin + " -h").out, h.out);
  // No command: the same text on stderr, exit 2, nothing on stdout.
  ExecResult none = Exec(kBin + " 2>/dev/null");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.out, "");

  const std::string file = TempFile("pile_in_classic.json");
  std::ofstream(file) << R"({"rules": {"game": "classic", "pile": "3-2-2"}, "first_dealer": 0,
                             "rounds": []})";
  ExecResult r = Exec(kBin + " replay < " + file);
  EXPECT_EQ(r.exit_code, 2);
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["error"]["code"], "bad_rules");
  EXPECT_EQ(j["error"]["message"], "option 'pile' does not apply to game 'classic'");
  EXPECT_TRUE(j["error"]["round"].is_null());
  EXPECT_EQ(j["rounds"], Json::array());
  const std::pair<std::string, std::string> refused[] = {
      {R"({"game":"classic","pile":"5-3-3"})", "option 'pile' does not apply to game 'classic'"},
      {R"({"game":"stack","six_point":false})",
       "option 'six_point' does not apply to game 'stack'"},
      {R"({"game":"piles","court_bonus":"court"})",
       "option 'court_bonus' does not apply to game 'piles'"}};
  for (const auto& [rules, message] : refused) {
    ExecResult s = Exec(kBin + " selfplay --rules '" + rules + "' --rounds 5 --seed 1 2>/dev/null");
    EXPECT_EQ(s.exit_code, 2) << rules;
    Json sj = Json::parse(s.out);
    EXPECT_EQ(sj["error"]["code"], "bad_rules") << rules;
    EXPECT_EQ(sj["error"]["message"], message) << rules;
  }
}

// --deal-stats on adds the reshuffles per checked round; it is the same for any thread
// count, absent without the flag, and no round is checked without deal_fairness.
TEST(Cli, SelfplayDealStats) {
  const std::string base =
      kBin + " selfplay --rules '{\"game\":\"hidden\"}' --rounds 3000 --seed 5eed";
  Json plain = Json::parse(Exec(base + " --threads 1").out);
  EXPECT_FALSE(plain.contains("deal_stats"));
  Json one = Json::parse(Exec(base + " --threads 1 --deal-stats on").out);
  Json three = Json::parse(Exec(base + " --threads 3 --deal-stats on").out);
  ASSERT_TRUE(one.contains("deal_stats")) << one.dump();
  EXPECT_EQ(one["deal_stats"], three["deal_stats"]);
  EXPECT_EQ(one["counts"], plain["counts"]);  // measuring does not change a round
  const Json& d = one["deal_stats"];
  EXPECT_GT(d["checked_rounds"].get<long long>(), 0);
  EXPECT_LE(d["checked_rounds"].get<long long>(), 3000);
  EXPECT_LE(d["reshuffled_rounds"].get<long long>(), d["checked_rounds"].get<long long>());
  EXPECT_DOUBLE_EQ(d["mean"].get<double>(),
                   d["reshuffles"].get<double>() / d["checked_rounds"].get<double>());
  Json off =
      Json::parse(Exec(kBin + R"( selfplay --rules '{"game":"piles","deal_fairness":false}')" +
                       " --rounds 300 --seed 1 --deal-stats on")
                      .out);
  EXPECT_EQ(off["deal_stats"]["checked_rounds"], 0);
  EXPECT_EQ(off["deal_stats"]["max"], 0);
  ExecResult bad = Exec(base + " --deal-stats yes 2>/dev/null");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(Json::parse(bad.out)["error"]["message"], "--deal-stats must be on or off");
}

// 10 checked rounds: 5 with no reshuffle, 3 with one, 1 with two, 1 with four.
TEST(Cli, DealStatsPercentilesAreNearestRank) {
  const auto d = courtpiece::rules_cli::DealStatsJson({5, 3, 1, 0, 1});
  EXPECT_EQ(d["checked_rounds"], 10);
  EXPECT_EQ(d["reshuffled_rounds"], 5);
  EXPECT_EQ(d["reshuffles"], 3 + 2 + 4);
  EXPECT_DOUBLE_EQ(d["mean"].get<double>(), 0.9);
  EXPECT_EQ(d["p50"], 0);  // the 5th of 10 has none
  EXPECT_EQ(d["p90"], 2);  // the 9th has two
  EXPECT_EQ(d["p99"], 4);  // the 10th (rank ceil(9.9)) has four
  EXPECT_EQ(d["max"], 4);
  EXPECT_EQ(d["capped"], 0);
  std::vector<long long> capped(1001, 0);
  capped[1000] = 2;
  capped[1] = 2;
  const auto c = courtpiece::rules_cli::DealStatsJson(capped);
  EXPECT_EQ(c["capped"], 2);
  EXPECT_EQ(c["p50"], 1);
  EXPECT_EQ(c["max"], 1000);
  const auto none = courtpiece::rules_cli::DealStatsJson(std::vector<long long>(1001, 0));
  EXPECT_EQ(none["checked_rounds"], 0);
  EXPECT_EQ(none["mean"], 0.0);
}

TEST(Cli, DealPrintsHandsAndCommitment) {
  ExecResult r = Exec(kBin + " deal --seed " + std::string(64, '0') + " --trump S");
  ASSERT_EQ(r.exit_code, 0);
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["commitment"], "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925");
  EXPECT_EQ(j["hands"].size(), 4u);
  EXPECT_EQ(j["trump"], "S");
  ExecResult h = Exec(kBin + " deal --seed " + std::string(64, '0') + " --hide " +
                      j["first_packets"][0].get<std::string>().substr(0, 2));
  ASSERT_EQ(h.exit_code, 0) << h.out;
  Json hj = Json::parse(h.out);
  EXPECT_EQ(hj["first_packets"], j["first_packets"]);  // the first packets never change
}

}  // namespace
