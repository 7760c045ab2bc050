// gMock matchers for absl::Status and absl::StatusOr<T> (test-only header; link GTest::gmock).
//
//   EXPECT_THAT(DoIt(), IsOk());
//   EXPECT_THAT(Parse("x"), StatusIs(absl::StatusCode::kInvalidArgument));
//   EXPECT_THAT(Parse("x"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x")));
//
// Each matcher works on absl::Status and on any absl::StatusOr<T> (it looks at .status()).
// Thread-safety: stateless matchers.
#ifndef COURTPIECE_COMMON_STATUS_MATCHERS_H_
#define COURTPIECE_COMMON_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace courtpiece::common {
namespace status_matchers_internal {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// Matches any Status-like value whose code and message satisfy the inner matchers.
template <typename StatusType>
class StatusIsImpl : public ::testing::MatcherInterface<StatusType> {
 public:
  StatusIsImpl(::testing::Matcher<absl::StatusCode> code,
               ::testing::Matcher<const std::string&> message)
      : code_(std::move(code)), message_(std::move(message)) {}

  void DescribeTo(std::ostream* os) const override {
    *os << "has a status code that ";
    code_.DescribeTo(os);
    *os << ", and has an error message that ";
    message_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const override {
    *os << "has a status code that ";
    code_.DescribeNegationTo(os);
    *os << ", or has an error message that ";
    message_.DescribeNegationTo(os);
  }
  bool MatchAndExplain(StatusType actual, ::testing::MatchResultListener* listener) const override {
    const absl::Status& status = GetStatus(actual);
    *listener << "whose status is " << status;
    ::testing::StringMatchResultListener inner;
    if (!code_.MatchAndExplain(status.code(), &inner)) return false;
    const std::string message(status.message());
    return message_.MatchAndExplain(message, &inner);
  }

 private:
  ::testing::Matcher<absl::StatusCode> code_;
  ::testing::Matcher<const std::string&> message_;
};

// Polymorphic wrapper: converts to Matcher<T> for any Status or StatusOr type.
class StatusIsMatcher {
 public:
  StatusIsMatcher(::testing::Matcher<absl::StatusCode> code,
                  ::testing::Matcher<const std::string&> message)
      : code_(std::move(code)), message_(std::move(message)) {}

  template <typename StatusType>
  operator ::testing::Matcher<StatusType>() const {  // NOLINT: implicit by design
    return ::testing::Matcher<StatusType>(new StatusIsImpl<StatusType>(code_, message_));
  }

 private:
  ::testing::Matcher<absl::StatusCode> code_;
  ::testing::Matcher<const std::string&> message_;
};

}  // namespace status_matchers_internal

// The status code matches `code` (a value or a matcher); the message is anything.
template <typename CodeMatcher>
status_matchers_internal::StatusIsMatcher StatusIs(CodeMatcher code) {
  return status_matchers_internal::StatusIsMatcher(::testing::MatcherCast<absl::StatusCode>(code),
                                                   ::testing::_);
}

// The status code matches `code` and the message matches `message` (a string or a matcher).
template <typename CodeMatcher, typename MessageMatcher>
status_matchers_internal::StatusIsMatcher StatusIs(CodeMatcher code, MessageMatcher message) {
  return status_matchers_internal::StatusIsMatcher(
      ::testing::MatcherCast<absl::StatusCode>(code),
      ::testing::MatcherCast<const std::string&>(message));
}

// The status is OK.
inline status_matchers_internal::StatusIsMatcher IsOk() { return StatusIs(absl::StatusCode::kOk); }

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_STATUS_MATCHERS_H_
