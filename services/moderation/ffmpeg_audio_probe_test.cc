// FfmpegAudioProbe on real recordings (testdata/, made by testdata/regenerate.sh) and on
// broken, hostile and cut inputs. Durations are checked within 30 ms of the signal's length:
// the measured span includes the codec's priming and padding (Opus 6.5 ms pre-skip, AAC
// 1024 priming samples, the last frame's rounding).
#include "services/moderation/ffmpeg_audio_probe.h"

#include <cctype>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "courtpiece/common/process_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace courtpiece::moderation {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kToleranceMs = 30;

std::string ReadTestdata(const std::string& name) {
  const std::string path = common::SourceDir() + "/services/moderation/testdata" + "/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

// A parameterised test's name: its file with every non-alphanumeric character as '_'.
template <typename T>
std::string FileTestName(const ::testing::TestParamInfo<T>& param) {
  std::string name = param.param.file;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

struct Accepted {
  const char* file;
  const char* format;
  const char* content_type;
  int64_t signal_ms;  // the length of the signal regenerate.sh encoded
};

class AcceptedTest : public ::testing::TestWithParam<Accepted> {};

TEST_P(AcceptedTest, FormatAndDurationFromThePackets) {
  const Accepted& want = GetParam();
  const FfmpegAudioProbe probe;
  const absl::StatusOr<ProbedAudio> got = probe.Probe(ReadTestdata(want.file));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->format, want.format);
  EXPECT_EQ(got->content_type, want.content_type);
  EXPECT_GE(got->duration_ms, want.signal_ms - kToleranceMs);
  EXPECT_LE(got->duration_ms, want.signal_ms + kToleranceMs);
}

INSTANTIATE_TEST_SUITE_P(
    Testdata, AcceptedTest,
    ::testing::Values(
        Accepted{"note_3s.webm", "webm/opus", "audio/webm", 3000},
        Accepted{"note_3s.ogg", "ogg/opus", "audio/ogg", 3000},
        Accepted{"note_3s.m4a", "mp4/aac", "audio/mp4", 3000},
        Accepted{"note_3s_fragmented.m4a", "mp4/aac", "audio/mp4", 3000},
        // Chrome's MediaRecorder shape: no Duration, no cues, unknown-size segment/clusters.
        Accepted{"note_live.webm", "webm/opus", "audio/webm", 3000},
        Accepted{"note_7s.webm", "webm/opus", "audio/webm", 7000},
        Accepted{"note_7s.ogg", "ogg/opus", "audio/ogg", 7000},
        Accepted{"note_7s.m4a", "mp4/aac", "audio/mp4", 7000},
        // Too long for a note: the probe measures it, the domain refuses too_long.
        Accepted{"note_9s.ogg", "ogg/opus", "audio/ogg", 9000},
        // The header says 2 s; the packets run 9 s.
        Accepted{"note_9s_header_says_2s.webm", "webm/opus", "audio/webm", 9000},
        Accepted{"note_9s_header_says_2s.m4a", "mp4/aac", "audio/mp4", 9000}),
    FileTestName<Accepted>);

struct Refused {
  const char* file;
  const char* message;  // the whole message, or its start when it ends with "("
};

class RefusedTest : public ::testing::TestWithParam<Refused> {};

TEST_P(RefusedTest, InvalidArgumentWithItsReason) {
  const Refused& want = GetParam();
  const FfmpegAudioProbe probe;
  const absl::StatusOr<ProbedAudio> got = probe.Probe(ReadTestdata(want.file));
  ASSERT_FALSE(got.ok()) << got->format << " " << got->duration_ms;
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  if (absl::EndsWith(want.message, "(")) {
    EXPECT_THAT(Message(got.status()), StartsWith(want.message));
  } else {
    EXPECT_EQ(Message(got.status()), want.message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Testdata, RefusedTest,
    ::testing::Values(
        Refused{"not_audio.txt", "unsupported_format: not a readable webm, ogg or mp4 file ("},
        Refused{"regenerate.sh", "unsupported_format: not a readable webm, ogg or mp4 file ("},
        // Real audio in containers off the whitelist.
        Refused{"flac.flac", "unsupported_format: not a readable webm, ogg or mp4 file ("},
        Refused{"mp3.mp3", "unsupported_format: not a readable webm, ogg or mp4 file ("},
        Refused{"wav.wav", "unsupported_format: not a readable webm, ogg or mp4 file ("},
        Refused{"video.webm", "unsupported_format: 2 streams, one audio stream expected"},
        Refused{"two_audio.webm", "unsupported_format: 2 streams, one audio stream expected"},
        Refused{"video_only.webm", "unsupported_format: no audio stream"},
        Refused{"vorbis.webm", "unsupported_format: vorbis in webm, opus expected"},
        Refused{"opus.m4a", "unsupported_format: opus in mp4, aac expected"},
        // The first half of the 3 s notes: cut inside an element, a page, a box.
        Refused{"truncated.webm", "unsupported_format: truncated webm element"},
        Refused{"truncated.ogg", "unsupported_format: truncated ogg page"},
        Refused{"truncated.m4a", "unsupported_format: truncated mp4 box"}),
    FileTestName<Refused>);

TEST(FfmpegAudioProbeTest, ACutLiveWebmIsRefused) {
  // Chrome's shape has no sizes for the segment and clusters: the cut is found in the block.
  const FfmpegAudioProbe probe;
  const std::string whole = ReadTestdata("note_live.webm");
  const absl::StatusOr<ProbedAudio> got =
      probe.Probe(std::string_view(whole).substr(0, whole.size() / 2));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(got.status()), "unsupported_format: truncated webm element");
}

TEST(FfmpegAudioProbeTest, BytesAfterTheLastPageOrBoxAreRefused) {
  const FfmpegAudioProbe probe;
  absl::StatusOr<ProbedAudio> got = probe.Probe(ReadTestdata("note_3s.ogg") + "junk");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(got.status()), "unsupported_format: truncated ogg page");
  got = probe.Probe(ReadTestdata("note_3s.ogg") + std::string(64, 'x'));
  EXPECT_EQ(Message(got.status()), "unsupported_format: damaged ogg page");
  got = probe.Probe(ReadTestdata("note_3s.m4a") + "junk");
  EXPECT_EQ(Message(got.status()), "unsupported_format: truncated mp4 box");
  got = probe.Probe(ReadTestdata("note_3s.webm") + std::string(8, '\0'));
  EXPECT_EQ(Message(got.status()), "unsupported_format: damaged webm element");
}

TEST(FfmpegAudioProbeTest, AHeaderDeclaringMillionsOfSamplesIsRefusedWithoutTheMemory) {
  // Found by the fuzzer (fuzz/repro): fragmented MP4s of 3-4 KB whose `trun` declares
  // millions of samples of zero bytes each; mov allocated 560 MB of index (and took 10 s
  // under ASan) before av_max_alloc's 4 MiB cap. Now the header fails to open.
  const FfmpegAudioProbe probe;
  for (const char* file : {"mp4_trun_huge_sample_count", "mp4_huge_alloc_timeout"}) {
    const std::string path =
        common::SourceDir() + "/services/moderation/testdata" + "/../fuzz/repro/" + file;
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in.good()) << path;
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const absl::StatusOr<ProbedAudio> got = probe.Probe(bytes);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << file;
    EXPECT_EQ(Message(got.status()),
              "unsupported_format: not a readable webm, ogg or mp4 file (Cannot allocate memory)")
        << file;
  }
}

