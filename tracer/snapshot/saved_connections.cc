#include "tracer/snapshot/saved_connections.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>

#include <fmt/format.h>

namespace cmc::tracer {
namespace {

constexpr std::string_view kEpoll = "anon_inode:[eventpoll]";

// Runs nr(args) in the target, whose one thread is stopped where it
// waits.
Result<long> call_in(TargetRun &run, long nr,
                     const std::array<std::uint64_t, 4> &args) {
  const ThreadRegisters thread = run.session().thread_registers().front();
  run.tracee().focus(thread.id);
  return run.tracee().call_at_seccomp_stop(thread.registers, nr, args);
}

std::uint64_t arg(long value) { return static_cast<std::uint64_t>(value); }

// Why an epoll registration cannot be made again as it was; "" when it
// can. A one-shot one that fired is disabled, an exclusive one wakes
// differently, and an edge-triggered one for output fires once when
// added to a writable socket, whether the original edge was consumed or
// not.
std::string unfaithful(std::uint32_t events) {
  if ((events & (EPOLLONESHOT | EPOLLEXCLUSIVE)) != 0 ||
      ((events & EPOLLET) != 0 && (events & EPOLLOUT) != 0))
    return "epoll registration";
  return "";
}

// The registrations of the target's descriptor fd in its epoll instances.
Result<std::vector<SavedConnection::Watch>>
watches_of(int fd, std::span<const ProcDescriptor> descriptors,
           std::string &refused) {
  std::vector<SavedConnection::Watch> watches;
  for (const ProcDescriptor &descriptor : descriptors) {
    if (descriptor.link != kEpoll)
      continue;
    const std::vector<std::uint64_t> words =
        parse_fdinfo(descriptor.info).watches;
    for (std::size_t i = 0; i + 2 < words.size(); i += 3) {
      if (words[i] != static_cast<std::uint64_t>(fd))
        continue;
      const auto events = static_cast<std::uint32_t>(words[i + 1]);
      refused = unfaithful(events);
      if (!refused.empty())
        return watches;
      watches.push_back({descriptor.fd, events, words[i + 2]});
    }
  }
  return watches;
}

// A number in text at the start of the token that follows prefix in line;
// nothing when line has no such token.
std::optional<std::uint64_t> number_after(std::string_view line,
                                          std::string_view prefix, int base,
                                          std::size_t &start,
                                          std::size_t &end) {
  const std::size_t at = line.find(prefix);
  if (at == std::string_view::npos)
    return std::nullopt;
  start = line.find_first_not_of(" \t", at + prefix.size());
  if (start == std::string_view::npos)
    return std::nullopt;
  std::uint64_t value = 0;
  const auto parsed = std::from_chars(line.data() + start,
                                      line.data() + line.size(), value, base);
  if (parsed.ec != std::errc())
    return std::nullopt;
  end = static_cast<std::size_t>(parsed.ptr - line.data());
  return value;
}

// line with the inode after prefix named by its client when it is one of
// inodes.
std::string name_inode(std::string_view line, std::string_view prefix, int base,
                       const std::map<std::uint64_t, std::size_t> &inodes) {
  std::size_t start = 0;
  std::size_t end = 0;
  const auto inode = number_after(line, prefix, base, start, end);
  const auto found = inode ? inodes.find(*inode) : inodes.end();
  if (found == inodes.end())
    return std::string(line);
  return fmt::format("{}client {}{}", line.substr(0, start), found->second,
                     line.substr(end));
}

// Opens saved's connection again and makes the target's end of it as it
// was (SavedConnections::restore).
Result<std::string> recreate(TargetRun &run, const SavedConnection &saved,
                             std::uint64_t scratch) {
  const std::optional<int> listener = run.session().listening_fd();
  if (!listener)
    return std::string("connection state");
  if (auto connected = run.connect_from(saved.client, saved.port); !connected)
    return connected.error();
  const bool cloexec = (saved.flags & O_CLOEXEC) != 0;
  const long flags = ((saved.flags & O_NONBLOCK) != 0 ? SOCK_NONBLOCK : 0) |
                     (cloexec ? SOCK_CLOEXEC : 0);
  auto accepted = call_in(run, SYS_accept4, {arg(*listener), 0, 0, arg(flags)});
  if (!accepted)
    return accepted.error();
  if (*accepted < 0)
    return std::string("connection state");
  if (*accepted != saved.fd) {
    // dup3 would close what the number holds now.
    const bool taken = run.tracee().duplicate_fd(saved.fd).has_value();
    auto moved = taken ? Result<long>(-EBUSY)
                       : call_in(run, SYS_dup3,
                                 {arg(*accepted), arg(saved.fd),
                                  arg(cloexec ? O_CLOEXEC : 0), 0});
    if (!moved)
      return moved.error();
    auto closed = call_in(run, SYS_close, {arg(*accepted), 0, 0, 0});
    if (!closed)
      return closed.error();
    if (*moved != saved.fd || *closed != 0)
      return std::string("connection state");
  }
  {
    // Another connection waiting in the backlog would have been accepted
    // instead.
    const auto end = run.target_end(saved.client);
    if (!end || end->fd != saved.fd ||
        !write_socket_options(end->socket, saved.options))
      return std::string("connection state");
  }
  for (const SavedConnection::Watch &watch : saved.watches) {
    epoll_event event{};
    event.events = watch.events;
    event.data.u64 = watch.data;
    if (auto written =
            run.tracee().write(scratch, std::as_bytes(std::span(&event, 1)));
        !written)
      return written.error();
    auto added =
        call_in(run, SYS_epoll_ctl,
                {arg(watch.epoll), arg(EPOLL_CTL_ADD), arg(saved.fd), scratch});
    if (!added)
      return added.error();
    if (*added != 0)
      return std::string("connection state");
  }
  return std::string();
}

} // namespace

Result<std::map<std::uint64_t, std::size_t>> connection_inodes(TargetRun &run) {
  std::map<std::uint64_t, std::size_t> inodes;
  const std::size_t clients = run.clients().ports.size();
  for (std::size_t client = 0; client < clients; ++client) {
    const auto end = run.target_end(client);
    if (!end)
      continue;
    struct stat socket {};
    if (fstat(end->socket.get(), &socket) != 0)
      return Error{"cannot stat the target's end of a connection"};
    inodes[socket.st_ino] = client;
  }
  return inodes;
}

std::vector<ProcDescriptor>
without_connection_inodes(std::vector<ProcDescriptor> descriptors,
                          const std::map<std::uint64_t, std::size_t> &inodes) {
  for (ProcDescriptor &descriptor : descriptors) {
    const bool socket = descriptor.link.starts_with("socket:[");
    if (socket)
      descriptor.link = name_inode(descriptor.link, "socket:[", 10, inodes);
    std::string info;
    std::vector<std::string> targets;
    std::string_view text = descriptor.info;
    while (!text.empty()) {
      const std::size_t end = text.find('\n');
      const std::string_view line = text.substr(0, end);
      if (socket && line.starts_with("ino:"))
        info += name_inode(line, "ino:", 10, inodes) + '\n';
      else if (line.starts_with("tfd:"))
        targets.push_back(name_inode(line, " ino:", 16, inodes) + '\n');
      else
        info.append(line).push_back('\n');
      if (end == std::string_view::npos)
        break;
      text.remove_prefix(end + 1);
    }
    std::ranges::sort(targets);
    for (const std::string &line : targets)
      info += line;
    descriptor.info = std::move(info);
  }
  return descriptors;
}

Result<std::optional<SavedConnections>>
SavedConnections::save(TargetRun &run,
                       std::span<const ProcDescriptor> descriptors,
                       std::string &refused) {
  SavedConnections saved;
  saved.clients_ = run.clients();
  for (std::size_t client = 0; client < saved.clients_.ports.size(); ++client) {
    if (!saved.clients_.ports[client])
      continue;
    const auto end = run.target_end(client);
    const auto at =
        end ? std::ranges::find(descriptors, end->fd, &ProcDescriptor::fd)
            : descriptors.end();
    // The same socket at two numbers would come back at one.
    if (at == descriptors.end() ||
        std::ranges::count(descriptors, at->link, &ProcDescriptor::link) != 1) {
      refused = "connection state";
      return std::optional<SavedConnections>();
    }
    SavedConnection connection;
    connection.client = client;
    connection.port = *saved.clients_.ports[client];
    connection.fd = end->fd;
    connection.flags = parse_fdinfo(at->info).flags;
    if ((connection.flags & ~static_cast<std::uint32_t>(O_ACCMODE | O_NONBLOCK |
                                                        O_CLOEXEC)) != 0) {
      refused = "connection state";
      return std::optional<SavedConnections>();
    }
    auto watches = watches_of(end->fd, descriptors, refused);
    if (!watches)
      return watches.error();
    if (!refused.empty())
      return std::optional<SavedConnections>();
    connection.watches = std::move(*watches);
    connection.options = read_socket_options(end->socket);
    saved.open_.push_back(std::move(connection));
  }
  return std::optional(std::move(saved));
}

Result<std::string> SavedConnections::restore(TargetRun &run,
                                              std::uint64_t scratch) const {
  // The accept4 would wait for good if the connection reached another
  // listener than the one cmc knows (one of a SO_REUSEPORT group): the
  // watchdog then kills the target, and the call returns.
  run.tracee().lease().arm(run.step_timeout());
  auto done = reconnect(run, scratch);
  run.tracee().lease().disarm();
  return done;
}

Result<std::string> SavedConnections::reconnect(TargetRun &run,
                                                std::uint64_t scratch) const {
  const TargetRun::Clients now = run.clients();
  // First: a disconnected connection's end of cmc's may still hold the
  // port that one to re-create needs.
  run.restore_clients(clients_);
  std::vector<bool> kept(open_.size());
  for (std::size_t client = 0; client < now.ports.size(); ++client) {
    if (!now.ports[client])
      continue;
    auto end = run.target_end(client);
    // One waiting in the backlog: a reset leaves it there, for the
    // target's next accept.
    if (!end)
      return std::string("connection state");
    const auto saved =
        std::ranges::find(open_, client, &SavedConnection::client);
    // Kept only with nothing unread: a saved state had none (Snapshot
    // refuses to save one), and what an earlier path sent would still
    // wait there, read in the next step.
    if (saved != open_.end() && saved->port == *now.ports[client] &&
        saved->fd == end->fd && unread_bytes(end->socket) == 0) {
      if (!write_socket_options(end->socket, saved->options))
        return std::string("connection state");
      kept[static_cast<std::size_t>(saved - open_.begin())] = true;
      continue;
    }
    const int fd = end->fd;
    // The duplicate would keep the socket, and its epoll registrations,
    // alive past the target's close.
    end.reset();
    run.drop_connection(client);
    auto closed = call_in(run, SYS_close, {arg(fd), 0, 0, 0});
    if (!closed)
      return closed.error();
    if (*closed != 0)
      return std::string("connection state");
  }
  for (std::size_t i = 0; i < open_.size(); ++i) {
    if (kept[i])
      continue;
    auto refused = recreate(run, open_[i], scratch);
    if (!refused || !refused->empty())
      return refused;
  }
  return std::string();
}

} // namespace cmc::tracer
