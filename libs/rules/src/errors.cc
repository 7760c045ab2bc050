#include "courtpiece/rules/errors.h"

#include <array>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"

namespace courtpiece::rules {
namespace {
constexpr std::array<absl::string_view, 14> kNames = {
    "ok",          "bad_input",        "bad_rules",        "bad_deal",        "not_your_turn",
    "bad_call",    "card_not_in_hand", "must_follow_suit", "must_play_trump", "cannot_ask",
    "cannot_show", "round_over",       "game_over",        "missing_moves"};
constexpr absl::string_view kPayloadUrl = "courtpiece.rules/error_code";
}  // namespace

absl::string_view ErrorCodeName(ErrorCode code) { return kNames[static_cast<size_t>(code)]; }

absl::Status MakeError(ErrorCode code, absl::string_view message) {
  if (code == ErrorCode::kOk) return absl::OkStatus();
  bool input =
      code == ErrorCode::kBadInput || code == ErrorCode::kBadRules || code == ErrorCode::kBadDeal;
  absl::Status s =
      input ? absl::InvalidArgumentError(message) : absl::FailedPreconditionError(message);
  s.SetPayload(kPayloadUrl, absl::Cord(ErrorCodeName(code)));
  return s;
}

ErrorCode GetErrorCode(const absl::Status& status) {
  if (status.ok()) return ErrorCode::kOk;
  auto payload = status.GetPayload(kPayloadUrl);
  if (!payload) return ErrorCode::kBadInput;
  std::string name(*payload);
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<ErrorCode>(i);
  }
  return ErrorCode::kBadInput;
}

}  // namespace courtpiece::rules
