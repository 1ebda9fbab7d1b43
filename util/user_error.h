#pragma once

#include <stdexcept>
#include <string>

namespace cmc {

// Exit statuses of the cmc command (SPEC "Exit status").
enum class ExitCode : int {
  kHolds = 0,
  kViolation = 1,
  kUsage = 2,
  kCannotCheck = 3,
};

// A mistake of the user or of the target that ends the run. Thrown anywhere,
// caught only in main, printed as one line without a stack trace.
class UserError : public std::runtime_error {
public:
  UserError(ExitCode code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  [[nodiscard]] ExitCode code() const { return code_; }

private:
  ExitCode code_;
};

// Throws a UserError that exits 2: the command line is wrong.
[[noreturn]] inline void usage(const std::string &message) {
  throw UserError(ExitCode::kUsage, message);
}

// Throws a UserError that exits 3: the target cannot be checked.
[[noreturn]] inline void cannot_check(const std::string &message) {
  throw UserError(ExitCode::kCannotCheck, message);
}

} // namespace cmc
