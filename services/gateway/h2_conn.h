// The server side of one HTTP/2 connection carrying gRPC (RFC 9113, RFC 7541 and gRPC's
// PROTOCOL-HTTP2), as pure logic: bytes in (Feed), bytes out (TakeOutput), calls out
// (H2Conn::Handler). No sockets, threads or clocks: h2_front.h drives it. It exists because
// libgrpc 1.51 costs ~39 KB per idle phone and this costs a few (docs/gateway.md "The
// mobile front on our own HTTP/2").
//
// What it does:
//   - the preface and SETTINGS both ways (ours: MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE,
//     MAX_HEADER_LIST_SIZE, HEADER_TABLE_SIZE 0: a client that honours it keeps no header
//     table with us; one that does not is still decoded); PING answered; GOAWAY;
//   - request header blocks (HEADERS + CONTINUATION, HPACK decoded with libnghttp2's
//     inflater), checked: :method POST, :path, content-type application/grpc*; a message
//     with the compressed flag is refused (OnBadMessage UNIMPLEMENTED);
//   - DATA split into gRPC messages (the 5-byte prefix), each at most the stream's limit;
//   - flow control both ways (our windows refilled as the data is taken; what the client's
//     windows do not admit waits in the stream);
//   - responses: headers (:status 200, content-type application/grpc) before the first
//     message, messages, and trailers (grpc-status, grpc-message percent-encoded), or a
//     trailers-only response when nothing was sent.
//
// Contract:
//   - Feed(bytes) consumes everything given; it returns false once the connection is
//     dead (a connection error: GOAWAY with the error is queued, the caller sends the output
//     and closes). Handler calls happen inside Feed and the Send* methods, on the caller's
//     thread; a handler may call back into the connection.
//   - Stream errors end just that stream: RST_STREAM, and Handler::OnStreamGone.
//   - OnRequest comes once per stream; OnMessage per whole message; OnHalfClose once after
//     the client's END_STREAM; OnStreamGone once when the stream is over for any reason
//     (trailers sent, reset either way, connection dead), after which no call for it comes and
//     the Send* methods ignore it.
//   - Bounds: streams open at once (options.streams_max; more are refused with
//     REFUSED_STREAM), a header block (header_block_bytes_max: over it the connection dies,
//     as its HPACK state would be lost), a message (SetMessageLimit; over it the stream gets
//     OnBadMessage RESOURCE_EXHAUSTED and its further data is dropped), output not yet taken
//     (output_bytes_max: past it the connection dies: the client reads nothing, answers to its
//     PINGs and SETTINGS included).
// Thread-safety: none; one thread (a strand) at a time.
#ifndef COURTPIECE_SERVICES_GATEWAY_H2_CONN_H_
#define COURTPIECE_SERVICES_GATEWAY_H2_CONN_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

struct nghttp2_hd_inflater;

namespace courtpiece::gateway::h2 {

// HTTP/2 error codes (RFC 9113 section 7) used here.
enum ErrorCode : uint32_t {
  kNoError = 0x0,
  kProtocolError = 0x1,
  kInternalError = 0x2,
  kFlowControlError = 0x3,
  kStreamClosed = 0x5,
  kFrameSizeError = 0x6,
  kRefusedStream = 0x7,
  kCancel = 0x8,
  kCompressionError = 0x9,
  kEnhanceYourCalm = 0xb,
};

struct Request {
  std::string path;           // ":path", "/courtpiece.client.v1.CourtPiece/Play"
  std::string authorization;  // the header's value, "" when absent
  std::string timeout;        // "grpc-timeout", "" when absent (ParseGrpcTimeout)
};

struct ConnOptions {
  uint32_t streams_max = 100;                      // SETTINGS_MAX_CONCURRENT_STREAMS
  uint32_t stream_window_bytes = 64 * 1024;        // SETTINGS_INITIAL_WINDOW_SIZE
  uint32_t connection_window_bytes = 1024 * 1024;  // ours, raised at the start
  uint32_t header_block_bytes_max = 16 * 1024;     // encoded (MAX_HEADER_LIST_SIZE: 64 KiB decoded)
  size_t output_bytes_max = 4 * 1024 * 1024;       // produced and not yet taken
  uint32_t message_bytes_max_default = 16 * 1024;  // until SetMessageLimit
  // Unfinished incoming messages held, all streams together: past it the stream whose data
  // would pass it gets OnBadMessage RESOURCE_EXHAUSTED (our windows are refilled as data
  // arrives, so they bound nothing by themselves).
  size_t partial_bytes_max = 2 * 1024 * 1024;
};

// "5S", "100m", ... (gRPC's grpc-timeout: at most 8 digits and a unit H M S m u n) as
// nanoseconds; -1 when malformed.
int64_t ParseGrpcTimeoutNanos(std::string_view text);

// HPACK pieces (RFC 7541 5.1, 6.2), all our answers use: an integer with an n-bit prefix
// (`first` holds the pattern bits), and a literal field with a new name and no Huffman
// (`first`: 0x00 without indexing, 0x40 with incremental indexing). Tests build requests
// with them.
void PutHpackInt(std::string& out, uint8_t first, int prefix_bits, size_t value);
void PutHpackLiteral(std::string& out, std::string_view name, std::string_view value,
                     uint8_t first = 0x00);

// grpc-message's percent-encoding: bytes outside 0x20..0x7e and '%' as %XX.
std::string PercentEncode(std::string_view text);

// A GOAWAY frame naming `last_stream_id`, `code` and `debug` (the front's refusal at accept
// sends one with no connection behind it).
void PutGoAway(std::string& out, uint32_t last_stream_id, uint32_t code, std::string_view debug);

class H2Conn {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual void OnRequest(uint32_t stream_id, const Request& request) = 0;
    virtual void OnMessage(uint32_t stream_id, std::string message) = 0;
    // A message over the limit or compressed: the stream's further data is dropped; the handler
    // ends the stream (normally SendTrailers with `status`).
    virtual void OnBadMessage(uint32_t stream_id, const absl::Status& status) = 0;
    virtual void OnHalfClose(uint32_t stream_id) = 0;
    // The stream is over: `reset` true when it ended without our trailers (the client's
    // RST_STREAM, a refusal, the connection's end).
    virtual void OnStreamGone(uint32_t stream_id, bool reset) = 0;
    // A stream's queued data fell under kWritableBytes: more may be sent.
    virtual void OnWritable(uint32_t /*stream_id*/) {}
    virtual void OnPingAck() {}
    virtual void OnPing() {}  // the client pinged us (its keepalive)
  };

