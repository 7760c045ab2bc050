#include "services/gateway/h2_conn.h"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cassert>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace courtpiece::gateway::h2 {
namespace {

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr uint32_t kFrameMax = 16384;  // ours: we never raise SETTINGS_MAX_FRAME_SIZE
constexpr int64_t kWindowMax = 0x7fffffff;
constexpr int64_t kDefaultWindow = 65535;
// Decoded request headers beyond this kill the connection (a few indexed references can
// expand to much more than the block).
constexpr size_t kDecodedHeadersMax = 64 * 1024;

enum FrameType : uint8_t {
  kData = 0x0,
  kHeaders = 0x1,
  kPriority = 0x2,
  kRstStream = 0x3,
  kSettings = 0x4,
  kPushPromise = 0x5,
  kPing = 0x6,
  kGoAway = 0x7,
  kWindowUpdate = 0x8,
  kContinuation = 0x9,
};
enum Flags : uint8_t {
  kEndStream = 0x1,
  kAck = 0x1,
  kEndHeaders = 0x4,
  kPadded = 0x8,
  kPriorityFlag = 0x20,
};

uint32_t Be32(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}
void PutBe32(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v >> 24));
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}

void PutResponseHeaders(std::string& out) {
  out.push_back(static_cast<char>(0x88));  // :status 200, static table index 8
  PutHpackLiteral(out, "content-type", "application/grpc");
}

void PutStatus(std::string& out, const absl::Status& status) {
  PutHpackLiteral(out, "grpc-status", absl::StrCat(static_cast<int>(status.code())));
  if (!status.message().empty()) {
    PutHpackLiteral(
        out, "grpc-message",
        PercentEncode(std::string_view(status.message().data(), status.message().size())));
  }
}

}  // namespace

void PutHpackInt(std::string& out, uint8_t first, int prefix_bits, size_t value) {
  const size_t max_prefix = (size_t{1} << prefix_bits) - 1;
  if (value < max_prefix) {
    out.push_back(static_cast<char>(first | value));
    return;
  }
  out.push_back(static_cast<char>(first | max_prefix));
  value -= max_prefix;
  while (value >= 128) {
    out.push_back(static_cast<char>((value % 128) + 128));
    value /= 128;
  }
  out.push_back(static_cast<char>(value));
}

void PutHpackLiteral(std::string& out, std::string_view name, std::string_view value,
                     uint8_t first) {
  out.push_back(static_cast<char>(first));
  PutHpackInt(out, 0, 7, name.size());
  out.append(name);
  PutHpackInt(out, 0, 7, value.size());
  out.append(value);
}

void PutGoAway(std::string& out, uint32_t last_stream_id, uint32_t code, std::string_view debug) {
  const size_t length = 8 + debug.size();
  out.push_back(static_cast<char>(length >> 16));
  out.push_back(static_cast<char>(length >> 8));
  out.push_back(static_cast<char>(length));
  out.push_back(static_cast<char>(kGoAway));
  out.push_back('\0');  // flags
  PutBe32(out, 0);      // stream 0
  PutBe32(out, last_stream_id);
  PutBe32(out, code);
  out.append(debug);
}

int64_t ParseGrpcTimeoutNanos(std::string_view text) {
  if (text.size() < 2 || text.size() > 9) return -1;
  int64_t value = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  constexpr int64_t kMaxNanos = int64_t{1} << 62;  // ~146 years: "no deadline" in effect
  int64_t unit = 0;
  switch (text.back()) {
    case 'H':
      unit = int64_t{3600} * 1'000'000'000;
      break;
    case 'M':
      unit = int64_t{60} * 1'000'000'000;
      break;
    case 'S':
      unit = 1'000'000'000;
      break;
    case 'm':
      unit = 1'000'000;
      break;
    case 'u':
      unit = 1'000;
      break;
    case 'n':
      unit = 1;
      break;
    default:
      return -1;
  }
  if (value > kMaxNanos / unit) return kMaxNanos;  // "a very long time"
  return value * unit;
}

