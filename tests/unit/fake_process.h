#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tracer/process/process_access.h"
#include "tracer/syscalls/syscall_table.h"

namespace cmc::fake {

// One stop wait() reports: the thread, its waitpid status, what
// registers() and event_message() show at it, and the 32-bit words the
// thread (or the kernel, as it ended) stored before it.
struct Stop {
  pid_t tid = 0;
  int status = 0;
  tracer::Registers regs{};
  unsigned long event = 0;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> stores{};
};

// Stops as waitpid encodes them (with cmc's ptrace options).
inline int seccomp_status() {
  return ((SIGTRAP | (PTRACE_EVENT_SECCOMP << 8)) << 8) | 0x7f;
}
inline int event_status(int event) {
  return ((SIGTRAP | (event << 8)) << 8) | 0x7f;
}
inline int signal_status(int signal) { return (signal << 8) | 0x7f; }
inline int exit_status(int code) { return (code & 0xff) << 8; }

// The registers of a thread entering call nr(args) (rip past the
// syscall instruction, as at a seccomp stop).
inline tracer::Registers entering(long nr, std::uint64_t arg0 = 0,
                                  std::uint64_t arg1 = 0,
                                  std::uint64_t arg2 = 0,
                                  std::uint64_t arg3 = 0) {
  tracer::Registers regs;
  regs.set_syscall_number(nr);
  regs.set_result(-ENOSYS);
  regs.set_arg(0, arg0);
  regs.set_arg(1, arg1);
  regs.set_arg(2, arg2);
  regs.set_arg(3, arg3);
  regs.set_ip(0x401002);
  regs.set_sp(0x7ffd0000);
  return regs;
}

// The seccomp stop of thread tid entering call nr: the event message is
// the index of nr's row, as the filter's SECCOMP_RET_DATA.
inline Stop seccomp_stop(pid_t tid, const tracer::Registers &regs) {
  const auto rows = tracer::syscalls();
  const auto row = std::ranges::find_if(rows, [&](const tracer::Syscall &r) {
    return r.number == regs.syscall_number();
  });
  return {tid, seccomp_status(), regs,
          static_cast<unsigned long>(row - rows.begin())};
}

// A pipe of the test's, closed at the end: its read end stands for a
// descriptor of the target, empty until send().
struct Pipe {
  std::array<int, 2> ends{-1, -1};
  explicit Pipe(int flags = 0) {
    if (pipe2(ends.data(), flags) != 0)
      ends = {-1, -1};
  }
  Pipe(const Pipe &) = delete;
  Pipe &operator=(const Pipe &) = delete;
  Pipe(Pipe &&) = delete;
  Pipe &operator=(Pipe &&) = delete;
  ~Pipe() {
    close(ends[0]);
    close(ends[1]);
  }
  [[nodiscard]] bool send() const { return ::write(ends[1], "x", 1) == 1; }
};

// A scripted target for unit tests: no process, no ptrace. Its memory is
// a few mapped ranges (address -> bytes; any other address faults), its
// descriptors are descriptors of the test's own (duplicate_fd dups them,
// so a pipe the test keeps empty blocks), its /proc files are texts, and
// wait() reports the scripted stops in order. It records what cmc asked
// of it: resumptions, registers set, threads adopted and forgotten.
class ScriptedProcess final : public tracer::ProcessAccess {
public:
  explicit ScriptedProcess(pid_t pid = 1000) : pid_(pid), focus_(pid) {
    threads_.insert(pid);
    stopped_.insert(pid);
  }

  // The script.
  void then(const Stop &stop) { script_.push_back(stop); }
  [[nodiscard]] bool script_done() const { return script_.empty(); }

  // Memory: length zero bytes, or bytes, at address (a range of its own).
  void map(std::uint64_t address, std::size_t length) {
    memory_[address] = std::vector<std::byte>(length);
  }
  void map(std::uint64_t address, std::span<const std::byte> bytes) {
    memory_[address] = {bytes.begin(), bytes.end()};
  }
  // Writes value at address: into the range that holds it, or a new one.
  template <typename T> void put(std::uint64_t address, const T &value) {
    const auto bytes = std::as_bytes(std::span(&value, 1));
    if (!write(address, bytes))
      map(address, bytes);
  }
  template <typename T> [[nodiscard]] T at(std::uint64_t address) const {
    T value{};
    if (const auto where = locate(address, sizeof(T)))
      std::memcpy(&value, memory_.at(where->first).data() + where->second,
                  sizeof(T));
    return value;
  }

