#!/usr/bin/env bash
# Sets up, then checks the demo kv server: the correct build holds, the
# -DBUG build loses a set cell after SET b, SET a.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null || exit 1

check() {
  local binary=$1
  echo "\$ cmc check -m 'SET a\\n' -m 'SET b\\n' --region cmc_state --invariant sticky -- build/demo/$binary 7000"
  build/tools/cmc check -m 'SET a\n' -m 'SET b\n' --region cmc_state \
    --invariant sticky -- "build/demo/$binary" 7000
  echo "(exit status $?)"
  echo
}
check kv
check kv_bug
# clock_kv's bug strikes once 5 s have passed: only a tick of the virtual
# clock finds it.
echo "\$ cmc check ... --region last_set --tick 10s -- build/demo/clock_kv_bug 7000"
build/tools/cmc check -m 'SET a\n' -m 'SET b\n' --region cmc_state \
  --region last_set --invariant sticky --tick 10s -- build/demo/clock_kv_bug 7000
echo "(exit status $?)"
# lock_server's bug needs two clients: B unlocks the lock A holds.
echo
echo "\$ cmc check --client A -m 'LOCK\\n' -m 'UNLOCK\\n' --client B -m 'LOCK\\n' -m 'UNLOCK\\n' --region held --invariant exclusive -- build/demo/lock_server_bug 7000"
build/tools/cmc check --client A -m 'LOCK\n' -m 'UNLOCK\n' \
  --client B -m 'LOCK\n' -m 'UNLOCK\n' --region held --invariant exclusive \
  -- build/demo/lock_server_bug 7000
echo "(exit status $?)"
# heap_kv keeps its cells in malloc'd list nodes: with no option the whole
# process, its heap canonical, is the state, and the seed's table comes
# out (4 states, 5 merges); the -DBUG build loses b, seen in GET's replies.
echo
echo "\$ cmc check -m 'SET a\\n' -m 'SET b\\n' -- build/demo/heap_kv 7000"
build/tools/cmc check -m 'SET a\n' -m 'SET b\n' -- build/demo/heap_kv 7000
echo "(exit status $?)"
echo
echo "\$ cmc check -m 'SET a\\nGET\\n' -m 'SET b\\nGET\\n' --property build/demo/properties/list_sticky.so -- build/demo/heap_kv_bug 7000"
build/tools/cmc check -m 'SET a\nGET\n' -m 'SET b\nGET\n' \
  --property build/demo/properties/list_sticky.so -- build/demo/heap_kv_bug 7000
echo "(exit status $?)"
