#include "bench/soft_dirty.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "util/unique_fd.h"

namespace cmc::bench {

bool clear_soft_dirty(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/clear_refs";
  const UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return fd.valid() && write(fd.get(), "4", 1) == 1;
}

} // namespace cmc::bench
