// Error codes of the rules engine, spelled exactly as in REPLAY.md.
//
// Engine calls return absl::Status; a failed status carries its ErrorCode as a payload
// (GetErrorCode reads it back) and a human message. ErrorCodeName gives the REPLAY.md
// string ("must_follow_suit", ...).
// Thread-safety: pure functions.
#ifndef COURTPIECE_RULES_ERRORS_H_
#define COURTPIECE_RULES_ERRORS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace courtpiece::rules {

enum class ErrorCode : uint8_t {
  kOk = 0,
  kBadInput,
  kBadRules,
  kBadDeal,
  kNotYourTurn,
  kBadCall,
  kCardNotInHand,
  kMustFollowSuit,
  kMustPlayTrump,
  kCannotAsk,
  kCannotShow,
  kRoundOver,
  kGameOver,
  kMissingMoves,
};

// "ok", "bad_input", "bad_rules", ... (REPLAY.md codes).
absl::string_view ErrorCodeName(ErrorCode code);
// A failed status (InvalidArgument for input errors, FailedPrecondition for illegal moves)
// carrying `code`.
absl::Status MakeError(ErrorCode code, absl::string_view message);
// kOk for an ok status; the carried code otherwise (kBadInput if none is carried).
ErrorCode GetErrorCode(const absl::Status& status);

}  // namespace courtpiece::rules

#endif  // COURTPIECE_RULES_ERRORS_H_
