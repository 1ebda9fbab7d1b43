// The vDSO patch plan, on this test process's own vDSO.

#include "decoder/vdso.h"

#include <gtest/gtest.h>
#include <sys/auxv.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#include "bytes.h"

namespace cmc::decoder {
namespace {

// This process's [vdso] mapping, copied.
std::vector<std::byte> own_vdso() {
  const auto base = getauxval(AT_SYSINFO_EHDR);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("[vdso]") == std::string::npos)
      continue;
    const auto start = std::stoull(line, nullptr, 16);
    const auto end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    if (start != base)
      break;
    std::vector<std::byte> image(end - start);
    std::memcpy(image.data(), reinterpret_cast<const void *>(start),
                image.size());
    return image;
  }
  return {};
}

const VdsoFunction *find(const std::vector<VdsoFunction> &plan,
                         const std::string &name) {
  const auto found =
      std::find_if(plan.begin(), plan.end(),
                   [&](const VdsoFunction &f) { return f.name == name; });
  return found == plan.end() ? nullptr : &*found;
}

using testing::bytes;

TEST(Vdso, EveryTimeFunctionBecomesItsSystemCall) {
  const auto image = own_vdso();
  ASSERT_FALSE(image.empty()) << "this process has no vDSO";
  auto plan = plan_vdso_patches(image);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const VdsoFunction *clock = find(*plan, "__vdso_clock_gettime");
  ASSERT_NE(clock, nullptr);
  EXPECT_EQ(clock->stub, VdsoStub::kSyscall);
  // mov eax, 228; syscall; ret
  EXPECT_EQ(clock->patch, bytes({0xb8, 0xe4, 0, 0, 0, 0x0f, 0x05, 0xc3}));
  EXPECT_EQ(clock->syscall_offset, clock->offset + 5);
  EXPECT_FALSE(clock->first_instruction.empty());
  for (const auto &[name, number] :
       {std::pair{"__vdso_gettimeofday", SYS_gettimeofday},
        std::pair{"__vdso_time", SYS_time}}) {
    const VdsoFunction *function = find(*plan, name);
    ASSERT_NE(function, nullptr) << name;
    EXPECT_EQ(function->syscall, number) << name;
  }
  // Aliases (clock_gettime) share the entry of their __vdso_ name.
  EXPECT_EQ(find(*plan, "clock_gettime"), nullptr);
  if (const VdsoFunction *random = find(*plan, "__vdso_getrandom")) {
    EXPECT_EQ(random->stub, VdsoStub::kEnosys);
  }
  for (const VdsoFunction &function : *plan) {
    EXPECT_LE(function.patch.size(), function.size) << function.name;
    EXPECT_LE(function.offset + function.size, image.size()) << function.name;
  }
}

TEST(Vdso, ATruncatedImageIsRefused) {
  auto image = own_vdso();
  ASSERT_FALSE(image.empty());
  image.resize(64);
  EXPECT_FALSE(plan_vdso_patches(image).ok());
}

} // namespace
} // namespace cmc::decoder
