#include "tests/integration/beanstalkd_check.h"

#include "tests/integration/run_cmc.h"

namespace cmc::testing {

std::vector<std::string> beanstalkd_options() {
  return {"--disconnect",
          "--client",
          "A",
          "-m",
          R"(put 0 0 10 1\r\nx\r\n)",
          "-m",
          "reserve-with-timeout 0\\r\\n",
          "--client",
          "B",
          "-m",
          "reserve-with-timeout 0\\r\\n",
          "--forbid-response",
          "INTERNAL_ERROR|BAD_FORMAT|UNKNOWN_COMMAND",
          "--property",
          plugin("beanstalkd_reserve"),
          "--region",
          ".bss",
          "--region",
          ".data"};
}

std::vector<std::string> beanstalkd_command() {
  return {"/usr/bin/beanstalkd", "-l", "127.0.0.1", "-p", "11300"};
}

} // namespace cmc::testing
