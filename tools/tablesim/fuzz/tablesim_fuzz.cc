// libFuzzer target over the tablesim's scenario reader: any bytes are read as a scenario
// (ReadScenario must refuse bad input with a Status, never abort), and a scenario it accepts
// is run when it is small (at most 200 commands and one hour of virtual time), so that the
// table itself is driven by arbitrary accepted input. Built as a fuzzer with COURTPIECE_FUZZ=ON
// (clang); the corpus runs in ctest through libs/rules/fuzz/corpus_main.cc in every build.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <string_view>

#include "scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<courtpiece::tablesim::Scenario> sc = courtpiece::tablesim::ReadScenario(text);
  if (!sc.ok() || sc->steps.size() > 200 || sc->run_until_ms > 3'600'000) return 0;
  std::ostringstream sink;
  courtpiece::tablesim::RunScenario(*sc, sink);
  return 0;
}