  // A stream whose unsent data is under this takes more (SendMessage returns true regardless;
  // this is the front's hint to keep its own queue instead).
  static constexpr size_t kWritableBytes = 16 * 1024;

  H2Conn(Handler& handler, ConnOptions options);
  ~H2Conn();
  H2Conn(const H2Conn&) = delete;
  H2Conn& operator=(const H2Conn&) = delete;

  // Our preface (SETTINGS and the connection window's raise): the first output.
  void Start();
  bool Feed(const char* data, size_t size);
  bool dead() const { return dead_; }

  // The bytes to send, moved out (the connection keeps no copy).
  std::string TakeOutput();
  size_t output_size() const { return out_.size(); }

  void SetMessageLimit(uint32_t stream_id, uint32_t bytes);
  // Queues one serialized message; headers first if not sent yet. False when the stream is
  // gone or its trailers were sent.
  bool SendMessage(uint32_t stream_id, std::string_view message);
  // Ends the stream with `status` after its queued messages (trailers-only if nothing was
  // sent); the stream is gone once the trailers are out (then RST_STREAM NO_ERROR if the
  // client's side is still open).
  void SendTrailers(uint32_t stream_id, const absl::Status& status);
  // The stream's data waiting for the client's flow-control windows.
  size_t unsent_bytes(uint32_t stream_id) const;
  void ResetStream(uint32_t stream_id, ErrorCode code);

  void Ping(uint64_t opaque);
  // GOAWAY: no new streams after those already open (last_stream_id); `debug` is the
  // client's message. With an error code the connection is dead.
  void GoAway(ErrorCode code, std::string_view debug);
  // The connection is dead at once: nothing more is read or written, every stream gone
  // (OnStreamGone, reset). For a front that closes the socket itself.
  void Abort();
  bool goaway_sent() const { return goaway_sent_; }
  bool peer_goaway() const { return peer_goaway_; }

  size_t open_streams() const { return streams_.size(); }
  bool idle() const { return streams_.empty(); }

 private:
  struct Stream;
  bool ProcessFrame(uint8_t type, uint8_t flags, uint32_t stream_id, const char* p, size_t n);
  bool OnHeadersFrame(uint8_t flags, uint32_t stream_id, const char* p, size_t n);
  bool OnHeaderBlockDone();
  bool OnDataFrame(uint8_t flags, uint32_t stream_id, const char* p, size_t n);
  bool OnSettingsFrame(uint8_t flags, uint32_t stream_id, const char* p, size_t n);
  bool OnWindowUpdate(uint32_t stream_id, const char* p, size_t n);
  bool ConnectionError(ErrorCode code, std::string_view debug);
  void StreamData(uint32_t stream_id, const char* p, size_t n);
  void EndStream(uint32_t stream_id, bool reset);
  void Flush(uint32_t stream_id);
  void FlushAll();
  void WriteFrameHeader(size_t length, uint8_t type, uint8_t flags, uint32_t stream_id);
  void WriteHeaders(uint32_t stream_id, const std::string& block, bool end_stream);
  void Consumed(Stream* s, uint32_t stream_id, size_t bytes);
  void CheckOutputBound();
  void DropPartial(Stream& s);

  Handler& handler_;
  const ConnOptions options_;
  nghttp2_hd_inflater* inflater_ = nullptr;
  std::string in_;   // a partial frame (or preface) not yet processed
  std::string out_;  // produced, not yet taken
  bool preface_done_ = false;
  bool got_settings_ = false;  // the client's first frame
  bool dead_ = false;
  bool goaway_sent_ = false;
  uint32_t goaway_last_stream_id_ = 0;  // as the first GOAWAY named it
  size_t partial_bytes_ = 0;            // the streams' `partial`, together
  bool peer_goaway_ = false;
  bool table_size_update_sent_ = false;  // our header blocks' first: "table size 0"
  uint32_t last_stream_id_ = 0;          // the highest client stream id seen
  // A header block in progress (HEADERS without END_HEADERS, then CONTINUATION).
  uint32_t continuation_stream_ = 0;
  uint8_t continuation_flags_ = 0;
  std::string header_block_;
  // Flow control. Ours (what the client may still send) and the client's (what we may).
  int64_t recv_window_ = 65535;
  int64_t recv_unacked_ = 0;  // taken, not yet given back by WINDOW_UPDATE
  int64_t send_window_ = 65535;
  int64_t peer_stream_window_ = 65535;  // the client's SETTINGS_INITIAL_WINDOW_SIZE
  uint32_t peer_frame_max_ = 16384;     // the client's SETTINGS_MAX_FRAME_SIZE
  std::map<uint32_t, std::unique_ptr<Stream>> streams_;
};

}  // namespace courtpiece::gateway::h2

#endif  // COURTPIECE_SERVICES_GATEWAY_H2_CONN_H_
