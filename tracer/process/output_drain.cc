#include "tracer/process/output_drain.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <span>
#include <thread>
#include <utility>

#include "util/check.h"

namespace cmc::tracer {

void TargetOutput::append(const char *bytes, std::size_t count) {
  written += count;
  const std::size_t to_head = std::min(count, kKept - head.size());
  head.append(bytes, to_head);
  bytes += to_head;
  count -= to_head;
  if (count >= kKept) {
    tail.assign(bytes + count - kKept, kKept);
    return;
  }
  tail.append(bytes, count);
  if (tail.size() > kKept)
    tail.erase(0, tail.size() - kKept);
}

OutputDrain &OutputDrain::instance() {
  // Never destroyed: a target may outlive static destruction (TBB's threads
  // are not joined at exit), and its Registration still ends.
  static auto *drain = new OutputDrain();
  return *drain;
}

OutputDrain::OutputDrain() : epoll_(epoll_create1(EPOLL_CLOEXEC)) {
  CMC_CHECK(epoll_.valid(), "cannot make the output drain");
  std::thread([this] { drain_all(); }).detach();
}

void OutputDrain::drain(Entry &entry) {
  std::array<char, 65536> buffer{};
  ssize_t got = 0;
  while ((got = read(entry.pipe.get(), buffer.data(), buffer.size())) > 0)
    entry.output.append(buffer.data(), static_cast<std::size_t>(got));
}

void OutputDrain::drain_all() {
  std::array<epoll_event, 16> events{};
  while (true) {
    const int ready =
        epoll_wait(epoll_.get(), events.data(), events.size(), -1);
    if (ready < 0 && errno == EINTR)
      continue;
    CMC_CHECK(ready >= 0, "epoll_wait of the output drain failed");
    const std::lock_guard lock(mutex_);
    for (const epoll_event &event :
         std::span(events).first(static_cast<std::size_t>(ready))) {
      // Unregistered meanwhile: its pipe is closed and gone from epoll.
      const auto entry = entries_.find(event.data.u64);
      if (entry == entries_.end())
        continue;
      drain(entry->second);
      // Every writer closed its end (the target ended): read to the end,
      // the pipe would wake the thread forever.
      if ((event.events & EPOLLHUP) != 0)
        epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, entry->second.pipe.get(),
                  nullptr);
    }
  }
}

OutputDrain::Registration::Registration(UniqueFd pipe) {
  OutputDrain &drain = instance();
  const std::lock_guard lock(drain.mutex_);
  id_ = drain.next_id_++;
  // Level-triggered: a pipe the tracer emptied first wakes the thread once
  // more for nothing, and one it did not wakes it until it is empty.
  epoll_event event{EPOLLIN, {.u64 = id_}};
  CMC_CHECK(epoll_ctl(drain.epoll_.get(), EPOLL_CTL_ADD, pipe.get(), &event) ==
                0,
            "cannot watch a target's output");
  drain.entries_[id_].pipe = std::move(pipe);
}

OutputDrain::Registration::~Registration() {
  OutputDrain &drain = instance();
  const std::lock_guard lock(drain.mutex_);
  // ENOENT once the target ended (EPOLLHUP), harmless.
  epoll_ctl(drain.epoll_.get(), EPOLL_CTL_DEL,
            drain.entries_.at(id_).pipe.get(), nullptr);
  drain.entries_.erase(id_);
}

TargetOutput OutputDrain::Registration::output() const {
  OutputDrain &drain = instance();
  const std::lock_guard lock(drain.mutex_);
  Entry &entry = drain.entries_.at(id_);
  OutputDrain::drain(entry);
  return entry.output;
}

void OutputDrain::Registration::restore(TargetOutput output) const {
  OutputDrain &drain = instance();
  const std::lock_guard lock(drain.mutex_);
  Entry &entry = drain.entries_.at(id_);
  OutputDrain::drain(entry);
  entry.output = std::move(output);
}

} // namespace cmc::tracer
