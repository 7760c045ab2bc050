// Status helpers shared by every component.
//
//   RETURN_IF_ERROR(expr);             // expr is an absl::Status; returns it if not ok.
//   ASSIGN_OR_RETURN(T v, expr);       // expr is an absl::StatusOr<T>; returns its status
//                                      // if not ok, else moves the value into `T v`.
//
// Both work in any function returning absl::Status or absl::StatusOr<U>.
// Thread-safety: macros only; no state.
#ifndef COURTPIECE_COMMON_STATUS_MACROS_H_
#define COURTPIECE_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define COURTPIECE_CONCAT_INNER_(a, b) a##b
#define COURTPIECE_CONCAT_(a, b) COURTPIECE_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                                \
  do {                                                       \
    ::absl::Status courtpiece_status_ = (expr);              \
    if (!courtpiece_status_.ok()) return courtpiece_status_; \
  } while (0)

#define COURTPIECE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                      \
  if (!statusor.ok()) return std::move(statusor).status();     \
  lhs = std::move(statusor).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  COURTPIECE_ASSIGN_OR_RETURN_IMPL_(COURTPIECE_CONCAT_(courtpiece_statusor_, __LINE__), lhs, expr)

#endif  // COURTPIECE_COMMON_STATUS_MACROS_H_
