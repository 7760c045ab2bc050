#include "services/moderation/ffmpeg_audio_probe.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/mathematics.h>
#include <libavutil/mem.h>
}

namespace courtpiece::moderation {
namespace {

constexpr int kIoBufferBytes = 4096;
// FFmpeg's process-wide cap on one allocation (av_max_alloc; its default is INT_MAX). A
// demuxer sizes some tables from a count in the header before reading the entries: a 3 KB
// fragmented MP4 whose `trun` declares millions of samples made mov allocate 560 MB
// (services/moderation/fuzz/repro/mp4_trun_huge_sample_count). A real note needs well under
// a megabyte in any one block (the input itself is at most `bytes_max`, 1 MiB by default;
// keep `bytes_max` below this cap).
constexpr size_t kAllocBytesMax = 4 << 20;
// Timestamps and durations beyond these (in the stream's time base) are refused before any
// arithmetic on them: 2^50 ticks of 1/48000 s is centuries, and no sum below overflows.
constexpr int64_t kTimestampAbsMax = int64_t{1} << 50;
constexpr int64_t kPacketDurationMax = int64_t{1} << 40;

// The container's framing checks (below): "" when whole, else the refusal reason.
std::string MatroskaFraming(std::string_view in);
std::string OggFraming(std::string_view in);
std::string Mp4Framing(std::string_view in);

// The libavformat demuxer names (`ffmpeg -demuxers` on Debian 12's 5.1) and what each must
// carry.
struct Accepted {
  const char* demuxer;
  std::string (*framing)(std::string_view);
  const char* container;
  AVCodecID codec;
  const char* codec_name;
  const char* format;
  const char* content_type;
};
constexpr Accepted kAccepted[] = {
    {"matroska,webm", MatroskaFraming, "webm", AV_CODEC_ID_OPUS, "opus", "webm/opus", "audio/webm"},
    {"ogg", OggFraming, "ogg", AV_CODEC_ID_OPUS, "opus", "ogg/opus", "audio/ogg"},
    {"mov,mp4,m4a,3gp,3g2,mj2", Mp4Framing, "mp4", AV_CODEC_ID_AAC, "aac", "mp4/aac", "audio/mp4"},
};
constexpr const char kFormatWhitelist[] = "matroska,webm,ogg,mov,mp4,m4a,3gp,3g2,mj2";

absl::Status Refuse(std::string_view reason) {
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported_format: ", absl::string_view(reason.data(), reason.size())));
}

std::string AvError(int error) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  if (av_strerror(error, text, sizeof(text)) < 0) return absl::StrCat("error ", error);
  return text;
}

// The bytes under the AVIOContext. Reads and seeks never leave [0, size]; the total read is
// bounded (a demuxer that seeks back again and again stops at `read_max`).
struct MemoryInput {
  const uint8_t* data = nullptr;
  int64_t size = 0;
  int64_t pos = 0;
  int64_t read_total = 0;
  int64_t read_max = 0;
  bool read_limit_hit = false;
};

int ReadMemory(void* opaque, uint8_t* buf, int buf_size) {
  auto* in = static_cast<MemoryInput*>(opaque);
  if (buf_size <= 0) return AVERROR(EINVAL);
  if (in->pos >= in->size) return AVERROR_EOF;
  const int64_t n = std::min<int64_t>(buf_size, in->size - in->pos);
  if (in->read_total + n > in->read_max) {
    in->read_limit_hit = true;
    return AVERROR(EIO);
  }
  std::memcpy(buf, in->data + in->pos, static_cast<size_t>(n));
  in->pos += n;
  in->read_total += n;
  return static_cast<int>(n);
}

int64_t SeekMemory(void* opaque, int64_t offset, int whence) {
  auto* in = static_cast<MemoryInput*>(opaque);
  whence &= ~AVSEEK_FORCE;
  if (whence == AVSEEK_SIZE) return in->size;
  int64_t base = 0;
  if (whence == SEEK_SET) {
    base = 0;
  } else if (whence == SEEK_CUR) {
    base = in->pos;
  } else if (whence == SEEK_END) {
    base = in->size;
  } else {
    return AVERROR(EINVAL);
  }
  int64_t target = 0;
  if (__builtin_add_overflow(base, offset, &target) || target < 0 || target > in->size) {
    return AVERROR(EINVAL);
  }
  in->pos = target;
  return target;
}

// The container's own framing must reach the end of the bytes: a cut inside an element, a
// page or a box is "truncated" (libavformat drops such a tail silently for Matroska and Ogg
// and measures a shorter note). These walkers read only headers, bounds-checked, and take at
// most one step per 2 bytes of input. A cut exactly between two elements cannot be told from
// a shorter recording and is measured as one.
// Returns the refusal reason, or an empty string when the framing is whole.

// An EBML variable-length integer at `pos`: the element ID keeps its length marker, a size
// drops it (all value bits set = unknown size). False when the bytes end inside it or it is
// longer than 8 bytes.
bool ReadEbmlVint(std::string_view in, size_t& pos, bool keep_marker, uint64_t& value,
                  bool& unknown) {
  if (pos >= in.size()) return false;
  const auto first = static_cast<uint8_t>(in[pos]);
  if (first == 0) return false;
  const int length = __builtin_clz(static_cast<unsigned>(first)) - 24 + 1;
  if (in.size() - pos < static_cast<size_t>(length)) return false;
  uint64_t v = keep_marker ? first : (first & (0xFFu >> length));
  bool all_ones = (first & (0xFFu >> length)) == (0xFFu >> length);
  for (int i = 1; i < length; ++i) {
    const auto b = static_cast<uint8_t>(in[pos + static_cast<size_t>(i)]);
    v = (v << 8) | b;
    all_ones = all_ones && b == 0xFF;
  }
  pos += static_cast<size_t>(length);
  value = v;
  unknown = !keep_marker && all_ones;
  return true;
}

std::string MatroskaFraming(std::string_view in) {
  constexpr uint64_t kSegment = 0x18538067;
  constexpr uint64_t kCluster = 0x1F43B675;
  size_t pos = 0;
  while (pos < in.size()) {
    uint64_t id = 0;
    uint64_t size = 0;
    bool unknown = false;
    bool ignored = false;
    if (in[pos] == 0) return "damaged webm element";
    if (!ReadEbmlVint(in, pos, /*keep_marker=*/true, id, ignored) ||
        !ReadEbmlVint(in, pos, /*keep_marker=*/false, size, unknown)) {
      return "truncated webm element";
    }
    // The segment and clusters are walked into (their children follow their headers);
    // any other element is stepped over whole.
    if (id == kSegment || id == kCluster) continue;
    if (unknown) return "";  // nothing after it can be checked
    if (size > in.size() - pos) return "truncated webm element";
    pos += static_cast<size_t>(size);
  }
  return "";
}

uint32_t BigEndian32(std::string_view in, size_t pos) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(in[pos + i]);
  return v;
}

