#!/usr/bin/env bash
# Run ansible-test on this checkout: ansible-test needs the collection at
# .../ansible_collections/gpucluster/core, so this copies the tracked and new files
# there (with the dependency collections beside it) and runs in that copy.
#   tests/harness/ansible-test.sh sanity      # all sanity tests
#   tests/harness/ansible-test.sh units       # unit tests under tests/unit
# Extra arguments go to ansible-test. Uses --venv: no container registry here.
# GPC_VENV chooses the controller (default .venv, the oldest ansible-core supported;
# .venv-newest for the newest: tests/harness/core-range.sh); the venv's Python runs the tests.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV="${GPC_VENV:-$ROOT/.venv}"
[ -x "$VENV/bin/ansible-test" ] || { echo "run tests/harness/setup-venv.sh first" >&2; exit 2; }
PYVER=$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
WORK="${GPC_ANSIBLE_TEST_DIR:-/var/tmp/gpc-ansible-test}-$(basename "$VENV")"
COLL="$WORK/ansible_collections/gpucluster/core"
cmd=${1:?usage: $0 sanity|units [ansible-test options]}; shift

# ansible-test --venv bootstraps pip with a script it downloads from the internet.
# Offline, a stand-in that uses the interpreter's bundled pip does the same job.
pip_version=$(sed -n "s/^ *pip='\([0-9.]*\)',$/\1/p" \
  "$VENV"/lib/python3*/site-packages/ansible_test/_internal/python_requirements.py | head -n1)
getpip="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
if ! grep -qs "gpucluster offline stand-in" "$getpip"; then
  mkdir -p "$(dirname "$getpip")"
  cat >"$getpip" <<'PY'
"""gpucluster offline stand-in for get-pip.py: bootstrap pip from ensurepip, then install the requested pip."""
import ensurepip
import os
import subprocess
import sys

args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
ensurepip.bootstrap(upgrade=True)
# ensurepip points PIP_CONFIG_FILE at /dev/null; the machine's pip.conf (CA bundle,
# package mirrors) must apply to the real install.
os.environ.pop("PIP_CONFIG_FILE", None)
subprocess.check_call([sys.executable, "-m", "pip", "install", *args])
PY
fi

# Fresh copy of the collection (git-known files only, so caches and venvs stay out).
mkdir -p "$COLL"
(cd "$ROOT" && { git ls-files -z --cached --others --exclude-standard; } ) \
  | rsync -a --delete --ignore-missing-args --from0 --files-from=- "$ROOT/" "$COLL/.stage/"
rsync -a --delete --exclude .stage --exclude tests/output "$COLL/.stage/" "$COLL/"
rm -rf "$COLL/.stage"
for ns in "$VENV"/collections/ansible_collections/*; do
  [ "$(basename "$ns")" = gpucluster ] || ln -sfn "$ns" "$WORK/ansible_collections/$(basename "$ns")"
done
# The shared real-hardware fixtures sit beside the checkout (../shared/fixtures).
if [ -d "$ROOT/../shared" ]; then
  ln -sfn "$(cd "$ROOT/../shared" && pwd)" "$WORK/ansible_collections/gpucluster/shared"
fi

cd "$COLL"
export PATH="$VENV/bin:$PATH"
case "$cmd" in
  sanity) exec ansible-test sanity --venv --python "$PYVER" --color no "$@" ;;
  units)  exec ansible-test units --venv --python "$PYVER" --color no "$@" ;;
  *) exec ansible-test "$cmd" "$@" ;;
esac
