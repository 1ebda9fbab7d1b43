// Session and the target's processes: a process the target starts is
// followed as its threads are, under the one scheduler; its end is not the
// target's, unless a signal killed it.

#include <map>
#include <vector>

#include "tracer/control/session.h"
#include "util/log.h"

namespace cmc::tracer {

Result<Session::Thread *> Session::add_task(pid_t tid) {
  auto group = tracee_.thread_group(tid);
  // Adopted first: the leader's end is not reported while a thread of it
  // is left unreaped, and the Tracee reaps those it adopted.
  tracee_.adopt(tid, group ? *group : tid);
  if (!group)
    return group.error();
  auto process = processes_.find(*group);
  if (process == processes_.end()) {
    process = processes_.emplace(*group, processes_created_++).first;
    const auto inside = tracee_.namespace_tid(tid);
    CMC_LOG_DEBUG("tracer",
                  "process {} started: pid {} ({} in the target's "
                  "namespace)",
                  process->second, tid, inside ? *inside : -1);
  }
  Thread &added = threads_[tid];
  added.index = threads_created_++;
  added.process = process->second;
  added.run = Thread::Run::kStarting;
  return &added;
}

Result<std::optional<executor::Fault>>
Session::on_task_end(pid_t tid, const WaitStatus &status) {
  // A thread ended; the others go on.
  if (auto ended = threads_.find(tid); ended != threads_.end()) {
    if (ended->second.awaiting_exit)
      watcher_->ended_in_call(tracee_);
    if (running_ == tid) {
      ran_before_ = ended->second.index;
      running_.reset();
    }
    threads_.erase(ended);
  }
  futexes_.cancel(tid);
  tracee_.forget(tid);
  // The leader of a process the target started, reported last of its
  // threads: the process ended, a zombie until its parent reaps it.
  if (const auto process = processes_.find(tid); process != processes_.end()) {
    ended_.emplace_back(process->second, tid);
    processes_.erase(process);
    if (status.killed() && !tracee_.hung())
      return std::optional(fault_of(status));
  }
  if (auto woken = wake_changed_words(); !woken)
    return woken.error();
  return std::optional<executor::Fault>();
}

std::vector<std::vector<ThreadRegisters>> Session::process_registers() const {
  std::map<std::size_t, std::map<std::size_t, ThreadRegisters>> processes;
  for (const auto &[tid, thread] : threads_)
    processes[thread.process][thread.index] = {tid, thread.entered};
  std::vector<std::vector<ThreadRegisters>> ordered;
  for (const auto &[process, threads] : processes) {
    ordered.emplace_back();
    for (const auto &[index, thread] : threads)
      ordered.back().push_back(thread);
  }
  return ordered;
}

} // namespace cmc::tracer
