#include "util/result.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cmc {

Error Error::after(std::string_view context) const {
  return Error{fmt::format("{}{}", context, message), kind, error_number};
}

Error system_error(std::string_view what, int error_number) {
  return Error{fmt::format("{}: {}", what, std::strerror(error_number)),
               error_number == ESRCH ? ErrorKind::kTargetGone
                                     : ErrorKind::kFailed,
               error_number};
}

Error interrupted_error() {
  return Error{"interrupted", ErrorKind::kInterrupted};
}

Error proc_error(std::string_view what, int error_number) {
  Error error = system_error(what, error_number);
  if (error_number == ENOENT)
    error.kind = ErrorKind::kTargetGone;
  return error;
}

} // namespace cmc
