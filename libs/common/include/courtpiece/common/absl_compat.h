// Debian's Abseil (20220623) is built with ABSL_OPTION_USE_STD_STRING_VIEW 0: absl::string_view
// is its own type, so absl::StrCat(std_view) and std_view = status.message() do not compile.
// Our APIs take std::string_view; convert at the boundary with these.
// Thread-safety: pure functions.
#ifndef COURTPIECE_COMMON_ABSL_COMPAT_H_
#define COURTPIECE_COMMON_ABSL_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace courtpiece::common {

inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
inline std::string_view ToStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_ABSL_COMPAT_H_
