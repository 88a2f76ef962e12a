// Status and StatusOr: errors as values, in the style of absl::Status.
//
// Codes carry the same numbers as grpc::StatusCode so the RPC edge converts in
// one place (cluster/rpc/grpc_status.h). Choose a code by what the caller
// should do next: kUnavailable retry the call, kAborted retry the step,
// kFailedPrecondition do not retry until something is fixed.
#ifndef PSTRAIN_CORE_STATUS_H_
#define PSTRAIN_CORE_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace pstrain {

enum class Code : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
};

const char* CodeName(Code code);

// What a failure lets its caller do where one code covers cases that call
// for different actions (core/status_action.h maps both to the action).
// Set by whoever knows it, carried on the wire with the code (the tensor
// channel's error frames), never read from a message.
enum class Hint : int {
  kNone = 0,
  // Nothing of the request reached the server (it could not be reached, or
  // it refused the connection): another route may take it at once.
  kNotSent = 1,
  // The server closed the connection without serving the request that
  // crossed it (an idle connection closed): send it again, on a new one.
  kUnread = 2,
};

class Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message, Hint hint = Hint::kNone)
      : code_(code), hint_(hint), message_(std::move(message)) {}

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  Hint hint() const { return hint_; }
  // For people: never parsed to decide anything.
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "prefix: message" (OK stays OK), of
  // the same code and hint.
  Status Annotate(const std::string& prefix) const;
  // A copy with `hint` (OK stays OK).
  Status WithHint(Hint hint) const;

 private:
  Code code_ = Code::kOk;
  Hint hint_ = Hint::kNone;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) {
  return Status(Code::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
inline Status PermissionDenied(std::string m) {
  return Status(Code::kPermissionDenied, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(Code::kFailedPrecondition, std::move(m));
}
inline Status Unavailable(std::string m) { return Status(Code::kUnavailable, std::move(m)); }
inline Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }
inline Status DataLoss(std::string m) { return Status(Code::kDataLoss, std::move(m)); }
inline Status Aborted(std::string m) { return Status(Code::kAborted, std::move(m)); }
inline Status OutOfRange(std::string m) { return Status(Code::kOutOfRange, std::move(m)); }
inline Status ResourceExhausted(std::string m) {
  return Status(Code::kResourceExhausted, std::move(m));
}
inline Status DeadlineExceeded(std::string m) {
  return Status(Code::kDeadlineExceeded, std::move(m));
}
inline Status Unimplemented(std::string m) { return Status(Code::kUnimplemented, std::move(m)); }
inline Status IoError(std::string m) { return Status(Code::kUnavailable, std::move(m)); }

// Holds either a value or a non-OK Status.
template <typename T>
class StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT
  StatusOr(T value) : value_(std::move(value)) {}                                  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace pstrain

#define PS_CONCAT_INNER(a, b) a##b
#define PS_CONCAT(a, b) PS_CONCAT_INNER(a, b)

#define PS_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::pstrain::Status _ps_status = (expr);   \
    if (!_ps_status.ok()) return _ps_status; \
  } while (0)

#define PS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

#define PS_ASSIGN_OR_RETURN(lhs, expr) \
  PS_ASSIGN_OR_RETURN_IMPL(PS_CONCAT(_ps_statusor_, __LINE__), lhs, expr)

#endif  // PSTRAIN_CORE_STATUS_H_
