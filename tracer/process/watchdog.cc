#include "tracer/process/watchdog.h"

#include <csignal>

#include <algorithm>
#include <utility>

namespace cmc::tracer {
namespace {

// Each target leads its own process group (see launch.cc): killing the
// group also reaches helpers it spawned outside ptrace's view.
void kill_target(const std::vector<pid_t> &pids) {
  for (const pid_t pid : pids) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
}

} // namespace

Watchdog &Watchdog::instance() {
  static Watchdog watchdog;
  return watchdog;
}

Watchdog::Watchdog() : thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Watchdog::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const auto now = Clock::now();
    next_wake_ = Clock::time_point::max();
    for (auto &[id, entry] : entries_) {
      if (entry.deadline <= now) {
        entry.expired = true;
        entry.deadline = Clock::time_point::max();
        kill_target(entry.pids);
      }
      next_wake_ = std::min(next_wake_, entry.deadline);
    }
    if (next_wake_ == Clock::time_point::max())
      wake_.wait(lock);
    else
      wake_.wait_until(lock, next_wake_);
  }
}

void Watchdog::interrupt() {
  const std::lock_guard lock(mutex_);
  interrupted_.store(true);
  for (const auto &[id, entry] : entries_)
    kill_target(entry.pids);
}

Watchdog::Lease::Lease(pid_t pid) {
  Watchdog &dog = instance();
  const std::lock_guard lock(dog.mutex_);
  id_ = dog.next_id_++;
  dog.entries_[id_].pids = {pid};
  // A target registered after an interrupt dies at once.
  if (dog.interrupted())
    kill_target({pid});
}

void Watchdog::Lease::add(pid_t pid) const {
  Watchdog &dog = instance();
  const std::lock_guard lock(dog.mutex_);
  dog.entries_[id_].pids.push_back(pid);
  if (dog.interrupted())
    kill_target({pid});
}

Watchdog::Lease::~Lease() {
  Watchdog &dog = instance();
  const std::lock_guard lock(dog.mutex_);
  dog.entries_.erase(id_);
}

void Watchdog::Lease::arm(Clock::duration timeout) const {
  Watchdog &dog = instance();
  const auto deadline = Clock::now() + timeout;
  bool earlier = false;
  {
    const std::lock_guard lock(dog.mutex_);
    dog.entries_[id_].deadline = deadline;
    dog.entries_[id_].paused.reset();
    earlier = deadline < dog.next_wake_;
    if (earlier)
      dog.next_wake_ = deadline;
  }
  // Steps usually end long before their deadline; the watchdog only needs
  // waking when this deadline comes before the one it sleeps towards.
  if (earlier)
    dog.wake_.notify_one();
}

void Watchdog::Lease::disarm() const {
  Watchdog &dog = instance();
  const std::lock_guard lock(dog.mutex_);
  dog.entries_[id_].deadline = Clock::time_point::max();
  dog.entries_[id_].paused.reset();
}

void Watchdog::Lease::pause() const {
  Watchdog &dog = instance();
  const std::lock_guard lock(dog.mutex_);
  Entry &entry = dog.entries_[id_];
  if (entry.deadline == Clock::time_point::max())
    return;
  entry.paused = entry.deadline - Clock::now();
  entry.deadline = Clock::time_point::max();
}

void Watchdog::Lease::resume() const {
  std::optional<Clock::duration> left;
  {
    Watchdog &dog = instance();
    const std::lock_guard lock(dog.mutex_);
    left = std::exchange(dog.entries_[id_].paused, std::nullopt);
  }
  if (left)
    arm(std::max(*left, Clock::duration::zero()));
}

bool Watchdog::Lease::expired() const {
  Watchdog &dog = instance();
  const std::lock_guard lock(dog.mutex_);
  return dog.entries_.at(id_).expired;
}

} // namespace cmc::tracer
