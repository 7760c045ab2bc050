// H2Conn against a test client: frames built by hand, header blocks by libnghttp2's HPACK
// deflater (the client's table indexes what it sends, as real clients do), the server's
// output cut back into frames and its header blocks decoded by libnghttp2's inflater.
#include "services/gateway/h2_conn.h"

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::gateway::h2 {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

using HeaderList = std::vector<std::pair<std::string, std::string>>;

constexpr uint8_t kData = 0x0;
constexpr uint8_t kHeaders = 0x1;
constexpr uint8_t kPriority = 0x2;
constexpr uint8_t kRstStream = 0x3;
constexpr uint8_t kSettings = 0x4;
constexpr uint8_t kPushPromise = 0x5;
constexpr uint8_t kPing = 0x6;
constexpr uint8_t kGoAway = 0x7;
constexpr uint8_t kWindowUpdate = 0x8;
constexpr uint8_t kContinuation = 0x9;

constexpr uint8_t kEndStream = 0x1;
constexpr uint8_t kAck = 0x1;
constexpr uint8_t kEndHeaders = 0x4;
constexpr uint8_t kPadded = 0x8;
constexpr uint8_t kPriorityFlag = 0x20;

constexpr char kPath[] = "/courtpiece.client.v1.CourtPiece/GetProfile";

std::string Be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}
uint32_t ReadBe32(std::string_view s, size_t at) {
  const auto* u = reinterpret_cast<const uint8_t*>(s.data() + at);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

// One frame of the server's output; a HEADERS frame carries its block decoded (with the
// CONTINUATION frames that followed it, which are listed too).
struct Frame {
  uint8_t type = 0;
  uint8_t flags = 0;
  uint32_t stream = 0;
  std::string payload;
  HeaderList headers;

  uint32_t u32(size_t at) const { return ReadBe32(payload, at); }
};

// "HEADERS s=1 f=4", "DATA s=1 f=0 n=10", "GOAWAY last=3 code=1", ...: exact and short.
std::string Describe(const Frame& f) {
  switch (f.type) {
    case kData:
      return absl::StrCat("DATA s=", f.stream, " f=", f.flags, " n=", f.payload.size());
    case kHeaders:
      return absl::StrCat("HEADERS s=", f.stream, " f=", f.flags);
    case kContinuation:
      return absl::StrCat("CONTINUATION s=", f.stream, " f=", f.flags);
    case kRstStream:
      return absl::StrCat("RST_STREAM s=", f.stream, " code=", f.u32(0));
    case kSettings:
      return absl::StrCat("SETTINGS f=", f.flags, " n=", f.payload.size());
    case kPing:
      return absl::StrCat("PING f=", f.flags);
    case kGoAway:
      return absl::StrCat("GOAWAY last=", f.u32(0), " code=", f.u32(4));
    case kWindowUpdate:
      return absl::StrCat("WINDOW_UPDATE s=", f.stream, " inc=", f.u32(0));
    default:
      return absl::StrCat("type ", f.type);
  }
}
std::vector<std::string> Describe(const std::vector<Frame>& frames) {
  std::vector<std::string> out;
  for (const Frame& f : frames) out.push_back(Describe(f));
  return out;
}

// The test client: frames, and an HPACK encoder and decoder of its own.
class Client {
 public:
  Client() {
    EXPECT_EQ(nghttp2_hd_deflate_new(&deflater_, 4096), 0);
    EXPECT_EQ(nghttp2_hd_inflate_new(&inflater_), 0);
  }
  ~Client() {
    nghttp2_hd_deflate_del(deflater_);
    nghttp2_hd_inflate_del(inflater_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  nghttp2_hd_deflater* deflater() { return deflater_; }
  nghttp2_hd_inflater* inflater() { return inflater_; }

  static std::string Preface() { return "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"; }

  static std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, std::string_view payload) {
    std::string out;
    out.push_back(static_cast<char>(payload.size() >> 16));
    out.push_back(static_cast<char>(payload.size() >> 8));
    out.push_back(static_cast<char>(payload.size()));
    out.push_back(static_cast<char>(type));
    out.push_back(static_cast<char>(flags));
    out += Be32(stream);
    out.append(payload);
    return out;
  }
  static std::string Settings(const std::vector<std::pair<uint16_t, uint32_t>>& settings = {}) {
    std::string payload;
    for (const auto& [id, value] : settings) {
      payload.push_back(static_cast<char>(id >> 8));
      payload.push_back(static_cast<char>(id));
      payload += Be32(value);
    }
    return Frame(kSettings, 0, 0, payload);
  }
  static std::string SettingsAck() { return Frame(kSettings, kAck, 0, ""); }

  // A header block from the client's deflater (its dynamic table indexes what it can).
  std::string Encode(const HeaderList& headers) {
    std::vector<nghttp2_nv> nva;
    for (const auto& [name, value] : headers) {
      nva.push_back({reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                     reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                     value.size(), NGHTTP2_NV_FLAG_NONE});
    }
    std::string block(nghttp2_hd_deflate_bound(deflater_, nva.data(), nva.size()), '\0');
    const ssize_t n = nghttp2_hd_deflate_hd(deflater_, reinterpret_cast<uint8_t*>(block.data()),
                                            block.size(), nva.data(), nva.size());
    EXPECT_GE(n, 0);
    block.resize(n < 0 ? 0 : static_cast<size_t>(n));
    return block;
  }

  // HEADERS (+ CONTINUATION frames of `split` bytes when split > 0) carrying `block`.
  // pad >= 0: PADDED with that many bytes; priority: the PRIORITY fields.
  static std::string HeaderFrames(uint32_t stream, std::string_view block, bool end_stream,
                                  size_t split = 0, int pad = -1, bool priority = false) {
    const size_t first = split == 0 ? block.size() : std::min(split, block.size());
    uint8_t flags = end_stream ? kEndStream : 0;
    if (first == block.size()) flags |= kEndHeaders;
    std::string payload;
    if (pad >= 0) {
      flags |= kPadded;
      payload.push_back(static_cast<char>(pad));
    }
    if (priority) {
      flags |= kPriorityFlag;
      payload += Be32(0);     // depends on stream 0, not exclusive
      payload.push_back(15);  // weight 16
    }
    payload.append(block.substr(0, first));
    if (pad > 0) payload.append(static_cast<size_t>(pad), '\0');
    std::string out = Frame(kHeaders, flags, stream, payload);
    for (size_t pos = first; pos < block.size(); pos += split) {
      const std::string_view chunk = block.substr(pos, split);
      out +=
          Frame(kContinuation, pos + chunk.size() == block.size() ? kEndHeaders : 0, stream, chunk);
    }
    return out;
  }
  std::string Headers(uint32_t stream, const HeaderList& headers, bool end_stream,
                      size_t split = 0) {
    return HeaderFrames(stream, Encode(headers), end_stream, split);
  }

  static std::string Data(uint32_t stream, std::string_view payload, bool end_stream = false,
                          int pad = -1) {
    uint8_t flags = end_stream ? kEndStream : 0;
    std::string body;
    if (pad >= 0) {
      flags |= kPadded;
      body.push_back(static_cast<char>(pad));
    }
    body.append(payload);
    if (pad > 0) body.append(static_cast<size_t>(pad), '\0');
    return Frame(kData, flags, stream, body);
  }
  // A gRPC message: flags byte, 4-byte length, the bytes.
  static std::string Grpc(std::string_view message, bool compressed = false) {
    std::string out(1, compressed ? '\1' : '\0');
    out += Be32(static_cast<uint32_t>(message.size()));
    out.append(message);
    return out;
  }
  static std::string WindowUpdate(uint32_t stream, uint32_t increment) {
    return Frame(kWindowUpdate, 0, stream, Be32(increment));
  }
  static std::string Ping(std::string_view opaque8, bool ack = false) {
    return Frame(kPing, ack ? kAck : 0, 0, opaque8);
  }
  static std::string RstStream(uint32_t stream, uint32_t code) {
    return Frame(kRstStream, 0, stream, Be32(code));
  }
  static std::string GoAway(uint32_t last, uint32_t code, std::string_view debug = "") {
    return Frame(kGoAway, 0, 0, Be32(last) + Be32(code) + std::string(debug));
  }
  static std::string Priority(uint32_t stream, uint32_t depends_on, uint8_t weight) {
    return Frame(kPriority, 0, stream, Be32(depends_on) + std::string(1, char(weight)));
  }
  static std::string Unknown(uint32_t stream, std::string_view payload) {
    return Frame(0x20, 0xff, stream, payload);
  }

  // The server's bytes as frames (a partial frame is kept for the next call).
  std::vector<::courtpiece::gateway::h2::Frame> Parse(std::string_view bytes) {
    rest_.append(bytes);
    std::vector<::courtpiece::gateway::h2::Frame> frames;
    size_t pos = 0;
    while (rest_.size() - pos >= 9) {
      const auto* h = reinterpret_cast<const uint8_t*>(rest_.data() + pos);
      const size_t length = (size_t{h[0]} << 16) | (size_t{h[1]} << 8) | h[2];
      if (rest_.size() - pos - 9 < length) break;
      ::courtpiece::gateway::h2::Frame f;
      f.type = h[3];
      f.flags = h[4];
      f.stream = ReadBe32(rest_, pos + 5) & 0x7fffffff;
      f.payload = rest_.substr(pos + 9, length);
      pos += 9 + length;
      if (f.type == kHeaders) {
        block_ = f.payload;
        headers_index_ = frames.size();
      } else if (f.type == kContinuation) {
        block_ += f.payload;
      }
      frames.push_back(std::move(f));
      const auto& last = frames.back();
      if ((last.type == kHeaders || last.type == kContinuation) &&
          (last.flags & kEndHeaders) != 0) {
        frames[headers_index_].headers = Decode(block_);
      }
    }
    rest_.erase(0, pos);
    return frames;
  }

  // A header block decoded by the client's inflater; ("error", ...) when it fails.
  HeaderList Decode(std::string block) {
    HeaderList out;
    auto* in = reinterpret_cast<uint8_t*>(block.data());
    size_t left = block.size();
    for (;;) {
      nghttp2_nv nv;
      int flags = 0;
      const ssize_t used = nghttp2_hd_inflate_hd2(inflater_, &nv, &flags, in, left, 1);
      if (used < 0) {
        out.emplace_back("error", nghttp2_strerror(static_cast<int>(used)));
        return out;
      }
      in += used;
      left -= static_cast<size_t>(used);
      if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0) {
        out.emplace_back(std::string(reinterpret_cast<const char*>(nv.name), nv.namelen),
                         std::string(reinterpret_cast<const char*>(nv.value), nv.valuelen));
      }
      if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) {
        nghttp2_hd_inflate_end_headers(inflater_);
        return out;
      }
      if ((flags & NGHTTP2_HD_INFLATE_EMIT) == 0 && left == 0) return out;
    }
  }

 private:
  nghttp2_hd_deflater* deflater_ = nullptr;
  nghttp2_hd_inflater* inflater_ = nullptr;
  std::string rest_;
  std::string block_;
  size_t headers_index_ = 0;
};

