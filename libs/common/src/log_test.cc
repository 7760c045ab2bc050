#include "courtpiece/common/log.h"

#include <string>
#include <thread>
#include <vector>

#include "courtpiece/common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace courtpiece::common {
namespace {

class LogTest : public ::testing::Test {
 protected:
  LogSink Capture() {
    return [this](std::string_view line) { lines_.emplace_back(line); };
  }
  FakeClock clock_{absl::FromUnixMillis(1'700'000'000'123)};
  std::vector<std::string> lines_;
};

TEST_F(LogTest, WritesOneJsonLineWithFieldsInOrder) {
  Logger log("lobby", LogLevel::kInfo, Capture(), clock_);
  log.Info("table created", {{"table_id", "t-1"},
                             {"seats", 4},
                             {"coins", uint64_t{500}},
                             {"ratio", 0.5},
                             {"bots", true},
                             {"err", absl::NotFoundError("x")},
                             {"why", absl::NotFoundError("y").message()}});
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0],
            "{\"ts\":\"2023-11-14T22:13:20.123Z\",\"level\":\"info\",\"component\":\"lobby\","
            "\"msg\":\"table created\",\"table_id\":\"t-1\",\"seats\":4,\"coins\":500,"
            "\"ratio\":0.5,\"bots\":true,\"err\":\"NOT_FOUND: x\",\"why\":\"y\"}\n");
}

TEST_F(LogTest, DropsLinesBelowLevel) {
  Logger log("table", LogLevel::kWarn, Capture(), clock_);
  log.Debug("d");
  log.Info("i");
  log.Warn("w");
  log.Error("e");
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(lines_[0])["level"], "warn");
  EXPECT_EQ(nlohmann::json::parse(lines_[1])["level"], "error");
  EXPECT_FALSE(log.Enabled(LogLevel::kInfo));
  EXPECT_TRUE(log.Enabled(LogLevel::kError));
}

TEST_F(LogTest, EscapesAndRenamesReservedKeys) {
  Logger log("gw", LogLevel::kDebug, Capture(), clock_);
  log.Debug("quote \" newline \n bad \xff", {{"msg", "shadow"}, {"ts", 1}});
  ASSERT_EQ(lines_.size(), 1u);
  const nlohmann::json parsed = nlohmann::json::parse(lines_[0]);
  EXPECT_EQ(parsed["msg"], "quote \" newline \n bad \xef\xbf\xbd");
  EXPECT_EQ(parsed["_msg"], "shadow");
  EXPECT_EQ(parsed["_ts"], 1);
  EXPECT_EQ(parsed["ts"], "2023-11-14T22:13:20.123Z");
}

TEST_F(LogTest, WithComponentSharesSink) {
  Logger log("table", LogLevel::kInfo, Capture(), clock_);
  log.WithComponent("bots").Info("move");
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(lines_[0])["component"], "bots");
}

TEST_F(LogTest, ConcurrentLinesArriveWhole) {
  Logger log("x", LogLevel::kInfo, Capture(), clock_);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < 250; ++i) log.Info("m", {{"thread", t}, {"i", i}});
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(lines_.size(), 1000u);
  for (const std::string& line : lines_) EXPECT_TRUE(nlohmann::json::accept(line)) << line;
}

TEST(LogLevelTest, ParseAndRead) {
  EXPECT_EQ(ParseLogLevel("WARN").value(), LogLevel::kWarn);
  EXPECT_THAT(ParseLogLevel("loud"), StatusIs(absl::StatusCode::kInvalidArgument,
                                              "log level \"loud\": allowed one of {debug, info, "
                                              "warn, error}"));
  EnvConfig good(MapEnv({{"COURTPIECE_LOG_LEVEL", "error"}}));
  EXPECT_EQ(ReadLogLevel(good), LogLevel::kError);
  EnvConfig unset(MapEnv({}));
  EXPECT_EQ(ReadLogLevel(unset), LogLevel::kInfo);
  EnvConfig bad(MapEnv({{"COURTPIECE_LOG_LEVEL", "loud"}}));
  EXPECT_EQ(ReadLogLevel(bad), LogLevel::kInfo);
  EXPECT_THAT(bad.Finish(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     "bad configuration: COURTPIECE_LOG_LEVEL=\"loud\": allowed "
                                     "one of {debug, info, warn, error}"));
}

}  // namespace
}  // namespace courtpiece::common
