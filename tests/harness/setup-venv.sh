#!/usr/bin/env bash
# Create the development virtualenv (.venv) with pinned tooling, install the
# collections gpucluster.core depends on without Galaxy (they come from the
# `ansible` package on PyPI, which bundles them), and link this repository in as
# gpucluster.core so FQCNs resolve in tests and playbooks.
#
# Re-running is cheap: pip is skipped while tests/requirements.txt is unchanged.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV="${GPC_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
# Bundled-collections release to take dependencies from, and which of them.
ANSIBLE_BUNDLE_VERSION=12.3.0
COLLECTIONS=(ansible/posix community/general community/docker
             community/library_inventory_filtering_v1 community/crypto community/mysql
             ansible/utils kubernetes/core)
COLL_ROOT="$VENV/collections/ansible_collections"

log() { printf '[setup-venv %(%H:%M:%S)T] %s\n' -1 "$*"; }

stamp_of() { cat "$ROOT/tests/requirements.txt" "$0" | sha256sum | cut -c1-16; }

if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi

if [ "$(cat "$VENV/.gpc-stamp" 2>/dev/null)" != "$(stamp_of)" ]; then
  log "installing pinned tooling"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q -r "$ROOT/tests/requirements.txt" 2> >(grep -v "^WARNING: Location .file:" >&2)

  log "installing collections from the ansible==$ANSIBLE_BUNDLE_VERSION bundle"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$VENV/bin/pip" download -q --no-deps 2> >(grep -v "^WARNING: Location .file:" >&2) --only-binary=:all: -d "$tmp" "ansible==$ANSIBLE_BUNDLE_VERSION"
  rm -rf "$VENV/collections"
  mkdir -p "$COLL_ROOT"
  "$VENV/bin/python" - "$tmp"/ansible-*.whl "$VENV/collections" "${COLLECTIONS[@]}" <<'PY'
import sys, zipfile
wheel, dest, *wanted = sys.argv[1:]
prefixes = tuple(f"ansible_collections/{c}/" for c in wanted)
with zipfile.ZipFile(wheel) as zf:
    members = [m for m in zf.namelist() if m.startswith(prefixes)]
    missing = [c for c in wanted if not any(m.startswith(f"ansible_collections/{c}/") for m in members)]
    if missing:
        sys.exit(f"collections not in {wheel}: {', '.join(missing)}")
    zf.extractall(dest, members)
PY
  stamp_of >"$VENV/.gpc-stamp"
fi

# This checkout is gpucluster.core.
mkdir -p "$COLL_ROOT/gpucluster"
ln -sfn "$ROOT" "$COLL_ROOT/gpucluster/core"

log "ready: source $VENV/bin/activate (collections in $VENV/collections)"
