// Status and Result<T>: how errors cross module boundaries in reins.
//
// A Status is a canonical code plus a plain-sentence message. Result<T> holds either
// a value or a non-OK Status, shaped like std::expected. No exception crosses a module
// boundary: adapters around throwing libraries (YAML, JSON, SQLite) catch and convert.
//
// A *denial* (a rejected tool call, a blocked turn) is not an error: it is a verdict
// recorded in the trace. Status is for things that went wrong.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace reins {

enum class StatusCode {
  kOk,
  kInvalidArgument,     // the input is malformed (bad YAML, bad JSON, bad field)
  kNotFound,            // a named thing does not exist (session, file, option)
  kAlreadyExists,
  kFailedPrecondition,  // the state does not allow it (select with nothing pending)
  kDeadlineExceeded,
  kUnavailable,         // a backend or provider could not be reached
  kUnimplemented,
  kInternal,
  kResourceExhausted,   // a size cap or rate limit was hit
  kAborted,             // stopped part-way (a stream cut mid-response)
  kPermissionDenied,    // the speaker may not do it (answer an approval its approvers do not admit)
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "not_found: session s_1 does not exist"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return {}; }
inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status DeadlineExceeded(std::string m) { return {StatusCode::kDeadlineExceeded, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status PermissionDenied(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
inline Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }

// Either a T or a non-OK Status. Built from an OK Status it holds an internal error
// (as absl::StatusOr does): there is no Result without a value and without an error.
// A function with no value to return returns a Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(NotOk(std::move(status))) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<1>(v_);
  }

 private:
  static Status NotOk(Status status) {
    if (status.ok()) return Internal("a Result was built from an OK status without a value");
    return status;
  }

  std::variant<T, Status> v_;
};

}  // namespace reins

#define REINS_CONCAT_INNER(a, b) a##b
#define REINS_CONCAT(a, b) REINS_CONCAT_INNER(a, b)

// Returns the Status of `expr` (a Status or Result) from the enclosing function if not OK.
#define REINS_RETURN_IF_ERROR(expr)                          \
  do {                                                       \
    auto&& reins_status_ = (expr);                           \
    if (!reins_status_.ok()) return ::reins::ToStatus(reins_status_); \
  } while (0)

// Assigns the value of a Result to `lhs`, or returns its Status.
#define REINS_ASSIGN_OR_RETURN(lhs, expr)                                 \
  auto REINS_CONCAT(reins_result_, __LINE__) = (expr);                    \
  if (!REINS_CONCAT(reins_result_, __LINE__).ok())                        \
    return REINS_CONCAT(reins_result_, __LINE__).status();                \
  lhs = std::move(REINS_CONCAT(reins_result_, __LINE__)).value()

// The same two, for coroutines (Task<Status>, Task<Result<T>>): `expr` may co_await.
#define REINS_CO_RETURN_IF_ERROR(expr)                                   \
  do {                                                                   \
    auto&& reins_status_ = (expr);                                       \
    if (!reins_status_.ok()) co_return ::reins::ToStatus(reins_status_); \
  } while (0)

#define REINS_CO_ASSIGN_OR_RETURN(lhs, expr)                              \
  auto REINS_CONCAT(reins_result_, __LINE__) = (expr);                    \
  if (!REINS_CONCAT(reins_result_, __LINE__).ok())                        \
    co_return REINS_CONCAT(reins_result_, __LINE__).status();             \
  lhs = std::move(REINS_CONCAT(reins_result_, __LINE__)).value()

namespace reins {
inline const Status& ToStatus(const Status& s) { return s; }
template <typename T>
const Status& ToStatus(const Result<T>& r) { return r.status(); }
}  // namespace reins
