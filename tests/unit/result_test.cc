#include "util/result.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

namespace cmc {
namespace {

TEST(Error, AMessageAloneIsAPlainFailure) {
  const Error error{"bad --tick"};
  EXPECT_EQ(error.kind, ErrorKind::kFailed);
  EXPECT_EQ(error.error_number, 0);
  EXPECT_FALSE(error.target_gone());
}

TEST(Error, ESRCHFromASystemCallIsTheTargetGone) {
  const Error error = system_error("PTRACE_GETREGS on pid 42", ESRCH);
  EXPECT_TRUE(error.target_gone());
  EXPECT_EQ(error.error_number, ESRCH);
  EXPECT_EQ(error.message,
            std::string("PTRACE_GETREGS on pid 42: ") + std::strerror(ESRCH));
}

TEST(Error, OtherErrnosOfASystemCallAreFailures) {
  for (const int number : {EFAULT, EPERM, EIO, ENOENT, EINVAL}) {
    const Error error = system_error("process_vm_readv on pid 42", number);
    EXPECT_EQ(error.kind, ErrorKind::kFailed) << std::strerror(number);
    EXPECT_EQ(error.error_number, number);
  }
}

TEST(Error, AProcFileMissingOrEmptiedIsTheTargetGone) {
  // ENOENT on open: the /proc/PID (or task/TID) directory went with its
  // process; ESRCH on read: the file was open as it ended.
  EXPECT_TRUE(proc_error("cannot open /proc/42/maps", ENOENT).target_gone());
  EXPECT_TRUE(proc_error("cannot read /proc/42/maps", ESRCH).target_gone());
  const Error denied = proc_error("cannot open /proc/42/mem", EACCES);
  EXPECT_FALSE(denied.target_gone());
  EXPECT_EQ(denied.error_number, EACCES);
}

TEST(Error, ContextKeepsTheKindAndTheErrno) {
  const Error error = system_error("process_vm_readv on pid 42", ESRCH)
                          .after("cannot read "
                                 "the regions: ");
  EXPECT_TRUE(error.target_gone());
  EXPECT_EQ(error.error_number, ESRCH);
  EXPECT_EQ(
      error.message,
      std::string("cannot read the regions: process_vm_readv on pid 42: ") +
          std::strerror(ESRCH));
}

TEST(Error, AResultCarriesItsErrorWhole) {
  const Result<int> failed = system_error("PTRACE_GETEVENTMSG on pid 7", ESRCH);
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(failed.error().target_gone());
  const Result<void> none = proc_error("cannot open /proc/7/stat", ENOENT);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().error_number, ENOENT);
}

} // namespace
} // namespace cmc
