#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "executor/executor.h"

namespace cmc::search {

// Where each declared region lies in the state's byte string.
struct RegionLayout {
  std::string name; // as the user wrote it: "cmc_state", "store+1:2"
  std::size_t offset = 0;
  std::size_t length = 0;
};

// A transition with the whole path that led to it, for properties over the
// history (a plugin's).
struct PathView {
  std::span<const executor::PathStep> path; // from the initial state
  // The region bytes of every state along it, [0] the initial one.
  std::span<const std::vector<std::byte>> states;
  // received[i][c]: what client c received during step i.
  std::span<const std::vector<std::string>> received;
};

// A property checked on every transition (before -> after).
class Property {
public:
  Property() = default;
  Property(const Property &) = delete;
  Property &operator=(const Property &) = delete;
  Property(Property &&) = delete;
  Property &operator=(Property &&) = delete;
  virtual ~Property() = default;

  // Returns a one-line description of the violation, or nothing.
  [[nodiscard]] virtual std::optional<std::string>
  check(std::span<const std::byte> before,
        std::span<const std::byte> after) const = 0;
  // The same for what each client received during the step.
  [[nodiscard]] virtual std::optional<std::string>
  check_response(std::span<const std::string> /*received*/) const {
    return std::nullopt;
  }
  // The same for the whole path, called only when needs_path(): the search
  // then keeps the bytes of every state of a run until this has seen them.
  // Called by the search's workers, several at once.
  [[nodiscard]] virtual std::optional<std::string>
  check_path(const PathView & /*path*/) const {
    return std::nullopt;
  }
  [[nodiscard]] virtual bool needs_path() const { return false; }

  // Every check of the last step of a run's path, in the search's order:
  // the regions before -> after it, its responses, then (needs_path) the
  // whole path. For the runs that show one path step by step (replay,
  // explore); the search itself runs check_path on its workers.
  [[nodiscard]] std::optional<std::string>
  check_last_step(const PathView &path) const;
};

// Every one of several properties; a violation names the first broken.
class AllOf final : public Property {
public:
  explicit AllOf(std::vector<std::unique_ptr<Property>> parts)
      : parts_(std::move(parts)) {}
  [[nodiscard]] std::optional<std::string>
  check(std::span<const std::byte> before,
        std::span<const std::byte> after) const override;
  [[nodiscard]] std::optional<std::string>
  check_response(std::span<const std::string> received) const override;
  [[nodiscard]] std::optional<std::string>
  check_path(const PathView &path) const override;
  [[nodiscard]] bool needs_path() const override;

private:
  std::vector<std::unique_ptr<Property>> parts_;
};

// A violation for any response that matches a regular expression
// (ECMAScript syntax, searched anywhere in it).
class ForbiddenResponse final : public Property {
public:
  explicit ForbiddenResponse(const std::string &pattern)
      : text_(pattern), pattern_(pattern) {}
  [[nodiscard]] std::optional<std::string>
  check(std::span<const std::byte> /*before*/,
        std::span<const std::byte> /*after*/) const override {
    return std::nullopt;
  }
  [[nodiscard]] std::optional<std::string>
  check_response(std::span<const std::string> received) const override;

private:
  std::string text_;
  std::regex pattern_;
};

// Accepts every transition: only crashes, exits and hangs are violations.
class NoProperty final : public Property {
public:
  [[nodiscard]] std::optional<std::string>
  check(std::span<const std::byte> before,
        std::span<const std::byte> after) const override;
};

// A property over the bytes of the declared regions.
class RegionProperty : public Property {
public:
  explicit RegionProperty(std::vector<RegionLayout> layout)
      : layout_(std::move(layout)) {}

protected:
  std::vector<RegionLayout> layout_;
};

// "sticky": no byte of the regions that is non-zero ever becomes zero.
class StickyProperty final : public RegionProperty {
public:
  explicit StickyProperty(std::vector<RegionLayout> layout)
      : RegionProperty(std::move(layout)) {}
  [[nodiscard]] std::optional<std::string>
  check(std::span<const std::byte> before,
        std::span<const std::byte> after) const override;
};

// "exclusive": at most one byte of the regions is non-zero (one holder of
// a lock, one owner of a job).
class ExclusiveProperty final : public RegionProperty {
public:
  explicit ExclusiveProperty(std::vector<RegionLayout> layout)
      : RegionProperty(std::move(layout)) {}
  [[nodiscard]] std::optional<std::string>
  check(std::span<const std::byte> before,
        std::span<const std::byte> after) const override;
};

// The built-in property called name ("sticky", "exclusive", "none"), or
// nullptr.
[[nodiscard]] std::unique_ptr<Property>
make_property(const std::string &name, std::vector<RegionLayout> layout);

} // namespace cmc::search
