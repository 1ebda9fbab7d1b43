#include "tracer/control/target_run.h"

#include <elf.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "decoder/auxv.h"
#include "decoder/proc_maps.h"
#include "tracer/process/watchdog.h"
#include "tracer/sandbox/network_namespace.h"
#include "tracer/sandbox/run_files.h"
#include "tracer/syscalls/syscall_table.h"
#include "util/escape.h"

namespace cmc::tracer {

Result<std::vector<std::byte>> StateReader::read(const Tracee &t) const {
  std::vector<std::byte> bytes(total);
  if (auto done = t.read(remote, bytes); !done)
    return done.error().after("cannot read the regions: ");
  return bytes;
}

namespace {

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

// The target's executable, checked to be the program whose symbols and
// entry the spec holds: a wrapper that execs another program in some runs
// only would otherwise be read at that program's addresses.
Result<struct stat> served_file(const Tracee &tracee, const TargetSpec &spec) {
  const std::string path = fmt::format("/proc/{}/exe", tracee.pid());
  struct stat exe {};
  if (stat(path.c_str(), &exe) != 0)
    return system_error("cannot stat the target's /proc/PID/exe", errno);
  struct stat served {};
  if (stat(spec.served_program().c_str(), &served) == 0 &&
      served.st_dev == exe.st_dev && served.st_ino == exe.st_ino)
    return exe;
  std::error_code unreadable;
  const auto program = std::filesystem::read_symlink(path, unreadable);
  return Error{fmt::format(
      "the target runs {} when it waits for a client, not {}, whose symbols "
      "cmc read: does its command exec another program in some runs only?",
      unreadable ? "another program" : program.string(),
      spec.served_program())};
}

// The load bias from /proc/PID/maps, every region checked to lie in
// readable mappings.
Result<std::uint64_t> maps_bias(const Tracee &tracee, const TargetSpec &spec) {
  auto maps = tracee.maps();
  if (!maps)
    return maps.error();
  auto exe = served_file(tracee, spec);
  if (!exe)
    return exe.error();
  const decoder::FileId id{major(exe->st_dev), minor(exe->st_dev), exe->st_ino};
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

Error startup_error(const TargetSpec &spec, Tracee &tracee,
                    const executor::Fault &fault, const char *when) {
  std::string message = fmt::format("the target {} {}", fault.describe(), when);
  if (spec.launch.show_output)
    return Error{message};
  // One line still: the last line it wrote says most often why.
  const TargetOutput output = tracee.output();
  const std::string last = last_line(output.end());
  if (last.empty())
    return Error{message + " (it wrote no output)"};
  return Error{fmt::format(
      "{}; it last wrote \"{}\"{} (--show-output shows all)", message, last,
      executor::output_not_kept(output.written, output.dropped()))};
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

} // namespace

TargetRun::TargetRun(const TargetSpec &spec, std::unique_ptr<Tracee> tracee)
    : spec_(&spec), tracee_(std::move(tracee)),
      session_(std::make_unique<Session>(*tracee_, spec.seed)) {}

Result<TargetRun> TargetRun::until_serving(const TargetSpec &spec,
                                           const LaunchSpec &launch,
                                           SyscallWatcher *watcher) {
  auto tracee = Tracee::spawn(launch, seccomp_filter(launch.observe));
  if (!tracee)
    return tracee.error();
  TargetRun run(spec, std::move(*tracee));
  run.launch_ = launch;
  run.watcher_ = watcher;
  if (watcher != nullptr)
    run.session_->watch(*watcher);
  if (auto controlled = run.session_->take_control(); !controlled) {
    auto fault =
        controlled.error().target_gone() ? run.gone() : controlled.error();
    if (!fault)
      return controlled.error();
    return startup_error(spec, *run.tracee_, **fault,
                         "as cmc took control of it");
  }
  if (auto settled = run.settle("before it waited for a client", true);
      !settled)
    return settled.error();
  return run;
}

Result<std::string> TargetRun::serving_program(const TargetSpec &spec) {
  auto netns = NetworkNamespace::create();
  if (!netns)
    return netns.error();
  // Its output is not shown: a start that fails says its last line.
  TargetSpec quiet = spec;
  quiet.launch.show_output = false;
  quiet.launch.netns = netns->fd();
  auto run = until_serving(quiet, quiet.launch, nullptr);
  if (!run)
    return run.error();
  std::error_code error;
  const auto program = std::filesystem::read_symlink(
      fmt::format("/proc/{}/exe", run->tracee_->pid()), error);
  if (error)
    return system_error("cannot read the target's /proc/PID/exe",
                        error.value());
  // The program itself, not a wrapper: named as the user named it.
  if (std::filesystem::equivalent(program, spec.launch.program, error))
    return spec.launch.program;
  return program.string();
}

Result<TargetRun> TargetRun::start(const TargetSpec &spec,
                                   const LaunchSpec &launch, bool &located,
                                   SyscallWatcher *watcher) {
  auto started = until_serving(spec, launch, watcher);
  if (!started)
    return started.error();
  TargetRun run = std::move(*started);
  auto address = target_address(spec, *run.session_);
  if (!address)
    return address.error();
  run.address_ = *address;
  run.netns_ = launch.netns;
  run.connections_.resize(spec.client_count());
  run.ends_.resize(spec.client_count());
  run.received_.resize(spec.client_count());
  run.unread_.resize(spec.client_count());
  run.closed_by_server_.resize(spec.client_count());
  if (spec.clients.empty()) {
    if (auto opened = run.open_connection(0); !opened)
      return opened.error();
    if (auto settled = run.settle("after cmc connected"); !settled)
      return settled.error();
    // A target that closes the connection at once leaves the client
    // closed by the server in the initial state: its first message
    // connects again.
    if (auto collected = run.collect_replies(); !collected)
      return collected.error();
  }
  auto reader = locate_regions(*run.tracee_, spec, located);
  if (!reader)
    return reader.error();
  run.reader_ = std::move(*reader);
  run.session_->fix_program();
  return run;
}

// A fault while starting means the target cannot be checked at all.
Result<void> TargetRun::settle(const char *when, bool starting) {
  tracee_->lease().arm(spec_->step_timeout);
  auto fault = starting ? session_->run_until_serving()
                        : session_->run_until_quiescent();
  tracee_->lease().disarm();
  if (Watchdog::instance().interrupted())
    return interrupted_error();
  if (!fault)
    return fault.error();
  if (*fault)
    return startup_error(*spec_, *tracee_, **fault, when);
  return {};
}

Fingerprint
TargetRun::fingerprint(std::span<const std::byte> state,
                       std::span<const executor::FileDigest> files) const {
  // Which clients are connected decides what their next message does.
  std::uint64_t connected = 0;
  std::uint64_t closed = 0;
  for (std::size_t i = 0; i < connections_.size(); ++i) {
    connected |= (connections_[i].has_value() ? 1ULL : 0ULL) << (i % 64);
    closed |= (closed_by_server_[i] ? 1ULL : 0ULL) << (i % 64);
  }
  // So do the bytes each client sent that the target has not read: two
  // states equal but for them differ in what the target reads next.
  std::uint64_t unread = 0;
  for (std::size_t i = 0; i < unread_.size(); ++i)
    if (!unread_[i].empty())
      unread ^= fingerprint_of(std::as_bytes(std::span(unread_[i])), i + 1).low;
  for (std::size_t i = 0; i < left_unread_.size(); ++i)
    if (!left_unread_[i].empty())
      unread ^= fingerprint_of(std::as_bytes(std::span(left_unread_[i])),
                               unread_.size() + 1 + i)
                    .low;
  // And what of the files would survive a crash.
  const DurableFiles *durable = tracee_->files().durable();
  const std::uint64_t lasting =
      durable == nullptr ? 0 : durable->hash() * 0x165667b19e3779f9ULL;
  return fingerprint_of(state, session_->hidden_state() ^
                                   (connected * 0x9e3779b97f4a7c15ULL) ^
                                   (closed * 0xc2b2ae3d27d4eb4fULL) ^
                                   combined_hash(files) ^ unread ^ lasting);
}

CaptureContext
TargetRun::capture_context(std::vector<ThreadRegisters> threads) const {
  CaptureContext context{
      std::move(threads), {port_of(address_), {}}, tracee_->files().workdir()};
  for (const std::optional<Connection> &connection : connections_)
    context.sockets.client_ports.push_back(
        connection ? std::optional(port_of(connection->local()))
                   : std::nullopt);
  return context;
}

Result<decoder::ProcessImage>
TargetRun::read_process(ProcessCapture &capture) const {
  return capture.capture(
      *tracee_, capture_context(session_->process_registers().front()));
}

Result<std::vector<decoder::ProcessImage>>
TargetRun::read_processes(ProcessCapture &capture) {
  std::vector<decoder::ProcessImage> images;
  const pid_t focused = tracee_->focused();
  for (std::vector<ThreadRegisters> &threads : session_->process_registers()) {
    tracee_->focus(threads.front().id);
    auto image = capture.capture(*tracee_, capture_context(std::move(threads)));
    if (!image) {
      tracee_->focus(focused);
      return image.error();
    }
    images.push_back(std::move(*image));
  }
  tracee_->focus(focused);
  return images;
}

std::vector<std::string> TargetRun::drain() {
  std::vector<std::string> received =
      std::exchange(received_, std::vector<std::string>(connections_.size()));
  for (std::size_t client = 0; client < connections_.size(); ++client)
    if (connections_[client])
      received[client] += connections_[client]->drain();
  return received;
}

Result<void> TargetRun::open_connection(std::size_t client) {
  // Connections are numbered in the order the path opens them.
  const std::optional<std::uint16_t> port = nth_client_port(opened_);
  if (!port)
    return Error{fmt::format("the path opens {} connections; cmc has ports "
                             "for fewer",
                             opened_ + 1)};
  ++opened_;
  return connect_from(client, *port);
}

Result<void> TargetRun::connect_from(std::size_t client, std::uint16_t port) {
  auto connection = Connection::open(netns_, address_, port);
  if (!connection)
    return connection.error();
  ends_[client].emplace(connection->local());
  connections_[client] = std::move(*connection);
  closed_by_server_[client] = false;
  return {};
}

TargetRun::Clients TargetRun::clients() const {
  Clients clients{{}, closed_by_server_, opened_};
  for (const std::optional<Connection> &connection : connections_)
    clients.ports.push_back(connection
                                ? std::optional(port_of(connection->local()))
                                : std::nullopt);
  return clients;
}

std::optional<TargetRun::TargetEnd> TargetRun::target_end(std::size_t client) {
  if (!connections_[client])
    return std::nullopt;
  auto socket = ends_[client]->find(*tracee_);
  if (!socket)
    return std::nullopt;
  return TargetEnd{ends_[client]->fd(), std::move(*socket)};
}

void TargetRun::drop_connection(std::size_t client) {
  connections_[client].reset();
  ends_[client].reset();
}

void TargetRun::restore_clients(const Clients &saved) {
  closed_by_server_ = saved.closed_by_server;
  opened_ = saved.opened;
  closed_.clear();
  left_unread_.clear();
  for (std::string &bytes : unread_)
    bytes.clear();
}

void TargetRun::end_connection(std::size_t client) {
  // What came before the end still belongs to this step's replies.
  received_[client] += connections_[client]->drain();
  closed_.push_back(std::move(*connections_[client]));
  connections_[client].reset();
  ends_[client].reset();
}

std::size_t TargetRun::open_connections() const {
  return static_cast<std::size_t>(
      std::ranges::count_if(connections_, [](const auto &connection) {
        return connection.has_value();
      }));
}

bool TargetRun::connections_idle() {
  if (!std::ranges::all_of(left_unread_, &std::string::empty))
    return false;
  for (std::size_t client = 0; client < connections_.size(); ++client) {
    if (!connections_[client])
      continue;
    // Accepted (its end found), and collect_from left nothing of it
    // unacknowledged and noted what waits unread.
    if (!unread_[client].empty() || !ends_[client]->find(*tracee_))
      return false;
  }
  return true;
}

Result<std::optional<executor::Fault>> TargetRun::connect(std::size_t client) {
  if (connections_[client])
    return std::optional<executor::Fault>();
  if (auto opened = open_connection(client); !opened)
    return opened.error();
  return run_step();
}

Result<std::optional<executor::Fault>>
TargetRun::step(const executor::PathStep &step) {
  const executor::ActionId action = step.action;
  CMC_CHECK(action < spec_->alphabet_size(), "an action outside the alphabet");
  effects_ = executor::StepEffects{};
  session_->begin_step(step.points());
  if (spec_->crash && action == spec_->crash_action())
    return crash();
  if (spec_->tick && action == spec_->tick_action())
    return advance(*spec_->tick);
  if (action >= spec_->first_disconnect()) {
    // A FIN, as a client that closes its connection sends (the reset of
    // ~Connection is for the end of a run).
    const std::size_t client = action - spec_->first_disconnect();
    if (connections_[client]) {
      connections_[client]->close();
      end_connection(client);
    }
    return run_step();
  }
  const std::size_t client = spec_->client_of_message(action);
  const std::string &message = spec_->messages[action];
  effects_.length = message.size();
  auto connected = connect(client);
  if (!connected || *connected)
    return connected;
  if (!connections_[client]) {
    // The target closed the connection as it accepted it (rinetd when
    // its backend refuses): the message was never sent.
    effects_.read = 0;
    return connected;
  }
  if (auto sent = connections_[client]->send(
          message, std::chrono::steady_clock::now() + spec_->step_timeout);
      !sent)
    return sent.error();
  sent_to_ = client;
  auto fault = run_step();
  sent_to_.reset();
  if (fault && !*fault && !effects_.read)
    count_closed_read(client);
  return fault;
}

void TargetRun::count_closed_read(std::size_t client) {
  if (connections_[client]) {
    effects_.read = 0; // the target has no end of this connection
    return;
  }
  // Closed by the target in this step: an orderly close means it read
  // everything, a reset that it left bytes unread (which, unknown).
  if (std::find(effects_.dropped.begin(), effects_.dropped.end(), client) ==
      effects_.dropped.end())
    effects_.read = effects_.length;
}

Result<std::optional<executor::Fault>>
TargetRun::tick(std::chrono::nanoseconds by,
                std::span<const std::uint32_t> preempt_at) {
  effects_ = executor::StepEffects{};
  session_->begin_step(preempt_at);
  return advance(by);
}

Result<std::optional<executor::Fault>>
TargetRun::advance(std::chrono::nanoseconds by) {
  if (auto ticked = session_->advance_clock(by); !ticked)
    return ticked.error();
  return run_step();
}

Result<std::optional<executor::Fault>> TargetRun::run_step() {
  tracee_->lease().arm(spec_->step_timeout);
  auto fault = session_->run_until_quiescent();
  if (fault && !*fault)
    tracee_->lease().disarm();
  effects_.preemption_points = session_->preemption_points();
  effects_.preempted = session_->preempted();
  // An interrupt kills the target wherever it is: the death it caused is
  // no fault of the target's.
  if (Watchdog::instance().interrupted())
    return interrupted_error();
  if (fault && *fault)
    add_last_output(**fault);
  if (!fault || *fault)
    return fault;
  if (DurableFiles *durable = tracee_->files().durable(); durable != nullptr)
    if (auto synced = durable->sync_synchronous_descriptors(tracee_->pid());
        !synced)
      return synced.error();
  effects_.waits_in = session_->waits_in();
  if (auto collected = collect_replies(); !collected)
    return collected.error();
  return fault;
}

Result<std::optional<executor::Fault>> TargetRun::crash() {
  CMC_CHECK(tracee_->files().durable() != nullptr,
            "a crash of a run without --crash");
  for (std::size_t client = 0; client < connections_.size(); ++client) {
    if (!connections_[client])
      continue;
    received_[client] += connections_[client]->drain();
    effects_.closed.push_back(client);
    closed_by_server_[client] = true;
    drop_connection(client);
  }
  closed_.clear();
  left_unread_.clear();
  for (std::string &bytes : unread_)
    bytes.clear();
  // What the target wrote through an O_SYNC descriptor at start-up, before
  // any step ended, is durable too.
  if (auto synced = tracee_->files().durable()->sync_synchronous_descriptors(
          tracee_->pid());
      !synced)
    return synced.error();
  session_.reset();
  RunFiles files = tracee_->crash();
  if (auto restored = files.durable()->restore(); !restored)
    return restored.error();
  auto tracee =
      Tracee::spawn(launch_, seccomp_filter(launch_.observe), std::move(files));
  if (!tracee)
    return tracee.error();
  tracee_ = std::move(*tracee);
  return restart();
}

Result<std::optional<executor::Fault>> TargetRun::restart() {
  session_ = std::make_unique<Session>(*tracee_, spec_->seed);
  if (watcher_ != nullptr) {
    watcher_->new_program();
    session_->watch(*watcher_);
  }
  if (auto controlled = session_->take_control(); !controlled)
    return controlled.error().target_gone() ? gone() : controlled.error();
  tracee_->lease().arm(spec_->step_timeout);
  auto fault = session_->run_until_serving();
  tracee_->lease().disarm();
  if (Watchdog::instance().interrupted())
    return interrupted_error();
  if (!fault || *fault) {
    if (fault)
      add_last_output(**fault);
    return fault;
  }
  bool located = true;
  auto reader = locate_regions(*tracee_, *spec_, located);
  if (!reader)
    return reader.error();
  reader_ = std::move(*reader);
  session_->fix_program();
  effects_.waits_in = session_->waits_in();
  return fault;
}

Result<std::optional<executor::Fault>> TargetRun::gone() {
  tracee_->lease().arm(spec_->step_timeout);
  auto fault = session_->await_end();
  tracee_->lease().disarm();
  if (Watchdog::instance().interrupted())
    return interrupted_error();
  if (!fault)
    return fault.error();
  add_last_output(*fault);
  return std::optional(std::move(*fault));
}

void TargetRun::add_last_output(executor::Fault &fault) {
  if (spec_->launch.show_output)
    return;
  const TargetOutput output = tracee_->output();
  fault.last_output = last_line(output.end());
  fault.output_written = output.written;
  fault.output_dropped = output.dropped();
}

Result<void> TargetRun::collect_replies() {
  const auto end = std::chrono::steady_clock::now() + spec_->step_timeout;
  for (std::size_t client = 0; client < connections_.size(); ++client) {
    unread_[client].clear();
    if (!connections_[client])
      continue;
    if (auto collected = collect_from(client, end); !collected)
      return collected;
  }
  // A closed connection gets no more bytes: asked (sock_diag) when it
  // closed and then until the target has read what it left (or closed its
  // end), never again after.
  const std::size_t known = left_unread_.size();
  left_unread_.resize(closed_.size());
  for (std::size_t i = 0; i < closed_.size(); ++i) {
    if (i < known && left_unread_[i].empty())
      continue;
    auto unread = closed_[i].unread();
    if (!unread)
      return unread.error();
    left_unread_[i] = std::move(*unread);
  }
  return {};
}

// The target's kernel holds a small write back while an earlier one is
// unacknowledged (Nagle's algorithm), and cmc's kernel delays that
// acknowledgement by up to 40 ms: without this, such a reply would arrive
// in a later step. The target's send queue (SIOCOUTQ) empties once cmc
// has acknowledged, so received, everything it wrote. A connection the
// target closed (its end gone from its descriptors) ends the same way:
// once its FIN or reset has reached cmc's end.
Result<void>
TargetRun::collect_from(std::size_t client,
                        std::chrono::steady_clock::time_point end) {
  Connection &connection = *connections_[client];
  while (true) {
    const auto target_end = ends_[client]->find(*tracee_);
    if (target_end && sent_to_ == client && !effects_.read) {
      // The message is the end of the stream: unread bytes are its last.
      const std::size_t length = *effects_.length;
      effects_.read =
          length -
          std::min(length, static_cast<std::size_t>(unread_bytes(*target_end)));
    }
    if (!connection.receive()) {
      effects_.closed.push_back(client);
      if (connection.reset())
        effects_.dropped.push_back(client);
      closed_by_server_[client] = true;
      end_connection(client);
      return {};
    }
    if (target_end) {
      if (unacknowledged_bytes(*target_end) == 0) {
        unread_[client] = connection.unread(
            static_cast<std::size_t>(unread_bytes(*target_end)));
        return {};
      }
      connection.acknowledge();
      if (unacknowledged_bytes(*target_end) == 0)
        continue;
    } else {
      // Not accepted yet, or closed: then its FIN or reset is on its way.
      auto closed = connection.target_closed();
      if (!closed)
        return closed.error();
      if (!*closed) {
        // Not accepted: what waits is in the queue of an end the target
        // has no descriptor of yet, which only sock_diag sees.
        auto unread = connection.unread();
        if (!unread)
          return unread.error();
        unread_[client] = std::move(*unread);
        return {};
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return Error{fmt::format(
          "{} the target wrote to {} did not reach cmc within the step "
          "timeout ({} ms)",
          target_end
              ? fmt::format("{} bytes", unacknowledged_bytes(*target_end))
              : std::string("the end of the connection"),
          spec_->clients.empty() ? "its client" : spec_->clients[client],
          spec_->step_timeout.count())};
    // A wake-up when the rest arrives; the recheck covers an ACK that
    // the kernel handles later, which nothing on this socket signals.
    connection.wait(std::min(left, std::chrono::milliseconds(1)));
  }
}

} // namespace cmc::tracer
