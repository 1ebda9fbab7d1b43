#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "util/check.h"

namespace cmc {

// What kind of failure an Error is, for callers that handle some kinds.
enum class ErrorKind {
  kFailed, // anything not named below
  // The target process, or the thread of it asked about, no longer exists
  // (ESRCH): it ended between two calls of cmc's. Not an error of cmc:
  // waitpid tells how it ended.
  kTargetGone,
  // The user asked cmc to stop (SIGINT, SIGTERM, SIGHUP): every target is
  // being killed, and what was counted so far is all there is.
  kInterrupted,
};

// What went wrong, in one line a user can act on.
struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::kFailed;
  int error_number = 0; // errno of the system call that failed; 0: none

  [[nodiscard]] bool target_gone() const {
    return kind == ErrorKind::kTargetGone;
  }
  [[nodiscard]] bool interrupted() const {
    return kind == ErrorKind::kInterrupted;
  }
  // The same failure, its message preceded by context ("cannot read the
  // regions: ").
  [[nodiscard]] Error after(std::string_view context) const;
};

// A failed system call on the target: "what: strerror(error_number)".
// ESRCH, from ptrace, process_vm_readv or a pidfd, means the target (or the
// thread asked about) is gone.
[[nodiscard]] Error system_error(std::string_view what, int error_number);
// The same for a file of the target's /proc/PID directory, which is gone
// (ENOENT on open) or empty of its process (ESRCH on read) once the
// process or thread ended.
[[nodiscard]] Error proc_error(std::string_view what, int error_number);
// "interrupted", of kind kInterrupted: the user stopped cmc.
[[nodiscard]] Error interrupted_error();

// The outcome of an operation that can fail in normal use: a value or an
// Error. Modelled on std::expected, which clang-tidy 14 cannot parse yet.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : state_(std::move(value)) {} // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {} // NOLINT

  [[nodiscard]] bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  [[nodiscard]] T &value() & {
    CMC_CHECK(ok(), "value() of a failed Result");
    return std::get<0>(state_);
  }
  [[nodiscard]] const T &value() const & {
    CMC_CHECK(ok(), "value() of a failed Result");
    return std::get<0>(state_);
  }
  [[nodiscard]] T &&value() && {
    CMC_CHECK(ok(), "value() of a failed Result");
    return std::get<0>(std::move(state_));
  }
  [[nodiscard]] T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T &&operator*() && { return std::move(*this).value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

  [[nodiscard]] const Error &error() const {
    CMC_CHECK(!ok(), "error() of a successful Result");
    return std::get<1>(state_);
  }

private:
  std::variant<T, Error> state_;
};

// Result<void>: success carries nothing.
template <> class [[nodiscard]] Result<void> {
public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {} // NOLINT

  [[nodiscard]] bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] const Error &error() const {
    CMC_CHECK(failed_, "error() of a successful Result");
    return error_;
  }

private:
  Error error_;
  bool failed_ = false;
};

} // namespace cmc
