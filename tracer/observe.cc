#include "tracer/observe.h"

#include <fmt/format.h>

#include "decoder/proc_maps.h"
#include "tracer/network_namespace.h"

namespace cmc::tracer {
namespace {

// Runs to quiescence; the description of the end if the target ended.
Result<std::optional<std::string>> settle(Tracee &tracee, Session &session,
                                          const TargetSpec &spec) {
  tracee.lease().arm(spec.step_timeout);
  auto fault = session.run_until_quiescent();
  tracee.lease().disarm();
  if (!fault)
    return fault.error();
  if (*fault)
    return std::optional((*fault)->describe());
  return std::optional<std::string>();
}

// Drives the target: connect once it listens, then the messages.
Result<std::string> drive(Tracee &tracee, Session &session,
                          const TargetSpec &spec, int netns) {
  auto ended = settle(tracee, session, spec);
  if (!ended)
    return ended.error();
  if (*ended)
    return **ended;
  auto address = session.listen_address();
  if (!address)
    return address.error();
  if (!*address)
    return std::string("waited for input without listening");
  auto connection = Connection::open(netns, **address);
  if (!connection)
    return connection.error();
  for (std::size_t sent = 0; sent <= spec.messages.size(); ++sent) {
    ended = settle(tracee, session, spec);
    if (!ended)
      return ended.error();
    if (*ended)
      return **ended;
    if (sent == spec.messages.size())
      break;
    if (auto done = connection->send(spec.messages[sent]); !done)
      return done.error();
  }
  return fmt::format("waited for a client after {} message(s)",
                     spec.messages.size());
}

ObservedSite place(std::uint64_t address,
                   const std::vector<decoder::Mapping> &maps,
                   const VdsoLayout &vdso) {
  ObservedSite site{address};
  for (const decoder::Mapping &mapping : maps)
    if (address >= mapping.start && address < mapping.end) {
      site.path = mapping.path;
      site.file_offset = address - mapping.start + mapping.offset;
    }
  if (const auto *function = vdso.function_at(address))
    site.vdso_function = function->name;
  return site;
}

} // namespace

Result<ObservedRun> observe(const TargetSpec &spec) {
  auto netns = NetworkNamespace::create();
  if (!netns)
    return netns.error();
  LaunchSpec launch = spec.launch;
  launch.netns = netns->fd();
  launch.observe_all = true;
  auto tracee = Tracee::spawn(launch);
  if (!tracee)
    return tracee.error();
  Session session(**tracee, spec.seed);
  if (auto controlled = session.take_control(); !controlled)
    return controlled.error();
  ObservedRun run;
  auto ended = drive(**tracee, session, spec, launch.netns);
  if (!ended)
    return ended.error();
  run.ended = std::move(*ended);
  std::string text = session.maps_at_exit();
  if (!(*tracee)->reaped()) {
    auto maps = (*tracee)->proc_file("maps");
    if (!maps)
      return maps.error();
    text = std::move(*maps);
  }
  auto maps = decoder::parse_maps(text);
  if (!maps)
    return maps.error();
  for (const std::uint64_t address : session.observed_sites())
    run.sites.push_back(place(address, *maps, session.environment().vdso()));
  run.sources = session.environment().sources();
  return run;
}

} // namespace cmc::tracer
