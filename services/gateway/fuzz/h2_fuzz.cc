// libFuzzer target for the HTTP/2 engine (h2_conn.h), no sockets: each input is the client's
// bytes after its preface and an empty SETTINGS frame (both prepended here), fed to a fresh
// H2Conn in chunks of 1 to 4,096 bytes (a fixed cycle of sizes) with a handler that answers
// like the front would: every message is sent back, a message starting with 'r' resets the
// stream, one starting with 'e' ends it with an error status, a half-close ends it with OK,
// a bad message ends it with its status, the client's PINGs are answered with one of ours.
// The output is taken after most chunks (not all; and for one input in four the output bound
// is 2 KiB, so that it is reached) and checked: whole frames, none over 64 KiB, nothing but
// WINDOW_UPDATE after a GOAWAY with an error. Our connection window is the minimum (65,535),
// so that inputs of some 40 KB get it given back. The handler checks the contract: one
// OnRequest and at most one OnHalfClose per stream, one OnStreamGone, no call for a stream
// after it, OnWritable only with little queued.
// Any crash, sanitizer report or broken check (abort) is a finding. docs/gateway.md.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "services/gateway/h2_conn.h"

namespace courtpiece::gateway::h2 {
namespace {

[[noreturn]] void Fail(const char* what, uint32_t stream_id) {
  std::fprintf(stderr, "h2_fuzz: %s (stream %u)\n", what, stream_id);
  std::abort();
}

class Responder final : public H2Conn::Handler {
 public:
  enum State { kOpen, kHalfClosed, kGone };

  void set_conn(H2Conn* conn) { conn_ = conn; }

  void OnRequest(uint32_t stream_id, const Request& request) override {
    if (streams_.count(stream_id) != 0) Fail("a second OnRequest", stream_id);
    if (request.path.empty() || request.path[0] != '/') Fail("a request without a path", stream_id);
    streams_[stream_id] = kOpen;
    conn_->SetMessageLimit(stream_id, request.path.size() % 2 == 0 ? 64 : 4096);
    if (!request.timeout.empty()) (void)ParseGrpcTimeoutNanos(request.timeout);
    if (request.path == "/reset") conn_->ResetStream(stream_id, kCancel);
  }
  void OnMessage(uint32_t stream_id, std::string message) override {
    Live(stream_id, "OnMessage");
    if (!message.empty() && message[0] == 'r') {
      conn_->ResetStream(stream_id, kCancel);
      return;
    }
    conn_->SendMessage(stream_id, message);
    if (!message.empty() && message[0] == 'e') {
      conn_->SendTrailers(stream_id, absl::InvalidArgumentError(message));
    }
  }
  void OnBadMessage(uint32_t stream_id, const absl::Status& status) override {
    Live(stream_id, "OnBadMessage");
    if (status.ok()) Fail("OnBadMessage with OK", stream_id);
    conn_->SendTrailers(stream_id, status);
  }
  void OnHalfClose(uint32_t stream_id) override {
    State& state = Live(stream_id, "OnHalfClose");
    if (state == kHalfClosed) Fail("a second OnHalfClose", stream_id);
    state = kHalfClosed;
    conn_->SendMessage(stream_id, "bye");
    conn_->SendTrailers(stream_id, absl::OkStatus());
  }
  void OnStreamGone(uint32_t stream_id, bool /*reset*/) override {
    Live(stream_id, "OnStreamGone") = kGone;
    // Ignored once gone (the contract): must not crash or write.
    conn_->SendMessage(stream_id, "late");
    conn_->SendTrailers(stream_id, absl::OkStatus());
  }
  void OnWritable(uint32_t stream_id) override {
    auto it = streams_.find(stream_id);
    if (it == streams_.end() || it->second == kGone) Fail("OnWritable for no stream", stream_id);
    if (conn_->unsent_bytes(stream_id) >= H2Conn::kWritableBytes) {
      Fail("OnWritable with a full queue", stream_id);
    }
  }
  void OnPing() override {
    if (++pings_ % 3 == 0) conn_->Ping(pings_);
  }

