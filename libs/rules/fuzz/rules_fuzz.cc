// libFuzzer target over the rules engine.
//   first byte even: the rest is replay JSON fed to the replay CLI logic (and a view);
//   first byte odd:  the rest drives a seeded round with arbitrary (often illegal) moves,
//                    checking that Check() agrees with LegalMoves() and that state bytes
//                    restore exactly.
// Built as a fuzzer with COURTPIECE_FUZZ=ON (clang); the corpus runs in ctest through
// corpus_main.cc in every build.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "courtpiece/rules/round.h"
#include "replay.h"

namespace {

using courtpiece::rules::Move;
using courtpiece::rules::MoveList;
using courtpiece::rules::Round;

void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "rules_fuzz: %s\n", what);
    std::abort();
  }
}

void FuzzMoves(const uint8_t* data, size_t size) {
  if (size < 2) return;
  courtpiece::rules::Rules rules =
      courtpiece::rules::DefaultRules(courtpiece::rules::GameType(data[0] % 5));
  rules.ace_cannot_win_pile = rules.IsPileGame() && (data[0] & 8);
  courtpiece::rules::Seed seed{};
  for (size_t i = 0; i < 32 && i < size; ++i) seed[i] = data[i];
  Round r = Round::FromSeed(rules, data[1] % 4, seed);
  MoveList legal;
  for (size_t i = 2; i + 1 < size; i += 2) {
    r.LegalMoves(&legal);
    Move m;
    if (data[i] & 0x80) {  // a legal move
      if (legal.size == 0) break;
      m = legal[data[i + 1] % legal.size];
    } else {  // anything
      m.type = static_cast<courtpiece::rules::MoveType>(data[i] % 5);
      m.seat = static_cast<uint8_t>((data[i] >> 3) % 4);
      m.value = static_cast<uint8_t>(data[i + 1] % 53);
      if (m.type == courtpiece::rules::MoveType::kAsk ||
          m.type == courtpiece::rules::MoveType::kShow) {
        m.value = 0;  // ignored by the engine; LegalMoves lists 0
      }
    }
    bool listed = false;
    for (const Move& l : legal) listed |= (l == m);
    if ((r.Check(m) == courtpiece::rules::ErrorCode::kOk) != listed) {
      std::fprintf(stderr, "move type %d seat %d value %d check %d phase %d turn %d\n", int(m.type),
                   int(m.seat), int(m.value), int(r.Check(m)), int(r.phase()), r.turn());
    }
    Require((r.Check(m) == courtpiece::rules::ErrorCode::kOk) == listed,
            "Check and LegalMoves agree");
    const std::string before = r.Serialize();
    const bool ok = r.Apply(m).ok();
    if (!ok) Require(r.Serialize() == before, "a rejected move changes nothing");
    auto restored = Round::Restore(r.Serialize());
    Require(restored.ok() && restored->Serialize() == r.Serialize(), "state bytes restore exactly");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    std::string input(reinterpret_cast<const char*>(data + 1), size - 1);
    auto out = courtpiece::rules_cli::Replay(input, std::nullopt);
    Require(out.exit_code >= 0 && out.exit_code <= 2, "exit code");
    auto view = courtpiece::rules_cli::Replay(input, data[0] / 2 % 4);
    Require(view.exit_code == out.exit_code, "view exit code");
  } else {
    FuzzMoves(data + 1, size - 1);
  }
  return 0;
}
