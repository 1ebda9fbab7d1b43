// libFuzzer harness: the raw bytes of /proc/PID/auxv (decoder/auxv).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "decoder/auxv.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  // The first 8 bytes choose the entry type looked up, the rest is auxv.
  std::uint64_t type = 0;
  if (size < sizeof type)
    return 0;
  std::memcpy(&type, data, sizeof type);
  const std::span<const std::byte> raw(
      reinterpret_cast<const std::byte *>(data) + sizeof type,
      size - sizeof type);
  (void)cmc::decoder::auxv_value(raw, type);
  return 0;
}