HeaderList GrpcRequest(std::string_view path = kPath, HeaderList extra = {}) {
  HeaderList headers = {{":method", "POST"},
                        {":scheme", "http"},
                        {":path", std::string(path)},
                        {":authority", "play.example.com"},
                        {"content-type", "application/grpc"},
                        {"te", "trailers"}};
  for (auto& h : extra) headers.push_back(std::move(h));
  return headers;
}

// A literal field with incremental indexing and a new name: it enters the dynamic table.
std::string LiteralIndexed(std::string_view name, std::string_view value) {
  std::string out;
  PutHpackLiteral(out, name, value, 0x40);
  return out;
}
// POST, http, the path, content-type application/grpc: static-table names, no indexing.
std::string HandMadeRequest(std::string_view path) {
  std::string out = "\x83\x86";  // :method POST, :scheme http
  PutHpackInt(out, 0x00, 4, 4);  // :path (static 4), literal without indexing
  PutHpackInt(out, 0, 7, path.size());
  out.append(path);
  PutHpackInt(out, 0x00, 4, 31);  // content-type (static 31)
  PutHpackInt(out, 0, 7, 16);
  out.append("application/grpc");
  return out;
}

// Every handler call as a line ("request 1 /a/B", "message 1 hi", "gone 1 reset", ...), and
// hooks to call back into the connection from inside a call.
class Recorder final : public H2Conn::Handler {
 public:
  void OnRequest(uint32_t stream_id, const Request& request) override {
    events.push_back(absl::StrCat("request ", stream_id, " ", request.path));
    requests[stream_id] = request;
    if (on_request) on_request(stream_id);
  }
  void OnMessage(uint32_t stream_id, std::string message) override {
    events.push_back(message.size() <= 64
                         ? absl::StrCat("message ", stream_id, " ", message)
                         : absl::StrCat("message ", stream_id, " (", message.size(), " bytes)"));
    messages.emplace_back(stream_id, std::move(message));
    if (on_message) on_message(stream_id);
  }
  void OnBadMessage(uint32_t stream_id, const absl::Status& status) override {
    events.push_back(absl::StrCat("bad ", stream_id, " ", absl::StatusCodeToString(status.code())));
    bad_statuses.push_back(status);
  }
  void OnHalfClose(uint32_t stream_id) override {
    events.push_back(absl::StrCat("half-close ", stream_id));
    if (on_half_close) on_half_close(stream_id);
  }
  void OnStreamGone(uint32_t stream_id, bool reset) override {
    events.push_back(absl::StrCat("gone ", stream_id, reset ? " reset" : " done"));
  }
  void OnWritable(uint32_t stream_id) override {
    events.push_back(absl::StrCat("writable ", stream_id));
  }
  void OnPingAck() override { events.push_back("ping-ack"); }
  void OnPing() override { events.push_back("ping"); }

  std::vector<std::string> Take() {
    std::vector<std::string> out;
    out.swap(events);
    return out;
  }

  std::vector<std::string> events;
  std::map<uint32_t, Request> requests;
  std::vector<std::pair<uint32_t, std::string>> messages;
  std::vector<absl::Status> bad_statuses;
  std::function<void(uint32_t)> on_request;
  std::function<void(uint32_t)> on_message;
  std::function<void(uint32_t)> on_half_close;
};

class H2ConnTest : public ::testing::Test {
 protected:
  // A connection past its preface: ours taken (server_preface_), the client's preface and
  // SETTINGS fed and acknowledged.
  void Open(ConnOptions options = {},
            const std::vector<std::pair<uint16_t, uint32_t>>& settings = {}) {
    conn_ = std::make_unique<H2Conn>(rec_, options);
    conn_->Start();
    server_preface_ = Out();
    ASSERT_TRUE(Feed(Client::Preface() + Client::Settings(settings)));
    ASSERT_THAT(Describe(Out()), ElementsAre("SETTINGS f=1 n=0"));
  }
  // Opens stream `id` with a gRPC request; the handler saw it.
  void Call(uint32_t id, bool end_stream = false, HeaderList extra = {}) {
    ASSERT_TRUE(Feed(client_.Headers(id, GrpcRequest(kPath, std::move(extra)), end_stream)));
    ASSERT_EQ(rec_.requests.count(id), 1u);
  }
  bool Feed(std::string_view bytes) { return conn_->Feed(bytes.data(), bytes.size()); }
  // One byte per Feed call: every one must be taken.
  bool FeedBytewise(std::string_view bytes) {
    for (const char c : bytes) {
      if (!conn_->Feed(&c, 1)) return false;
    }
    return true;
  }
  std::vector<Frame> Out() { return client_.Parse(conn_->TakeOutput()); }

  void ExpectConnectionError(std::string_view bytes, ErrorCode code, uint32_t last = 0) {
    EXPECT_FALSE(Feed(bytes));
    EXPECT_TRUE(conn_->dead());
    const std::vector<Frame> frames = Out();
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(Describe(frames.back()), absl::StrCat("GOAWAY last=", last, " code=", code));
    EXPECT_FALSE(Feed(Client::Ping("12345678")));  // dead: nothing more is taken
    EXPECT_THAT(Out(), IsEmpty());
  }

  Recorder rec_;
  Client client_;
  std::unique_ptr<H2Conn> conn_;
  std::vector<Frame> server_preface_;
};

// --- the preface, SETTINGS and PING -------------------------------------------------------

TEST_F(H2ConnTest, ServerPrefaceCarriesOurSettingsAndTheConnectionWindow) {
  ConnOptions options;
  options.streams_max = 7;
  options.stream_window_bytes = 100000;
  options.connection_window_bytes = 1 << 20;
  options.header_block_bytes_max = 8192;
  Open(options);
  ASSERT_THAT(
      Describe(server_preface_),
      ElementsAre("SETTINGS f=0 n=24", absl::StrCat("WINDOW_UPDATE s=0 inc=", (1 << 20) - 65535)));
  const Frame& settings = server_preface_[0];
  EXPECT_EQ(settings.stream, 0u);
  std::vector<std::pair<int, uint32_t>> values;
  for (size_t i = 0; i < settings.payload.size(); i += 6) {
    values.emplace_back((static_cast<uint8_t>(settings.payload[i]) << 8) |
                            static_cast<uint8_t>(settings.payload[i + 1]),
                        settings.u32(i + 2));
  }
  EXPECT_THAT(values,
              ElementsAre(Pair(0x1, 0u), Pair(0x3, 7u), Pair(0x4, 100000u), Pair(0x6, 65536u)));
  EXPECT_THAT(rec_.Take(), IsEmpty());
}

TEST_F(H2ConnTest, NoConnectionWindowUpdateWhenTheWindowIsTheDefault) {
  ConnOptions options;
  options.connection_window_bytes = 65535;
  Open(options);
  EXPECT_THAT(Describe(server_preface_), ElementsAre("SETTINGS f=0 n=24"));
}

TEST_F(H2ConnTest, EveryClientSettingsIsAcknowledgedAndItsAckIsNot) {
  Open();
  ASSERT_TRUE(Feed(Client::Settings({{0x3, 10}, {0x2, 0}})));
  EXPECT_THAT(Describe(Out()), ElementsAre("SETTINGS f=1 n=0"));
  ASSERT_TRUE(Feed(Client::SettingsAck()));
  EXPECT_THAT(Out(), IsEmpty());
  ASSERT_TRUE(Feed(Client::Settings({{0x9, 1}})));  // an unknown setting is ignored
  EXPECT_THAT(Describe(Out()), ElementsAre("SETTINGS f=1 n=0"));
}

TEST_F(H2ConnTest, PingIsAnsweredWithTheSameBytes) {
  Open();
  ASSERT_TRUE(Feed(Client::Ping(std::string("\x01\x02\x03\x04\xfe\xff\x00\x7f", 8))));
  const std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("PING f=1"));
  EXPECT_EQ(frames[0].stream, 0u);
  EXPECT_EQ(frames[0].payload, std::string("\x01\x02\x03\x04\xfe\xff\x00\x7f", 8));
  EXPECT_THAT(rec_.Take(), ElementsAre("ping"));
}

TEST_F(H2ConnTest, OurPingsAckCallsOnPingAck) {
  Open();
  conn_->Ping(0x0102030405060708);
  const std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("PING f=0"));
  EXPECT_EQ(frames[0].payload, "\x01\x02\x03\x04\x05\x06\x07\x08");
  ASSERT_TRUE(Feed(Client::Ping(frames[0].payload, /*ack=*/true)));
  EXPECT_THAT(Out(), IsEmpty());  // an ACK is not answered
  EXPECT_THAT(rec_.Take(), ElementsAre("ping-ack"));
}

// --- a unary call -------------------------------------------------------------------------

