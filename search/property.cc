#include "search/property.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/check.h"
#include "util/escape.h"

namespace cmc::search {

std::optional<std::string>
NoProperty::check(std::span<const std::byte> /*before*/,
                  std::span<const std::byte> /*after*/) const {
  return std::nullopt;
}

std::optional<std::string>
StickyProperty::check(std::span<const std::byte> before,
                      std::span<const std::byte> after) const {
  CMC_CHECK(before.size() == after.size(), "states of different sizes");
  for (const RegionLayout &region : layout_) {
    CMC_CHECK(region.offset + region.length <= after.size(),
              "region outside the state");
    for (std::size_t i = 0; i < region.length; ++i) {
      const auto was = std::to_integer<unsigned>(before[region.offset + i]);
      const auto now = std::to_integer<unsigned>(after[region.offset + i]);
      if (was != 0 && now == 0)
        return fmt::format("sticky: byte {} of {} went {:02x} -> {:02x}", i,
                           region.name, was, now);
    }
  }
  return std::nullopt;
}

std::optional<std::string>
ExclusiveProperty::check(std::span<const std::byte> /*before*/,
                         std::span<const std::byte> after) const {
  std::string first;
  for (const RegionLayout &region : layout_) {
    CMC_CHECK(region.offset + region.length <= after.size(),
              "region outside the state");
    for (std::size_t i = 0; i < region.length; ++i) {
      if (std::to_integer<unsigned>(after[region.offset + i]) == 0)
        continue;
      const std::string here = fmt::format("byte {} of {}", i, region.name);
      if (!first.empty())
        return fmt::format("exclusive: {} and {} are both set", first, here);
      first = here;
    }
  }
  return std::nullopt;
}

namespace {

// The first violation that check finds among parts.
template <typename Check>
std::optional<std::string>
first_violation(const std::vector<std::unique_ptr<Property>> &parts,
                const Check &check) {
  for (const std::unique_ptr<Property> &part : parts)
    if (std::optional<std::string> violation = check(*part))
      return violation;
  return std::nullopt;
}

} // namespace

std::optional<std::string>
AllOf::check(std::span<const std::byte> before,
             std::span<const std::byte> after) const {
  return first_violation(
      parts_, [&](const Property &part) { return part.check(before, after); });
}

std::optional<std::string>
AllOf::check_response(std::span<const std::string> received) const {
  return first_violation(parts_, [&](const Property &part) {
    return part.check_response(received);
  });
}

std::optional<std::string>
Property::check_last_step(const PathView &path) const {
  const std::size_t steps = path.path.size();
  CMC_CHECK(steps > 0 && path.states.size() == steps + 1 &&
                path.received.size() == steps,
            "a path view of a state and a response per step");
  std::optional<std::string> violation =
      check(path.states[steps - 1], path.states[steps]);
  if (!violation)
    violation = check_response(path.received.back());
  if (!violation && needs_path())
    violation = check_path(path);
  return violation;
}

std::optional<std::string> AllOf::check_path(const PathView &path) const {
  return first_violation(parts_, [&](const Property &part) {
    return part.needs_path() ? part.check_path(path) : std::nullopt;
  });
}

bool AllOf::needs_path() const {
  return std::any_of(parts_.begin(), parts_.end(),
                     [](const auto &part) { return part->needs_path(); });
}

std::optional<std::string>
ForbiddenResponse::check_response(std::span<const std::string> received) const {
  for (const std::string &response : received)
    if (std::regex_search(response.begin(), response.end(), pattern_))
      return fmt::format("forbidden response: \"{}\" matches /{}/",
                         encode_escapes(response), text_);
  return std::nullopt;
}

std::unique_ptr<Property> make_property(const std::string &name,
                                        std::vector<RegionLayout> layout) {
  if (name == "sticky")
    return std::make_unique<StickyProperty>(std::move(layout));
  if (name == "exclusive")
    return std::make_unique<ExclusiveProperty>(std::move(layout));
  if (name == "none")
    return std::make_unique<NoProperty>();
  return nullptr;
}

} // namespace cmc::search
