#include "services/moderation/fake_audio_probe.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace courtpiece::moderation {
namespace {

TEST(FakeAudioProbeTest, AnswersWhatIsSetAndCountsCalls) {
  FakeAudioProbe probe;
  absl::StatusOr<ProbedAudio> got = probe.Probe("a");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->format, "webm/opus");
  EXPECT_EQ(got->content_type, "audio/webm");
  EXPECT_EQ(got->duration_ms, 3000);

  probe.SetNote("mp4/aac", 6999);
  got = probe.Probe("bb");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->format, "mp4/aac");
  EXPECT_EQ(got->content_type, "audio/mp4");
  EXPECT_EQ(got->duration_ms, 6999);

  probe.SetError(absl::InvalidArgumentError("unsupported_format: no audio stream"));
  got = probe.Probe("ccc");
  EXPECT_EQ(got.status(), absl::InvalidArgumentError("unsupported_format: no audio stream"));

  probe.SetNote("ogg/opus", 1);
  got = probe.Probe("dddd");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->content_type, "audio/ogg");
  EXPECT_EQ(probe.calls(), 4);
  EXPECT_EQ(probe.last_audio(), "dddd");
}

}  // namespace
}  // namespace courtpiece::moderation