TEST_F(H2ConnTest, UnaryCallByteByByte) {
  Open();
  const std::string headers = client_.Headers(
      1, GrpcRequest(kPath, {{"authorization", "Bearer tok.en"}, {"grpc-timeout", "5S"}}),
      /*end_stream=*/false, /*split=*/7);  // HEADERS and CONTINUATION frames
  ASSERT_TRUE(FeedBytewise(headers));
  EXPECT_THAT(rec_.Take(), ElementsAre(absl::StrCat("request 1 ", kPath)));
  EXPECT_EQ(rec_.requests[1].path, kPath);
  EXPECT_EQ(rec_.requests[1].authorization, "Bearer tok.en");
  EXPECT_EQ(rec_.requests[1].timeout, "5S");
  EXPECT_EQ(ParseGrpcTimeoutNanos(rec_.requests[1].timeout), 5'000'000'000);

  // One message over three DATA frames (the prefix itself cut), then END_STREAM alone.
  const std::string body("a request, \0 and \xff bytes", 24);
  const std::string message = Client::Grpc(body);
  const std::string data = Client::Data(1, message.substr(0, 3)) +
                           Client::Data(1, message.substr(3, 10)) +
                           Client::Data(1, message.substr(13));
  ASSERT_TRUE(FeedBytewise(data));
  ASSERT_EQ(rec_.messages.size(), 1u);
  EXPECT_EQ(rec_.messages[0].first, 1u);
  EXPECT_EQ(rec_.messages[0].second, body);
  rec_.Take();
  ASSERT_TRUE(FeedBytewise(Client::Data(1, "", /*end_stream=*/true)));
  EXPECT_THAT(rec_.Take(), ElementsAre("half-close 1"));
  EXPECT_THAT(Out(), IsEmpty());  // little data: no window to give back yet

  EXPECT_TRUE(conn_->SendMessage(1, "the reply"));
  std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("HEADERS s=1 f=4", "DATA s=1 f=0 n=14"));
  EXPECT_THAT(frames[0].headers,
              ElementsAre(Pair(":status", "200"), Pair("content-type", "application/grpc")));
  EXPECT_EQ(frames[1].payload, std::string("\0\0\0\0\x09the reply", 14));
  EXPECT_EQ(conn_->unsent_bytes(1), 0u);

  conn_->SendTrailers(1, absl::OkStatus());
  frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("HEADERS s=1 f=5"));  // no RST: the client closed
  EXPECT_THAT(frames[0].headers, ElementsAre(Pair("grpc-status", "0")));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 done"));
  EXPECT_TRUE(conn_->idle());

  // Gone: the Send methods ignore it.
  EXPECT_FALSE(conn_->SendMessage(1, "late"));
  conn_->SendTrailers(1, absl::OkStatus());
  EXPECT_THAT(Out(), IsEmpty());
  EXPECT_THAT(rec_.Take(), IsEmpty());
}

TEST_F(H2ConnTest, SeveralMessagesInOneFrameAnEmptyOneAndAPartialOne) {
  Open();
  Call(1);
  rec_.Take();
  const std::string four = Client::Grpc("four");
  ASSERT_TRUE(Feed(Client::Data(
      1, Client::Grpc("one") + Client::Grpc("") + Client::Grpc("three") + four.substr(0, 7))));
  EXPECT_THAT(rec_.Take(), ElementsAre("message 1 one", "message 1 ", "message 1 three"));
  ASSERT_TRUE(Feed(Client::Data(1, four.substr(7) + Client::Grpc("five").substr(0, 2))));
  EXPECT_THAT(rec_.Take(), ElementsAre("message 1 four"));
  // END_STREAM with a message cut short: INTERNAL (gRPC's answer), not a half-close.
  ASSERT_TRUE(Feed(Client::Data(1, "", /*end_stream=*/true)));
  EXPECT_THAT(rec_.Take(), ElementsAre("bad 1 INTERNAL"));
  ASSERT_EQ(rec_.bad_statuses.size(), 1u);
  EXPECT_EQ(rec_.bad_statuses[0].message(), "the stream ended in the middle of a message");
}

TEST_F(H2ConnTest, PaddedAndPrioritizedFramesAreReadPastTheirPadding) {
  Open();
  const std::string block = client_.Encode(GrpcRequest());
  ASSERT_TRUE(Feed(Client::HeaderFrames(1, block, /*end_stream=*/false, /*split=*/0, /*pad=*/9,
                                        /*priority=*/true)));
  EXPECT_THAT(rec_.Take(), ElementsAre(absl::StrCat("request 1 ", kPath)));
  ASSERT_TRUE(Feed(Client::Data(1, Client::Grpc("padded"), /*end_stream=*/true, /*pad=*/20)));
  ASSERT_TRUE(Feed(Client::Priority(1, 0, 200)));     // a PRIORITY frame: ignored
  ASSERT_TRUE(Feed(Client::Unknown(1, "whatever")));  // an unknown type: ignored
  ASSERT_TRUE(Feed(Client::Unknown(0, "")));
  EXPECT_THAT(rec_.Take(), ElementsAre("message 1 padded", "half-close 1"));
  EXPECT_THAT(Out(), IsEmpty());
}

TEST_F(H2ConnTest, RequestHeadersWithEndStream) {
  Open();
  Call(1, /*end_stream=*/true);
  EXPECT_THAT(rec_.Take(), ElementsAre(absl::StrCat("request 1 ", kPath), "half-close 1"));
  EXPECT_EQ(rec_.requests[1].authorization, "");
  EXPECT_EQ(rec_.requests[1].timeout, "");
}

TEST_F(H2ConnTest, ClientTrailersAreAHalfCloseOrAStreamError) {
  Open();
  Call(1);
  Call(3);
  rec_.Take();
  ASSERT_TRUE(Feed(client_.Headers(1, {{"x-trailer", "1"}}, /*end_stream=*/true)));
  EXPECT_THAT(rec_.Take(), ElementsAre("half-close 1"));
  ASSERT_TRUE(Feed(client_.Headers(3, {{"x-trailer", "1"}}, /*end_stream=*/false)));
  EXPECT_THAT(Describe(Out()), ElementsAre("RST_STREAM s=3 code=1"));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 3 reset"));
}

// --- trailers-only --------------------------------------------------------------------------

TEST_F(H2ConnTest, TrailersOnlyAfterTheClientsHalfClose) {
  Open();
  Call(1, /*end_stream=*/true);
  rec_.Take();
  conn_->SendTrailers(1, absl::NotFoundError("unknown code \xc3\xa9%"));
  const std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("HEADERS s=1 f=5"));
  EXPECT_THAT(
      frames[0].headers,
      ElementsAre(Pair(":status", "200"), Pair("content-type", "application/grpc"),
                  Pair("grpc-status", "5"), Pair("grpc-message", "unknown code %C3%A9%25")));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 done"));
}

TEST_F(H2ConnTest, TrailersOnlyBeforeTheClientsHalfCloseEndWithRstStreamNoError) {
  Open();
  Call(1);
  rec_.Take();
  conn_->SendTrailers(1, absl::NotFoundError("unknown code \xc3\xa9%"));
  const std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("HEADERS s=1 f=5", "RST_STREAM s=1 code=0"));
  EXPECT_THAT(
      frames[0].headers,
      ElementsAre(Pair(":status", "200"), Pair("content-type", "application/grpc"),
                  Pair("grpc-status", "5"), Pair("grpc-message", "unknown code %C3%A9%25")));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 done"));
  // The client's data in flight for it is dropped quietly.
  ASSERT_TRUE(Feed(Client::Data(1, Client::Grpc("late"), /*end_stream=*/true)));
  EXPECT_THAT(Out(), IsEmpty());
  EXPECT_THAT(rec_.Take(), IsEmpty());
}

TEST_F(H2ConnTest, TrailersFromInsideOnRequest) {
  Open();
  rec_.on_request = [&](uint32_t id) {
    conn_->SendTrailers(id, absl::UnauthenticatedError("no token"));
  };
  ASSERT_TRUE(Feed(client_.Headers(1, GrpcRequest(), /*end_stream=*/true)));
  // The stream is gone inside OnRequest: no OnHalfClose after it.
  EXPECT_THAT(rec_.Take(), ElementsAre(absl::StrCat("request 1 ", kPath), "gone 1 done"));
  // Its END_STREAM came with the request: the client's side is closed, no RST_STREAM.
  const std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("HEADERS s=1 f=5"));
  EXPECT_THAT(frames[0].headers,
              ElementsAre(Pair(":status", "200"), Pair("content-type", "application/grpc"),
                          Pair("grpc-status", "16"), Pair("grpc-message", "no token")));
}

TEST_F(H2ConnTest, TrailersFromInsideOnMessageOfTheLastFrame) {
  Open();
  Call(1);
  Call(3);
  rec_.Take();
  rec_.on_message = [&](uint32_t id) {
    conn_->SendMessage(id, "answer");
    conn_->SendTrailers(id, absl::OkStatus());
  };
  // Stream 1's message comes with END_STREAM; stream 3's without.
  ASSERT_TRUE(Feed(Client::Data(1, Client::Grpc("question"), /*end_stream=*/true)));
  ASSERT_TRUE(Feed(Client::Data(3, Client::Grpc("question"), /*end_stream=*/false)));
  EXPECT_THAT(rec_.Take(), ElementsAre("message 1 question", "gone 1 done", "message 3 question",
                                       "gone 3 done"));
  EXPECT_THAT(
      Describe(Out()),
      ElementsAre("HEADERS s=1 f=4", "DATA s=1 f=0 n=11", "HEADERS s=1 f=5", "HEADERS s=3 f=4",
                  "DATA s=3 f=0 n=11", "HEADERS s=3 f=5", "RST_STREAM s=3 code=0"));
}

// --- bad messages ---------------------------------------------------------------------------

