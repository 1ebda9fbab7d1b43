#include "tracer/control/site_run.h"

#include <filesystem>

#include <fmt/format.h>

#include "tracer/control/session.h"
#include "tracer/net/connection.h"
#include "tracer/sandbox/network_namespace.h"
#include "tracer/syscalls/site_log.h"
#include "tracer/syscalls/syscall_table.h"

namespace cmc::tracer {
namespace {

// The steps after the start: one connection, each message sent and the
// program run until it waits again. Records into run; an Error when cmc
// cannot follow the program.
Result<void> follow(Session &session, Tracee &tracee, const SiteRunSpec &spec,
                    int netns, SiteRun &run) {
  // True while the program waits for input, false once it has ended.
  const auto settle = [&]() -> Result<bool> {
    tracee.lease().arm(spec.step_timeout);
    auto fault = session.run_until_quiescent();
    tracee.lease().disarm();
    if (!fault)
      return fault.error();
    run.fault = *fault;
    return !run.fault.has_value();
  };
  auto waiting = settle();
  if (!waiting)
    return waiting.error();
  if (!*waiting || spec.messages.empty())
    return {};
  auto address = session.listen_address();
  if (!address)
    return address.error();
  if (!*address)
    return Error{"the program waits for input but has not called listen(), "
                 "so cmc cannot send it the messages"};
  auto connection = Connection::open(netns, **address, *nth_client_port(0));
  if (!connection)
    return connection.error();
  for (std::size_t sent = 0; sent <= spec.messages.size(); ++sent) {
    // After the connection, then after each message.
    if (waiting = settle(); !waiting)
      return waiting.error();
    if (!*waiting || sent == spec.messages.size())
      return {};
    if (auto done = connection->send(spec.messages[sent],
                                     std::chrono::steady_clock::now() +
                                         spec.step_timeout);
        !done)
      return done.error();
    run.messages_sent = sent + 1;
  }
  return {};
}

} // namespace

Result<SiteRun> run_for_sites(const SiteRunSpec &spec) {
  auto netns = NetworkNamespace::create();
  if (!netns)
    return netns.error();
  LaunchSpec launch = spec.launch;
  launch.observe = true;
  launch.netns = netns->fd();
  auto tracee = Tracee::spawn(launch, seccomp_filter(launch.observe));
  if (!tracee)
    return tracee.error();
  Session session(**tracee, spec.seed);
  SiteLog log;
  session.watch(log);
  if (auto controlled = session.take_control(); !controlled)
    return controlled.error();
  SiteRun run;
  if (auto followed = follow(session, **tracee, spec, launch.netns, run);
      !followed)
    run.error = followed.error().message;
  std::error_code ended;
  const auto program = std::filesystem::read_symlink(
      fmt::format("/proc/{}/exe", (*tracee)->pid()), ended);
  if (!ended)
    run.program = program.string();
  run.sites = log.sites();
  run.sources = session.environment().sources();
  return run;
}

} // namespace cmc::tracer
