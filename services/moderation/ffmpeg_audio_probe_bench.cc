// Probes per second of a 7 s note in each accepted format, on one thread (Google Benchmark;
// not in ctest). docs/moderation.md "The audio probe" has the command and the figures.
#include <fstream>
#include <iterator>
#include <string>

#include "benchmark/benchmark.h"
#include "courtpiece/common/process_testing.h"
#include "services/moderation/ffmpeg_audio_probe.h"

namespace courtpiece::moderation {
namespace {

void BM_Probe(benchmark::State& state, const char* file) {
  const std::string path = common::SourceDir() + "/services/moderation/testdata" + "/" + file;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const FfmpegAudioProbe probe;
  const absl::StatusOr<ProbedAudio> first = probe.Probe(bytes);
  if (!first.ok()) {
    state.SkipWithError(std::string(first.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<ProbedAudio> got = probe.Probe(bytes);
    benchmark::DoNotOptimize(got);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
  state.counters["duration_ms"] = static_cast<double>(first->duration_ms);
}

BENCHMARK_CAPTURE(BM_Probe, webm_opus_7s, "note_7s.webm");
BENCHMARK_CAPTURE(BM_Probe, ogg_opus_7s, "note_7s.ogg");
BENCHMARK_CAPTURE(BM_Probe, mp4_aac_7s, "note_7s.m4a");

}  // namespace
}  // namespace courtpiece::moderation

BENCHMARK_MAIN();