TEST_F(H2ConnTest, MessageOverTheLimitIsResourceExhaustedAndTheRestDropped) {
  Open();
  Call(1);
  Call(3);
  conn_->SetMessageLimit(1, 10);
  conn_->SetMessageLimit(3, 10);
  rec_.Take();
  ASSERT_TRUE(Feed(Client::Data(3, Client::Grpc("0123456789"))));  // at the limit: taken
  ASSERT_TRUE(Feed(Client::Data(1, Client::Grpc("0123456789A"))));
  ASSERT_TRUE(Feed(Client::Data(1, Client::Grpc("ok"))));  // dropped, as is all that follows
  ASSERT_TRUE(Feed(Client::Data(1, "", /*end_stream=*/true)));
  EXPECT_THAT(rec_.Take(),
              ElementsAre("message 3 0123456789", "bad 1 RESOURCE_EXHAUSTED", "half-close 1"));
  ASSERT_EQ(rec_.bad_statuses.size(), 1u);
  EXPECT_EQ(rec_.bad_statuses[0].message(), "a message of 11 bytes is over the limit of 10");
  conn_->SendTrailers(1, rec_.bad_statuses[0]);
  const std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("HEADERS s=1 f=5"));
  EXPECT_THAT(frames[0].headers,
              ElementsAre(Pair(":status", "200"), Pair("content-type", "application/grpc"),
                          Pair("grpc-status", "8"),
                          Pair("grpc-message", "a message of 11 bytes is over the limit of 10")));
}

TEST_F(H2ConnTest, TheDefaultMessageLimitHoldsUntilSetMessageLimit) {
  ConnOptions options;
  options.message_bytes_max_default = 16;
  Open(options);
  Call(1);
  rec_.Take();
  ASSERT_TRUE(Feed(Client::Data(1, Client::Grpc(std::string(16, 'a')))));
  ASSERT_TRUE(Feed(Client::Data(1, Client::Grpc(std::string(17, 'b')))));
  EXPECT_THAT(rec_.Take(), ElementsAre(absl::StrCat("message 1 ", std::string(16, 'a')),
                                       "bad 1 RESOURCE_EXHAUSTED"));
}

TEST_F(H2ConnTest, CompressedMessageIsUnimplemented) {
  Open();
  Call(1);
  rec_.Take();
  ASSERT_TRUE(Feed(Client::Data(1, Client::Grpc("gz", /*compressed=*/true))));
  ASSERT_TRUE(Feed(Client::Data(1, Client::Grpc("plain"))));  // dropped
  EXPECT_THAT(rec_.Take(), ElementsAre("bad 1 UNIMPLEMENTED"));
}

// --- flow control -------------------------------------------------------------------------

TEST_F(H2ConnTest, SendingWaitsForTheClientsStreamWindow) {
  Open({}, {{0x4, 10}});  // the client's INITIAL_WINDOW_SIZE: 10 bytes
  Call(1);
  rec_.Take();
  const std::string message(100, 'x');
  EXPECT_TRUE(conn_->SendMessage(1, message));
  const std::string wire = Client::Grpc(message);
  std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("HEADERS s=1 f=4", "DATA s=1 f=0 n=10"));
  EXPECT_EQ(frames[1].payload, wire.substr(0, 10));
  EXPECT_EQ(conn_->unsent_bytes(1), 95u);  // 5 + 100 - 10

  ASSERT_TRUE(Feed(Client::WindowUpdate(1, 50)));
  frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("DATA s=1 f=0 n=50"));
  EXPECT_EQ(frames[0].payload, wire.substr(10, 50));
  EXPECT_EQ(conn_->unsent_bytes(1), 45u);
  EXPECT_THAT(rec_.Take(), ElementsAre("writable 1"));

  conn_->SendTrailers(1, absl::OkStatus());  // waits behind the 45 bytes
  EXPECT_THAT(Out(), IsEmpty());
  EXPECT_FALSE(conn_->SendMessage(1, "after the trailers"));
  EXPECT_THAT(rec_.Take(), IsEmpty());

  ASSERT_TRUE(Feed(Client::WindowUpdate(1, 44)));
  frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("DATA s=1 f=0 n=44"));
  EXPECT_THAT(rec_.Take(), IsEmpty());  // trailers queued: nothing more to write
  ASSERT_TRUE(Feed(Client::WindowUpdate(1, 1000)));
  frames = Out();
  ASSERT_THAT(Describe(frames),
              ElementsAre("DATA s=1 f=0 n=1", "HEADERS s=1 f=5", "RST_STREAM s=1 code=0"));
  EXPECT_EQ(frames[0].payload, "x");
  EXPECT_THAT(frames[1].headers, ElementsAre(Pair("grpc-status", "0")));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 done"));
}

TEST_F(H2ConnTest, ClientSettingsChangeOpenStreamsWindows) {
  Open({}, {{0x4, 10}});
  Call(1);
  EXPECT_TRUE(conn_->SendMessage(1, std::string(100, 'y')));
  ASSERT_THAT(Describe(Out()), ElementsAre("HEADERS s=1 f=4", "DATA s=1 f=0 n=10"));
  rec_.Take();
  ASSERT_TRUE(Feed(Client::Settings({{0x4, 40}})));  // +30 on every stream
  EXPECT_THAT(Describe(Out()), ElementsAre("SETTINGS f=1 n=0", "DATA s=1 f=0 n=30"));
  EXPECT_THAT(rec_.Take(), ElementsAre("writable 1"));
  ASSERT_TRUE(Feed(Client::Settings({{0x4, 0}})));  // -40: the window is now -40
  EXPECT_THAT(Describe(Out()), ElementsAre("SETTINGS f=1 n=0"));
  ASSERT_TRUE(Feed(Client::WindowUpdate(1, 45)));  // to 5
  EXPECT_THAT(Describe(Out()), ElementsAre("DATA s=1 f=0 n=5"));
  EXPECT_EQ(conn_->unsent_bytes(1), 60u);
}

TEST_F(H2ConnTest, SendingWaitsForTheClientsConnectionWindow) {
  Open({}, {{0x4, 1 << 20}});
  Call(1);
  EXPECT_TRUE(conn_->SendMessage(1, std::string(70000, 'z')));
  // The connection's window is 65,535 bytes, in frames of at most 16,384.
  EXPECT_THAT(Describe(Out()),
              ElementsAre("HEADERS s=1 f=4", "DATA s=1 f=0 n=16384", "DATA s=1 f=0 n=16384",
                          "DATA s=1 f=0 n=16384", "DATA s=1 f=0 n=16383"));
  EXPECT_EQ(conn_->unsent_bytes(1), 70005u - 65535u);
  rec_.Take();
  ASSERT_TRUE(Feed(Client::WindowUpdate(0, 10000)));
  EXPECT_THAT(Describe(Out()), ElementsAre("DATA s=1 f=0 n=4470"));
  EXPECT_THAT(rec_.Take(), ElementsAre("writable 1"));
  EXPECT_EQ(conn_->unsent_bytes(1), 0u);
}

TEST_F(H2ConnTest, DataFramesFollowTheClientsMaxFrameSize) {
  Open({}, {{0x4, 1 << 20}, {0x5, 20000}});
  Call(1);
  EXPECT_TRUE(conn_->SendMessage(1, std::string(30000, 'w')));
  EXPECT_THAT(Describe(Out()),
              ElementsAre("HEADERS s=1 f=4", "DATA s=1 f=0 n=20000", "DATA s=1 f=0 n=10005"));
}

TEST_F(H2ConnTest, OurWindowsAreGivenBackPastHalf) {
  ConnOptions options;
  options.stream_window_bytes = 65535;
  options.connection_window_bytes = 65535;
  Open(options);
  Call(1);
  conn_->SetMessageLimit(1, 1 << 20);
  rec_.Take();
  const std::string message = Client::Grpc(std::string(100000, 'm'));
  ASSERT_TRUE(Feed(Client::Data(1, message.substr(0, 16384))));
  EXPECT_THAT(Out(), IsEmpty());
  ASSERT_TRUE(Feed(Client::Data(1, message.substr(16384, 16383))));  // 32,767: half
  EXPECT_THAT(Describe(Out()),
              ElementsAre("WINDOW_UPDATE s=0 inc=32767", "WINDOW_UPDATE s=1 inc=32767"));
  ASSERT_TRUE(Feed(Client::Data(1, message.substr(32767, 16384))));
  EXPECT_THAT(Out(), IsEmpty());
  // Padding counts too.
  ASSERT_TRUE(Feed(Client::Data(1, message.substr(49151, 16128), false, /*pad=*/255)));
  EXPECT_THAT(Describe(Out()),
              ElementsAre("WINDOW_UPDATE s=0 inc=32768", "WINDOW_UPDATE s=1 inc=32768"));
  ASSERT_TRUE(Feed(Client::Data(1, message.substr(65279, 16384))));
  EXPECT_THAT(Out(), IsEmpty());
  ASSERT_TRUE(Feed(Client::Data(1, message.substr(81663, 16384))));
  EXPECT_THAT(Describe(Out()),
              ElementsAre("WINDOW_UPDATE s=0 inc=32768", "WINDOW_UPDATE s=1 inc=32768"));
  EXPECT_THAT(rec_.Take(), IsEmpty());
  ASSERT_TRUE(Feed(Client::Data(1, message.substr(98047), /*end_stream=*/true)));  // 1,958
  EXPECT_THAT(rec_.Take(), ElementsAre("message 1 (100000 bytes)", "half-close 1"));
  ASSERT_EQ(rec_.messages.size(), 1u);
  EXPECT_TRUE(rec_.messages[0].second == std::string(100000, 'm'));
  EXPECT_THAT(Out(), IsEmpty());
}

// Our windows are given back as the data is taken, which is at once: a client that sends
// without waiting for our WINDOW_UPDATEs never runs past them (with frames of at most 16,384
// bytes and windows of at least 65,535, half a window is always left).
TEST_F(H2ConnTest, TheReceiveWindowsNeverRunOutForAClientThatDoesNotWait) {
  ConnOptions options;
  options.stream_window_bytes = 65535;
  options.connection_window_bytes = 65535;
  Open(options);
  Call(1);
  Call(3);
  conn_->SetMessageLimit(1, 1 << 24);
  conn_->SetMessageLimit(3, 1 << 24);
  const std::string chunk(16384, 'c');
  ASSERT_TRUE(Feed(Client::Data(1, Client::Grpc(std::string(4 << 20, 'c')).substr(0, 5))));
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(Feed(Client::Data(i % 2 == 0 ? 1 : 3, chunk)));
  EXPECT_FALSE(conn_->dead());
  int64_t connection = 0;
  for (const Frame& f : Out()) {
    ASSERT_EQ(f.type, kWindowUpdate);
    if (f.stream == 0) connection += f.u32(0);
  }
  EXPECT_GE(connection, 300 * 16384 + 5 - 32767);
}

