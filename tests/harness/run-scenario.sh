#!/usr/bin/env bash
# Run one molecule scenario the way CI does:
#   create, prepare, converge, idempotence (second converge: zero changed),
#   check mode on the converged nodes (must report zero changes), verify, the
#   scenario's side_effect.yml when it has one (a disruptive re-run with its own checks), destroy.
#   tests/harness/run-scenario.sh base_os          # run it on Debian 12 nodes
#   tests/harness/run-scenario.sh slurm debian13   # on Debian 13 (trixie) nodes
#   GPC_KEEP=1 tests/harness/run-scenario.sh base_os   # leave the nodes up afterwards
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
scenario=${1:?usage: $0 SCENARIO [debian12|debian13]}
node_os=${2:-debian12}
case "$node_os" in
  debian12 | debian13) export GPC_NODE_IMAGE="gpucluster/node-${node_os}:latest" ;;
  *) echo "unknown node OS $node_os (debian12, debian13)" >&2; exit 2 ;;
esac
cd "$ROOT"
# shellcheck disable=SC1091
source "$ROOT/.venv/bin/activate"
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0 ANSIBLE_NOCOLOR=1 NO_COLOR=1
log() { printf '[%s %s %(%H:%M:%S)T] %s\n' "$scenario" "$node_os" -1 "$*"; }

# Each step's output is kept in $GPC_RUN_LOG_DIR/<step>.log (a scenario's verifier may read it:
# molecule/exposure checks no secret is in the run's output).
export GPC_RUN_LOG_DIR=${GPC_RUN_LOG_DIR:-$(mktemp -d "/tmp/gpc-run-$scenario.XXXXXX")}
step() {
  local name=$1 start=$SECONDS
  shift
  log "== $name"
  "$@" 2>&1 | tee "$GPC_RUN_LOG_DIR/$name.log"
  log "== $name done in $((SECONDS - start)) s"
}

check_mode() {
  # molecule's check step runs converge with --check; nothing may change.
  local out
  out=$(mktemp)
  molecule check --no-command-borders -s "$scenario" 2>&1 | tee "$out"
  local status=${PIPESTATUS[0]}
  if [ "$status" -ne 0 ]; then
    log "check mode failed (exit $status)"; return 1
  fi
  if ! grep -qE '^\S+\s+: ok=' "$out"; then
    log "check mode printed no play recap"; return 1
  fi
  if grep -E '^\S+\s+: ok=' "$out" | grep -vqE 'changed=0 .*failed=0'; then
    log "check mode on converged nodes reported changes:"
    grep -E '^\S+\s+: ok=' "$out" >&2
    return 1
  fi
  rm -f "$out"
}

cleanup() {
  if [ "${GPC_KEEP:-0}" = 1 ]; then
    log "GPC_KEEP=1: nodes left running (molecule destroy -s $scenario removes them)"
  else
    molecule destroy -s "$scenario" >/dev/null 2>&1 || molecule destroy -s "$scenario"
  fi
}

total=$SECONDS
molecule destroy -s "$scenario" >/dev/null 2>&1 || true
trap cleanup EXIT
step syntax molecule syntax -s "$scenario"
step create molecule create -s "$scenario"
step prepare molecule prepare -s "$scenario"
step converge molecule converge -s "$scenario"
step idempotence molecule idempotence -s "$scenario"
step check-mode check_mode
step verify molecule verify -s "$scenario"
if [ -f "molecule/$scenario/side_effect.yml" ]; then
  # A disruptive re-run (with its own checks) on the verified nodes.
  step side-effect molecule side-effect -s "$scenario"
fi
log "passed in $((SECONDS - total)) s"
