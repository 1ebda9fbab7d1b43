#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "tracer/control/target_run.h"
#include "tracer/sandbox/network_namespace.h"
#include "util/result.h"

namespace cmc::bench {

// The directory of the running benchmark binary: the demos are in
// ../demo, the bench's own targets in targets/.
[[nodiscard]] std::string binary_dir();

// Index 0: Debian's beanstalkd, messages "put x" and "put y"; 1: demo kv,
// messages "SET a" and "SET b". No regions: the state is the process.
[[nodiscard]] std::shared_ptr<tracer::TargetSpec>
spec_of(std::int64_t target, executor::StateKind state);

// "beanstalkd" or "kv", for a benchmark's label.
[[nodiscard]] const char *label(std::int64_t target);

// A target run along a path, in a network namespace of its own.
struct StartedTarget {
  std::optional<tracer::NetworkNamespace> netns;
  std::shared_ptr<tracer::TargetSpec> spec;
  std::optional<tracer::TargetRun> run;
};

// Starts target (as spec_of) into started and takes the steps of path.
[[nodiscard]] Result<void> start(StartedTarget &started, std::int64_t target,
                                 std::span<const executor::PathStep> path);

} // namespace cmc::bench