  // Descriptor fd of the target is local (the test keeps it open).
  void give_fd(int fd, int local) { fds_[fd] = local; }
  void set_proc_file(const std::string &leaf, std::string text) {
    proc_files_[leaf] = std::move(text);
  }
  // A thread the target created (thread_group() says so).
  void add_thread(pid_t tid) { threads_.insert(tid); }
  void set_hung(bool hung) { hung_ = hung; }
  // Which threads still_stopped() denies (a SIGKILL ended their stop).
  void set_killed(pid_t tid) { killed_.insert(tid); }

  // A resumption, with the thread's registers as it went on.
  struct Resume {
    pid_t tid;
    int signal;
    bool to_syscall_stop;
    tracer::Registers regs;
  };
  [[nodiscard]] const std::vector<Resume> &resumes() const { return resumes_; }
  [[nodiscard]] const tracer::Registers &registers_of(pid_t tid) const {
    return regs_.at(tid);
  }
  [[nodiscard]] const std::vector<pid_t> &adopted() const { return adopted_; }
  // The signals send_signal() sent: (thread, signal).
  [[nodiscard]] const std::vector<std::pair<pid_t, int>> &signals() const {
    return signals_;
  }
  [[nodiscard]] const std::vector<pid_t> &forgotten() const {
    return forgotten_;
  }

  // ProcessAccess.
  [[nodiscard]] pid_t pid() const override { return pid_; }
  [[nodiscard]] pid_t focused() const override { return focus_; }
  [[nodiscard]] pid_t process() const override {
    const auto found = groups_.find(focus_);
    return found == groups_.end() ? pid_ : found->second;
  }
  void focus(pid_t tid) override { focus_ = tid; }
  void resume(int signal = 0, bool to_syscall_stop = false) override {
    resumes_.push_back(
        {focus_, signal, to_syscall_stop,
         regs_.contains(focus_) ? regs_.at(focus_) : tracer::Registers{}});
    stopped_.erase(focus_);
  }
  // Reports the next stop of the script if its thread runs: cmc resumed
  // it since its last stop, or it is new (the leader starts stopped, at
  // its exec). Otherwise, or past the script's end, it reports nothing;
  // blocking then would hang a real tracer, here it is an Error, so a test
  // that expected another stop fails.
  [[nodiscard]] Result<std::optional<tracer::WaitStatus>>
  wait(bool block = true) override {
    if (script_.empty() || stopped_.contains(script_.front().tid)) {
      if (block)
        return Error{script_.empty()
                         ? "the fake's script has no more stops"
                         : "the script's next stop is of a thread cmc has "
                           "not resumed"};
      return std::optional<tracer::WaitStatus>();
    }
    const Stop stop = script_.front();
    script_.pop_front();
    for (const auto &[address, word] : stop.stores)
      put(address, word);
    focus_ = stop.tid;
    const tracer::WaitStatus status(stop.status);
    if (status.stopped()) { // an ended thread has no registers
      stopped_.insert(stop.tid);
      regs_[stop.tid] = stop.regs;
      events_[stop.tid] = stop.event;
    }
    return std::optional(status);
  }
  [[nodiscard]] bool still_stopped(pid_t tid) const override {
    return !killed_.contains(tid);
  }
  [[nodiscard]] Result<pid_t> thread_group(pid_t tid) const override {
    return threads_.contains(tid) ? pid_ : tid;
  }
  [[nodiscard]] Result<pid_t> namespace_tid(pid_t tid) const override {
    return tid - pid_ + 1;
  }
  void adopt(pid_t tid, pid_t group) override {
    adopted_.push_back(tid);
    groups_[tid] = group;
  }
  void forget(pid_t tid) override { forgotten_.push_back(tid); }
  void leaves_group(pid_t process) override { left_.push_back(process); }
  [[nodiscard]] const std::vector<pid_t> &left() const { return left_; }
  [[nodiscard]] bool hung() const override { return hung_; }

