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

namespace cmc::search {

// Where each declared region lies in the state's byte string.
struct RegionLayout {
  std::string name; // as the user wrote it: "cmc_state", "store+1:2"
  std::size_t offset = 0;
  std::size_t length = 0;
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
  // The same for what the target sent back during the step.
  [[nodiscard]] virtual std::optional<std::string>
  check_response(std::string_view /*response*/) const {
    return std::nullopt;
  }
};

// Another property, and a violation for any response that matches a
// regular expression (ECMAScript syntax, searched anywhere in it).
class ForbiddenResponse final : public Property {
public:
  ForbiddenResponse(std::unique_ptr<Property> base, const std::string &pattern)
      : base_(std::move(base)), text_(pattern), pattern_(pattern) {}
  [[nodiscard]] std::optional<std::string>
  check(std::span<const std::byte> before,
        std::span<const std::byte> after) const override {
    return base_->check(before, after);
  }
  [[nodiscard]] std::optional<std::string>
  check_response(std::string_view response) const override;

private:
  std::unique_ptr<Property> base_;
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