std::string PercentEncode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : text) {
    const auto u = static_cast<uint8_t>(c);
    if (u < 0x20 || u > 0x7e || c == '%') {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xf]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

struct H2Conn::Stream {
  int64_t send_window = kDefaultWindow;  // the client's window for this stream
  int64_t recv_window = kDefaultWindow;  // ours
  int64_t recv_unacked = 0;
  uint32_t message_limit = 0;
  uint32_t message_length = 0;  // of the message in `partial`, once its prefix is in
  std::string partial;          // an incoming message: prefix and body so far
  std::string pending;          // outgoing DATA payload not yet within the windows
  size_t pending_sent = 0;      // of `pending`, already framed
  std::string trailers;         // encoded, waiting behind `pending`
  bool dropping = false;        // a bad message: the rest of the data is ignored
  bool remote_closed = false;
  bool headers_sent = false;
  bool trailers_queued = false;
};

H2Conn::H2Conn(Handler& handler, ConnOptions options) : handler_(handler), options_(options) {
  assert(options_.stream_window_bytes >= kDefaultWindow);  // the client may use 65535 at once
  assert(options_.connection_window_bytes >= kDefaultWindow);
  const int rv = nghttp2_hd_inflate_new(&inflater_);
  if (rv != 0) inflater_ = nullptr;  // out of memory: Feed kills the connection
}

H2Conn::~H2Conn() {
  if (inflater_ != nullptr) nghttp2_hd_inflate_del(inflater_);
}

void H2Conn::Start() {
  const std::pair<uint16_t, uint32_t> settings[] = {
      {0x1, 0},                                         // HEADER_TABLE_SIZE: keep none of ours
      {0x3, options_.streams_max},                      // MAX_CONCURRENT_STREAMS
      {0x4, options_.stream_window_bytes},              // INITIAL_WINDOW_SIZE
      {0x6, static_cast<uint32_t>(kDecodedHeadersMax)}  // MAX_HEADER_LIST_SIZE
  };
  WriteFrameHeader(6 * std::size(settings), kSettings, 0, 0);
  for (const auto& [id, value] : settings) {
    out_.push_back(static_cast<char>(id >> 8));
    out_.push_back(static_cast<char>(id));
    PutBe32(out_, value);
  }
  const uint32_t raise = options_.connection_window_bytes - kDefaultWindow;
  if (raise > 0) {
    WriteFrameHeader(4, kWindowUpdate, 0, 0);
    PutBe32(out_, raise);
  }
  recv_window_ = options_.connection_window_bytes;
}

std::string H2Conn::TakeOutput() {
  std::string out;
  out.swap(out_);
  return out;
}

bool H2Conn::Feed(const char* data, size_t size) {
  if (dead_) return false;
  if (inflater_ == nullptr) return ConnectionError(kInternalError, "out of memory");
  std::string_view buf(data, size);
  if (!in_.empty()) {
    in_.append(data, size);
    buf = in_;
  }
  size_t pos = 0;
  if (!preface_done_) {
    const size_t have = std::min(buf.size(), kPreface.size());
    if (buf.substr(0, have) != kPreface.substr(0, have)) {
      return ConnectionError(kProtocolError, "not an HTTP/2 client preface");
    }
    if (have == kPreface.size()) {
      preface_done_ = true;
      pos = have;
    } else {
      if (in_.empty()) in_.assign(buf);  // (else buf is in_ already)
      return true;
    }
  }
  while (!dead_ && buf.size() - pos >= 9) {
    const auto* h = reinterpret_cast<const uint8_t*>(buf.data() + pos);
    const uint32_t length = (uint32_t{h[0]} << 16) | (uint32_t{h[1]} << 8) | h[2];
    if (length > kFrameMax) return ConnectionError(kFrameSizeError, "frame over 16384 bytes");
    if (buf.size() - pos - 9 < length) break;
    const uint32_t stream_id = Be32(buf.data() + pos + 5) & 0x7fffffff;
    if (!got_settings_ && h[3] != kSettings) {
      return ConnectionError(kProtocolError, "the first frame must be SETTINGS");
    }
    got_settings_ = true;
    ProcessFrame(h[3], h[4], stream_id, buf.data() + pos + 9, length);
    pos += 9 + length;
  }
  if (dead_) return false;
  if (in_.empty()) {
    in_.assign(buf.substr(pos));
  } else {
    in_.erase(0, pos);
    if (in_.empty()) std::string().swap(in_);  // an idle connection holds no buffer
  }
  CheckOutputBound();
  return !dead_;
}

bool H2Conn::ProcessFrame(uint8_t type, uint8_t flags, uint32_t stream_id, const char* p,
                          size_t n) {
  if (continuation_stream_ != 0 && type != kContinuation) {
    return ConnectionError(kProtocolError, "a header block was interrupted");
  }
  switch (type) {
    case kData:
      return OnDataFrame(flags, stream_id, p, n);
    case kHeaders:
      return OnHeadersFrame(flags, stream_id, p, n);
    case kPriority:
      if (stream_id == 0) return ConnectionError(kProtocolError, "PRIORITY on stream 0");
      if (n != 5) ResetStream(stream_id, kFrameSizeError);
      return true;
    case kRstStream:
      if (stream_id == 0) return ConnectionError(kProtocolError, "RST_STREAM on stream 0");
      if (n != 4) return ConnectionError(kFrameSizeError, "RST_STREAM of the wrong size");
      if (stream_id > last_stream_id_) return ConnectionError(kProtocolError, "RST_STREAM idle");
      if (streams_.count(stream_id) != 0) EndStream(stream_id, /*reset=*/true);
      return true;
    case kSettings:
      return OnSettingsFrame(flags, stream_id, p, n);
    case kPushPromise:
      return ConnectionError(kProtocolError, "a client may not push");
    case kPing:
      if (stream_id != 0) return ConnectionError(kProtocolError, "PING on a stream");
      if (n != 8) return ConnectionError(kFrameSizeError, "PING of the wrong size");
      if ((flags & kAck) != 0) {
        handler_.OnPingAck();
      } else {
        WriteFrameHeader(8, kPing, kAck, 0);
        out_.append(p, 8);
        handler_.OnPing();
      }
      return true;
    case kGoAway:
      if (stream_id != 0) return ConnectionError(kProtocolError, "GOAWAY on a stream");
      if (n < 8) return ConnectionError(kFrameSizeError, "GOAWAY too short");
      peer_goaway_ = true;
      return true;
    case kWindowUpdate:
      return OnWindowUpdate(stream_id, p, n);
    case kContinuation:
      if (continuation_stream_ == 0 || stream_id != continuation_stream_) {
        return ConnectionError(kProtocolError, "CONTINUATION without its HEADERS");
      }
      if (header_block_.size() + n > options_.header_block_bytes_max) {
        return ConnectionError(kEnhanceYourCalm, "header block too large");
      }
      header_block_.append(p, n);
      if ((flags & kEndHeaders) != 0) return OnHeaderBlockDone();
      return true;
    default:
      return true;  // unknown frame types are ignored (RFC 9113 4.1)
  }
}

bool H2Conn::OnHeadersFrame(uint8_t flags, uint32_t stream_id, const char* p, size_t n) {
  if (stream_id == 0) return ConnectionError(kProtocolError, "HEADERS on stream 0");
  if ((flags & kPadded) != 0) {
    if (n < 1) return ConnectionError(kFrameSizeError, "HEADERS padding");
    const size_t pad = static_cast<uint8_t>(p[0]);
    ++p;
    --n;
    if (pad > n) return ConnectionError(kProtocolError, "HEADERS padding over the frame");
    n -= pad;
  }
  if ((flags & kPriorityFlag) != 0) {
    if (n < 5) return ConnectionError(kFrameSizeError, "HEADERS priority");
    p += 5;
    n -= 5;
  }
  if (n > options_.header_block_bytes_max) {
    return ConnectionError(kEnhanceYourCalm, "header block too large");
  }
  header_block_.assign(p, n);
  continuation_stream_ = stream_id;
  continuation_flags_ = flags;
  if ((flags & kEndHeaders) != 0) return OnHeaderBlockDone();
  return true;
}

bool H2Conn::OnHeaderBlockDone() {
  const uint32_t stream_id = continuation_stream_;
  const bool end_stream = (continuation_flags_ & kEndStream) != 0;
  continuation_stream_ = 0;
  std::string block;
  block.swap(header_block_);

  // Decoded whatever happens next: the HPACK state is the connection's.
  Request request;
  std::string method, content_type;
  size_t decoded = 0;
  auto* in = reinterpret_cast<uint8_t*>(block.data());
  size_t left = block.size();
  for (;;) {
    nghttp2_nv nv;
    int inflate_flags = 0;
    const ssize_t used = nghttp2_hd_inflate_hd2(inflater_, &nv, &inflate_flags, in, left, 1);
    if (used < 0) return ConnectionError(kCompressionError, "bad header block");
    in += used;
    left -= static_cast<size_t>(used);
    if ((inflate_flags & NGHTTP2_HD_INFLATE_EMIT) != 0) {
      decoded += nv.namelen + nv.valuelen + 32;
      if (decoded > kDecodedHeadersMax) {
        return ConnectionError(kEnhanceYourCalm, "header list too large");
      }
      const std::string_view name(reinterpret_cast<const char*>(nv.name), nv.namelen);
      const std::string_view value(reinterpret_cast<const char*>(nv.value), nv.valuelen);
      if (name == ":path") {
        request.path.assign(value);
      } else if (name == ":method") {
        method.assign(value);
      } else if (name == "content-type") {
        content_type.assign(value);
      } else if (name == "authorization") {
        request.authorization.assign(value);
      } else if (name == "grpc-timeout") {
        request.timeout.assign(value);
      }
    }
    if ((inflate_flags & NGHTTP2_HD_INFLATE_FINAL) != 0) {
      nghttp2_hd_inflate_end_headers(inflater_);
      break;
    }
    if ((inflate_flags & NGHTTP2_HD_INFLATE_EMIT) == 0 && left == 0) break;
  }

  if (auto it = streams_.find(stream_id); it != streams_.end()) {
    // Trailers from the client: gRPC clients send none; treated as its half-close.
    Stream& s = *it->second;
    if (!end_stream) {
      ResetStream(stream_id, kProtocolError);
      return true;
    }
    if (!s.remote_closed) {
      s.remote_closed = true;
      handler_.OnHalfClose(stream_id);
    }
    return true;
  }
  if (stream_id % 2 == 0) return ConnectionError(kProtocolError, "an even stream id");
  if (stream_id <= last_stream_id_) {
    return ConnectionError(kStreamClosed, "HEADERS on a closed stream");
  }
  last_stream_id_ = stream_id;
  if (goaway_sent_ || streams_.size() >= options_.streams_max) {
    WriteFrameHeader(4, kRstStream, 0, stream_id);
    PutBe32(out_, kRefusedStream);
    return true;
  }
  if (method != "POST" || request.path.empty() || request.path[0] != '/' ||
      !absl::StartsWith(content_type, "application/grpc")) {
    // Not a gRPC request: an HTTP answer, no stream (gRPC's HTTP/2 protocol: 415 for the
    // content type; 405 for the method).
    std::string answer;
    answer.push_back(static_cast<char>(0x08));  // literal without indexing, name index 8
    PutHpackInt(answer, 0, 7, 3);
    answer.append(method != "POST" ? "405" : "415");
    WriteHeaders(stream_id, answer, /*end_stream=*/true);
    if (!end_stream) {
      WriteFrameHeader(4, kRstStream, 0, stream_id);
      PutBe32(out_, kNoError);
    }
    return true;
  }
  auto stream = std::make_unique<Stream>();
  stream->send_window = peer_stream_window_;
  stream->recv_window = options_.stream_window_bytes;
  stream->message_limit = options_.message_bytes_max_default;
  // Closed on the client's side before the handler hears of it: trailers it sends from
  // OnRequest need no RST_STREAM after them.
  stream->remote_closed = end_stream;
  streams_.emplace(stream_id, std::move(stream));
  handler_.OnRequest(stream_id, request);
  if (end_stream && streams_.count(stream_id) != 0) handler_.OnHalfClose(stream_id);
  return true;
}

bool H2Conn::OnDataFrame(uint8_t flags, uint32_t stream_id, const char* p, size_t n) {
  if (stream_id == 0) return ConnectionError(kProtocolError, "DATA on stream 0");
  if (stream_id > last_stream_id_) return ConnectionError(kProtocolError, "DATA on idle stream");
  const size_t frame_bytes = n;
  if (static_cast<int64_t>(frame_bytes) > recv_window_) {
    return ConnectionError(kFlowControlError, "DATA over the connection window");
  }
  recv_window_ -= static_cast<int64_t>(frame_bytes);
  if ((flags & kPadded) != 0) {
    if (n < 1) return ConnectionError(kFrameSizeError, "DATA padding");
    const size_t pad = static_cast<uint8_t>(p[0]);
    ++p;
    --n;
    if (pad > n) return ConnectionError(kProtocolError, "DATA padding over the frame");
    n -= pad;
  }
  auto it = streams_.find(stream_id);
  if (it == streams_.end() || it->second->remote_closed) {
    // A stream we ended (its data was in flight) or that ended its side: dropped, but the
    // connection's window is given back.
    Consumed(nullptr, stream_id, frame_bytes);
    if (it != streams_.end()) ResetStream(stream_id, kStreamClosed);
    return true;
  }
  Stream& s = *it->second;
  if (static_cast<int64_t>(frame_bytes) > s.recv_window) {
    Consumed(nullptr, stream_id, frame_bytes);
    ResetStream(stream_id, kFlowControlError);
    return true;
  }
  s.recv_window -= static_cast<int64_t>(frame_bytes);
  // As for a request with END_STREAM: trailers sent from OnMessage need no RST_STREAM.
  const bool end_stream = (flags & kEndStream) != 0;
  if (end_stream) s.remote_closed = true;
  StreamData(stream_id, p, n);
  it = streams_.find(stream_id);  // the handler may have ended it
  Consumed(it == streams_.end() ? nullptr : it->second.get(), stream_id, frame_bytes);
  if (end_stream && it != streams_.end()) {
    if (!it->second->partial.empty() && !it->second->dropping) {
      // The client's side ended inside a message: gRPC's INTERNAL, not a half-close.
      it->second->dropping = true;
      DropPartial(*it->second);
      handler_.OnBadMessage(stream_id,
                            absl::InternalError("the stream ended in the middle of a message"));
      return true;
    }
    handler_.OnHalfClose(stream_id);
  }
  return true;
}

void H2Conn::StreamData(uint32_t stream_id, const char* p, size_t n) {
  while (n > 0) {
    auto it = streams_.find(stream_id);
    if (it == streams_.end()) return;
    Stream& s = *it->second;
    if (s.dropping) return;
    if (s.partial.size() < 5) {
      const size_t take = std::min(n, 5 - s.partial.size());
      s.partial.append(p, take);
      partial_bytes_ += take;
      p += take;
      n -= take;
      if (s.partial.size() < 5) return;
      s.message_length = Be32(s.partial.data() + 1);
      if ((s.partial[0] & 1) != 0) {
        s.dropping = true;
        DropPartial(s);
        handler_.OnBadMessage(
            stream_id, absl::UnimplementedError("compressed messages are not accepted: send "
                                                "them uncompressed (grpc-encoding identity)"));
        return;
      }
      if (s.message_length > s.message_limit) {
        s.dropping = true;
        DropPartial(s);
        handler_.OnBadMessage(stream_id, absl::ResourceExhaustedError(absl::StrCat(
                                             "a message of ", s.message_length,
                                             " bytes is over the limit of ", s.message_limit)));
        return;
      }
    }
    const size_t need = 5 + size_t{s.message_length} - s.partial.size();
    const size_t take = std::min(n, need);
    if (take < need && partial_bytes_ + take > options_.partial_bytes_max) {
      // Parts of messages held for all the streams: a client may not park megabytes here.
      DropPartial(s);
      s.dropping = true;
      handler_.OnBadMessage(
          stream_id, absl::ResourceExhaustedError("too much unfinished data on this connection"));
      return;
    }
    s.partial.append(p, take);
    partial_bytes_ += take;
    p += take;
    n -= take;
    if (take < need) return;
    std::string message = s.partial.substr(5);
    DropPartial(s);
    handler_.OnMessage(stream_id, std::move(message));
  }
}

void H2Conn::Consumed(Stream* s, uint32_t stream_id, size_t bytes) {
  recv_unacked_ += static_cast<int64_t>(bytes);
  if (recv_unacked_ >= options_.connection_window_bytes / 2) {
    WriteFrameHeader(4, kWindowUpdate, 0, 0);
    PutBe32(out_, static_cast<uint32_t>(recv_unacked_));
    recv_window_ += recv_unacked_;
    recv_unacked_ = 0;
  }
  if (s == nullptr || s->remote_closed) return;
  s->recv_unacked += static_cast<int64_t>(bytes);
  if (s->recv_unacked >= options_.stream_window_bytes / 2) {
    WriteFrameHeader(4, kWindowUpdate, 0, stream_id);
    PutBe32(out_, static_cast<uint32_t>(s->recv_unacked));
    s->recv_window += s->recv_unacked;
    s->recv_unacked = 0;
  }
}

bool H2Conn::OnSettingsFrame(uint8_t flags, uint32_t stream_id, const char* p, size_t n) {
  if (stream_id != 0) return ConnectionError(kProtocolError, "SETTINGS on a stream");
  if ((flags & kAck) != 0) {
    if (n != 0) return ConnectionError(kFrameSizeError, "SETTINGS ACK with a payload");
    // Our HEADER_TABLE_SIZE 0 is not enforced on the inflater: a client that honours it says
    // so at the start of its next block (and keeps no table with us); one that does not is
    // still decoded, within the 4,096 bytes every decoder allows (RFC 7541 4.2).
    return true;
  }
  if (n % 6 != 0) return ConnectionError(kFrameSizeError, "SETTINGS of the wrong size");
  bool windows_grew = false;
  for (size_t i = 0; i < n; i += 6) {
    const uint16_t id =
        static_cast<uint16_t>((static_cast<uint8_t>(p[i]) << 8) | static_cast<uint8_t>(p[i + 1]));
    const uint32_t value = Be32(p + i + 2);
    switch (id) {
      case 0x2:  // ENABLE_PUSH
        if (value > 1) return ConnectionError(kProtocolError, "ENABLE_PUSH not 0 or 1");
        break;
      case 0x4: {  // INITIAL_WINDOW_SIZE
        if (value > kWindowMax) return ConnectionError(kFlowControlError, "window too large");
        const int64_t delta = int64_t{value} - peer_stream_window_;
        peer_stream_window_ = value;
        for (auto& [id_, s] : streams_) {
          s->send_window += delta;
          if (s->send_window > kWindowMax) {
            return ConnectionError(kFlowControlError, "a stream window over 2^31-1");
          }
        }
        windows_grew = windows_grew || delta > 0;
        break;
      }
      case 0x5:  // MAX_FRAME_SIZE
        if (value < 16384 || value > 16777215) {
          return ConnectionError(kProtocolError, "MAX_FRAME_SIZE out of range");
        }
        peer_frame_max_ = std::min<uint32_t>(value, 64 * 1024);
        break;
      default:  // HEADER_TABLE_SIZE (we index nothing), MAX_CONCURRENT_STREAMS (no push), ...
        break;
    }
  }
  WriteFrameHeader(0, kSettings, kAck, 0);
  if (windows_grew) FlushAll();
  return true;
}

bool H2Conn::OnWindowUpdate(uint32_t stream_id, const char* p, size_t n) {
  if (n != 4) return ConnectionError(kFrameSizeError, "WINDOW_UPDATE of the wrong size");
  const uint32_t increment = Be32(p) & 0x7fffffff;
  if (stream_id == 0) {
    if (increment == 0) return ConnectionError(kProtocolError, "WINDOW_UPDATE of 0");
    send_window_ += increment;
    if (send_window_ > kWindowMax) {
      return ConnectionError(kFlowControlError, "connection window over 2^31-1");
    }
    FlushAll();
    return true;
  }
  if (stream_id > last_stream_id_) {
    return ConnectionError(kProtocolError, "WINDOW_UPDATE on an idle stream");
  }
  auto it = streams_.find(stream_id);
  if (it == streams_.end()) return true;
  if (increment == 0) {
    ResetStream(stream_id, kProtocolError);
    return true;
  }
  it->second->send_window += increment;
  if (it->second->send_window > kWindowMax) {
    ResetStream(stream_id, kFlowControlError);
    return true;
  }
  Flush(stream_id);
  it = streams_.find(stream_id);
  if (it != streams_.end() && !it->second->trailers_queued &&
      it->second->pending.size() - it->second->pending_sent < kWritableBytes) {
    handler_.OnWritable(stream_id);
  }
  return true;
}

void H2Conn::FlushAll() {
  std::vector<uint32_t> ids;
  ids.reserve(streams_.size());
  for (const auto& [id, s] : streams_) {
    if (s->pending.size() > s->pending_sent) ids.push_back(id);
  }
  for (const uint32_t id : ids) {
    Flush(id);
    auto it = streams_.find(id);
    if (it != streams_.end() && !it->second->trailers_queued &&
        it->second->pending.size() - it->second->pending_sent < kWritableBytes) {
      handler_.OnWritable(id);
    }
  }
}

void H2Conn::Flush(uint32_t stream_id) {
  auto it = streams_.find(stream_id);
  if (it == streams_.end() || dead_) return;
  Stream& s = *it->second;
  while (s.pending_sent < s.pending.size()) {
    const int64_t left = static_cast<int64_t>(s.pending.size() - s.pending_sent);
    const int64_t allowed =
        std::min({left, s.send_window, send_window_, static_cast<int64_t>(peer_frame_max_)});
    if (allowed <= 0) break;
    WriteFrameHeader(static_cast<size_t>(allowed), kData, 0, stream_id);
    out_.append(s.pending, s.pending_sent, static_cast<size_t>(allowed));
    s.pending_sent += static_cast<size_t>(allowed);
    s.send_window -= allowed;
    send_window_ -= allowed;
  }
  if (s.pending_sent == s.pending.size()) {
    std::string().swap(s.pending);
    s.pending_sent = 0;
  } else if (s.pending_sent > 64 * 1024) {
    s.pending.erase(0, s.pending_sent);
    s.pending_sent = 0;
  }
  if (!s.trailers_queued || !s.pending.empty()) return;
  WriteHeaders(stream_id, s.trailers, /*end_stream=*/true);
  if (!s.remote_closed) {
    // The call is over; the client may stop sending (gRPC's HTTP/2 protocol).
    WriteFrameHeader(4, kRstStream, 0, stream_id);
    PutBe32(out_, kNoError);
  }
  EndStream(stream_id, /*reset=*/false);
}

void H2Conn::SetMessageLimit(uint32_t stream_id, uint32_t bytes) {
  auto it = streams_.find(stream_id);
  if (it != streams_.end()) it->second->message_limit = bytes;
}

bool H2Conn::SendMessage(uint32_t stream_id, std::string_view message) {
  auto it = streams_.find(stream_id);
  if (it == streams_.end() || dead_ || it->second->trailers_queued) return false;
  Stream& s = *it->second;
  if (!s.headers_sent) {
    std::string block;
    PutResponseHeaders(block);
    WriteHeaders(stream_id, block, /*end_stream=*/false);
    s.headers_sent = true;
  }
  s.pending.push_back('\0');
  PutBe32(s.pending, static_cast<uint32_t>(message.size()));
  s.pending.append(message);
  Flush(stream_id);
  return true;
}

void H2Conn::SendTrailers(uint32_t stream_id, const absl::Status& status) {
  auto it = streams_.find(stream_id);
  if (it == streams_.end() || dead_ || it->second->trailers_queued) return;
  Stream& s = *it->second;
  s.trailers.clear();
  if (!s.headers_sent) PutResponseHeaders(s.trailers);  // trailers-only
  PutStatus(s.trailers, status);
  s.trailers_queued = true;
  Flush(stream_id);
}

size_t H2Conn::unsent_bytes(uint32_t stream_id) const {
  auto it = streams_.find(stream_id);
  if (it == streams_.end()) return 0;
  return it->second->pending.size() - it->second->pending_sent;
}

void H2Conn::ResetStream(uint32_t stream_id, ErrorCode code) {
  if (dead_) return;
  WriteFrameHeader(4, kRstStream, 0, stream_id);
  PutBe32(out_, code);
  if (streams_.count(stream_id) != 0) EndStream(stream_id, /*reset=*/true);
}

void H2Conn::Ping(uint64_t opaque) {
  if (dead_) return;
  WriteFrameHeader(8, kPing, 0, 0);
  PutBe32(out_, static_cast<uint32_t>(opaque >> 32));
  PutBe32(out_, static_cast<uint32_t>(opaque));
}

void H2Conn::GoAway(ErrorCode code, std::string_view debug) {
  if (dead_) return;
  // A later GOAWAY may not name a higher stream than an earlier one (RFC 9113 6.8): streams
  // refused after the first do not count.
  if (!goaway_sent_) goaway_last_stream_id_ = last_stream_id_;
  PutGoAway(out_, goaway_last_stream_id_, code, debug);
  goaway_sent_ = true;
  if (code != kNoError) {
    dead_ = true;
    while (!streams_.empty()) EndStream(streams_.begin()->first, /*reset=*/true);
  }
}

void H2Conn::Abort() {
  if (dead_) return;
  dead_ = true;
  while (!streams_.empty()) EndStream(streams_.begin()->first, /*reset=*/true);
}

bool H2Conn::ConnectionError(ErrorCode code, std::string_view debug) {
  GoAway(code, debug);
  dead_ = true;
  while (!streams_.empty()) EndStream(streams_.begin()->first, /*reset=*/true);
  return false;
}

void H2Conn::DropPartial(Stream& s) {
  partial_bytes_ -= s.partial.size();
  std::string().swap(s.partial);
}

void H2Conn::EndStream(uint32_t stream_id, bool reset) {
  if (auto it = streams_.find(stream_id); it != streams_.end()) DropPartial(*it->second);
  streams_.erase(stream_id);
  handler_.OnStreamGone(stream_id, reset);
}

void H2Conn::WriteFrameHeader(size_t length, uint8_t type, uint8_t flags, uint32_t stream_id) {
  out_.push_back(static_cast<char>(length >> 16));
  out_.push_back(static_cast<char>(length >> 8));
  out_.push_back(static_cast<char>(length));
  out_.push_back(static_cast<char>(type));
  out_.push_back(static_cast<char>(flags));
  PutBe32(out_, stream_id);
}

void H2Conn::WriteHeaders(uint32_t stream_id, const std::string& block, bool end_stream) {
  if (!table_size_update_sent_) {
    // Our first header block says that our table is 0 bytes (a dynamic table size update,
    // RFC 7541 6.3): we index nothing, and a client that lowered SETTINGS_HEADER_TABLE_SIZE
    // under 4,096 must see one before any other field (4.2; nghttp2's decoder rejects the
    // block otherwise). 0 is within any limit the client sets now or later.
    table_size_update_sent_ = true;
    WriteHeaders(stream_id, std::string(1, '\x20') + block, end_stream);
    return;
  }
  size_t pos = 0;
  bool first = true;
  do {
    const size_t chunk = std::min<size_t>(block.size() - pos, peer_frame_max_);
    const bool last = pos + chunk == block.size();
    uint8_t flags = last ? kEndHeaders : 0;
    if (first && end_stream) flags |= kEndStream;
    WriteFrameHeader(chunk, first ? kHeaders : kContinuation, flags, stream_id);
    out_.append(block, pos, chunk);
    pos += chunk;
    first = false;
  } while (pos < block.size());
}

void H2Conn::CheckOutputBound() {
  if (!dead_ && out_.size() > options_.output_bytes_max) {
    // The client reads nothing of what it asks for: no GOAWAY would reach it either.
    dead_ = true;
    while (!streams_.empty()) EndStream(streams_.begin()->first, /*reset=*/true);
  }
}

}  // namespace courtpiece::gateway::h2
