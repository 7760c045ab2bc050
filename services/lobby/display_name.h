// Display names: the rules every name a player chooses must pass (docs/lobby.md "Name
// rules"). Pure.
//
// NormalizeDisplayName trims whitespace at both ends and turns every inner run of whitespace
// into one space, then checks, in this order (the first rule broken is the message):
//   - valid UTF-8;
//   - 2..20 characters (code points) after normalizing;
//   - only letters of the Latin, Arabic (incl. Urdu), Devanagari, Bengali, Gurmukhi and
//     Gujarati scripts with their vowel signs and digits, ASCII digits, space, and _ - .
//     (plus ZWNJ/ZWJ between two letters, which Urdu and Hindi spelling needs);
//   - at least one letter; a name does not start with a vowel sign or with _ - .;
//   - no impersonation, case-insensitively: no word "bot"/"bots" or a word ending in "bot"
//     (AliBot), no word "mod", "system", "support", "staff", and nowhere "admin",
//     "moderator", "courtpiece" or "official", also when spelled with digits for letters
//     (4dm1n, b0t) or split by spaces or punctuation (a d m i n).
// Errors are InvalidArgument "display_name: <the rule>".
// Thread-safety: pure functions.
#ifndef COURTPIECE_SERVICES_LOBBY_DISPLAY_NAME_H_
#define COURTPIECE_SERVICES_LOBBY_DISPLAY_NAME_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace courtpiece::lobby {

inline constexpr int kDisplayNameCharsMin = 2;
inline constexpr int kDisplayNameCharsMax = 20;

// The name as it will be stored, or InvalidArgument.
absl::StatusOr<std::string> NormalizeDisplayName(std::string_view name);

}  // namespace courtpiece::lobby

#endif  // COURTPIECE_SERVICES_LOBBY_DISPLAY_NAME_H_