// A queue longer than 64 KiB is sent in order as the windows open (the sent part of it is
// dropped from the front as it goes).
TEST_F(H2ConnTest, ALongQueueGoesOutInOrder) {
  Open({}, {{0x4, 1 << 20}});
  Call(1, /*end_stream=*/true);
  std::string expected;
  for (int i = 0; i < 20; ++i) {
    const std::string message(10000, static_cast<char>('a' + i));
    EXPECT_TRUE(conn_->SendMessage(1, message));
    expected += Client::Grpc(message);
  }
  conn_->SendTrailers(1, absl::OkStatus());
  std::string got;
  const auto take = [&] {
    for (const Frame& f : Out()) {
      if (f.type == kData) got += f.payload;
      if (f.type == kHeaders && (f.flags & kEndStream) != 0) got += "<trailers>";
    }
  };
  take();
  EXPECT_EQ(got.size(), 65535u);
  EXPECT_EQ(conn_->unsent_bytes(1), expected.size() - 65535);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(Feed(Client::WindowUpdate(0, 30000)));
    take();
    EXPECT_EQ(got.size(), 65535u + 30000u * (i + 1));
  }
  EXPECT_EQ(conn_->unsent_bytes(1), expected.size() - 185535);
  ASSERT_TRUE(Feed(Client::WindowUpdate(0, 1 << 20)));
  take();
  EXPECT_TRUE(got == expected + "<trailers>");
  EXPECT_THAT(rec_.Take(),
              ElementsAre(absl::StrCat("request 1 ", kPath), "half-close 1", "gone 1 done"));
}

// --- limits and errors ----------------------------------------------------------------------

TEST_F(H2ConnTest, StreamsOverTheMaximumAreRefusedAndTheirHeadersStillDecoded) {
  ConnOptions options;
  options.streams_max = 2;
  Open(options);
  Call(1);
  Call(3);
  rec_.Take();
  // Stream 5 is refused, but its block adds to the client's table (and so to ours): stream
  // 7's block refers to those entries.
  const HeaderList five =
      GrpcRequest("/svc/Five", {{"authorization", "Bearer five"}, {"grpc-timeout", "777m"}});
  const std::string block5 = client_.Encode(five);
  ASSERT_TRUE(Feed(Client::HeaderFrames(5, block5, /*end_stream=*/false)));
  EXPECT_THAT(Describe(Out()), ElementsAre("RST_STREAM s=5 code=7"));
  EXPECT_THAT(rec_.Take(), IsEmpty());
  EXPECT_EQ(conn_->open_streams(), 2u);
  ASSERT_TRUE(Feed(Client::Data(5, Client::Grpc("in flight"), /*end_stream=*/true)));  // dropped
  EXPECT_THAT(Out(), IsEmpty());

  conn_->SendTrailers(1, absl::OkStatus());
  Out();
  const std::string block7 = client_.Encode(five);
  // grpc-timeout and the rest come from the table (nghttp2 never indexes authorization and
  // :path).
  EXPECT_LT(block7.size(), block5.size());
  ASSERT_TRUE(Feed(Client::HeaderFrames(7, block7, /*end_stream=*/true)));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 done", "request 7 /svc/Five", "half-close 7"));
  EXPECT_EQ(rec_.requests[7].authorization, "Bearer five");
  EXPECT_EQ(rec_.requests[7].timeout, "777m");
}

TEST_F(H2ConnTest, HeaderBlockOverTheMaximumKillsTheConnection) {
  ConnOptions options;
  options.header_block_bytes_max = 100;
  Open(options);
  Call(1);  // well under 100 bytes
  rec_.Take();
  std::string big;
  for (int i = 0; i < 200; ++i) big.push_back(static_cast<char>('!' + (i * 37) % 90));
  ExpectConnectionError(client_.Headers(3, GrpcRequest(kPath, {{"x-big", big}}), true),
                        kEnhanceYourCalm, /*last=*/1);
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 reset"));
}

TEST_F(H2ConnTest, HeaderBlockOverTheMaximumAcrossContinuationsKillsTheConnection) {
  ConnOptions options;
  options.header_block_bytes_max = 100;
  Open(options);
  const std::string block(60, '\x82');  // ":method GET" again and again: each frame is fine
  ASSERT_TRUE(Feed(Client::Frame(kHeaders, 0, 1, block)));                     // no END_HEADERS
  ASSERT_TRUE(Feed(Client::Frame(kContinuation, 0, 1, block.substr(0, 40))));  // 100: fine
  ExpectConnectionError(Client::Frame(kContinuation, kEndHeaders, 1, block.substr(0, 1)),
                        kEnhanceYourCalm);
}

// A small block that decodes to much more (a big dynamic-table entry referred to again and
// again): past 64 KiB of decoded headers the connection dies.
TEST_F(H2ConnTest, HpackBombIsCut) {
  Open();
  const std::string entry = LiteralIndexed("x-bomb", std::string(4000, 'b'));  // 4,038 in the table
  // 15 times: 60,570 bytes (with the rest, under 64 KiB): taken.
  ASSERT_TRUE(Feed(Client::HeaderFrames(
      1, HandMadeRequest("/svc/Bomb") + entry + std::string(14, '\xbe'), /*end_stream=*/true)));
  EXPECT_THAT(rec_.Take(), ElementsAre("request 1 /svc/Bomb", "half-close 1"));
  // 17 times, from a 20-byte block.
  const std::string bomb = HandMadeRequest("/svc/Bomb") + std::string(17, '\xbe');
  ASSERT_LT(bomb.size(), 50u);
  ExpectConnectionError(Client::HeaderFrames(3, bomb, /*end_stream=*/true), kEnhanceYourCalm, 1);
}

TEST_F(H2ConnTest, BadPreface) {
  conn_ = std::make_unique<H2Conn>(rec_, ConnOptions{});
  conn_->Start();
  Out();
  ASSERT_TRUE(FeedBytewise("PRI * HTTP/2.0\r\n"));  // a prefix of it: waits
  ExpectConnectionError("\r\nXX\r\n\r\n", kProtocolError);
}

TEST_F(H2ConnTest, AnHttp1RequestIsNotAPreface) {
  conn_ = std::make_unique<H2Conn>(rec_, ConnOptions{});
  conn_->Start();
  Out();
  ExpectConnectionError("GET / HTTP/1.1\r\nHost: x\r\n\r\n", kProtocolError);
}

TEST_F(H2ConnTest, FirstFrameMustBeSettings) {
  conn_ = std::make_unique<H2Conn>(rec_, ConnOptions{});
  conn_->Start();
  Out();
  ExpectConnectionError(Client::Preface() + Client::Ping("12345678"), kProtocolError);
}

TEST_F(H2ConnTest, FrameOverMaxFrameSize) {
  Open();
  // Its header alone is enough.
  ExpectConnectionError(std::string("\x00\x40\x01\x00\x00\x00\x00\x00\x01", 9), kFrameSizeError);
}

TEST_F(H2ConnTest, FrameOfExactlyMaxFrameSizeIsTaken) {
  Open();
  Call(1);
  conn_->SetMessageLimit(1, 1 << 20);
  ASSERT_TRUE(Feed(Client::Data(1, std::string(16384, '\0'))));
  EXPECT_FALSE(conn_->dead());
}

TEST_F(H2ConnTest, EvenStreamIdIsAProtocolError) {
  Open();
  ExpectConnectionError(client_.Headers(2, GrpcRequest(), true), kProtocolError);
  EXPECT_THAT(rec_.Take(), IsEmpty());
}

TEST_F(H2ConnTest, EvenStreamIdBelowTheLastIsAProtocolErrorToo) {
  Open();
  Call(3);
  rec_.Take();
  ExpectConnectionError(client_.Headers(2, GrpcRequest(), true), kProtocolError, 3);
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 3 reset"));
}

TEST_F(H2ConnTest, HeadersOnAClosedStreamIsStreamClosed) {
  Open();
  Call(1, true);
  conn_->SendTrailers(1, absl::OkStatus());
  Out();
  ExpectConnectionError(client_.Headers(1, GrpcRequest(), true), kStreamClosed, 1);
}

TEST_F(H2ConnTest, DataOnAnIdleStream) {
  Open();
  ExpectConnectionError(Client::Data(1, Client::Grpc("x")), kProtocolError);
}

TEST_F(H2ConnTest, ContinuationWithoutHeaders) {
  Open();
  ExpectConnectionError(Client::Frame(kContinuation, kEndHeaders, 1, "\x82"), kProtocolError);
}

TEST_F(H2ConnTest, AHeaderBlockInterruptedByAnotherFrame) {
  Open();
  std::string headers = client_.Headers(1, GrpcRequest(), false, /*split=*/5);
  headers.resize(9 + 5);  // the HEADERS frame alone, without END_HEADERS
  ExpectConnectionError(headers + Client::Ping("12345678"), kProtocolError);
}

TEST_F(H2ConnTest, ContinuationOnAnotherStream) {
  Open();
  std::string headers = client_.Headers(1, GrpcRequest(), false, /*split=*/5);
  headers.resize(9 + 5);
  ExpectConnectionError(headers + Client::Frame(kContinuation, kEndHeaders, 3, "\x82"),
                        kProtocolError);
}

TEST_F(H2ConnTest, PushPromiseFromAClient) {
  Open();
  Call(1);
  ExpectConnectionError(Client::Frame(kPushPromise, kEndHeaders, 1, Be32(2) + "\x82"),
                        kProtocolError, 1);
}

