#pragma once

#include <string>
#include <vector>

namespace cmc::testing {

// Debian's beanstalkd as debian_test.cc checks it. A reserves what A put
// while B tries to reserve too; every client may also disconnect
// (beanstalkd then releases the jobs it holds). The state is beanstalkd's
// .bss and .data: it has no symbols. The plugin beanstalkd_reserve checks
// that no job is reserved by both at once.
// The options of cmc check, from --disconnect to the regions.
std::vector<std::string> beanstalkd_options();
// The target's command line, after "--".
std::vector<std::string> beanstalkd_command();

} // namespace cmc::testing