TEST(FfmpegAudioProbeTest, EmptyInputIsRefused) {
  const FfmpegAudioProbe probe;
  const absl::StatusOr<ProbedAudio> got = probe.Probe("");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(got.status()), "unsupported_format: empty");
}

TEST(FfmpegAudioProbeTest, RandomGarbageIsRefused) {
  const FfmpegAudioProbe probe;
  std::mt19937_64 rng(14);
  for (const size_t size : {1, 4, 16, 100, 4096, 65536, 300000}) {
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    const absl::StatusOr<ProbedAudio> got = probe.Probe(bytes);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << size;
    EXPECT_THAT(Message(got.status()),
                StartsWith("unsupported_format: not a readable webm, ogg or mp4"))
        << size;
  }
}

TEST(FfmpegAudioProbeTest, GarbageBehindARealHeaderIsRefusedOrShorter) {
  // The first 1 KiB of each note (container header and the first packets), then noise.
  const FfmpegAudioProbe probe;
  std::mt19937_64 rng(7);
  for (const char* file : {"note_3s.webm", "note_3s.ogg", "note_3s.m4a", "note_live.webm"}) {
    std::string bytes = ReadTestdata(file);
    for (size_t i = 1024; i < bytes.size(); ++i) bytes[i] = static_cast<char>(rng());
    const absl::StatusOr<ProbedAudio> got = probe.Probe(bytes);
    if (got.ok()) {
      EXPECT_LE(got->duration_ms, 3000 + kToleranceMs) << file;
    } else {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << file;
      EXPECT_THAT(Message(got.status()), StartsWith("unsupported_format: ")) << file;
    }
  }
}

