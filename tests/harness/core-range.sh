#!/usr/bin/env bash
# The newest ansible-core beside the floor (tests/run-all.sh runs every test on the floor, .venv):
# the unit tests, the sanity tests and the install test (the built tarball with its declared
# dependencies in a fresh repository, every playbook and role syntax-checked there) on the newest
# ansible-core and the newest `ansible` bundle's collections (.venv-newest).
#   tests/harness/core-range.sh [units|sanity|install ...]   (default: all three)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export GPC_VENV="${GPC_VENV_NEWEST:-$ROOT/.venv-newest}"
bash tests/harness/setup-venv.sh newest
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(units sanity install)
for step in "${steps[@]}"; do
  start=$SECONDS
  case "$step" in
    units | sanity) bash tests/harness/ansible-test.sh "$step" ;;
    install) bash tests/harness/check-build.sh ;;
    *) echo "unknown step $step (units, sanity, install)" >&2; exit 2 ;;
  esac
  echo "core-range: $step passed on the newest ansible-core in $((SECONDS - start)) s"
done
