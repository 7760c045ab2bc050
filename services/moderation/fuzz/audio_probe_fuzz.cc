// libFuzzer target for FfmpegAudioProbe: any bytes either probe as one of the three accepted
// formats with its content type and a duration of at least 1 ms, or are refused with
// INVALID_ARGUMENT "unsupported_format: ..."; nothing else (no crash, no other code, no
// leak). Seeds: services/moderation/testdata. docs/moderation.md "The audio probe".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "services/moderation/ffmpeg_audio_probe.h"

namespace {

#define FUZZ_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      __builtin_printf("check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const courtpiece::moderation::FfmpegAudioProbe probe;
  const auto probed = probe.Probe(std::string_view(reinterpret_cast<const char*>(data), size));
  if (probed.ok()) {
    const std::string_view format = probed->format;
    const std::string_view type = probed->content_type;
    FUZZ_CHECK((format == "webm/opus" && type == "audio/webm") ||
               (format == "ogg/opus" && type == "audio/ogg") ||
               (format == "mp4/aac" && type == "audio/mp4"));
    FUZZ_CHECK(probed->duration_ms >= 1);
  } else {
    FUZZ_CHECK(probed.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(absl::StartsWith(probed.status().message(), "unsupported_format: "));
  }
  return 0;
}