TEST_F(H2ConnTest, MalformedControlFrames) {
  const std::vector<std::pair<std::string, ErrorCode>> cases = {
      {Client::Frame(kSettings, kAck, 0, "x"), kFrameSizeError},
      {Client::Frame(kSettings, 0, 0, "12345"), kFrameSizeError},
      {Client::Frame(kSettings, 0, 1, ""), kProtocolError},
      {Client::Settings({{0x4, 0x80000000u}}), kFlowControlError},
      {Client::Settings({{0x2, 2}}), kProtocolError},
      {Client::Settings({{0x5, 16383}}), kProtocolError},
      {Client::Frame(kPing, 0, 0, "1234567"), kFrameSizeError},
      {Client::Frame(kPing, 0, 1, "12345678"), kProtocolError},
      {Client::Frame(kGoAway, 0, 0, "1234567"), kFrameSizeError},
      {Client::Frame(kGoAway, 0, 1, "12345678"), kProtocolError},
      {Client::Frame(kRstStream, 0, 0, Be32(0)), kProtocolError},
      {Client::Frame(kRstStream, 0, 1, "123"), kFrameSizeError},
      {Client::RstStream(9, kCancel), kProtocolError},  // idle
      {Client::Frame(kWindowUpdate, 0, 0, "123"), kFrameSizeError},
      {Client::WindowUpdate(0, 0), kProtocolError},
      {Client::WindowUpdate(0, 0x7fffffff), kFlowControlError},
      {Client::WindowUpdate(9, 1), kProtocolError},  // idle
      {Client::Frame(kPriority, 0, 0, "12345"), kProtocolError},
      {Client::Frame(kHeaders, kEndHeaders, 0, "\x82"), kProtocolError},
      {Client::Frame(kData, 0, 0, ""), kProtocolError},
      {Client::Frame(kHeaders, kEndHeaders, 1, std::string("\xff\xff\xff\xff\xff\xff", 6)),
       kCompressionError},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [bytes, code] = cases[i];
    SCOPED_TRACE(absl::StrCat("case ", i));
    Open();
    ExpectConnectionError(bytes, code);
  }
}

TEST_F(H2ConnTest, StreamLevelErrors) {
  Open();
  Call(1);
  Call(3);
  Call(5, /*end_stream=*/true);
  rec_.Take();
  ASSERT_TRUE(Feed(Client::WindowUpdate(1, 0)));
  ASSERT_TRUE(Feed(Client::WindowUpdate(3, 0x7fffffff)));
  ASSERT_TRUE(Feed(Client::Data(5, Client::Grpc("after END_STREAM"))));
  EXPECT_THAT(Describe(Out()), ElementsAre("RST_STREAM s=1 code=1", "RST_STREAM s=3 code=3",
                                           "RST_STREAM s=5 code=5"));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 reset", "gone 3 reset", "gone 5 reset"));
  Call(7);
  rec_.Take();
  ASSERT_TRUE(Feed(Client::Frame(kPriority, 0, 7, "1234")));
  EXPECT_THAT(Describe(Out()), ElementsAre("RST_STREAM s=7 code=6"));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 7 reset"));
  EXPECT_FALSE(conn_->dead());
}

TEST_F(H2ConnTest, SettingsThatPushAStreamWindowPastTheMaximum) {
  Open();
  Call(1);
  ASSERT_TRUE(Feed(Client::WindowUpdate(1, 0x7fffffff - 65535)));  // 2^31-1: the most
  EXPECT_THAT(Out(), IsEmpty());
  ExpectConnectionError(Client::Settings({{0x4, 65536}}), kFlowControlError, 1);
}

TEST_F(H2ConnTest, ClientRstStreamEndsTheStreamOnce) {
  Open();
  Call(1);
  rec_.Take();
  ASSERT_TRUE(Feed(Client::RstStream(1, kCancel)));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 reset"));
  ASSERT_TRUE(Feed(Client::RstStream(1, kCancel)));
  ASSERT_TRUE(Feed(Client::WindowUpdate(1, 100)));  // closed, not idle: ignored
  EXPECT_THAT(rec_.Take(), IsEmpty());
  EXPECT_FALSE(conn_->SendMessage(1, "x"));
  conn_->SendTrailers(1, absl::OkStatus());
  EXPECT_THAT(Out(), IsEmpty());
  EXPECT_TRUE(conn_->idle());
}

TEST_F(H2ConnTest, OurResetStream) {
  Open();
  Call(1);
  rec_.Take();
  conn_->ResetStream(1, kCancel);
  EXPECT_THAT(Describe(Out()), ElementsAre("RST_STREAM s=1 code=8"));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 reset"));
}

TEST_F(H2ConnTest, NotPostIs405) {
  Open();
  HeaderList headers = GrpcRequest();
  headers[0].second = "GET";
  ASSERT_TRUE(Feed(client_.Headers(1, headers, /*end_stream=*/true)));
  std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("HEADERS s=1 f=5"));
  EXPECT_THAT(frames[0].headers, ElementsAre(Pair(":status", "405")));
  ASSERT_TRUE(Feed(client_.Headers(3, headers, /*end_stream=*/false)));
  frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("HEADERS s=3 f=5", "RST_STREAM s=3 code=0"));
  EXPECT_THAT(frames[0].headers, ElementsAre(Pair(":status", "405")));
  EXPECT_THAT(rec_.Take(), IsEmpty());
  EXPECT_TRUE(conn_->idle());
}

TEST_F(H2ConnTest, NotGrpcIs415) {
  Open();
  HeaderList headers = GrpcRequest();
  headers[4].second = "application/json";
  ASSERT_TRUE(Feed(client_.Headers(1, headers, /*end_stream=*/true)));
  std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("HEADERS s=1 f=5"));
  EXPECT_THAT(frames[0].headers, ElementsAre(Pair(":status", "415")));
  // "application/grpc+proto" is gRPC.
  headers[4].second = "application/grpc+proto";
  ASSERT_TRUE(Feed(client_.Headers(3, headers, /*end_stream=*/true)));
  EXPECT_THAT(rec_.Take(),
              ElementsAre("request 3 /courtpiece.client.v1.CourtPiece/GetProfile", "half-close 3"));
}

TEST_F(H2ConnTest, OutputNeverTakenKillsTheConnection) {
  ConnOptions options;
  options.output_bytes_max = 1000;
  Open(options);
  Call(1);
  rec_.Take();
  std::string pings;
  for (int i = 0; i < 58; ++i) pings += Client::Ping("pingping");
  ASSERT_TRUE(Feed(pings));  // 58 answers of 17 bytes: 986, within the bound
  EXPECT_EQ(conn_->output_size(), 986u);
  EXPECT_FALSE(Feed(Client::Ping("pingping")));  // 1,003: past it
  EXPECT_TRUE(conn_->dead());
  std::vector<std::string> events = rec_.Take();
  ASSERT_EQ(events.size(), 60u);
  EXPECT_EQ(events.back(), "gone 1 reset");
  const std::vector<Frame> frames = Out();
  ASSERT_EQ(frames.size(), 59u);  // the answers, no GOAWAY: it would not be read either
  for (const Frame& f : frames) EXPECT_EQ(Describe(f), "PING f=1");
  EXPECT_FALSE(conn_->SendMessage(1, "x"));
  conn_->Ping(1);
  EXPECT_THAT(Out(), IsEmpty());
}

TEST_F(H2ConnTest, APingFloodThatIsReadIsFine) {
  ConnOptions options;
  options.output_bytes_max = 1000;
  Open(options);
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(Feed(Client::Ping("pingping")));
    ASSERT_THAT(Describe(Out()), ElementsAre("PING f=1"));
  }
}

// --- HPACK: the client's dynamic table, then none -------------------------------------------

TEST_F(H2ConnTest, ClientsDynamicTableBeforeAndAfterOurSettingsAck) {
  Open();
  const HeaderList request =
      GrpcRequest("/svc/Indexed", {{"authorization", "Bearer abcdefghijklmnop"},
                                   {"grpc-timeout", "250m"},
                                   {"user-agent", "grpc-kotlin/1.4"}});
  // Before the client has acknowledged our SETTINGS its table is 4,096 bytes.
  const std::string block1 = client_.Encode(request);
  const std::string block3 = client_.Encode(request);
  // Indexed: all but authorization and :path (nghttp2's deflater never indexes those).
  EXPECT_LT(block3.size() + 20, block1.size());
  ASSERT_TRUE(Feed(Client::HeaderFrames(1, block1, true)));
  ASSERT_TRUE(Feed(Client::HeaderFrames(3, block3, true)));
  for (const uint32_t id : {1u, 3u}) {
    EXPECT_EQ(rec_.requests[id].path, "/svc/Indexed");
    EXPECT_EQ(rec_.requests[id].authorization, "Bearer abcdefghijklmnop");
    EXPECT_EQ(rec_.requests[id].timeout, "250m");
  }
  // The client applies our HEADER_TABLE_SIZE 0 and acknowledges: its next block starts with
  // a table size update to 0, and carries everything as literals.
  ASSERT_EQ(nghttp2_hd_deflate_change_table_size(client_.deflater(), 0), 0);
  ASSERT_TRUE(Feed(Client::SettingsAck()));
  const std::string block5 = client_.Encode(request);
  ASSERT_FALSE(block5.empty());
  EXPECT_EQ(static_cast<uint8_t>(block5[0]), 0x20);  // dynamic table size update: 0
  ASSERT_TRUE(Feed(Client::HeaderFrames(5, block5, true)));
  const std::string block7 = client_.Encode(request);
  EXPECT_NE(static_cast<uint8_t>(block7[0]), 0x20);  // said once
  ASSERT_TRUE(Feed(Client::HeaderFrames(7, block7, true)));
  for (const uint32_t id : {5u, 7u}) {
    EXPECT_EQ(rec_.requests[id].path, "/svc/Indexed");
    EXPECT_EQ(rec_.requests[id].authorization, "Bearer abcdefghijklmnop");
    EXPECT_EQ(rec_.requests[id].timeout, "250m");
  }
  EXPECT_FALSE(conn_->dead());
}