std::string OggFraming(std::string_view in) {
  constexpr size_t kPageHeaderBytes = 27;
  size_t pos = 0;
  while (pos < in.size()) {
    if (in.size() - pos < kPageHeaderBytes) return "truncated ogg page";
    if (in.substr(pos, 4) != "OggS") return "damaged ogg page";
    const size_t segments = static_cast<uint8_t>(in[pos + 26]);
    if (in.size() - pos - kPageHeaderBytes < segments) return "truncated ogg page";
    size_t body = 0;
    for (size_t i = 0; i < segments; ++i) body += static_cast<uint8_t>(in[pos + 27 + i]);
    if (in.size() - pos - kPageHeaderBytes - segments < body) return "truncated ogg page";
    pos += kPageHeaderBytes + segments + body;
  }
  return "";
}

std::string Mp4Framing(std::string_view in) {
  size_t pos = 0;
  while (pos < in.size()) {
    if (in.size() - pos < 8) return "truncated mp4 box";
    uint64_t size = BigEndian32(in, pos);
    uint64_t header = 8;
    if (size == 0) return "";  // the last box runs to the end
    if (size == 1) {
      if (in.size() - pos < 16) return "truncated mp4 box";
      size = (uint64_t{BigEndian32(in, pos + 8)} << 32) | BigEndian32(in, pos + 12);
      header = 16;
    }
    if (size < header) return "damaged mp4 box";
    if (size > in.size() - pos) return "truncated mp4 box";
    pos += static_cast<size_t>(size);
  }
  return "";
}

// Demuxers that would open another resource (a playlist entry, an MP4 data reference) get
// this instead of a file or a socket.
int RefuseIoOpen(AVFormatContext*, AVIOContext**, const char*, int, AVDictionary**) {
  return AVERROR(EPERM);
}

// Owns the demuxer and the AVIOContext (which libavformat does not free: custom I/O).
class Demux {
 public:
  Demux() = default;
  Demux(const Demux&) = delete;
  Demux& operator=(const Demux&) = delete;
  ~Demux() {
    av_packet_free(&packet);
    avformat_close_input(&format);  // also frees a context whose open failed: null then
    avformat_free_context(format);
    if (io != nullptr) av_freep(&io->buffer);  // the buffer may have been reallocated
    avio_context_free(&io);
    av_dict_free(&options);
  }

  AVFormatContext* format = nullptr;
  AVIOContext* io = nullptr;
  AVPacket* packet = nullptr;
  AVDictionary* options = nullptr;
};

}  // namespace

FfmpegAudioProbe::FfmpegAudioProbe(FfmpegAudioProbeOptions options) : options_(options) {
  static std::once_flag process_wide;
  std::call_once(process_wide, [] {
    av_log_set_level(AV_LOG_QUIET);
    av_max_alloc(kAllocBytesMax);
  });
}

