#include "tracer/process_executor.h"

#include <elf.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <atomic>

#include <fmt/format.h>

#include "decoder/auxv.h"
#include "decoder/proc_maps.h"
#include "tracer/connection.h"
#include "tracer/session.h"

namespace cmc::tracer {
namespace {

// Where the regions are in this run of the target.
struct StateReader {
  std::vector<iovec> remote;
  std::size_t total = 0;

  [[nodiscard]] Result<std::vector<std::byte>> read(const Tracee &t) const {
    std::vector<std::byte> bytes(total);
    if (auto done = t.read(remote, bytes); !done)
      return Error{"cannot read the regions: " + done.error().message};
    return bytes;
  }
};

StateReader reader_at(const TargetSpec &spec, std::uint64_t bias) {
  StateReader reader;
  for (const decoder::Region &region : spec.regions) {
    reader.remote.push_back(
        {reinterpret_cast<void *>(region.link_address + bias), region.length});
    reader.total += region.length;
  }
  return reader;
}

// The load bias as the auxiliary vector gives it: AT_ENTRY - e_entry.
Result<std::uint64_t> auxv_bias(const Tracee &tracee, const TargetSpec &spec) {
  auto raw = tracee.proc_file("auxv");
  if (!raw)
    return raw.error();
  const auto entry =
      decoder::auxv_value(std::as_bytes(std::span(*raw)), AT_ENTRY);
  if (!entry)
    return Error{"the target's auxiliary vector has no AT_ENTRY"};
  return *entry - spec.entry;
}

// The load bias from /proc/PID/maps, every region checked to lie in
// readable mappings.
Result<std::uint64_t> maps_bias(const Tracee &tracee, const TargetSpec &spec) {
  auto text = tracee.proc_file("maps");
  if (!text)
    return text.error();
  auto maps = decoder::parse_maps(*text);
  if (!maps)
    return maps.error();
  struct stat exe {};
  if (stat(fmt::format("/proc/{}/exe", tracee.pid()).c_str(), &exe) != 0)
    return Error{"cannot stat the target's /proc/PID/exe"};
  const decoder::FileId id{major(exe.st_dev), minor(exe.st_dev), exe.st_ino};
  auto bias = decoder::load_bias(*maps, id, spec.load_base);
  if (!bias)
    return bias.error();
  for (const decoder::Region &region : spec.regions) {
    const std::uint64_t address = region.link_address + *bias;
    if (!decoder::readable(*maps, address, region.length))
      return Error{fmt::format(
          "region '{}' ({} bytes at {:#x}, load bias {:#x}) is not in a "
          "readable mapping of the target",
          region.name, region.length, address, *bias)};
  }
  return bias;
}

// Where the regions are in this run: from maps on the first run (checked
// against the auxiliary vector), from the auxiliary vector after that.
Result<StateReader> locate_regions(const Tracee &tracee, const TargetSpec &spec,
                                   bool &located) {
  auto fast = auxv_bias(tracee, spec);
  if (!fast)
    return fast.error();
  if (!located) {
    auto bias = maps_bias(tracee, spec);
    if (!bias)
      return bias.error();
    if (*bias != *fast)
      return Error{fmt::format("the load bias from /proc/PID/maps ({:#x}) "
                               "and from AT_ENTRY ({:#x}) disagree",
                               *bias, *fast)};
    located = true;
  }
  return reader_at(spec, *fast);
}

// A started target, connected and in its initial state.
struct Started {
  std::unique_ptr<Tracee> tracee;
  std::unique_ptr<Session> session;
  std::optional<Connection> connection;
  StateReader reader;
};

Error startup_error(const TargetSpec &spec, const Fault &fault,
                    const char *when) {
  return Error{fmt::format(
      "the target {} {}{}", fault.describe(), when,
      spec.launch.show_output ? ""
                              : " (run with --show-output to see its output)")};
}

Result<sockaddr_storage> target_address(const TargetSpec &spec,
                                        const Session &session) {
  if (spec.port) {
    sockaddr_storage address{};
    auto &in4 = reinterpret_cast<sockaddr_in &>(address);
    in4.sin_family = AF_INET;
    in4.sin_port = htons(*spec.port);
    in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
  }
  auto address = session.listen_address();
  if (!address)
    return address.error();
  if (!*address)
    return Error{"the target waits for input but has not called listen(); "
                 "is it a TCP server? (or give --port)"};
  return **address;
}

// Runs a starting target to quiescence; a fault here means it cannot be
// checked at all.
Result<void> settle(Started &s, const TargetSpec &spec, const char *when) {
  s.tracee->lease().arm(spec.step_timeout);
  auto fault = s.session->run_until_quiescent();
  s.tracee->lease().disarm();
  if (!fault)
    return fault.error();
  if (*fault)
    return startup_error(spec, **fault, when);
  return {};
}

// Launches per launch (spec.launch joined to this worker's namespace).
Result<Started> start(const TargetSpec &spec, const LaunchSpec &launch,
                      bool &located) {
  Started s;
  auto tracee = Tracee::spawn(launch);
  if (!tracee)
    return tracee.error();
  s.tracee = std::move(*tracee);
  s.session = std::make_unique<Session>(*s.tracee, spec.seed);
  if (auto controlled = s.session->take_control(); !controlled)
    return controlled.error();
  if (auto settled = settle(s, spec, "before it waited for a client"); !settled)
    return settled.error();
  auto address = target_address(spec, *s.session);
  if (!address)
    return address.error();
  auto connection = Connection::open(launch.netns, *address);
  if (!connection)
    return connection.error();
  s.connection = std::move(*connection);
  if (auto settled = settle(s, spec, "after cmc connected"); !settled)
    return settled.error();
  auto reader = locate_regions(*s.tracee, spec, located);
  if (!reader)
    return reader.error();
  s.reader = std::move(*reader);
  return s;
}

// Sends a message, or moves the virtual clock on for the tick.
Result<void> take_step(Started &s, const TargetSpec &spec, ActionId action) {
  if (action < spec.messages.size())
    return s.connection->send(spec.messages[action]);
  CMC_CHECK(spec.tick.has_value() && action == spec.messages.size(),
            "an action outside the alphabet");
  return s.session->advance_clock(*spec.tick);
}

} // namespace

ProcessExecutor::ProcessExecutor(std::shared_ptr<const TargetSpec> spec)
    : spec_(std::move(spec)) {}

Result<Observation> ProcessExecutor::run(std::span<const ActionId> path) {
  auto seen = replay(path);
  // An interrupt kills targets wherever they are, even before exec: that
  // is the reason for whatever went wrong.
  if (Watchdog::instance().interrupted())
    return Error{"interrupted"};
  return seen;
}

Result<Observation> ProcessExecutor::replay(std::span<const ActionId> path) {
  if (!netns_) {
    auto netns = NetworkNamespace::create();
    if (!netns)
      return netns.error();
    netns_ = std::move(*netns);
    launch_ = spec_->launch;
    launch_.netns = netns_->fd();
  }
  auto started = start(*spec_, launch_, located_);
  if (!started)
    return started.error();
  Started &s = *started;
  Observation seen;
  const auto record = [&](const std::vector<std::byte> &state) {
    const auto clock = s.session->environment().clock().elapsed().count();
    seen.fingerprints.push_back(
        fingerprint_of(state, static_cast<std::uint64_t>(clock)));
  };
  auto state = s.reader.read(*s.tracee);
  if (!state)
    return state.error();
  record(*state);
  for (std::size_t step = 0; step < path.size(); ++step) {
    seen.before = std::move(*state);
    if (auto taken = take_step(s, *spec_, path[step]); !taken)
      return taken.error();
    s.tracee->lease().arm(spec_->step_timeout);
    auto fault = s.session->run_until_quiescent();
    if (!fault)
      return fault.error();
    seen.response = s.connection->drain();
    if (*fault) {
      seen.fault = **fault;
      seen.fault->step = step;
      seen.sources = s.session->environment().sources();
      return seen;
    }
    s.tracee->lease().disarm();
    state = s.reader.read(*s.tracee);
    if (!state)
      return state.error();
    record(*state);
  }
  seen.after = std::move(*state);
  seen.sources = s.session->environment().sources();
  return seen;
}

void pin_this_thread() {
  // The CPUs cmc may use, read once before any thread was pinned.
  static const std::vector<int> cpus = [] {
    std::vector<int> allowed_cpus;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &allowed))
          allowed_cpus.push_back(cpu);
    return allowed_cpus;
  }();
  static std::atomic<unsigned> next{0};
  if (cpus.empty())
    return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus[next.fetch_add(1) % cpus.size()], &one);
  sched_setaffinity(0, sizeof one, &one);
}

} // namespace cmc::tracer
