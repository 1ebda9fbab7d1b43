#include "util/check.h"

#include <cstdio>
#include <cstdlib>

namespace cmc::detail {

void check_failed(const char *expr, const char *file, int line,
                  const char *what) {
  std::fprintf(stderr, "cmc: internal error: %s (%s) at %s:%d\n", what, expr,
               file, line);
  std::abort();
}

} // namespace cmc::detail