TEST_F(H2ConnTest, TableSizeUpdateBeforeTheAckIsFineToo) {
  Open();
  const HeaderList request = GrpcRequest("/svc/Early", {{"authorization", "Bearer early"}});
  ASSERT_TRUE(Feed(client_.Headers(1, request, true)));  // indexes
  ASSERT_EQ(nghttp2_hd_deflate_change_table_size(client_.deflater(), 0), 0);
  ASSERT_TRUE(Feed(client_.Headers(3, request, true)));  // the update, ahead of the ACK
  ASSERT_TRUE(Feed(Client::SettingsAck()));
  ASSERT_TRUE(Feed(client_.Headers(5, request, true)));  // no update needed now
  for (const uint32_t id : {1u, 3u, 5u}) {
    EXPECT_EQ(rec_.requests[id].path, "/svc/Early");
    EXPECT_EQ(rec_.requests[id].authorization, "Bearer early");
  }
}

// Our HEADER_TABLE_SIZE 0 is a request, not enforced: a client that ignores it (its blocks
// keep using the table it built, with no size update) is still decoded.
TEST_F(H2ConnTest, AClientThatKeepsItsTableAfterOurSettingsIsStillDecoded) {
  Open();
  const HeaderList request = GrpcRequest();
  ASSERT_TRUE(Feed(client_.Headers(1, request, true)));
  ASSERT_TRUE(Feed(Client::SettingsAck()));
  rec_.Take();
  const std::string second = client_.Headers(3, request, true);
  ASSERT_TRUE(Feed(second));
  EXPECT_FALSE(conn_->dead());
  const std::vector<std::string> events = rec_.Take();
  ASSERT_FALSE(events.empty());
  EXPECT_THAT(events[0], ::testing::StartsWith("request 3 "));
}

// A client that asks for no table of ours (its SETTINGS_HEADER_TABLE_SIZE 0) decodes our
// header blocks with an inflater that expects a table size update first (RFC 7541 4.2; what
// nghttp2's client does).
TEST_F(H2ConnTest, OurHeaderBlocksSuitAClientWithoutATable) {
  Open({}, {{0x1, 0}});
  ASSERT_EQ(nghttp2_hd_inflate_change_table_size(client_.inflater(), 0), 0);  // on our ACK
  Call(1);
  Call(3, /*end_stream=*/true);
  EXPECT_TRUE(conn_->SendMessage(1, "hello"));
  conn_->SendTrailers(1, absl::OkStatus());
  conn_->SendTrailers(3, absl::InternalError("x"));
  const std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames),
              ElementsAre("HEADERS s=1 f=4", "DATA s=1 f=0 n=10", "HEADERS s=1 f=5",
                          "RST_STREAM s=1 code=0", "HEADERS s=3 f=5"));
  EXPECT_THAT(frames[0].headers,
              ElementsAre(Pair(":status", "200"), Pair("content-type", "application/grpc")));
  EXPECT_THAT(frames[2].headers, ElementsAre(Pair("grpc-status", "0")));
  EXPECT_THAT(frames[4].headers,
              ElementsAre(Pair(":status", "200"), Pair("content-type", "application/grpc"),
                          Pair("grpc-status", "13"), Pair("grpc-message", "x")));
}

// --- GOAWAY -------------------------------------------------------------------------------

TEST_F(H2ConnTest, GoAwayNoErrorLetsOpenStreamsFinishAndRefusesNewOnes) {
  Open();
  Call(1);
  Call(3);
  rec_.Take();
  conn_->GoAway(kNoError, "draining");
  std::vector<Frame> frames = Out();
  ASSERT_THAT(Describe(frames), ElementsAre("GOAWAY last=3 code=0"));
  EXPECT_EQ(frames[0].payload.substr(8), "draining");
  EXPECT_TRUE(conn_->goaway_sent());
  EXPECT_FALSE(conn_->dead());

  ASSERT_TRUE(Feed(client_.Headers(5, GrpcRequest(), true)));
  EXPECT_THAT(Describe(Out()), ElementsAre("RST_STREAM s=5 code=7"));
  EXPECT_THAT(rec_.Take(), IsEmpty());

  ASSERT_TRUE(Feed(Client::Data(1, Client::Grpc("still"), true)));
  EXPECT_TRUE(conn_->SendMessage(1, "yes"));
  conn_->SendTrailers(1, absl::OkStatus());
  EXPECT_THAT(Describe(Out()),
              ElementsAre("HEADERS s=1 f=4", "DATA s=1 f=0 n=8", "HEADERS s=1 f=5"));
  EXPECT_THAT(rec_.Take(), ElementsAre("message 1 still", "half-close 1", "gone 1 done"));
  EXPECT_EQ(conn_->open_streams(), 1u);
}

// A second GOAWAY never names a higher stream than the first (RFC 9113 6.8), though streams
// were refused after it.
TEST_F(H2ConnTest, ASecondGoAwayKeepsTheFirstsLastStream) {
  Open();
  Call(1);
  rec_.Take();
  conn_->GoAway(kNoError, "draining");
  EXPECT_THAT(Describe(Out()), ElementsAre("GOAWAY last=1 code=0"));
  ASSERT_TRUE(Feed(client_.Headers(3, GrpcRequest(), true)));
  EXPECT_THAT(Describe(Out()), ElementsAre("RST_STREAM s=3 code=7"));
  conn_->GoAway(kEnhanceYourCalm, "too_many_pings");
  EXPECT_THAT(Describe(Out()), ElementsAre("GOAWAY last=1 code=11"));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 reset"));
}

// Unfinished messages held for all streams together are bounded: the stream whose data would
// pass the bound is refused RESOURCE_EXHAUSTED; the others keep theirs, and the bytes of a
// stream that ends are counted out.
TEST_F(H2ConnTest, UnfinishedMessagesAreBoundedPerConnection) {
  ConnOptions options;
  options.partial_bytes_max = 1000;
  Open(options);
  Call(1);
  Call(3);
  Call(5);
  conn_->SetMessageLimit(1, 4000);
  conn_->SetMessageLimit(3, 4000);
  conn_->SetMessageLimit(5, 4000);
  rec_.Take();
  const std::string big = Client::Grpc(std::string(3000, 'x'));
  ASSERT_TRUE(Feed(Client::Data(1, big.substr(0, 600))));
  EXPECT_THAT(rec_.Take(), IsEmpty());
  ASSERT_TRUE(Feed(Client::Data(3, big.substr(0, 600))));  // 1,200 held: over
  EXPECT_THAT(rec_.Take(), ElementsAre("bad 3 RESOURCE_EXHAUSTED"));
  EXPECT_EQ(rec_.bad_statuses.back().message(), "too much unfinished data on this connection");
  // Stream 1 ends: its 600 bytes are let go, and 5 may hold as much.
  ASSERT_TRUE(Feed(Client::RstStream(1, kCancel)));
  ASSERT_TRUE(Feed(Client::Data(5, big.substr(0, 900))));
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 reset"));
  // A whole message in one piece is never held.
  ASSERT_TRUE(Feed(Client::Data(5, big.substr(900))));
  EXPECT_THAT(rec_.Take(), ElementsAre("message 5 (3000 bytes)"));
}

TEST_F(H2ConnTest, AbortEndsEveryStreamAndStopsReading) {
  Open();
  Call(1);
  rec_.Take();
  conn_->Abort();
  EXPECT_TRUE(conn_->dead());
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 reset"));
  EXPECT_THAT(Out(), IsEmpty());
  EXPECT_FALSE(Feed(client_.Headers(3, GrpcRequest(), true)));
  EXPECT_THAT(rec_.Take(), IsEmpty());
}

TEST_F(H2ConnTest, GoAwayWithAnErrorEndsEverything) {
  Open();
  Call(1);
  Call(3);
  rec_.Take();
  conn_->GoAway(kInternalError, "bye");
  EXPECT_THAT(Describe(Out()), ElementsAre("GOAWAY last=3 code=2"));
  EXPECT_TRUE(conn_->dead());
  EXPECT_THAT(rec_.Take(), ElementsAre("gone 1 reset", "gone 3 reset"));
  EXPECT_FALSE(Feed(Client::Ping("12345678")));
  EXPECT_THAT(Out(), IsEmpty());
}

TEST_F(H2ConnTest, ClientsGoAwayIsNoted) {
  Open();
  Call(1);
  EXPECT_FALSE(conn_->peer_goaway());
  ASSERT_TRUE(Feed(Client::GoAway(0, kNoError, "client leaving")));
  EXPECT_TRUE(conn_->peer_goaway());
  EXPECT_FALSE(conn_->dead());
  EXPECT_EQ(conn_->open_streams(), 1u);
}

// --- helpers ------------------------------------------------------------------------------

