#include "app/property_plugin.h"

#include <dlfcn.h>

#include <array>
#include <filesystem>

#include <fmt/format.h>

#include "cmc/property.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

// Longest violation text a plugin may write, NUL included.
constexpr std::size_t kViolationSize = 1024;

cmc_bytes bytes_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size()};
}

cmc_bytes bytes_of(const std::string &text) {
  return bytes_of(std::as_bytes(std::span(text)));
}

// What a step of the alphabet is, in the plugin's terms.
cmc_step step_of(const tracer::TargetSpec &spec, tracer::ActionId action) {
  cmc_step step{};
  if (spec.tick && action == spec.tick_action()) {
    step.kind = CMC_STEP_TICK;
  } else if (action >= spec.first_disconnect()) {
    step.kind = CMC_STEP_DISCONNECT;
    step.client = action - spec.first_disconnect();
  } else {
    step.kind = CMC_STEP_SEND;
    step.client = spec.client_of_message(action);
    step.message = bytes_of(spec.messages.at(action));
  }
  return step;
}

} // namespace

void PluginProperty::Unload::operator()(void *handle) const { dlclose(handle); }

PluginProperty::PluginProperty(const std::string &path,
                               std::shared_ptr<const tracer::TargetSpec> spec,
                               std::vector<search::RegionLayout> layout)
    : spec_(std::move(spec)), layout_(std::move(layout)) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    usage(fmt::format("--property {}: no such file", path));
  // A name without a slash would be looked up in the library path.
  const std::string file =
      path.find('/') == std::string::npos ? "./" + path : path;
  handle_.reset(dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle_)
    usage(fmt::format("--property {}: cannot load it: {}", path, dlerror()));
  property_ =
      static_cast<const cmc_property *>(dlsym(handle_.get(), "cmc_property"));
  if (property_ == nullptr)
    usage(fmt::format("--property {}: it defines no cmc_property (a plugin "
                      "includes <cmc/property.h> and uses CMC_PROPERTY)",
                      path));
  if (property_->abi != CMC_PROPERTY_ABI)
    usage(fmt::format("--property {}: built for property ABI {}, but this "
                      "cmc has ABI {}; rebuild it against this cmc's "
                      "cmc/property.h",
                      path, property_->abi, CMC_PROPERTY_ABI));
  if (property_->check == nullptr || property_->name == nullptr)
    usage(fmt::format("--property {}: its cmc_property has no name or no "
                      "check function",
                      path));
  clients_ =
      spec_->clients.empty() ? std::vector<std::string>{""} : spec_->clients;
}

std::optional<std::string>
PluginProperty::check_path(const search::PathView &path) const {
  std::vector<const char *> clients;
  for (const std::string &client : clients_)
    clients.push_back(client.c_str());
  std::vector<cmc_region> regions;
  for (const search::RegionLayout &region : layout_)
    regions.push_back({region.name.c_str(), region.offset, region.length});
  // received[i] is step i's array of what each client received.
  std::vector<std::vector<cmc_bytes>> received(path.path.size());
  std::vector<cmc_step> steps;
  for (std::size_t i = 0; i < path.path.size(); ++i) {
    cmc_step step = step_of(*spec_, path.path[i]);
    for (std::size_t client = 0; client < clients_.size(); ++client)
      received[i].push_back(client < path.received[i].size()
                                ? bytes_of(path.received[i][client])
                                : cmc_bytes{});
    step.received = received[i].data();
    if (step.kind != CMC_STEP_TICK)
      step.response = received[i].at(step.client);
    step.before = bytes_of(path.states[i]);
    step.after = bytes_of(path.states[i + 1]);
    steps.push_back(step);
  }
  const cmc_path whole{clients.size(), clients.data(), regions.size(),
                       regions.data(), steps.size(),   steps.data()};
  std::array<char, kViolationSize> violation{};
  {
    const std::lock_guard lock(mutex_);
    if (property_->check(&whole, violation.data(), violation.size()) == 0)
      return std::nullopt;
  }
  violation.back() = '\0';
  return fmt::format("{}: {}", property_->name,
                     violation.front() == '\0' ? "violated" : violation.data());
}

} // namespace cmc::app
