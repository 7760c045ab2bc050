// Pure parts of the Redis client: error mapping, reply conversion, SHA1, address parsing.
#include <hiredis/hiredis.h>

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/storage/redis_client.h"
#include "redis_internal.h"

namespace courtpiece::storage {

absl::Status RedisErrorToStatus(absl::string_view error_text) {
  const absl::string_view prefix = error_text.substr(0, error_text.find(' '));
  const std::string message = absl::StrCat("redis: ", error_text);
  if (prefix == "WRONGTYPE") return absl::FailedPreconditionError(message);
  if (prefix == "NOSCRIPT") return absl::NotFoundError(message);
  if (prefix == "OOM") return absl::ResourceExhaustedError(message);
  if (prefix == "NOAUTH" || prefix == "WRONGPASS" || prefix == "NOPERM") {
    return absl::PermissionDeniedError(message);
  }
  if (prefix == "BUSY" || prefix == "LOADING" || prefix == "READONLY" || prefix == "MASTERDOWN" ||
      prefix == "TRYAGAIN" || prefix == "CLUSTERDOWN" || prefix == "MISCONF") {
    return absl::UnavailableError(message);
  }
  if (prefix == "ERR" || prefix == "EXECABORT") return absl::InvalidArgumentError(message);
  return absl::FailedPreconditionError(message);  // application errors raised by scripts
}

absl::StatusOr<RedisOptions> ParseRedisAddr(absl::string_view addr) {
  const size_t colon = addr.rfind(':');
  int port = 0;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(addr.substr(colon + 1), &port) || port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("redis address '", addr, "' is not host:port"));
  }
  RedisOptions options;
  options.host = std::string(addr.substr(0, colon));
  options.port = port;
  return options;
}

namespace internal {

RedisReply FromHiredis(const redisReply& r) {
  switch (r.type) {
    case REDIS_REPLY_STRING:
      return RedisReply::String(std::string(r.str, r.len));
    case REDIS_REPLY_STATUS:
      return RedisReply::Status(std::string(r.str, r.len));
    case REDIS_REPLY_ERROR:
      return RedisReply::Error(std::string(r.str, r.len));
    case REDIS_REPLY_INTEGER:
      return RedisReply::Integer(r.integer);
    case REDIS_REPLY_ARRAY: {
      std::vector<RedisReply> elements;
      elements.reserve(r.elements);
      for (size_t i = 0; i < r.elements; ++i) elements.push_back(FromHiredis(*r.element[i]));
      return RedisReply::Array(std::move(elements));
    }
    default:
      return RedisReply::Nil();
  }
}

absl::StatusOr<RedisReply> TopLevelReply(const redisReply& r) {
  if (r.type == REDIS_REPLY_ERROR) {
    return RedisErrorToStatus(absl::string_view(r.str, r.len));
  }
  return FromHiredis(r);
}

}  // namespace internal

namespace {

uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

void Sha1Block(const unsigned char* block, std::array<uint32_t, 5>& h) {
  uint32_t w[80];
  for (int i = 0; i < 16; ++i) {
    w[i] = uint32_t{block[4 * i]} << 24 | uint32_t{block[4 * i + 1]} << 16 |
           uint32_t{block[4 * i + 2]} << 8 | uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 80; ++i) w[i] = Rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    uint32_t f, k;
    if (i < 20) {
      f = (b & c) | (~b & d), k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d, k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d, k = 0xCA62C1D6;
    }
    const uint32_t t = Rotl(a, 5) + f + e + k + w[i];
    e = d, d = c, c = Rotl(b, 30), b = a, a = t;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

}  // namespace

std::string Sha1Hex(absl::string_view data) {
  std::array<uint32_t, 5> h = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string msg(data);
  const uint64_t bit_len = uint64_t{data.size()} * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56) msg.push_back('\0');
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>(bit_len >> (8 * i)));
  for (size_t off = 0; off < msg.size(); off += 64) {
    Sha1Block(reinterpret_cast<const unsigned char*>(msg.data() + off), h);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint32_t v : h) {
    for (int shift = 28; shift >= 0; shift -= 4) out.push_back(kHex[(v >> shift) & 0xf]);
  }
  return out;
}

}  // namespace courtpiece::storage
