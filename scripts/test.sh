#!/usr/bin/env bash
# Sets up, builds and runs every test (unit and integration) with CTest;
# then, for the release build (build/) and no ctest arguments, the Debian
# package's test (scripts/package_test.sh: as root it installs the package,
# uses it and removes it again; the sanitizer builds are not packaged).
# Arguments select tests as ctest's do (-L unit, -R Kv); CMC_PACKAGE_TEST=1
# runs the package's test after a selection too.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir "${CMC_BUILD_DIR:-build}" --output-on-failure -j2 "$@"
if [[ ${CMC_BUILD_DIR:-build} == build &&
  ($# -eq 0 || ${CMC_PACKAGE_TEST:-} == 1) ]]; then
  scripts/package_test.sh
fi
