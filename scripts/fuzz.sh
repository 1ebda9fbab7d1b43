#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ with clang and runs each for
# SECONDS (default 60), two at a time; any crash, leak, timeout or sanitizer
# report fails. A harness's corpus grows in BUILD/corpus/NAME from the seeds
# in fuzz/seeds/NAME (the ELF harness: the fixtures and demos built here);
# the input of a failure is left as BUILD/crashes/NAME-crash-*, to become a
# unit test (a unit slower than 10 s: NAME-slow-unit-*, printed too).
# CMC_FUZZERS="escape region" selects harnesses. With --configure it only
# configures the build (lint.sh needs its compile commands).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build_dir=${CMC_FUZZ_BUILD_DIR:-build-fuzz}
read -r -a flags <<<"${CMC_CMAKE_FLAGS:-}"
read -r -a fuzzers <<<"${CMC_FUZZERS:-auxv duration elf_file escape proc_maps region report}"

source scripts/ccache.sh
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build_dir" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMC_FUZZ=ON -DCMC_BENCH=OFF \
  "${ccache_flags[@]}" "${flags[@]}" >/dev/null
[[ $seconds == --configure ]] && exit
cmake --build "$build_dir" --target cmc_fuzzers

# The ELF seeds: every small ELF file the build made (the static-pie ones,
# near a megabyte, would only slow each run down).
elf_seeds=$build_dir/seeds/elf_file
mkdir -p "$elf_seeds" "$build_dir/crashes"
find "$build_dir/tests/fixtures" "$build_dir/demo" -type f -size -200k \
  \( -perm -u+x -o -name '*.so' \) -exec cp -t "$elf_seeds" {} +

# run NAME: one harness for $seconds; prints one line of counts.
run() {
  local name=$1 corpus=$build_dir/corpus/$1 seeds=fuzz/seeds/$1
  local log=$build_dir/fuzz-$name.log
  [[ $name == elf_file ]] && seeds=$elf_seeds
  mkdir -p "$corpus"
  if nice -n 19 "$build_dir/fuzz/fuzz_$name" -max_total_time="$seconds" \
    -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$build_dir/crashes/$name-" "$corpus" "$seeds" \
    >"$log" 2>&1; then
    echo "fuzz: $name: $(grep -o 'number_of_executed_units: [0-9]*' "$log" |
      grep -o '[0-9]*') runs, $(grep -o 'cov: [0-9]*' "$log" | tail -1 |
      grep -o '[0-9]*') edges, $(find "$corpus" -type f | wc -l) inputs, ok"
    # A unit that took over 10 s but ended before the timeout caught it
    # does not fail libFuzzer; its input is left all the same.
    grep -E 'Test unit written to .*slow-unit' "$log" >&2 || true
  else
    echo "fuzz: $name FAILED; its log: $log" >&2
    grep -E '^(==[0-9]+== ?ERROR|SUMMARY|cmc: internal error)' "$log" >&2 || true
    grep -E 'Test unit written to' "$log" >&2 || true
    return 1
  fi
}

export -f run
export seconds build_dir elf_seeds
printf '%s\n' "${fuzzers[@]}" | xargs -P 2 -I{} bash -c 'run {}'
