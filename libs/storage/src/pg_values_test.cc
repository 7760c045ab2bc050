#include <optional>
#include <string>

#include "courtpiece/storage/pg_pool.h"
#include "gtest/gtest.h"

namespace courtpiece::storage {
namespace {

TEST(PgParam, TextFormsOfValues) {
  EXPECT_TRUE(PgParam(nullptr).is_null());
  EXPECT_EQ(PgParam("abc").text(), "abc");
  EXPECT_EQ(PgParam(std::string("x")).text(), "x");
  EXPECT_EQ(PgParam(int64_t{-42}).text(), "-42");
  EXPECT_EQ(PgParam(7).text(), "7");
  EXPECT_EQ(PgParam(size_t{9}).text(), "9");
  EXPECT_EQ(PgParam(true).text(), "true");
  EXPECT_TRUE(PgParam(std::optional<std::string>()).is_null());
}

TEST(PgTextArray, QuotesEveryElementAndEscapesQuotesAndBackslashes) {
  EXPECT_EQ(PgTextArray({}), "{}");
  EXPECT_EQ(PgTextArray({"a", ""}), R"({"a",""})");
  EXPECT_EQ(PgTextArray({R"(say "hi")", R"(c:\x)", "a,b"}), R"({"say \"hi\"","c:\\x","a,b"})");
}

TEST(PgParam, BytesUseHexInputForm) {
  EXPECT_EQ(PgParam::Bytes(std::string("\x00\xff\x10", 3)).text(), "\\x00ff10");
  EXPECT_EQ(PgParam::Bytes("").text(), "\\x");
}

TEST(PgRow, TypedGetters) {
  PgRow row({"12", std::nullopt, "t", "\\x00ff", "abc"});
  EXPECT_EQ(*row.Int64(0), 12);
  EXPECT_TRUE(row.IsNull(1));
  EXPECT_EQ(row.String(1).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(*row.Bool(2), true);
  EXPECT_EQ(*row.Bytes(3), std::string("\x00\xff", 2));
  EXPECT_EQ(row.Int64(4).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(row.Bytes(4).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(row.String(5).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(PgResult, ColumnByName) {
  PgResult r({"id", "name"}, {PgRow({"1", "a"})}, 1);
  EXPECT_EQ(*r.Column("name"), 1u);
  EXPECT_EQ(r.Column("nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.affected_rows(), 1);
  EXPECT_EQ(*r.row(0).String(1), "a");
}

}  // namespace
}  // namespace courtpiece::storage
