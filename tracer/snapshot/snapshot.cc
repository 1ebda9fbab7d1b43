#include "tracer/snapshot/snapshot.h"

#include <fcntl.h>

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "tracer/process/page_map.h"

namespace cmc::tracer {
namespace {

// The lines of /proc/PID/status that start with one of labels, in order.
std::string status_lines(std::string_view status,
                         std::initializer_list<std::string_view> labels) {
  std::string lines;
  while (!status.empty()) {
    const std::size_t end = status.find('\n');
    const std::string_view line = status.substr(0, end);
    if (std::ranges::any_of(labels, [&](std::string_view label) {
          return line.starts_with(label);
        }))
      lines.append(line).push_back('\n');
    if (end == std::string_view::npos)
      break;
    status.remove_prefix(end + 1);
  }
  return lines;
}

// Whether restore() knows what a descriptor of this kind keeps outside
// what /proc shows: files (a position; what is written is in the run's
// files), the write end of a pipe, sockets (checked idle), and epoll,
// eventfd and timerfd instances, whose state fdinfo shows whole.
bool known_kind(std::string_view link, std::string_view fdinfo) {
  if (link.starts_with("/") || link.starts_with("socket:["))
    return true;
  if (link.starts_with("pipe:["))
    return (parse_fdinfo(fdinfo).flags & O_ACCMODE) == O_WRONLY;
  return link == "anon_inode:[eventpoll]" || link == "anon_inode:[eventfd]" ||
         link == "anon_inode:[timerfd]";
}

bool shares_writable_memory(std::span<const decoder::Mapping> maps) {
  return std::ranges::any_of(maps, [](const decoder::Mapping &mapping) {
    return writable(mapping) && mapping.perms.size() >= 4 &&
           mapping.perms[3] == 's';
  });
}

// Why the target's state cannot be saved or put back, beyond its memory;
// "" when nothing stands in the way.
std::string unrestorable(TargetRun &run) {
  // A snapshot is one forked copy of one process: of several, the copies
  // would not share their pipes, sockets and shared memory as the
  // originals do, and a restore would be wrong where it must be refused.
  if (run.session().process_count() != 1)
    return "processes";
  if (run.session().thread_count() != 1)
    return "threads";
  if (!run.connections_idle())
    return "socket queue";
  return "";
}

} // namespace

Result<Snapshot::Outside> Snapshot::outside(TargetRun &run) {
  Outside outside;
  auto status = run.tracee().proc_file("status");
  if (!status)
    return status.error();
  // Not SigQ: it counts the signals queued for the user, any process's.
  outside.signals = status_lines(
      *status, {"SigPnd:", "ShdPnd:", "SigBlk:", "SigIgn:", "SigCgt:"});
  outside.umask = status_lines(*status, {"Umask:"});
  auto descriptors = list_descriptors(run.tracee());
  if (!descriptors)
    return descriptors.error();
  auto inodes = connection_inodes(run);
  if (!inodes)
    return inodes.error();
  outside.descriptors =
      without_connection_inodes(std::move(*descriptors), *inodes);
  return outside;
}

Result<std::optional<Snapshot>> Snapshot::save(TargetRun &run,
                                               std::string &refused) {
  refused = unrestorable(run);
  if (!refused.empty())
    return std::optional<Snapshot>();
  Tracee &tracee = run.tracee();
  // The one thread left: the focus may still be on one that stopped last
  // and has ended since (misbehave churn).
  tracee.focus(run.session().thread_registers().front().id);
  Snapshot snapshot;
  auto descriptors = list_descriptors(tracee);
  if (!descriptors)
    return descriptors.error();
  auto connections = SavedConnections::save(run, *descriptors, refused);
  if (!connections)
    return connections.error();
  if (!*connections)
    return std::optional<Snapshot>();
  snapshot.connections_ = std::move(**connections);
  auto outside = Snapshot::outside(run);
  if (!outside)
    return outside.error();
  snapshot.outside_ = std::move(*outside);
  std::size_t sockets = 0;
  for (const ProcDescriptor &descriptor : snapshot.outside_.descriptors) {
    if (!known_kind(descriptor.link, descriptor.info)) {
      refused = "descriptor kind";
      return std::optional<Snapshot>();
    }
    sockets += descriptor.link.starts_with("socket:[") ? 1 : 0;
  }
  // Sockets other than the listening one and the clients' ends (their
  // queues are not known) are not restored.
  if (sockets > (run.session().listens() ? 1 : 0) + run.open_connections()) {
    refused = "descriptor kind";
    return std::optional<Snapshot>();
  }
  auto pages = SavedPages::save(tracee);
  if (!pages)
    return pages.error();
  if (shares_writable_memory(pages->maps)) {
    refused = "shared mapping";
    return std::optional<Snapshot>();
  }
  snapshot.pages_ = std::move(*pages);
  auto files = run.read_files();
  if (!files)
    return files.error();
  snapshot.files_ = std::move(*files);
  snapshot.session_ = run.session().save();
  snapshot.output_ = tracee.output();
  snapshot.unrestorable_calls_ = run.session().unrestorable_calls();
  return std::optional(std::move(snapshot));
}

Result<std::string> Snapshot::restore(TargetRun &run) const {
  if (run.session().unrestorable_calls() != unrestorable_calls_)
    return std::string("calls");
  Tracee &tracee = run.tracee();
  if (run.session().thread_count() != 1 ||
      run.session().thread_registers().front().id !=
          session_.threads.begin()->first)
    return std::string("threads");
  tracee.focus(session_.threads.begin()->first);
  auto maps = tracee.maps();
  if (!maps)
    return maps.error();
  if (!std::ranges::equal(
          *maps, pages_.maps, [](const auto &now, const auto &then) {
            return now.start == then.start && now.end == then.end &&
                   now.perms == then.perms && now.offset == then.offset &&
                   now.inode == then.inode && now.path == then.path;
          }))
    return std::string("mappings");
  // The page write-back below puts back what epoll_ctl's argument
  // overwrote.
  if (pages_.pages.empty())
    return std::string("unsaved page");
  auto reconnected = connections_.restore(
      run, reinterpret_cast<std::uint64_t>(pages_.pages.front().iov_base));
  if (!reconnected || !reconnected->empty())
    return reconnected;
  if (std::string why = unrestorable(run); !why.empty())
    return why;
  auto outside = Snapshot::outside(run);
  if (!outside)
    return outside.error();
  if (outside->descriptors != outside_.descriptors)
    return std::string("descriptors");
  if (outside->signals != outside_.signals)
    return std::string("signals");
  if (outside->umask != outside_.umask)
    return std::string("umask");
  auto files = run.read_files();
  if (!files)
    return files.error();
  if (*files != files_)
    return std::string("files");
  std::vector<std::byte> now;
  auto written = pages_.written(tracee, now);
  if (!written)
    return written.error();
  auto unknown = pages_.write_back(tracee, *written);
  if (!unknown)
    return unknown.error();
  if (*unknown != 0)
    return std::string("unsaved page");
  run.session().restore(session_);
  tracee.restore_output(output_);
  return std::string();
}

std::size_t Snapshot::size() const {
  std::size_t bytes = pages_.size() + output_.head.size() + output_.tail.size();
  for (const ProcDescriptor &descriptor : outside_.descriptors)
    bytes += descriptor.link.size() + descriptor.info.size();
  return bytes;
}

} // namespace cmc::tracer
