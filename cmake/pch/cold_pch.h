// The precompiled header of the services, tools and generated code in tests/run.sh's trees
// (cmake/CourtpiecePch.cmake): the third-party headers most of them include. Only
// third-party and standard headers: a change to our own headers must not rebuild it.
#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "grpcpp/grpcpp.h"
