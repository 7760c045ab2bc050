// FakeAudioProbe: the AudioProbe for the domain's unit tests. Answers the ProbedAudio or the
// error a test sets (by default a 3 s "webm/opus" note) without looking at the bytes, and
// counts its calls and remembers the last input.
// Thread-safety: thread-safe (a mutex around the answer and the counters).
#ifndef COURTPIECE_SERVICES_MODERATION_FAKE_AUDIO_PROBE_H_
#define COURTPIECE_SERVICES_MODERATION_FAKE_AUDIO_PROBE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "services/moderation/audio_probe.h"

namespace courtpiece::moderation {

class FakeAudioProbe final : public AudioProbe {
 public:
  FakeAudioProbe();

  absl::StatusOr<ProbedAudio> Probe(std::string_view audio) const override;

  // Every later call answers `audio` (replaces a set error).
  void SetResult(ProbedAudio audio);
  // Every later call answers `error` (must not be OK).
  void SetError(absl::Status error);
  // Shorthand: a note of `duration_ms` in `format` ("webm/opus", "ogg/opus" or "mp4/aac"),
  // the content type to match.
  void SetNote(std::string_view format, int64_t duration_ms);

  int64_t calls() const;
  std::string last_audio() const;

 private:
  mutable absl::Mutex mu_;
  absl::StatusOr<ProbedAudio> result_ ABSL_GUARDED_BY(mu_);
  mutable int64_t calls_ ABSL_GUARDED_BY(mu_) = 0;
  mutable std::string last_audio_ ABSL_GUARDED_BY(mu_);
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_FAKE_AUDIO_PROBE_H_
