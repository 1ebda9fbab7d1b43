#!/usr/bin/env bash
# Installs the Debian 12 packages cmc needs (when missing; as root with
# apt-get) and builds cmc, its demos and tests into build/. With --configure
# it only configures the build (lint.sh needs its compile commands).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential binutils cmake ninja-build pkg-config
  libseccomp-dev libelf-dev libdw-dev libcapstone-dev libtbb-dev
  libunwind-dev libxxhash-dev libfmt-dev libspdlog-dev libcli11-dev
  nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libedit-dev
  libgraphviz-dev # check --html draws graphs with Graphviz's libgvc
  # The Debian package (cpack -G DEB, scripts/package_test.sh): man pages
  # from the help, CPack's file type test, man -w, the package's lint.
  help2man file man-db lintian
  tmux # the interactive test of cmc explore
  python3-jsonschema # the tests validate every JSON report against docs/schema
  graphviz # the tests draw cmc check --dot's graphs (dot -Tsvg)
  chromium # the tests render check --html pages in a headless browser
  # CI's checks: scripts/fuzz.sh (libFuzzer), lint.sh, tsan.sh (dpkg-source).
  clang-14 libclang-rt-14-dev clang-format clang-tidy dpkg-dev
  # Real servers cmc checks unmodified, as Debian ships them (their tests,
  # the README's walkthroughs and the benchmarks).
  beanstalkd redis-server memcached mosquitto lighttpd webfs gearman-job-server
  dnsmasq-base unbound
  haproxy rinetd
  # Servers of several processes (tests/integration/processes_test.cc).
  nginx-light mini-httpd vsftpd
  ccache # compiles once for every build tree and clone (below)
)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
    grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing packages: ${missing[*]}; run as root to install" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# CMC_BUILD_DIR (default build) and CMC_CMAKE_FLAGS (e.g. -DCMC_SANITIZE=ON)
# select other builds; CMC_BUILD_TARGETS (default all) what is built.
build_dir=${CMC_BUILD_DIR:-build}
read -r -a flags <<<"${CMC_CMAKE_FLAGS:-}"
read -r -a targets <<<"${CMC_BUILD_TARGETS:-all}"
source scripts/ccache.sh
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${ccache_flags[@]}" "${flags[@]}" >/dev/null
[[ ${1:-} == --configure ]] || cmake --build "$build_dir" --target "${targets[@]}"
