// FfmpegAudioProbe: the real AudioProbe (audio_probe.h), FFmpeg's libavformat (Debian 12's
// 5.1) demuxing from memory. Accepts exactly one audio stream: WebM/Matroska with Opus
// ("webm/opus"), Ogg with Opus ("ogg/opus") and the MP4 family with AAC ("mp4/aac"). The
// duration is measured from the audio packets' timestamps (max(pts + duration) - min(pts)),
// never from the container's header. docs/moderation.md "The audio probe".
//
// What it never does: open a file or a URL (a custom AVIOContext over the given bytes, no
// protocol allowed, io_open refused), decode audio (the demuxer and, for Opus packet
// durations, libavcodec's parser only), read more than read_bytes_factor_max x size +
// read_bytes_extra_max through its AVIOContext, keep reading past `packets_max` packets, or
// let FFmpeg make one allocation above 4 MiB (av_max_alloc, process-wide).
// Every refusal is INVALID_ARGUMENT "unsupported_format: <short reason>" (the reasons:
// docs/moderation.md); RESOURCE_EXHAUSTED only when its own small contexts cannot be allocated.
// Thread-safety: thread-safe; Probe keeps no state between calls. The first constructor sets
// two FFmpeg process-wide settings (once): the log level to quiet (FFmpeg's logs would go to
// stderr) and av_max_alloc to 4 MiB (a header must not make a demuxer allocate hundreds of
// megabytes); nothing else in the service uses FFmpeg.
#ifndef COURTPIECE_SERVICES_MODERATION_FFMPEG_AUDIO_PROBE_H_
#define COURTPIECE_SERVICES_MODERATION_FFMPEG_AUDIO_PROBE_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "services/moderation/audio_probe.h"

namespace courtpiece::moderation {

struct FfmpegAudioProbeOptions {
  // A 7 s note has ~350 Opus packets of 20 ms or ~330 AAC frames; a file with more is
  // refused before the rest is read.
  int64_t packets_max = 2000;
  // Larger inputs are refused unread (the domain's own size cap, 512 KiB, is lower). Keep it
  // below FFmpeg's one-allocation cap of 4 MiB (a packet can be as large as the input).
  int64_t bytes_max = 1 << 20;
  // Bytes the demuxer may read through the AVIOContext in all, re-reads after seeks
  // included: `read_bytes_factor_max` times the input plus `read_bytes_extra_max`.
  int64_t read_bytes_factor_max = 8;
  int64_t read_bytes_extra_max = 64 * 1024;
  // Bytes libavformat may look at to recognise the container.
  int64_t format_probe_bytes_max = 32 * 1024;
  // Streams the demuxer may create (a file declaring more fails to open; one is accepted).
  int64_t streams_max = 4;
};

class FfmpegAudioProbe final : public AudioProbe {
 public:
  explicit FfmpegAudioProbe(FfmpegAudioProbeOptions options = {});

  absl::StatusOr<ProbedAudio> Probe(std::string_view audio) const override;

 private:
  FfmpegAudioProbeOptions options_;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_FFMPEG_AUDIO_PROBE_H_
