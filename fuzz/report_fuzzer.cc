// libFuzzer harness: the JSON report `cmc replay --from` reads
// (app/report_reader).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "app/report/report_reader.h"
#include "util/check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  const auto plan = cmc::app::parse_report(input);
  if (!plan)
    return 0;
  // A plan it accepts names only clients of the check, and a step with a
  // client only where the check had named clients.
  const auto &clients = plan->target.clients;
  for (const cmc::app::Step &step : plan->steps)
    CMC_CHECK(step.client.empty() || std::find(clients.begin(), clients.end(),
                                               step.client) != clients.end(),
              "a step of a client the report does not name");
  return 0;
}