  [[nodiscard]] Result<bool> at_syscall_exit() const override { return true; }
  [[nodiscard]] Result<unsigned long> event_message() const override {
    return events_.contains(focus_) ? events_.at(focus_) : 0;
  }
  [[nodiscard]] Result<siginfo_t> signal_info() const override {
    const auto info = infos_.find(focus_);
    return info == infos_.end() ? siginfo_t{} : info->second;
  }
  [[nodiscard]] Result<void> set_signal_info(const siginfo_t &info) override {
    infos_[focus_] = info;
    return {};
  }
  [[nodiscard]] Result<void> send_signal(pid_t tid, int signal) override {
    signals_.emplace_back(tid, signal);
    return {};
  }
  [[nodiscard]] Result<tracer::Registers> registers() const override {
    return regs_.contains(focus_) ? regs_.at(focus_) : tracer::Registers();
  }
  [[nodiscard]] Result<void>
  set_registers(const tracer::Registers &regs) override {
    regs_[focus_] = regs;
    return {};
  }
  [[nodiscard]] Result<std::vector<executor::Frame>>
  backtrace(std::size_t /*max_frames*/) const override {
    return std::vector<executor::Frame>();
  }

  // ProcessAccess's read and write of the T a RemotePtr points to, which
  // the overrides below would hide.
  using ProcessAccess::read;
  using ProcessAccess::write;
  [[nodiscard]] Result<void> read(std::span<const iovec> remote,
                                  std::span<std::byte> local) const override {
    std::size_t done = 0;
    for (const iovec &range : remote) {
      const auto from = locate(reinterpret_cast<std::uint64_t>(range.iov_base),
                               range.iov_len);
      if (!from || done + range.iov_len > local.size())
        return fault();
      std::memcpy(local.data() + done,
                  memory_.at(from->first).data() + from->second, range.iov_len);
      done += range.iov_len;
    }
    return {};
  }
  [[nodiscard]] Result<void> write(std::uint64_t address,
                                   std::span<const std::byte> bytes) override {
    const auto to = locate(address, bytes.size());
    if (!to)
      return fault();
    std::ranges::copy(bytes, memory_.at(to->first).begin() +
                                 static_cast<std::ptrdiff_t>(to->second));
    return {};
  }
  [[nodiscard]] Result<void>
  patch_code(std::uint64_t address, std::span<const std::byte> bytes) override {
    return write(address, bytes);
  }
  [[nodiscard]] Result<long>
  inject_syscall(std::uint64_t /*syscall_at*/, long /*nr*/,
                 const std::array<std::uint64_t, 3> & /*args*/) override {
    return Error{"the fake runs no system call"};
  }

  [[nodiscard]] std::optional<UniqueFd> duplicate_fd(int fd) const override {
    const auto found = fds_.find(fd);
    if (found == fds_.end())
      return std::nullopt;
    return UniqueFd(::dup(found->second));
  }
  [[nodiscard]] Result<std::string> proc_file(const char *leaf) const override {
    const auto found = proc_files_.find(leaf);
    if (found == proc_files_.end())
      return Error{std::string("no such /proc file in the fake: ") + leaf,
                   ErrorKind::kFailed, ENOENT};
    return found->second;
  }
  [[nodiscard]] Result<std::vector<decoder::Mapping>> maps() const override {
    return std::vector<decoder::Mapping>();
  }
  [[nodiscard]] bool may_write(const std::string & /*path*/) const override {
    return false;
  }

private:
  // The range holding [address, address + length) and the offset there.
  [[nodiscard]] std::optional<std::pair<std::uint64_t, std::size_t>>
  locate(std::uint64_t address, std::size_t length) const {
    auto range = memory_.upper_bound(address);
    if (range == memory_.begin())
      return std::nullopt;
    --range;
    const std::uint64_t offset = address - range->first;
    if (offset + length > range->second.size())
      return std::nullopt;
    return std::pair(range->first, static_cast<std::size_t>(offset));
  }
  static Error fault() {
    return Error{"address not mapped in the fake", ErrorKind::kFailed, EFAULT};
  }

  pid_t pid_;
  pid_t focus_;
  std::deque<Stop> script_;
  std::map<std::uint64_t, std::vector<std::byte>> memory_;
  std::map<int, int> fds_;
  std::map<std::string, std::string> proc_files_;
  std::set<pid_t> threads_;
  std::set<pid_t> killed_;
  std::set<pid_t> stopped_; // in a stop wait() reported, not resumed since
  bool hung_ = false;
  std::map<pid_t, tracer::Registers> regs_;
  std::map<pid_t, unsigned long> events_;
  std::vector<Resume> resumes_;
  std::map<pid_t, siginfo_t> infos_;
  std::vector<std::pair<pid_t, int>> signals_;
  std::vector<pid_t> adopted_;
  std::vector<pid_t> left_;       // leaves_group()
  std::map<pid_t, pid_t> groups_; // adopt()
  std::vector<pid_t> forgotten_;
};

} // namespace cmc::fake
