#pragma once

#include "util/result.h"
#include "util/unique_fd.h"

namespace cmc::tracer {

// A network namespace with its loopback up, kept open by a descriptor.
// Creating one costs most of a millisecond and its teardown as much again
// in the kernel; joining one with setns costs microseconds. So each worker
// makes one and every target it launches joins it: targets of one worker
// run one after the other, and cmc resets their connections (see
// Connection) so nothing of one run lingers into the next.
class NetworkNamespace {
public:
  // Makes a namespace without moving the calling thread into it.
  [[nodiscard]] static Result<NetworkNamespace> create();

  [[nodiscard]] int fd() const { return fd_.get(); }

private:
  explicit NetworkNamespace(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

// Sets the loopback interface of the caller's network namespace up.
// Returns 0 or an errno value; system calls only, for a child of cmc's
// (see tracee.cc's ChildPlan).
int bring_up_loopback();

// This thread's own network namespace, opened once per thread.
[[nodiscard]] int home_network_namespace();

// A socket(domain, type, protocol) of the network namespace netns (an fd
// of /proc/PID/ns/net), close-on-exec.
[[nodiscard]] Result<UniqueFd> socket_in(int netns, int domain, int type,
                                         int protocol = 0);

} // namespace cmc::tracer