  // Every stream the handler saw ended once the connection is dead.
  void CheckAllGone() const {
    for (const auto& [id, state] : streams_) {
      if (state != kGone) Fail("a stream outlived its dead connection", id);
    }
  }

 private:
  State& Live(uint32_t stream_id, const char* what) {
    auto it = streams_.find(stream_id);
    if (it == streams_.end()) Fail(what, stream_id);
    if (it->second == kGone) Fail(what, stream_id);
    return it->second;
  }

  H2Conn* conn_ = nullptr;
  std::map<uint32_t, State> streams_;
  uint64_t pings_ = 0;
};

// The server's output so far, frame by frame; `error_goaway` once a GOAWAY with an error went.
struct OutputCheck {
  std::string partial;
  bool error_goaway = false;

  void Add(const std::string& bytes) {
    partial += bytes;
    size_t pos = 0;
    while (partial.size() - pos >= 9) {
      const auto* h = reinterpret_cast<const uint8_t*>(partial.data() + pos);
      const size_t length = (size_t{h[0]} << 16) | (size_t{h[1]} << 8) | h[2];
      if (length > 64 * 1024) Fail("an output frame over 64 KiB", 0);
      if (partial.size() - pos - 9 < length) break;
      const uint8_t type = h[3];
      if (error_goaway && type != 0x8) Fail("a frame after a GOAWAY with an error", type);
      if (type == 0x7) {
        if (length < 8) Fail("a short GOAWAY", 0);
        const uint32_t code =
            (uint32_t{h[13]} << 24) | (uint32_t{h[14]} << 16) | (uint32_t{h[15]} << 8) | h[16];
        if (code != kNoError) error_goaway = true;
      }
      pos += 9 + length;
    }
    partial.erase(0, pos);
  }
};

}  // namespace
}  // namespace courtpiece::gateway::h2

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace courtpiece::gateway::h2;
  std::string input("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
  input.append("\0\0\0\x04\0\0\0\0\0", 9);  // an empty SETTINGS frame
  input.append(reinterpret_cast<const char*>(data), size);

  ConnOptions options;
  options.streams_max = 4;
  options.header_block_bytes_max = 2048;
  options.output_bytes_max = size % 4 == 0 ? 2048 : 64 * 1024;
  options.message_bytes_max_default = 1024;
  options.partial_bytes_max = size % 3 == 0 ? 1500 : 2 * 1024 * 1024;
  options.connection_window_bytes = 65535;
  Responder responder;
  OutputCheck check;
  {
    H2Conn conn(responder, options);
    responder.set_conn(&conn);
    conn.Start();
    check.Add(conn.TakeOutput());
    static constexpr size_t kChunks[] = {1, 9, 3, 200, 17, 4096, 2, 64, 1000, 5};
    size_t pos = 0;
    bool alive = true;
    for (size_t i = 0; pos < input.size(); ++i) {
      const size_t n = std::min(kChunks[i % std::size(kChunks)], input.size() - pos);
      const bool fed = conn.Feed(input.data() + pos, n);
      pos += n;
      if (fed != !conn.dead()) Fail("Feed's result is not !dead()", 0);
      if (!fed) alive = false;
      if (conn.open_streams() > options.streams_max) Fail("more streams than streams_max", 0);
      if (i % 4 != 3) check.Add(conn.TakeOutput());
      if (!alive) break;
    }
    if (conn.dead()) {
      responder.CheckAllGone();
      if (conn.Feed("x", 1)) Fail("a dead connection took more bytes", 0);
    } else {
      conn.Ping(7);
      conn.GoAway(kNoError, "bye");
    }
    check.Add(conn.TakeOutput());
    responder.set_conn(nullptr);  // the destructor calls no handler
  }
  return 0;
}
