#!/usr/bin/env bash
# Sets up, builds and runs every test (unit and integration) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir "${CMC_BUILD_DIR:-build}" --output-on-failure -j2 "$@"
