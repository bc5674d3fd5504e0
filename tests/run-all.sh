#!/usr/bin/env bash
# Every test of gpucluster.core, as CI runs it, on a bare Debian/Ubuntu machine:
#   tests/run-all.sh                     # everything
#   tests/run-all.sh --no-molecule       # everything but the molecule scenarios
#   tests/run-all.sh --scenario base_os  # setup, then one molecule scenario only
# Stages: setup (docker engine, node image, venv), yamllint, ansible-lint,
# ansible-test sanity, ansible-test units, the playbook tests (pytest), collection build and install (all on the
# oldest ansible-core supported), the newest ansible-core (units, sanity, install), molecule.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
only_scenario=""
run_molecule=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-molecule) run_molecule=0 ;;
    --scenario) only_scenario=${2:?--scenario needs a name}; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

passed=() failed=()
# Each stage's output also goes to a log, so that a failed stage's errors are printed again at the
# end, where CI's tail of the output shows them.
logs=$(mktemp -d)
stage() {
  local name=$1 start=$SECONDS
  shift
  printf '\n===== %s: start %(%H:%M:%S)T =====\n' "$name" -1
  "$@" 2>&1 | tee "$logs/$name.log"
  if [ "${PIPESTATUS[0]}" -eq 0 ]; then
    passed+=("$name ($((SECONDS - start)) s)")
    printf '===== %s: PASSED in %d s =====\n' "$name" $((SECONDS - start))
  else
    failed+=("$name ($((SECONDS - start)) s)")
    printf '===== %s: FAILED in %d s =====\n' "$name" $((SECONDS - start))
  fi
}

setup() {
  bash tests/harness/bootstrap-host.sh && bash tests/harness/setup-venv.sh
}
total=$SECONDS
stage setup setup || true
if [ ${#failed[@]} -gt 0 ]; then
  echo "setup failed: nothing else can run"; echo "stages: 0 passed, 1 failed"; exit 1
fi
# shellcheck disable=SC1091
source .venv/bin/activate
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0 NO_COLOR=1

if [ -z "$only_scenario" ]; then
  stage yamllint yamllint -s .
  stage ansible-lint ansible-lint --nocolor
  stage ansible-test-sanity bash tests/harness/ansible-test.sh sanity
  stage ansible-test-units bash tests/harness/ansible-test.sh units
  stage playbook-tests python -m pytest -q tests/playbook
  stage collection-build bash tests/harness/check-build.sh
  stage newest-ansible-core bash tests/harness/core-range.sh
fi
if [ "$run_molecule" = 1 ]; then
  for dir in molecule/*/; do
    scenario=$(basename "$dir")
    [ -f "$dir/molecule.yml" ] || continue
    [ -z "$only_scenario" ] || [ "$scenario" = "$only_scenario" ] || continue
    # The whole site runs on Debian 13 (Slurm 24.11, reconfigure instead of restart), every
    # other scenario on Debian 12 (the slurm scenario: Slurm 22.05, restart paths). Each
    # scenario also runs on the other release by hand: run-scenario.sh NAME debian13.
    node_os=debian12
    [ "$scenario" != site ] || node_os=debian13
    stage "molecule-$scenario-$node_os" bash tests/harness/run-scenario.sh "$scenario" "$node_os"
  done
fi

echo
echo "===== summary (total $((SECONDS - total)) s) ====="
for s in "${passed[@]}"; do echo "PASSED  $s"; done
for s in "${failed[@]}"; do echo "FAILED  $s"; done
for s in "${failed[@]}"; do
  name=${s%% (*}
  echo
  echo "===== $name: its errors (grep) and its last 40 lines ====="
  grep -n -E 'fatal:|FAILED!|ERROR|failed=[1-9]|unreachable=[1-9]|Traceback|AssertionError|^E  ' "$logs/$name.log" | tail -n 40
  echo "-----"
  tail -n 40 "$logs/$name.log"
done
echo "stages: ${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
