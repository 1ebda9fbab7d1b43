#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "search/property.h"
#include "tracer/target_run.h"

struct cmc_property;

namespace cmc::app {

// A property from a plugin (include/cmc/property.h, --property FILE.so):
// the plugin's check sees the whole path of every new transition.
class PluginProperty final : public search::Property {
public:
  // Loads the plugin at path; throws UserError (exit 2) when it cannot be
  // loaded, defines no cmc_property or was built for another ABI version.
  PluginProperty(const std::string &path,
                 std::shared_ptr<const tracer::TargetSpec> spec,
                 std::vector<search::RegionLayout> layout);

  [[nodiscard]] std::optional<std::string>
  check(std::span<const std::byte> /*before*/,
        std::span<const std::byte> /*after*/) const override {
    return std::nullopt;
  }
  [[nodiscard]] std::optional<std::string>
  check_path(const search::PathView &path) const override;
  [[nodiscard]] bool needs_path() const override { return true; }

private:
  struct Unload {
    void operator()(void *handle) const;
  };

  std::unique_ptr<void, Unload> handle_;
  const cmc_property *property_ = nullptr;
  std::shared_ptr<const tracer::TargetSpec> spec_;
  std::vector<search::RegionLayout> layout_;
  std::vector<std::string> clients_; // "" for the one client without names
  // The ABI promises one call at a time.
  mutable std::mutex mutex_;
};

} // namespace cmc::app
