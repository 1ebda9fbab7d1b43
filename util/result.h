#pragma once

#include <string>
#include <utility>
#include <variant>

#include "util/check.h"

namespace cmc {

// What went wrong, in one line a user can act on.
struct Error {
  std::string message;
};

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
