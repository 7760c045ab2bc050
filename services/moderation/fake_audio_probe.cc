#include "services/moderation/fake_audio_probe.h"

#include <utility>

#include "courtpiece/common/check.h"

namespace courtpiece::moderation {

FakeAudioProbe::FakeAudioProbe() : result_(ProbedAudio{"webm/opus", "audio/webm", 3000}) {}

absl::StatusOr<ProbedAudio> FakeAudioProbe::Probe(std::string_view audio) const {
  absl::MutexLock lock(&mu_);
  ++calls_;
  last_audio_.assign(audio);
  return result_;
}

void FakeAudioProbe::SetResult(ProbedAudio audio) {
  absl::MutexLock lock(&mu_);
  result_ = std::move(audio);
}

void FakeAudioProbe::SetError(absl::Status error) {
  COURTPIECE_CHECK(!error.ok(), "FakeAudioProbe::SetError needs an error");
  absl::MutexLock lock(&mu_);
  result_ = std::move(error);
}

void FakeAudioProbe::SetNote(std::string_view format, int64_t duration_ms) {
  std::string content_type = "audio/webm";
  if (format == "ogg/opus") content_type = "audio/ogg";
  if (format == "mp4/aac") content_type = "audio/mp4";
  SetResult(ProbedAudio{std::string(format), std::move(content_type), duration_ms});
}

int64_t FakeAudioProbe::calls() const {
  absl::MutexLock lock(&mu_);
  return calls_;
}

std::string FakeAudioProbe::last_audio() const {
  absl::MutexLock lock(&mu_);
  return last_audio_;
}

}  // namespace courtpiece::moderation
