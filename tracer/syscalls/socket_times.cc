#include "tracer/syscalls/socket_times.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "tracer/process/process_access.h"
#include "tracer/syscalls/environment.h"

namespace cmc::tracer {
namespace {

// What struct tcp_info says that depends neither on time nor on how the
// connection was made (a restored snapshot makes it anew, so its counters
// differ from a fresh run's): the state and options (the first 8 bytes),
// the segment sizes and the path MTU; (offset, size).
#define CMC_FIELD(name)                                                        \
  std::pair<std::size_t, std::size_t> {                                        \
    offsetof(tcp_info, name), sizeof(tcp_info::name)                           \
  }
const std::array kKept{
    std::pair<std::size_t, std::size_t>{0, offsetof(tcp_info, tcpi_rto)},
    CMC_FIELD(tcpi_snd_mss), CMC_FIELD(tcpi_rcv_mss), CMC_FIELD(tcpi_pmtu),
    CMC_FIELD(tcpi_advmss)};
#undef CMC_FIELD

// Action::After of getsockopt(TCP_INFO): what the kernel wrote (optlen at
// exit) zeroed but the kept fields.
Result<void> zero_tcp_info_times(ProcessAccess &tracee,
                                 const Registers &entered, long result) {
  if (result != 0)
    return {};
  auto length = tracee.read(RemotePtr<socklen_t>(entered.arg(4)));
  if (!length)
    return length.error();
  std::vector<std::byte> info(std::min<std::size_t>(*length, 4096));
  const iovec remote{reinterpret_cast<void *>(entered.arg(3)), info.size()};
  if (auto read = tracee.read(std::span(&remote, 1), info); !read)
    return read.error();
  std::vector<std::byte> zeroed(info.size());
  for (const auto &[offset, size] : kKept)
    if (offset + size <= info.size())
      std::copy_n(info.begin() + static_cast<std::ptrdiff_t>(offset), size,
                  zeroed.begin() + static_cast<std::ptrdiff_t>(offset));
  return tracee.write(entered.arg(3), zeroed);
}

} // namespace

Result<Action> on_getsockopt(SeccompStop &stop) {
  if (stop.regs.arg(1) != IPPROTO_TCP || stop.regs.arg(2) != TCP_INFO)
    return Action::run();
  stop.environment.note(executor::Source::kTcpInfo, executor::Via::kSyscall);
  Action action = Action::run();
  action.after = zero_tcp_info_times;
  return action;
}

} // namespace cmc::tracer