TEST(GrpcTimeoutTest, Units) {
  EXPECT_EQ(ParseGrpcTimeoutNanos("1H"), int64_t{3600} * 1'000'000'000);
  EXPECT_EQ(ParseGrpcTimeoutNanos("2M"), int64_t{120} * 1'000'000'000);
  EXPECT_EQ(ParseGrpcTimeoutNanos("3S"), 3'000'000'000);
  EXPECT_EQ(ParseGrpcTimeoutNanos("4m"), 4'000'000);
  EXPECT_EQ(ParseGrpcTimeoutNanos("5u"), 5'000);
  EXPECT_EQ(ParseGrpcTimeoutNanos("6n"), 6);
  EXPECT_EQ(ParseGrpcTimeoutNanos("0S"), 0);
  EXPECT_EQ(ParseGrpcTimeoutNanos("99999999n"), 99'999'999);        // 8 digits: the most
  EXPECT_EQ(ParseGrpcTimeoutNanos("00000100m"), 100'000'000);       // leading zeros count
  EXPECT_EQ(ParseGrpcTimeoutNanos("99999999H"), int64_t{1} << 62);  // ~11,000 years: capped
}

TEST(GrpcTimeoutTest, Malformed) {
  EXPECT_EQ(ParseGrpcTimeoutNanos(""), -1);
  EXPECT_EQ(ParseGrpcTimeoutNanos("S"), -1);
  EXPECT_EQ(ParseGrpcTimeoutNanos("5"), -1);
  EXPECT_EQ(ParseGrpcTimeoutNanos("123456789S"), -1);  // 9 digits
  EXPECT_EQ(ParseGrpcTimeoutNanos("5s"), -1);
  EXPECT_EQ(ParseGrpcTimeoutNanos("5x"), -1);
  EXPECT_EQ(ParseGrpcTimeoutNanos("-5S"), -1);
  EXPECT_EQ(ParseGrpcTimeoutNanos("5 S"), -1);
  EXPECT_EQ(ParseGrpcTimeoutNanos(" 5S"), -1);
}

TEST(PercentEncodeTest, EncodesPercentAndBytesOutsidePrintableAscii) {
  EXPECT_EQ(PercentEncode(""), "");
  EXPECT_EQ(PercentEncode("plain text ~!"), "plain text ~!");
  EXPECT_EQ(PercentEncode("100%"), "100%25");
  EXPECT_EQ(PercentEncode("caf\xc3\xa9"), "caf%C3%A9");
  EXPECT_EQ(PercentEncode(std::string("a\nb\0c\x7f\x1f ", 8)), "a%0Ab%00c%7F%1F ");
}

// --- the fuzz target's seed corpus ------------------------------------------------------------

// The seeds of fuzz/h2_fuzz.cc: what a client sends after its preface and an empty SETTINGS
// (the fuzz target prepends those). Each must run through a connection without killing it,
// but for the ones named "error-" and "garbage". With H2_FUZZ_CORPUS_OUT=<dir> they are
// written there: the files of services/gateway/fuzz/corpus/h2 come from this test.
std::vector<std::pair<std::string, std::string>> Seeds() {
  std::vector<std::pair<std::string, std::string>> seeds;
  const auto acked = [](Client& c) {
    nghttp2_hd_deflate_change_table_size(c.deflater(), 0);
    return Client::SettingsAck();
  };
  {
    Client c;
    std::string s = acked(c);
    s += c.Headers(1, GrpcRequest(kPath, {{"authorization", "Bearer t"}, {"grpc-timeout", "5S"}}),
                   false);
    s += Client::Data(1, Client::Grpc("profile?"), true);
    seeds.emplace_back("unary", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += c.Headers(
        1, GrpcRequest("/courtpiece.client.v1.CourtPiece/Play", {{"authorization", "Bearer t"}}),
        false);
    for (const char* m : {"open", "play AH", "play KS", "bid 7", "chat hi"}) {
      s += Client::Data(1, Client::Grpc(m));
      s += Client::Ping("keepaliv");
    }
    s += Client::WindowUpdate(0, 100000);
    s += Client::WindowUpdate(1, 100000);
    s += Client::Data(1, Client::Grpc("error now"));
    seeds.emplace_back("play-stream", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += c.Headers(1, GrpcRequest("/svc/Split", {{"authorization", "Bearer split"}}), false, 4);
    s += Client::Data(1, Client::Grpc("split").substr(0, 3));
    s += Client::Data(1, Client::Grpc("split").substr(3), true);
    seeds.emplace_back("continuation", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += Client::HeaderFrames(1, c.Encode(GrpcRequest()), false, 0, 7, true);
    s += Client::Data(1, Client::Grpc("padded"), false, 12);
    s += Client::Data(1, "", true, 0);
    seeds.emplace_back("padding", s);
  }
  {
    Client c;
    std::string s = Client::Settings({{0x4, 10}, {0x5, 16384}}) + acked(c);
    s += c.Headers(1, GrpcRequest(), false);
    s += Client::Data(1, Client::Grpc(std::string(200, 'w')));
    s += Client::WindowUpdate(1, 50);
    s += Client::WindowUpdate(1, 500);
    s += Client::Settings({{0x4, 65535}});
    s += Client::WindowUpdate(0, 1000);
    s += Client::Data(1, "", true);
    seeds.emplace_back("window-updates", s);
  }
  {
    std::string s;
    for (int i = 0; i < 5; ++i) s += Client::Ping(absl::StrCat("ping000", i));
    s += Client::Ping(std::string_view("\0\0\0\0\0\0\0\x03", 8), true);
    seeds.emplace_back("pings", s);
  }
  {
    Client c;
    std::string s = acked(c);
    for (uint32_t id = 1; id <= 11; id += 2) s += c.Headers(id, GrpcRequest(), false);
    s += Client::RstStream(3, kCancel);
    s += c.Headers(13, GrpcRequest(), true);
    seeds.emplace_back("many-streams", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += c.Headers(1, GrpcRequest("/reset"), false);
    s += c.Headers(3, GrpcRequest(), false);
    s += Client::Data(3, Client::Grpc("reset me"));
    s += Client::Data(3, Client::Grpc("too late"));
    s += c.Headers(5, GrpcRequest(), false);
    s += Client::RstStream(5, kCancel);
    s += Client::GoAway(5, kNoError, "bye");
    seeds.emplace_back("resets", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += c.Headers(1, GrpcRequest("/evens"), false);  // the fuzz target's limit: 64 bytes
    s += Client::Data(1, Client::Grpc(std::string(100, 'b')));
    s += c.Headers(3, GrpcRequest(), false);
    s += Client::Data(3, Client::Grpc("zipped", true), true);
    seeds.emplace_back("bad-messages", s);
  }
  {
    Client c;
    std::string s = acked(c);
    HeaderList get = GrpcRequest();
    get[0].second = "GET";
    s += c.Headers(1, get, true);
    HeaderList json = GrpcRequest();
    json[4].second = "application/json";
    s += c.Headers(3, json, false);
    s += Client::Data(3, "{}", true);
    seeds.emplace_back("not-grpc", s);
  }
  {
    Client c;
    std::string s = c.Headers(1, GrpcRequest("/svc/A", {{"x-a", "1"}}), true);  // indexed
    s += c.Headers(3, GrpcRequest("/svc/A", {{"x-a", "1"}}), true);
    s += acked(c);
    s += c.Headers(5, GrpcRequest("/svc/A", {{"x-a", "1"}}), true);
    seeds.emplace_back("hpack-table", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += c.Headers(1, GrpcRequest(), false);
    s += Client::Priority(1, 0, 10);
    s += Client::Unknown(1, "unknown");
    s += Client::Frame(kPriority, 0, 3, "123");
    s += Client::Data(1, Client::Grpc("x"), true);
    seeds.emplace_back("priority-unknown", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += c.Headers(1, GrpcRequest(), false);
    const std::string big = Client::Grpc(std::string(3000, 'B'));
    for (size_t pos = 0; pos < big.size(); pos += 1000) s += Client::Data(1, big.substr(pos, 1000));
    s += Client::Data(1, "", true);
    seeds.emplace_back("big-message", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += c.Headers(2, GrpcRequest(), true);
    seeds.emplace_back("error-even-stream", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += c.Headers(1, GrpcRequest(), false);
    s += Client::Frame(kPushPromise, kEndHeaders, 1, Be32(2) + "\x82");
    seeds.emplace_back("error-push-promise", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += c.Headers(1, GrpcRequest(), false, 5).substr(0, 14);  // HEADERS without its CONTINUATION
    s += Client::Data(1, "x");
    seeds.emplace_back("error-interrupted-block", s);
  }
  {
    // 40 KB of DATA: our windows are given back (the fuzz target's connection window is the
    // minimum, 65,535: half of it is reached).
    Client c;
    std::string s = acked(c);
    s += c.Headers(1, GrpcRequest("/svc/Upload"), false);
    std::string data;
    for (int i = 0; i < 10; ++i)
      data += Client::Grpc(std::string(4000, static_cast<char>('0' + i)));
    for (size_t pos = 0; pos < data.size(); pos += 16384)
      s += Client::Data(1, data.substr(pos, 16384));
    s += Client::Data(1, "", true);
    seeds.emplace_back("window-refill", s);
  }
  {
    // Within the fuzz target's 2 KiB blocks: a 1,938-byte table entry, then 35 references.
    std::string s = Client::Frame(
        kHeaders, kEndStream | kEndHeaders, 1,
        HandMadeRequest("/svc/Bomb") + LiteralIndexed("x-bomb", std::string(1900, 'b')));
    s += Client::Frame(kHeaders, kEndStream | kEndHeaders, 3,
                       HandMadeRequest("/svc/Bomb") + std::string(35, '\xbe'));
    seeds.emplace_back("error-header-bomb", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += c.Headers(1, GrpcRequest(), false);
    s += Client::WindowUpdate(1, 0x7fff0000);  // the stream's window: 2^31-1
    s += Client::Settings({{0x4, 65536}});     // one more
    seeds.emplace_back("error-settings-window-overflow", s);
  }
  {
    Client c;
    std::string s = acked(c);
    s += Client::Frame(kHeaders, 0, 1, "\x83");
    for (int i = 0; i < 20; ++i) s += Client::Frame(kContinuation, 0, 1, std::string(1000, '\x86'));
    seeds.emplace_back("error-continuation-flood", s);
  }
  {
    std::string s;
    uint32_t x = 12345;
    for (int i = 0; i < 300; ++i) {
      x = x * 1103515245 + 12345;
      s.push_back(static_cast<char>(x >> 16));
    }
    seeds.emplace_back("garbage", s);
  }
  return seeds;
}

TEST(H2FuzzSeedsTest, RunThroughAConnection) {
  const char* out_dir = std::getenv("H2_FUZZ_CORPUS_OUT");
  for (const auto& [name, bytes] : Seeds()) {
    SCOPED_TRACE(name);
    Recorder rec;
    ConnOptions options;
    options.streams_max = 4;
    H2Conn conn(rec, options);
    conn.Start();
    const std::string input = Client::Preface() + Client::Settings() + bytes;
    const bool alive = conn.Feed(input.data(), input.size());
    const bool error = name.rfind("error-", 0) == 0 || name == "garbage";
    EXPECT_EQ(alive, !error);
    if (out_dir != nullptr) {
      std::ofstream(std::filesystem::path(out_dir) / name, std::ios::binary) << bytes;
    }
  }
}

}  // namespace
}  // namespace courtpiece::gateway::h2
