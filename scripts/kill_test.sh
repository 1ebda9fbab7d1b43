#!/usr/bin/env bash
# scripts/kill_test.sh [N]: kills a -j2 check of a demo N times (default 50)
# at a random moment with a random signal (SIGINT, SIGTERM, SIGKILL, and
# SIGQUIT, SIGUSR1, SIGPIPE, SIGHUP, which cmc does not handle), and after
# each kill asserts that nothing of cmc's is left: no process (its targets
# and sandbox inits carry a token in their environment), no namespace
# (PID, mount or network) that cmc or they were in, held by any process or
# descriptor, and no run directory (the script runs in a mount namespace of
# its own, with empty tmpfs over /dev/shm and /tmp: cmc would have put
# them there). Exits 1 at the first leak, naming it.
set -euo pipefail
if [[ -z ${CMC_KILL_TEST_PRIVATE:-} ]]; then
  CMC_KILL_TEST_PRIVATE=1 exec unshare --mount --propagation private "$0" "$@"
fi
mount -t tmpfs kill-test /dev/shm
mount -t tmpfs kill-test /tmp

runs=${1:-50}
build=${CMC_BUILD:-$(cd "$(dirname "$0")/.." && pwd)/build}
cmc=$build/tools/cmc
# Six messages, the whole process as the state: about 130 transitions,
# a few seconds at -j2 (a kill after the check's end finds nothing to
# kill: exit status 0 in the counts).
check=(check -q -j 2 -m 'SET a\n' -m 'SET b\n' -m 'SET c\n' -m 'SET d\n'
  -m 'SET e\n' -m 'SET f\n' -- "$build/demo/kv" 7000)
signals=(INT TERM KILL QUIT USR1 PIPE HUP)
deadline_s=20
ulimit -c 0

# Processes whose environment holds token (the tracer sees targets and
# inits, which inherit cmc's environment).
marked() {
  grep -lsF "$1" /proc/[0-9]*/environ 2>/dev/null |
    sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' || true
}

# The pid, mnt and net namespaces the given processes are in or hold open
# (cmc keeps a descriptor of each sandbox's and network namespace).
namespaces_of() {
  local pid kind
  for pid in "$@"; do
    for kind in pid mnt net; do
      readlink "/proc/$pid/ns/$kind" 2>/dev/null || true
    done
    find "/proc/$pid/fd" -maxdepth 1 -type l -lname '*:\[*\]' \
      -printf '%l\n' 2>/dev/null | grep -E '^(pid|mnt|net):' || true
  done
}

# Every namespace in use: by a process, or held open by a descriptor.
namespaces_in_use() {
  {
    find /proc/[0-9]*/ns -maxdepth 1 -type l -printf '%l\n' 2>/dev/null
    find /proc/[0-9]*/fd -maxdepth 1 -type l -lname '*:\[*\]' \
      -printf '%l\n' 2>/dev/null
  } | sort -u
}

# How long the check runs unkilled: the kills fall in that time.
started=$(date +%s%N)
"$cmc" "${check[@]}" >/dev/null 2>&1 || {
  echo "kill_test: the check itself fails: $cmc ${check[*]}" >&2
  exit 1
}
duration_ms=$((($(date +%s%N) - started) / 1000000))
echo "the check takes $duration_ms ms unkilled; $runs kills in its first 3/4"

declare -A counts
waited_ms=0
host=$(namespaces_of $$ | sort -u)
for ((run = 1; run <= runs; ++run)); do
  token="CMC_KILL_TEST=$$-$run-$RANDOM"
  signal=${signals[RANDOM % ${#signals[@]}]}
  env --default-signal=INT,QUIT "$token" "$cmc" "${check[@]}" \
    >/dev/null 2>&1 &
  pid=$!
  # A random moment of the check: at start-up, mid-search, or at its end.
  delay_ms=$(((RANDOM * 32768 + RANDOM) % (duration_ms * 3 / 4)))
  sleep "$((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000)))"
  # Snapshot what cmc's processes are in, right before the kill.
  ours=$(namespaces_of "$pid" $(marked "$token") | sort -u |
    comm -23 - <(echo "$host"))
  kill -s "$signal" "$pid" 2>/dev/null || true
  status=0
  { wait "$pid"; } 2>/dev/null || status=$?
  counts[$signal-$status]=$((${counts[$signal-$status]:-0} + 1))
  # The inits exit at EOF of their pipe, and with them the rest of each
  # sandbox: a matter of milliseconds; dead processes hold their PID
  # namespace until reaped (an orphaned init by pid 1). Given a deadline.
  left="" still=""
  for ((tick = 0; tick < deadline_s * 100; ++tick)); do
    left=$(marked "$token")
    still=$(comm -12 <(echo "$ours") <(namespaces_in_use))
    [[ -z $left && -z $still ]] && break
    sleep 0.01
  done
  if [[ -n $left ]]; then
    echo "run $run (SIG$signal): processes left:" >&2
    ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ,)" >&2 || true
    exit 1
  fi
  if [[ -n $still ]]; then
    echo "run $run (SIG$signal): namespaces left: $still, held by:" >&2
    for link in /proc/[0-9]*/ns/* /proc/[0-9]*/fd/*; do
      if grep -qxF "$(readlink "$link" 2>/dev/null)" <<<"$still"; then
        echo "  $link" >&2
      fi
    done
    exit 1
  fi
  waited_ms=$((waited_ms > tick * 10 ? waited_ms : tick * 10))
  if [[ -n $(find /dev/shm /tmp -mindepth 1 -maxdepth 1) ]]; then
    echo "run $run (SIG$signal): files left:" >&2
    ls -la /dev/shm /tmp >&2
    exit 1
  fi
done
echo "$runs kills, nothing left (at most $waited_ms ms after cmc's end);"
echo "signal-exit status of cmc: count"
for key in $(printf '%s\n' "${!counts[@]}" | sort); do
  echo "  SIG$key: ${counts[$key]}"
done
