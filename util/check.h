#pragma once

// Assertions for broken invariants of cmc itself. They stay on in release
// builds: a model checker that continues past a broken invariant can report
// a wrong verdict.
namespace cmc::detail {
[[noreturn]] void check_failed(const char *expr, const char *file, int line,
                               const char *what);
} // namespace cmc::detail

#define CMC_CHECK(cond, what)                                                  \
  do {                                                                         \
    if (!(cond)) [[unlikely]]                                                  \
      ::cmc::detail::check_failed(#cond, __FILE__, __LINE__, what);            \
  } while (0)
