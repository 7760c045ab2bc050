#include "courtpiece/common/config.h"

#include "courtpiece/common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::common {
namespace {

TEST(EnvConfigTest, UnsetAndEmptyTakeDefaults) {
  EnvConfig env(MapEnv({{"EMPTY", ""}}));
  EXPECT_EQ(env.String("UNSET", "dflt"), "dflt");
  EXPECT_EQ(env.String("EMPTY", "dflt"), "dflt");
  EXPECT_EQ(env.Int("UNSET", 7, 0, 10), 7);
  EXPECT_EQ(env.Duration("EMPTY", absl::Seconds(3), absl::Seconds(1), absl::Seconds(5)),
            absl::Seconds(3));
  EXPECT_TRUE(env.Bool("UNSET", true));
  EXPECT_EQ(env.OneOf("UNSET", "b", {"a", "b"}), "b");
  EXPECT_THAT(env.Finish(), IsOk());
}

TEST(EnvConfigTest, ReadsGoodValues) {
  EnvConfig env(MapEnv({{"URL", "postgresql://x@127.0.0.1:5432/db"},
                        {"PORT", "7001"},
                        {"NEG", "-5"},
                        {"TURN", "1500ms"},
                        {"DRAIN", "2m"},
                        {"B1", "TRUE"},
                        {"B2", "0"},
                        {"B3", "yes"},
                        {"B4", "Off"},
                        {"LEVEL", "debug"}}));
  EXPECT_EQ(env.RequiredString("URL"), "postgresql://x@127.0.0.1:5432/db");
  EXPECT_EQ(env.Int("PORT", 0, 0, 65535), 7001);
  EXPECT_EQ(env.Int("NEG", 0, -10, 10), -5);
  EXPECT_EQ(env.Duration("TURN", absl::Seconds(30), absl::Seconds(1), absl::Minutes(1)),
            absl::Milliseconds(1500));
  EXPECT_EQ(env.Duration("DRAIN", absl::Seconds(10), absl::ZeroDuration(), absl::Minutes(2)),
            absl::Minutes(2));
  EXPECT_TRUE(env.Bool("B1", false));
  EXPECT_FALSE(env.Bool("B2", true));
  EXPECT_TRUE(env.Bool("B3", false));
  EXPECT_FALSE(env.Bool("B4", true));
  EXPECT_EQ(env.OneOf("LEVEL", "info", {"debug", "info"}), "debug");
  EXPECT_THAT(env.Finish(), IsOk());
}

TEST(EnvConfigTest, MissingRequiredString) {
  EnvConfig env(MapEnv({}));
  EXPECT_EQ(env.RequiredString("COURTPIECE_PG_URL"), "");
  EXPECT_THAT(env.Finish(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "bad configuration: COURTPIECE_PG_URL is required but unset or empty"));
}

TEST(EnvConfigTest, IntErrors) {
  EnvConfig env(MapEnv({{"A", "12x"}, {"B", "70000"}, {"C", "99999999999999999999"}}));
  EXPECT_EQ(env.Int("A", 1, 0, 100), 1);
  EXPECT_EQ(env.Int("B", 2, 0, 65535), 2);
  EXPECT_EQ(env.Int("C", 3, 0, 10), 3);
  EXPECT_EQ(env.errors(), (std::vector<std::string>{
                              "A=\"12x\": allowed an integer in [0, 100]",
                              "B=\"70000\": allowed an integer in [0, 65535]",
                              "C=\"99999999999999999999\": allowed an integer in [0, 10]"}));
}

TEST(EnvConfigTest, DurationErrors) {
  EnvConfig env(MapEnv({{"NOUNIT", "30"}, {"LONG", "2h"}, {"JUNK", "soon"}}));
  const absl::Duration dflt = absl::Seconds(30);
  EXPECT_EQ(env.Duration("NOUNIT", dflt, absl::Seconds(1), absl::Minutes(5)), dflt);
  EXPECT_EQ(env.Duration("LONG", dflt, absl::Seconds(1), absl::Minutes(5)), dflt);
  EXPECT_EQ(env.Duration("JUNK", dflt, absl::Milliseconds(250), absl::Hours(1)), dflt);
  EXPECT_EQ(env.errors(),
            (std::vector<std::string>{
                "NOUNIT=\"30\": allowed a duration with a unit (e.g. 250ms, 5s, 2m) in [1s, 5m]",
                "LONG=\"2h\": allowed a duration with a unit (e.g. 250ms, 5s, 2m) in [1s, 5m]",
                "JUNK=\"soon\": allowed a duration with a unit (e.g. 250ms, 5s, 2m) in [250ms, "
                "1h]"}));
}

TEST(EnvConfigTest, BoolAndOneOfErrors) {
  EnvConfig env(MapEnv({{"B", "maybe"}, {"L", "loud"}}));
  EXPECT_TRUE(env.Bool("B", true));
  EXPECT_EQ(env.OneOf("L", "info", {"debug", "info"}), "info");
  EXPECT_EQ(env.errors(),
            (std::vector<std::string>{"B=\"maybe\": allowed true/false, 1/0, yes/no or on/off",
                                      "L=\"loud\": allowed one of {debug, info}"}));
}

TEST(EnvConfigTest, FinishNamesEveryBadVariableInOrder) {
  EnvConfig env(MapEnv({{"COURTPIECE_GRPC_PORT", "-1"}, {"COURTPIECE_BOTS", "2"}}));
  env.Int("COURTPIECE_GRPC_PORT", 7001, 0, 65535);
  env.RequiredString("COURTPIECE_PG_URL");
  env.Bool("COURTPIECE_BOTS", true);
  EXPECT_THAT(env.Finish(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "bad configuration: COURTPIECE_GRPC_PORT=\"-1\": allowed an integer in "
                       "[0, 65535]; COURTPIECE_PG_URL is required but unset or empty; "
                       "COURTPIECE_BOTS=\"2\": allowed true/false, 1/0, yes/no or on/off"));
}

TEST(EnvConfigTest, ListenAddress) {
  EnvConfig env(MapEnv({{"A", "127.0.0.1:9101"},
                        {"B", "0.0.0.0:0"},
                        {"C", "[::1]:65535"},
                        {"D", "metrics-host:80"},
                        {"E", "off"},
                        {"F", "9101"},
                        {"G", "127.0.0.1:65536"},
                        {"H", ":80"},
                        {"I", "off"},
                        {"J", "127.0.0.1:9x"},
                        {"K", "a b:1"}}));
  EXPECT_EQ(env.ListenAddress("A", "d:1"), "127.0.0.1:9101");
  EXPECT_EQ(env.ListenAddress("B", "d:1"), "0.0.0.0:0");
  EXPECT_EQ(env.ListenAddress("C", "d:1"), "[::1]:65535");
  EXPECT_EQ(env.ListenAddress("D", "d:1"), "metrics-host:80");
  EXPECT_EQ(env.ListenAddress("E", "d:1", /*allow_off=*/true), "");
  EXPECT_EQ(env.ListenAddress("UNSET", "127.0.0.1:9101"), "127.0.0.1:9101");
  EXPECT_TRUE(env.Finish().ok());
  EXPECT_EQ(env.ListenAddress("F", "d:1"), "d:1");
  EXPECT_EQ(env.ListenAddress("G", "d:1"), "d:1");
  EXPECT_EQ(env.ListenAddress("H", "d:1"), "d:1");
  EXPECT_EQ(env.ListenAddress("I", "d:1"), "d:1");  // "off" only when allowed
  EXPECT_EQ(env.ListenAddress("J", "d:1", true), "d:1");
  EXPECT_EQ(env.ListenAddress("K", "d:1"), "d:1");
  ASSERT_EQ(env.errors().size(), 6u);
  const std::string allowed =
      "allowed HOST:PORT (e.g. 127.0.0.1:9101, 0.0.0.0:9101, [::1]:9101), port in [0, 65535]";
  EXPECT_EQ(env.errors()[0], "F=\"9101\": " + allowed);
  EXPECT_EQ(env.errors()[3], "I=\"off\": " + allowed);
  EXPECT_EQ(env.errors()[4], "J=\"127.0.0.1:9x\": " + allowed + ", or off");
}

TEST(EnvConfigTest, DialAddressAndIdentifier) {
  EnvConfig env(MapEnv({{"A", "10.0.0.5:7002"},
                        {"B", "table-1:7002"},
                        {"C", "[::1]:1"},
                        {"D", "nope"},
                        {"E", "0.0.0.0:7002"},
                        {"F", "host:0"},
                        {"G", "[::]:7002"},
                        {"G2", "[::0]:7002"},
                        {"G3", "host:0000"},
                        {"G4", "0:7002"},
                        {"I1", "table-local-1"},
                        {"I2", "a.b_C-9"},
                        {"I3", "bad id!"},
                        {"I4", std::string(65, 'x')}}));
  EXPECT_EQ(env.DialAddress("A", ""), "10.0.0.5:7002");
  EXPECT_EQ(env.DialAddress("B", ""), "table-1:7002");
  EXPECT_EQ(env.DialAddress("C", ""), "[::1]:1");
  EXPECT_EQ(env.DialAddress("UNSET", "d:1"), "d:1");
  EXPECT_EQ(env.Identifier("I1", "", 64), "table-local-1");
  EXPECT_EQ(env.Identifier("I2", "", 64), "a.b_C-9");
  EXPECT_EQ(env.Identifier("UNSET", "dflt", 64), "dflt");
  EXPECT_TRUE(env.Finish().ok());
  EXPECT_EQ(env.DialAddress("D", ""), "");
  EXPECT_EQ(env.DialAddress("E", ""), "");
  EXPECT_EQ(env.DialAddress("F", ""), "");
  EXPECT_EQ(env.DialAddress("G", ""), "");
  EXPECT_EQ(env.DialAddress("G2", ""), "");
  EXPECT_EQ(env.DialAddress("G3", ""), "");
  EXPECT_EQ(env.DialAddress("G4", ""), "");
  EXPECT_EQ(env.Identifier("I3", "", 64), "");
  EXPECT_EQ(env.Identifier("I4", "", 64), "");
  ASSERT_EQ(env.errors().size(), 9u);
  EXPECT_EQ(env.errors()[0],
            "D=\"nope\": allowed HOST:PORT that other processes can dial (e.g. 10.0.0.5:7002, "
            "table-1:7002, [::1]:7002), port in [1, 65535], not a wildcard host");
  EXPECT_EQ(env.errors()[7], "I3=\"bad id!\": allowed 1..64 characters of [A-Za-z0-9_.-]");
}

TEST(EnvConfigTest, RetiredVariableSetIsAnError) {
  EnvConfig env(MapEnv({{"OLD_PORT", "9101"}}));
  env.Retired("OLD_PORT", "NEW_ADDR");
  env.Retired("NEVER_SET", "NEW_ADDR");
  EXPECT_THAT(env.Finish(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     "bad configuration: OLD_PORT is no longer read; set "
                                     "NEW_ADDR instead"));
}

// A misspelt variable is named; read ones (set or not, valid or not), retired ones, ones read
// by other means and other services' are not.
TEST(EnvConfigTest, UnreadNamesTheServicesVariablesNobodyRead) {
  EnvConfig env(MapEnv({{"SVC_WORKERS", "4"}, {"SVC_DEADLINE", "bad"}}));
  (void)env.Int("SVC_WORKERS", 2, 1, 64);
  (void)env.Duration("SVC_DEADLINE", absl::Seconds(1), absl::Milliseconds(1), absl::Minutes(1));
  (void)env.String("SVC_UNSET", "x");
  env.Retired("SVC_OLD_PORT", "SVC_ADDR");
  env.Known("SVC_KEYS");
  env.Known("SVC_KEYS_FILE");
  const char* const environment[] = {
      "SVC_WORKERS=4",   "SVC_WORKER=8",   "SVC_DEADLINE=bad",  "SVC_OLD_PORT=9",
      "SVC_KEYS_FILE=k", "OTHER_WORKER=1", "SVC_=empty-suffix", "SVC_ZED",
      "SVC_ALPHA=",      nullptr};
  EXPECT_THAT(
      env.Unread(environment, "SVC_"),
      ::testing::ElementsAre("SVC_ALPHA", "SVC_WORKER", "SVC_ZED"));  // not the prefix alone
  const char* const none[] = {nullptr};
  EXPECT_THAT(env.Unread(none, "SVC_"), ::testing::IsEmpty());
  EXPECT_THAT(env.Unread(nullptr, "SVC_"), ::testing::IsEmpty());
}

TEST(EnvConfigTest, ProcessEnvReadsGetenv) {
  ASSERT_EQ(setenv("COURTPIECE_COMMON_TEST_VAR", "42", 1), 0);
  EnvConfig env;
  EXPECT_EQ(env.Int("COURTPIECE_COMMON_TEST_VAR", 0, 0, 100), 42);
  EXPECT_EQ(env.String("COURTPIECE_COMMON_TEST_UNSET_VAR", "d"), "d");
  EXPECT_THAT(env.Finish(), IsOk());
}

}  // namespace
}  // namespace courtpiece::common
