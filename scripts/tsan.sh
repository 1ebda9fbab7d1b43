#!/usr/bin/env bash
# ThreadSanitizer on the parallel search and the tracer it drives: cmc built
# with -fsanitize=thread (CMC_TSAN) into CMC_TSAN_BUILD_DIR (default
# build-tsan), its unit tests and the integration tests that check with
# several workers; any report of TSan fails (halt_on_error, and the tests
# check cmc's exit status).
#
# cmc compiles against libtbb-dev's headers but runs (LD_LIBRARY_PATH) with
# the same version of libtbb.so.12 built from Debian's source package with
# -fsanitize=thread, once, into BUILD/onetbb: TSan cannot see the
# synchronisation inside the packaged, uninstrumented libtbb (a task spawned
# on one worker and run on another), and reports races on the data that
# tasks hand to each other. As root that build is kept, by libtbb-dev's
# version, in /var/cache/cmc (a later clone on this machine, CI's of a
# session's work, reuses it); else in BUILD/onetbb.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${CMC_TSAN_BUILD_DIR:-build-tsan}

# The deb-src lines apt-get source needs, for the suites the system uses.
add_deb_src() {
  apt-cache showsrc onetbb 2>/dev/null | grep -q '^Package: onetbb' && return
  if [[ $(id -u) -ne 0 ]]; then
    echo "tsan: no deb-src line for onetbb; run as root to add one" >&2
    exit 1
  fi
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    sed -e 's/^Types: deb$/Types: deb-src/' \
      /etc/apt/sources.list.d/debian.sources \
      >/etc/apt/sources.list.d/cmc-deb-src.sources
  else
    sed -n -e 's/^deb /deb-src /p' /etc/apt/sources.list \
      >/etc/apt/sources.list.d/cmc-deb-src.list
  fi
  apt-get update -qq
}

build_tbb() {
  local version source=$PWD/$build_dir/onetbb-source
  version=$(dpkg-query -W -f='${source:Version}' libtbb-dev)
  add_deb_src
  rm -rf "$source" && mkdir -p "$source"
  (cd "$source" && apt-get source -qq --download-only "onetbb=$version" &&
    dpkg-source -x ./*.dsc tree) >/dev/null 2>&1
  cmake -S "$source/tree" -B "$source/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBB_SANITIZE=thread -DTBB_TEST=OFF \
    -DTBBMALLOC_BUILD=OFF -DTBB_STRICT=OFF \
    -DCMAKE_INSTALL_PREFIX="$tbb_prefix" >/dev/null
  rm -rf "$tbb_prefix" "$tbb_prefix.part" && mkdir -p "$(dirname "$tbb_prefix")"
  if ! cmake --build "$source/build" >"$source/build.log" 2>&1; then
    tail -20 "$source/build.log" >&2
    echo "tsan: building oneTBB failed; its log: $source/build.log" >&2
    exit 1
  fi
  # Installed whole or not at all: a run stopped half-way leaves no
  # library that the next would take for built.
  cmake --install "$source/build" --prefix "$tbb_prefix.part" >/dev/null
  mv "$tbb_prefix.part" "$tbb_prefix"
}

# Only what the tests below run: not the tools, the package's pages.
CMC_BUILD_TARGETS="cmc_unit_tests cmc_integration_tests" \
  CMC_BUILD_DIR=$build_dir CMC_CMAKE_FLAGS="-DCMC_TSAN=ON -DCMC_BENCH=OFF \
${CMC_CMAKE_FLAGS:-}" scripts/setup.sh
tbb_prefix=$PWD/$build_dir/onetbb
if [[ $(id -u) -eq 0 ]]; then
  tbb_prefix=/var/cache/cmc/onetbb-tsan-$(dpkg-query -W -f='${Version}' \
    libtbb-dev)
fi
[[ -f $tbb_prefix/lib/libtbb.so.12 ]] || build_tbb
export LD_LIBRARY_PATH=$tbb_prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# The search's unit tests (TBB workers on the fake executor), and checks
# of real targets with two workers (cmc's default here) and the tracer under
# them: threads, faults, the modes, snapshots. Not the three churn tests of
# Threads (targets that start and end threads on every message, 4-16 checks
# each):
# under TSan one took 432 s, past CTest's 120 s; test.sh runs them. Nor
# KvMatrix (kv built eight ways: the ELF reading varies, not cmc's threads;
# 100 s of CI).
search='BreadthFirst|StateStore|RecordedStates|MergeAudit|Nondeterminism|RandomWalks|Minimise'
tracer='Kv|Threads|Faults|Modes|ProcessCapture|Snapshots'
churn='ThreadsThatStartAndEnd|ATargetEndingWhile|AHungTargetKilledWhile'
selection=(-R "^($search|$tracer)\\." -E "^Threads\\.($churn)")
[[ -n ${CMC_TSAN_TESTS:-} ]] && selection=(-R "$CMC_TSAN_TESTS")
ctest --test-dir "$build_dir" --output-on-failure -j2 "${selection[@]}"
