#!/usr/bin/env bash
# Print how long a molecule scenario's converge and its idempotent re-run take
# (nodes created once; not part of the test suite: a benchmark prints numbers).
#   benchmarks/bench_molecule_scenario.sh slurm [runs]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
scenario=${1:?usage: $0 SCENARIO [RUNS]}
runs=${2:-1}
cd "$ROOT"
# shellcheck disable=SC1091
source .venv/bin/activate
export NO_COLOR=1 ANSIBLE_FORCE_COLOR=0

timed() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.1f}')"
}

molecule destroy -s "$scenario" >/dev/null 2>&1 || true
trap 'molecule destroy -s "$scenario" >/dev/null 2>&1 || true' EXIT
for i in $(seq 1 "$runs"); do
  molecule destroy -s "$scenario" >/dev/null 2>&1 || true
  molecule create -s "$scenario" >/dev/null 2>&1
  converge=$(timed molecule converge -s "$scenario")
  rerun=$(timed molecule idempotence -s "$scenario")
  echo "scenario=$scenario run=$i nodes=$(docker ps --filter "name=gpc-$scenario-" -q | wc -l) converge_s=$converge idempotent_rerun_s=$rerun"
done
