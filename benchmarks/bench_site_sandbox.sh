#!/usr/bin/env bash
# How long site.yml takes on the sandbox (inventories/sandbox, three systemd containers):
# the first converge on fresh nodes, then no-op re-runs (each must report changed=0),
# and the ratio re-run / first converge (issue 10's target: <= 0.25). Prints numbers;
# not part of the test suite. Leaves no nodes behind.
#   benchmarks/bench_site_sandbox.sh [RERUNS]        (default 2)
#   BENCH_OS=debian13 benchmarks/bench_site_sandbox.sh   (nodes on Debian 13; default debian12)
# Holds /tmp/gpc-docker.lock for the whole run (one docker engine, shared with molecule).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
reruns=${1:-2}
cd "$ROOT" || exit 2
# shellcheck source=benchmarks/sandbox-bench.sh
source benchmarks/sandbox-bench.sh
gpc_bench_sandbox_start "$@"
gpc_bench_logs /var/tmp/gpc-bench-site

# Seconds a command took; its output goes to the log named by $1.
timed() {
  local log=$1 start
  shift
  start=$(date +%s.%N)
  "$@" >"$log" 2>&1 || { echo "FAILED: $* (log $log)" >&2; exit 1; }
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)"
}
# The play recap's totals: ok / changed / skipped, summed over the hosts.
recap() {
  python3 - "$1" <<'PY'
import re, sys
ok = changed = skipped = 0
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.search(r"ok=(\d+)\s+changed=(\d+).*skipped=(\d+)", line)
    if m and " : " in line:
        ok += int(m[1]); changed += int(m[2]); skipped += int(m[3])
print(f"ok={ok} changed={changed} skipped={skipped}")
PY
}

down
ansible-playbook "${inv[@]}" tests/sandbox/nodes.yml -e sandbox_action=up >"$logs/nodes.log" 2>&1 || { echo "nodes failed" >&2; exit 1; }
ansible-playbook "${inv[@]}" tests/sandbox/gpus.yml >"$logs/gpus.log" 2>&1 || { echo "gpus failed" >&2; exit 1; }
ansible-playbook "${inv[@]}" tests/sandbox/mirror.yml >"$logs/mirror.log" 2>&1 || { echo "mirror failed" >&2; exit 1; }
echo "nodes: ${BENCH_OS:-debian12}"
first=$(timed "$logs/first.log" ansible-playbook "${inv[@]}" site.yml) || exit 1
echo "site.yml first converge: ${first} s ($(recap "$logs/first.log"))"
for i in $(seq 1 "$reruns"); do
  again=$(timed "$logs/rerun-$i.log" ansible-playbook "${inv[@]}" site.yml) || exit 1
  totals=$(recap "$logs/rerun-$i.log")
  echo "site.yml no-op re-run $i: ${again} s ($totals) ratio re-run/first: $(python3 -c "print(f'{$again / $first:.2f}')")"
  case "$totals" in *" changed=0 "*) ;; *) echo "re-run $i changed something: see $logs/rerun-$i.log" >&2; exit 1 ;; esac
done
