#include <hiredis/hiredis.h>

#include <string>
#include <utility>
#include <vector>

#include "courtpiece/storage/redis_client.h"
#include "gtest/gtest.h"
#include "redis_internal.h"

namespace courtpiece::storage {
namespace {

using C = absl::StatusCode;

redisReply Raw(int type, const std::string& str = "", long long integer = 0) {
  redisReply r{};
  r.type = type;
  r.str = const_cast<char*>(str.data());
  r.len = str.size();
  r.integer = integer;
  return r;
}

TEST(FromHiredis, MapsEveryType) {
  const std::string bin("a\0b", 3);
  redisReply s = Raw(REDIS_REPLY_STRING, bin);
  EXPECT_EQ(internal::FromHiredis(s), RedisReply::String(bin));
  redisReply i = Raw(REDIS_REPLY_INTEGER, "", -5);
  EXPECT_EQ(internal::FromHiredis(i), RedisReply::Integer(-5));
  redisReply nil = Raw(REDIS_REPLY_NIL);
  EXPECT_TRUE(internal::FromHiredis(nil).is_nil());
  const std::string ok = "OK";
  redisReply st = Raw(REDIS_REPLY_STATUS, ok);
  EXPECT_EQ(internal::FromHiredis(st), RedisReply::Status("OK"));
  const std::string err = "ERR x";
  redisReply e = Raw(REDIS_REPLY_ERROR, err);
  EXPECT_EQ(internal::FromHiredis(e), RedisReply::Error("ERR x"));
  redisReply* elems[] = {&s, &nil, &e};
  redisReply arr = Raw(REDIS_REPLY_ARRAY);
  arr.elements = 3;
  arr.element = elems;
  EXPECT_EQ(
      internal::FromHiredis(arr),
      RedisReply::Array({RedisReply::String(bin), RedisReply::Nil(), RedisReply::Error("ERR x")}));
}

TEST(TopLevelReply, ErrorBecomesStatusNestedErrorStays) {
  const std::string text = "WRONGTYPE Operation against a key holding the wrong kind of value";
  redisReply e = Raw(REDIS_REPLY_ERROR, text);
  absl::StatusOr<RedisReply> r = internal::TopLevelReply(e);
  EXPECT_EQ(r.status().code(), C::kFailedPrecondition);
  EXPECT_EQ(r.status().message(), "redis: " + text);
  redisReply* elems[] = {&e};
  redisReply arr = Raw(REDIS_REPLY_ARRAY);
  arr.elements = 1;
  arr.element = elems;
  ASSERT_TRUE(internal::TopLevelReply(arr).ok());
}

TEST(RedisErrorToStatus, Prefixes) {
  EXPECT_EQ(RedisErrorToStatus("ERR syntax error").code(), C::kInvalidArgument);
  EXPECT_EQ(RedisErrorToStatus("NOSCRIPT No matching script").code(), C::kNotFound);
  EXPECT_EQ(RedisErrorToStatus("BUSY Redis is busy").code(), C::kUnavailable);
  EXPECT_EQ(RedisErrorToStatus("LOADING").code(), C::kUnavailable);
  EXPECT_EQ(RedisErrorToStatus("READONLY You can't write").code(), C::kUnavailable);
  EXPECT_EQ(RedisErrorToStatus("OOM command not allowed").code(), C::kResourceExhausted);
  EXPECT_EQ(RedisErrorToStatus("NOAUTH Authentication required.").code(), C::kPermissionDenied);
  EXPECT_EQ(RedisErrorToStatus("STALE_EPOCH owner moved").code(), C::kFailedPrecondition);
}

TEST(Sha1Hex, KnownVectors) {
  EXPECT_EQ(Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(Sha1Hex(std::string(1000, 'a')), "291e9a6c66994949b57ba5e650361e98fc36b1ba");
}

TEST(ParseRedisAddr, HostPort) {
  absl::StatusOr<RedisOptions> o = ParseRedisAddr("127.0.0.1:56390");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->host, "127.0.0.1");
  EXPECT_EQ(o->port, 56390);
  EXPECT_EQ(ParseRedisAddr("localhost").status().code(), C::kInvalidArgument);
  EXPECT_EQ(ParseRedisAddr("h:0").status().code(), C::kInvalidArgument);
  EXPECT_EQ(ParseRedisAddr(":1").status().code(), C::kInvalidArgument);
}

TEST(EachReply, MapsEveryReplyAndKeepsEachErrorInItsPlace) {
  std::vector<absl::StatusOr<RedisReply>> replies;
  RedisReply a;
  a.type = RedisReply::Type::kString;
  a.str = "a";
  replies.push_back(a);
  replies.push_back(absl::InternalError("WRONGTYPE"));
  RedisReply c;
  c.type = RedisReply::Type::kString;
  c.str = "c";
  replies.push_back(c);
  std::vector<absl::StatusOr<std::string>> out = EachReply<std::string>(
      std::move(replies), 3, [](size_t i, RedisReply r) -> absl::StatusOr<std::string> {
        return std::to_string(i) + r.str;
      });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(*out[0], "0a");
  EXPECT_EQ(out[1].status().message(), "WRONGTYPE");
  EXPECT_EQ(*out[2], "2c");  // the index is the command's, past an error
  out = EachReply<std::string>(
      absl::UnavailableError("connection reset"), 2,
      [](size_t, RedisReply r) -> absl::StatusOr<std::string> { return r.str; });
  ASSERT_EQ(out.size(), 2u);
  for (const absl::StatusOr<std::string>& o : out) EXPECT_EQ(o.status().code(), C::kUnavailable);
}

}  // namespace
}  // namespace courtpiece::storage
