// What a voice note's audio really is: its container, codec and duration, read from the
// bytes (never from the client's word). The real probe (ffmpeg_audio_probe.h) demuxes with
// FFmpeg's libavformat from memory; FakeAudioProbe (fake_audio_probe.h) answers what a unit
// test sets.
//
// Contract: Probe returns the format and the duration measured from the audio packets'
// timestamps (a container's header may lie), or INVALID_ARGUMENT whose message starts with
// "unsupported_format: " (not one of the accepted formats, no audio stream, a codec other
// than the container's expected one, truncated or unreadable, no packets, more packets or
// streams than a 7 s note can have). The probe reads only the given bytes (no files, no
// network, no decoding) and bounds its own work.
// Thread-safety: implementations are thread-safe (Probe is const and keeps no state).
#ifndef COURTPIECE_SERVICES_MODERATION_AUDIO_PROBE_H_
#define COURTPIECE_SERVICES_MODERATION_AUDIO_PROBE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace courtpiece::moderation {

struct ProbedAudio {
  std::string format;        // "webm/opus", "ogg/opus" or "mp4/aac"
  std::string content_type;  // "audio/webm", "audio/ogg" or "audio/mp4"
  int64_t duration_ms = 0;   // last packet's end minus first packet's start, >= 1
};

class AudioProbe {
 public:
  virtual ~AudioProbe() = default;
  virtual absl::StatusOr<ProbedAudio> Probe(std::string_view audio) const = 0;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_AUDIO_PROBE_H_
