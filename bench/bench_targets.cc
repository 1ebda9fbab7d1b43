#include "bench/bench_targets.h"

#include <unistd.h>

#include <algorithm>
#include <array>

#include "decoder/elf_file.h"

namespace cmc::bench {

std::string binary_dir() {
  std::array<char, 4096> path{};
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  const std::string self(path.data(),
                         static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
  return self.substr(0, self.rfind('/'));
}

std::shared_ptr<tracer::TargetSpec> spec_of(std::int64_t target,
                                            executor::StateKind state) {
  auto spec = std::make_shared<tracer::TargetSpec>();
  if (target == 0) {
    spec->launch.program = "/usr/bin/beanstalkd";
    spec->launch.argv = {spec->launch.program, "-l", "127.0.0.1", "-p",
                         "11300"};
    spec->messages = {"put 0 0 10 1\r\nx\r\n", "put 0 0 10 1\r\ny\r\n"};
  } else {
    spec->launch.program = binary_dir() + "/../demo/kv";
    spec->launch.argv = {spec->launch.program, "7000"};
    spec->messages = {"SET a\n", "SET b\n"};
  }
  auto elf = decoder::ElfFile::open(spec->launch.program);
  if (elf) {
    spec->load_base = elf->load_base();
    spec->entry = elf->entry();
  }
  spec->state = state;
  return spec;
}

const char *label(std::int64_t target) {
  return target == 0 ? "beanstalkd" : "kv";
}

Result<void> start(StartedTarget &started, std::int64_t target,
                   std::span<const executor::PathStep> path) {
  started.spec = spec_of(target, executor::StateKind::kProcess);
  auto netns = tracer::NetworkNamespace::create();
  if (!netns)
    return netns.error();
  started.netns.emplace(std::move(*netns));
  tracer::LaunchSpec launch = started.spec->launch;
  launch.netns = started.netns->fd();
  bool located = false;
  auto run = tracer::TargetRun::start(*started.spec, launch, located);
  if (!run)
    return run.error();
  started.run.emplace(std::move(*run));
  for (const executor::PathStep &step : path) {
    auto fault = started.run->step(step);
    if (!fault)
      return fault.error();
    if (*fault)
      return Error{(*fault)->describe()};
  }
  return {};
}

} // namespace cmc::bench
