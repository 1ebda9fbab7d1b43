#!/usr/bin/env bash
# The Debian package as a user gets it: makes it (cpack -G DEB in the
# build, which must be built: scripts/setup.sh), runs lintian on it (an
# error fails the test, warnings are shown), installs it with apt-get,
# checks what it installs (the command, its man pages, the pkg-config file,
# the header, the completion, the debug symbols), builds the example
# plugin lock_grant against the installed header with pkg-config and the
# example servers with the installed Makefile, checks demos with the
# installed cmc, and removes the package again, so a developer's machine is
# left as it was. Root and dpkg only: skipped otherwise, saying why. A cmc
# package installed before is not replaced: that is a failure, named.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${CMC_BUILD_DIR:-build}")
start=$SECONDS

if [[ $(id -u) -ne 0 ]]; then
  echo "package_test: skipped: not root (dpkg -i needs it)"
  exit 0
fi
if ! command -v dpkg >/dev/null || ! command -v apt-get >/dev/null; then
  echo "package_test: skipped: no dpkg or apt-get (not Debian)"
  exit 0
fi
if dpkg-query -W -f='${Status}' cmc cmc-dbgsym 2>/dev/null |
  grep -q "ok installed"; then
  echo "package_test: a cmc package is installed already;" \
    "remove it first (dpkg -r cmc-dbgsym cmc)" >&2
  exit 1
fi

fail() {
  echo "package_test: FAILED: $*" >&2
  exit 1
}
# expect STATUS COMMAND...: runs the command, which must exit STATUS;
# its output is in $out.
expect() {
  local want=$1 status=0
  shift
  out=$("$@" 2>&1) || status=$?
  [[ $status -eq $want ]] || fail "exit $status (not $want): $*"$'\n'"$out"
}

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[[ -n $version ]] || fail "no project version in $build/CMakeCache.txt"
deb=$build/cmc_${version}_amd64.deb
ddeb=$build/cmc-dbgsym_${version}_amd64.ddeb
rm -f "$deb" "$ddeb"
expect 0 cpack -G DEB -B "$build" --config "$build/CPackConfig.cmake"
[[ -f $deb && -f $ddeb ]] || fail "cpack made no $deb and $ddeb"
packed=$SECONDS
command -v lintian >/dev/null ||
  fail "no lintian (apt-get install lintian, or run scripts/setup.sh)"
# lintian fails (exit 2) on an error (E:) only; its other tags are shown.
# It warns that it runs as root, as it does here (dpkg -i needs root).
expect 0 lintian --fail-on error "$deb"
grep '^[A-Z]: ' <<<"$out" || true
linted=$SECONDS

work=$(mktemp -d)
cleanup() {
  dpkg -r cmc-dbgsym cmc >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
# apt-get resolves the dependencies dpkg-shlibdeps wrote (already there on
# a machine that built cmc); dpkg takes the .ddeb, whose name apt does not.
expect 0 env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  --no-install-recommends "$deb"
expect 0 dpkg -i "$ddeb"

expect 0 /usr/bin/cmc --help
[[ $out == *"Subcommands:"* ]] || fail "cmc --help: $out"
expect 0 /usr/bin/cmc check --help
for page in cmc cmc-check cmc-replay cmc-scan cmc-explore; do
  expect 0 man -w "$page"
done
file=$(file -L /usr/bin/cmc)
[[ $file == *", stripped"* ]] || fail "/usr/bin/cmc is not stripped: $file"
build_id=$(readelf -n /usr/bin/cmc | sed -n 's/^ *Build ID: //p')
debug=/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug
readelf -S "$debug" 2>/dev/null | grep -q '\.debug_info' ||
  fail "no debug symbols of /usr/bin/cmc at $debug"
expect 0 pkg-config --cflags cmc-property
expect 0 pkg-config --variable=includedir cmc-property
[[ -f $out/cmc/property.h ]] || fail "no cmc/property.h in $out"
# shellcheck disable=SC2016 # expanded by the bash it runs
expect 0 bash -c 'source /usr/share/bash-completion/completions/cmc &&
  COMP_WORDS=(cmc check --inv) COMP_CWORD=2 && _cmc &&
  echo "${COMPREPLY[*]}"'
[[ $out == --invariant ]] || fail "completion of 'cmc check --inv': $out"

# The plugin, as property.h and the README say to build one.
cp -r /usr/share/doc/cmc/examples "$work/examples"
cd "$work/examples"
read -r -a cflags <<<"$(pkg-config --cflags cmc-property)"
cc "${cflags[@]}" -shared -fPIC -o lock_grant.so properties/lock_grant.c ||
  fail "cc of properties/lock_grant.c against the installed header"
make -s >/dev/null || fail "make in the installed examples"

cmc=/usr/bin/cmc
lock=(--client A -m 'LOCK\n' -m 'UNLOCK\n' --client B -m 'LOCK\n'
  -m 'UNLOCK\n')
expect 1 "$cmc" check -q --max-depth 3 --property ./lock_grant.so \
  --json r.json --html r.html "${lock[@]}" -- "$build/demo/lock_server_bug" 7000
[[ $out == *"violated: lock-grant: step 3 granted the lock to client A, but client A holds it since step 1"* ]] ||
  fail "lock_grant on lock_server_bug: $out"
# Its report against the installed schema, with Debian's validator; its
# page with the chart and the state graph Graphviz drew (the package's
# libgvc and its layout plugins).
expect 0 /usr/bin/python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
  r.json /usr/share/cmc/schema/check.schema.json
grep -q 'id="chart"' r.html || fail "r.html has no sequence chart"
grep -q 'class="node"' r.html || fail "r.html has no state graph"
expect 0 "$cmc" check -q --max-depth 3 --property ./lock_grant.so \
  "${lock[@]}" -- "$build/demo/lock_server" 7000
[[ $out == "holds up to depth 3"* ]] || fail "lock_grant on lock_server: $out"
# The README's first example, on the examples' own kv.
sticky=(-m 'SET a\n' -m 'SET b\n' --region cmc_state --invariant sticky)
expect 0 "$cmc" check -q "${sticky[@]}" -- ./kv 7000
[[ $'\n'$out == *$'\n'"holds: 4 distinct states, 5 dedup merges, 8 transitions"* ]] ||
  fail "kv: $out"
expect 1 "$cmc" check -q "${sticky[@]}" -- ./kv_bug 7000
[[ $'\n'$out == *$'\n'"violated: sticky: byte 1 of cmc_state went 01 -> 00"* ]] ||
  fail "kv_bug: $out"
cd /

cleanup
trap - EXIT
! dpkg-query -W -f='${Status}' cmc 2>/dev/null | grep -q "ok installed" ||
  fail "dpkg -r cmc left it installed"
[[ ! -e /usr/bin/cmc ]] || fail "dpkg -r cmc left /usr/bin/cmc"
echo "package_test: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)" \
  "installed, checked and removed; cpack $((packed - start)) s," \
  "lintian $((linted - packed)) s, total $((SECONDS - start)) s"