TEST(FfmpegAudioProbeTest, EveryCutAtASixteenthIsShorterOrRefused) {
  const FfmpegAudioProbe probe;
  for (const char* file : {"note_3s.webm", "note_3s.ogg", "note_3s.m4a", "note_3s_fragmented.m4a",
                           "note_live.webm", "note_7s.webm", "note_7s.ogg", "note_7s.m4a"}) {
    const std::string whole = ReadTestdata(file);
    const absl::StatusOr<ProbedAudio> full = probe.Probe(whole);
    ASSERT_TRUE(full.ok()) << file << ": " << full.status();
    int accepted = 0;
    for (size_t k = 1; k < 16; ++k) {
      const size_t cut = whole.size() * k / 16;
      const absl::StatusOr<ProbedAudio> got = probe.Probe(std::string_view(whole).substr(0, cut));
      if (got.ok()) {
        ++accepted;
        EXPECT_EQ(got->format, full->format) << file << " cut at " << cut;
        EXPECT_GE(got->duration_ms, 1) << file << " cut at " << cut;
        EXPECT_LT(got->duration_ms, full->duration_ms) << file << " cut at " << cut;
      } else {
        EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument)
            << file << " cut at " << cut;
        EXPECT_THAT(Message(got.status()), StartsWith("unsupported_format: "))
            << file << " cut at " << cut;
      }
    }
    // Only a cut exactly between two elements, pages or boxes can be a shorter note.
    EXPECT_LE(accepted, 1) << file;
  }
}

TEST(FfmpegAudioProbeTest, MorePacketsThanTheLimitAreRefused) {
  FfmpegAudioProbeOptions options;
  options.packets_max = 100;  // a 3 s note has ~150 Opus or ~142 AAC packets
  const FfmpegAudioProbe probe(options);
  for (const char* file : {"note_3s.webm", "note_3s.ogg", "note_3s.m4a"}) {
    const absl::StatusOr<ProbedAudio> got = probe.Probe(ReadTestdata(file));
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << file;
    EXPECT_EQ(Message(got.status()), "unsupported_format: more than 100 packets") << file;
  }
  options.packets_max = 160;
  const FfmpegAudioProbe enough(options);
  for (const char* file : {"note_3s.webm", "note_3s.ogg", "note_3s.m4a"}) {
    EXPECT_TRUE(enough.Probe(ReadTestdata(file)).ok()) << file;
  }
}

TEST(FfmpegAudioProbeTest, MoreBytesThanTheLimitAreRefusedUnread) {
  FfmpegAudioProbeOptions options;
  options.bytes_max = 10000;
  const FfmpegAudioProbe probe(options);
  const absl::StatusOr<ProbedAudio> got = probe.Probe(ReadTestdata("note_3s.webm"));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(got.status()), "unsupported_format: more than 10000 bytes");
}

TEST(FfmpegAudioProbeTest, TheReadLimitStopsTheDemuxer) {
  FfmpegAudioProbeOptions options;
  options.read_bytes_factor_max = 0;
  options.read_bytes_extra_max = 8192;  // the header, not the packets
  const FfmpegAudioProbe probe(options);
  for (const char* file : {"note_3s.webm", "note_3s.ogg", "note_3s.m4a"}) {
    const absl::StatusOr<ProbedAudio> got = probe.Probe(ReadTestdata(file));
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << file;
    EXPECT_THAT(Message(got.status()), StartsWith("unsupported_format: read limit reached"))
        << file;
  }
}

TEST(FfmpegAudioProbeTest, ThreadsShareOneProbe) {
  const FfmpegAudioProbe probe;
  const std::vector<std::string> files = {ReadTestdata("note_7s.webm"), ReadTestdata("note_7s.ogg"),
                                          ReadTestdata("note_7s.m4a"), ReadTestdata("flac.flac")};
  std::vector<int64_t> want;
  for (const std::string& f : files) {
    const absl::StatusOr<ProbedAudio> got = probe.Probe(f);
    want.push_back(got.ok() ? got->duration_ms : -1);
  }
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const size_t f = static_cast<size_t>((t + i) % 4);
        const absl::StatusOr<ProbedAudio> got = probe.Probe(files[f]);
        if ((got.ok() ? got->duration_ms : -1) != want[f]) ++mismatches[static_cast<size_t>(t)];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace courtpiece::moderation
