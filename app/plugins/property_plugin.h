#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "app/plugins/plugin_host.h"
#include "search/property.h"
#include "tracer/control/target_run.h"

namespace cmc::app {

// A property from a plugin (include/cmc/property.h, --property FILE.so):
// the plugin's check sees the whole path of every new transition. The
// plugin runs in host processes (app/plugins/plugin_host.h), as many as calls
// at once, each started when needed and kept for the next call.
class PluginProperty final : public search::Property {
public:
  // Starts a host of the plugin at path, the executable host_program
  // (this cmc by default); throws UserError: exit 2 when the plugin cannot
  // be loaded, defines no cmc_property or was built for another ABI
  // version, exit 3 when its host dies loading it. Each call of the plugin
  // has at most spec's step timeout.
  PluginProperty(const std::string &path,
                 std::shared_ptr<const tracer::TargetSpec> spec,
                 std::vector<search::RegionLayout> layout,
                 std::string host_program = "/proc/self/exe");

  [[nodiscard]] std::optional<std::string>
  check(std::span<const std::byte> /*before*/,
        std::span<const std::byte> /*after*/) const override {
    return std::nullopt;
  }
  // Throws UserError (exit 3) when the plugin's host dies, does not answer
  // in time or answers garbage: "property plugin X.so crashed with SIGSEGV
  // on the path [...]".
  [[nodiscard]] std::optional<std::string>
  check_path(const search::PathView &path) const override;
  [[nodiscard]] bool needs_path() const override { return true; }

private:
  // A host that is not in a call: an idle one, or a new one.
  [[nodiscard]] std::unique_ptr<PluginHost> take_host() const;
  [[noreturn]] void fail(const Error &error, const std::string &when) const;
  [[nodiscard]] std::string
  path_text(std::span<const executor::PathStep> path) const;

  std::string path_;
  std::string host_program_;
  std::chrono::milliseconds limit_;
  std::shared_ptr<const tracer::TargetSpec> spec_;
  std::vector<search::RegionLayout> layout_;
  std::vector<std::string> clients_; // "" for the one client without names
  std::string name_;                 // the property's
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<PluginHost>> idle_;
};

} // namespace cmc::app
