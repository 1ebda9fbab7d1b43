#include "app/plugins/property_plugin.h"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/report/report.h"
#include "cmc/property.h"
#include "util/duration.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

cmc_bytes bytes_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size()};
}

cmc_bytes bytes_of(const std::string &text) {
  return bytes_of(std::as_bytes(std::span(text)));
}

// What a step of the alphabet is, in the plugin's terms.
cmc_step plugin_step(const tracer::TargetSpec &spec,
                     executor::ActionId action) {
  cmc_step step{};
  if (spec.crash && action == spec.crash_action()) {
    step.kind = CMC_STEP_CRASH;
  } else if (spec.tick && action == spec.tick_action()) {
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

PluginProperty::PluginProperty(const std::string &path,
                               std::shared_ptr<const tracer::TargetSpec> spec,
                               std::vector<search::RegionLayout> layout,
                               std::string host_program)
    : path_(path), host_program_(std::move(host_program)),
      limit_(spec->step_timeout), spec_(std::move(spec)),
      layout_(std::move(layout)) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    usage(fmt::format("--property {}: no such file", path));
  Reply loaded;
  auto host = PluginHost::start(host_program_, path_, limit_, loaded);
  if (!host)
    fail(host.error(), "while loading it");
  if (loaded.status == ReplyStatus::kRefused)
    usage(fmt::format("--property {}: {}", path, loaded.text));
  name_ = loaded.text;
  idle_.push_back(std::move(*host));
  clients_ =
      spec_->clients.empty() ? std::vector<std::string>{""} : spec_->clients;
}

std::unique_ptr<PluginHost> PluginProperty::take_host() const {
  {
    const std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto host = std::move(idle_.back());
      idle_.pop_back();
      return host;
    }
  }
  Reply loaded;
  auto host = PluginHost::start(host_program_, path_, limit_, loaded);
  if (!host)
    fail(host.error(), "while loading it");
  if (loaded.status != ReplyStatus::kLoaded)
    fail(Error{"refused to load once loaded: " + loaded.text}, "");
  return std::move(*host);
}

void PluginProperty::fail(const Error &error, const std::string &when) const {
  if (tracer::Watchdog::instance().interrupted())
    cannot_check("interrupted");
  cannot_check(fmt::format("property plugin {} {}{}{}", path_, error.message,
                           when.empty() ? "" : " ", when));
}

std::string
PluginProperty::path_text(std::span<const executor::PathStep> path) const {
  const std::string tick = spec_->tick ? format_duration(*spec_->tick) : "";
  std::vector<std::string> steps;
  for (const executor::PathStep &step : path)
    steps.push_back(step_text(step_of(*spec_, step), tick));
  return fmt::format("[{}]", fmt::join(steps, ", "));
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
    cmc_step step = plugin_step(*spec_, path.path[i].action);
    for (std::size_t client = 0; client < clients_.size(); ++client)
      received[i].push_back(client < path.received[i].size()
                                ? bytes_of(path.received[i][client])
                                : cmc_bytes{});
    step.received = received[i].data();
    if (step.kind != CMC_STEP_TICK && step.kind != CMC_STEP_CRASH)
      step.response = received[i].at(step.client);
    step.before = bytes_of(path.states[i]);
    step.after = bytes_of(path.states[i + 1]);
    steps.push_back(step);
  }
  const cmc_path whole{clients.size(), clients.data(), regions.size(),
                       regions.data(), steps.size(),   steps.data()};
  std::unique_ptr<PluginHost> host = take_host();
  const auto reply = host->call(encode_path(whole));
  if (!reply)
    fail(reply.error(), "on the path " + path_text(path.path));
  {
    const std::lock_guard lock(mutex_);
    idle_.push_back(std::move(host));
  }
  if (reply->status == ReplyStatus::kHolds)
    return std::nullopt;
  return fmt::format("{}: {}", name_,
                     reply->text.empty() ? "violated" : reply->text);
}

} // namespace cmc::app
