// The precompiled header of test code in tests/run.sh's trees (cmake/CourtpiecePch.cmake): the
// third-party headers most tests include.
#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/protobuf/message.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