absl::StatusOr<ProbedAudio> FfmpegAudioProbe::Probe(std::string_view audio) const {
  if (audio.empty()) return Refuse("empty");
  if (static_cast<int64_t>(audio.size()) > options_.bytes_max) {
    return Refuse(absl::StrCat("more than ", options_.bytes_max, " bytes"));
  }
  MemoryInput input;
  input.data = reinterpret_cast<const uint8_t*>(audio.data());
  input.size = static_cast<int64_t>(audio.size());
  input.read_max = options_.read_bytes_factor_max * input.size + options_.read_bytes_extra_max;

  Demux demux;
  demux.format = avformat_alloc_context();
  auto* buffer = static_cast<unsigned char*>(av_malloc(kIoBufferBytes));
  if (demux.format == nullptr || buffer == nullptr) {
    av_free(buffer);
    return absl::ResourceExhaustedError("audio probe: out of memory");
  }
  demux.io = avio_alloc_context(buffer, kIoBufferBytes, /*write_flag=*/0, &input, ReadMemory,
                                /*write_packet=*/nullptr, SeekMemory);
  if (demux.io == nullptr) {
    av_free(buffer);
    return absl::ResourceExhaustedError("audio probe: out of memory");
  }
  demux.format->pb = demux.io;
  demux.format->io_open = RefuseIoOpen;
  demux.format->max_streams = static_cast<int>(options_.streams_max);
  demux.format->format_probesize = static_cast<int>(options_.format_probe_bytes_max);
  demux.format->probesize = options_.format_probe_bytes_max;
  av_dict_set(&demux.options, "format_whitelist", kFormatWhitelist, 0);
  av_dict_set(&demux.options, "protocol_whitelist", "", 0);
  if (const int error = avformat_open_input(&demux.format, nullptr, nullptr, &demux.options);
      error < 0) {
    if (input.read_limit_hit) return Refuse("read limit reached in the header");
    return Refuse(absl::StrCat("not a readable webm, ogg or mp4 file (", AvError(error), ")"));
  }

  const Accepted* accepted = nullptr;
  for (const Accepted& a : kAccepted) {
    if (std::strcmp(demux.format->iformat->name, a.demuxer) == 0) accepted = &a;
  }
  if (accepted == nullptr) return Refuse("not a webm, ogg or mp4 file");
  if (demux.format->nb_streams == 0) return Refuse("no audio stream");
  if (demux.format->nb_streams != 1) {
    return Refuse(absl::StrCat(demux.format->nb_streams, " streams, one audio stream expected"));
  }
  const AVStream* stream = demux.format->streams[0];
  if (stream->codecpar->codec_type != AVMEDIA_TYPE_AUDIO) return Refuse("no audio stream");
  if (stream->codecpar->codec_id != accepted->codec) {
    return Refuse(absl::StrCat(avcodec_get_name(stream->codecpar->codec_id), " in ",
                               accepted->container, ", ", accepted->codec_name, " expected"));
  }
  if (const std::string broken = accepted->framing(audio); !broken.empty()) {
    return Refuse(broken);
  }
  const AVRational time_base = stream->time_base;
  if (time_base.num <= 0 || time_base.den <= 0) return Refuse("no time base");

  demux.packet = av_packet_alloc();
  if (demux.packet == nullptr) return absl::ResourceExhaustedError("audio probe: out of memory");
  int64_t packets = 0;
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t end = std::numeric_limits<int64_t>::min();
  while (true) {
    const int error = av_read_frame(demux.format, demux.packet);
    // A demuxer may turn the refused read into a short packet or an end of file.
    if (input.read_limit_hit) return Refuse("read limit reached");
    if (error == AVERROR_EOF) break;
    if (error < 0) return Refuse(absl::StrCat("unreadable packet (", AvError(error), ")"));
    const AVPacket& p = *demux.packet;
    if (p.stream_index != 0 || demux.format->nb_streams != 1) {
      return Refuse("a second stream appeared");
    }
    if (++packets > options_.packets_max) {
      return Refuse(absl::StrCat("more than ", options_.packets_max, " packets"));
    }
    if (p.flags & AV_PKT_FLAG_CORRUPT) return Refuse("truncated packet");
    const int64_t ts = p.pts != AV_NOPTS_VALUE ? p.pts : p.dts;
    if (ts == AV_NOPTS_VALUE) return Refuse("a packet without a timestamp");
    if (ts < -kTimestampAbsMax || ts > kTimestampAbsMax || p.duration < 0 ||
        p.duration > kPacketDurationMax) {
      return Refuse("timestamp out of range");
    }
    first = std::min(first, ts);
    end = std::max(end, ts + p.duration);
    av_packet_unref(demux.packet);
  }
  if (input.read_limit_hit) return Refuse("read limit reached");
  if (demux.io->error < 0) {
    return Refuse(absl::StrCat("unreadable (", AvError(demux.io->error), ")"));
  }
  if (packets == 0) return Refuse("no audio packets");
  const int64_t duration_ms =
      av_rescale_q_rnd(end - first, time_base, AVRational{1, 1000}, AV_ROUND_NEAR_INF);
  // av_rescale answers INT64_MIN when the result does not fit (a huge time base numerator).
  if (duration_ms == std::numeric_limits<int64_t>::min()) return Refuse("timestamp out of range");
  if (duration_ms < 1) return Refuse("no audio duration");
  return ProbedAudio{accepted->format, accepted->content_type, duration_ms};
}

}  // namespace courtpiece::moderation
