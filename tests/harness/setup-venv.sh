#!/usr/bin/env bash
# Create a virtualenv with pinned tooling, install the collections gpucluster.core depends on
# without Galaxy (they come from the `ansible` package on PyPI, which bundles them), and link
# this repository in as gpucluster.core so FQCNs resolve in tests and playbooks.
#
#   tests/harness/setup-venv.sh            # .venv: the oldest ansible-core the collection
#                                          # supports (meta/runtime.yml), with the oldest
#                                          # dependency releases galaxy.yml accepts; every
#                                          # test, scenario and the sandbox run here
#   tests/harness/setup-venv.sh newest     # .venv-newest: the newest ansible-core and the
#                                          # newest `ansible` bundle (units, sanity, syntax
#                                          # checks and the install test, tests/harness/core-range.sh)
#
# Each profile's versions are chosen here, once. The dependency collections go to
# <venv>/collections (for the tests) and, as collection artifacts built from the bundle's
# copies, to <venv>/collection-artifacts (for the offline install test of check-build.sh).
# Re-running is cheap: pip is skipped while the profile's requirements are unchanged.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
profile=${1:-floor}
case "$profile" in
  floor)
    VENV="${GPC_VENV:-$ROOT/.venv}"
    # ansible-core 2.19 is the oldest release still maintained (ansible-core's support
    # policy: 18 months from GA; 2.18 reached end of life in November 2026). It runs on the
    # machine's Python 3.11.
    PYTHONS=(python3.11 python3)
    REQUIREMENTS="$ROOT/tests/requirements.txt"
    ANSIBLE_BUNDLE_VERSION=12.3.0
    ;;
  newest)
    VENV="${GPC_VENV_NEWEST:-$ROOT/.venv-newest}"
    # ansible-core 2.21 needs Python 3.12 or newer on the controller.
    PYTHONS=(python3.12 python3.13)
    REQUIREMENTS="$ROOT/tests/requirements-newest.txt"
    ANSIBLE_BUNDLE_VERSION=14.5.0
    ;;
  *) echo "usage: $0 [floor|newest]" >&2; exit 2 ;;
esac
# The collections to take from the bundle; ansible.mariadb (the home of the MariaDB modules since
# community.mysql 5, whose mysql_* modules warn that MariaDB support goes) is first bundled by
# ansible 14, and comes from there for both
# (the wheels hold no code for the running Python: --python-version lets any Python fetch them).
COLLECTIONS=(ansible/posix community/general community/docker
             community/library_inventory_filtering_v1 community/crypto
             ansible/utils kubernetes/core)
MARIADB_BUNDLE_VERSION=14.5.0
COLL_ROOT="$VENV/collections/ansible_collections"

log() { printf '[setup-venv %s %(%H:%M:%S)T] %s\n' "$profile" -1 "$*"; }

stamp_of() { cat "$REQUIREMENTS" "$0" | sha256sum | cut -c1-16; }

pick_python() {
  local candidate name
  [ -z "${PYTHON:-}" ] || { echo "$PYTHON"; return; }
  # On PATH, else a pyenv installation's (its shims answer only for the selected version).
  for name in "${PYTHONS[@]}"; do
    for candidate in "$name" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/"$name"; do
      if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import venv' 2>/dev/null; then
        echo "$candidate"; return
      fi
    done
  done
  echo "no Python for the $profile profile: tried ${PYTHONS[*]} (set PYTHON=...)" >&2
  exit 2
}

# The bundled collections a wheel holds, extracted under $2/ansible_collections.
extract_bundle() {
  "$VENV/bin/python" - "$@" <<'PY'
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
}

# A collection artifact (what `ansible-galaxy collection build` makes and Galaxy serves: the
# collection's files with MANIFEST.json and FILES.json at the top) of each bundled copy. The
# bundle leaves out files its FILES.json lists (tests/), so FILES.json is written anew for the
# files that are there, and MANIFEST.json's checksum of it with it.
make_artifacts() {
  rm -rf "$1"
  mkdir -p "$1"
  "$VENV/bin/python" - "$1" "$COLL_ROOT"/*/*/ <<'PY'
import hashlib, io, json, os, sys, tarfile

def sha256(data):
    return hashlib.sha256(data).hexdigest()

def add_bytes(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    tar.addfile(info, io.BytesIO(data))

dest, *dirs = sys.argv[1:]
for path in dirs:
    if not os.path.isfile(os.path.join(path, "MANIFEST.json")):
        continue
    with open(os.path.join(path, "MANIFEST.json"), encoding="utf-8") as handle:
        manifest = json.load(handle)
    info = manifest["collection_info"]
    entries = [{"name": ".", "ftype": "dir", "chksum_type": None, "chksum_sha256": None, "format": 1}]
    files = []
    for top, subdirs, names in os.walk(path):
        subdirs.sort()
        rel_top = os.path.relpath(top, path)
        for sub in subdirs:
            rel = os.path.normpath(os.path.join(rel_top, sub))
            entries.append({"name": rel, "ftype": "dir", "chksum_type": None, "chksum_sha256": None, "format": 1})
        for name in sorted(names):
            rel = os.path.normpath(os.path.join(rel_top, name))
            if rel in ("MANIFEST.json", "FILES.json"):
                continue
            with open(os.path.join(top, name), "rb") as handle:
                data = handle.read()
            files.append((rel, data))
            entries.append({"name": rel, "ftype": "file", "chksum_type": "sha256", "chksum_sha256": sha256(data), "format": 1})
    files_json = json.dumps({"files": entries, "format": 1}, indent=4).encode()
    manifest["file_manifest_file"] = {"name": "FILES.json", "ftype": "file", "chksum_type": "sha256",
                                      "chksum_sha256": sha256(files_json), "format": 1}
    name = "%s-%s-%s.tar.gz" % (info["namespace"], info["name"], info["version"])
    with tarfile.open(os.path.join(dest, name), "w:gz") as tar:
        add_bytes(tar, "MANIFEST.json", json.dumps(manifest, indent=4).encode())
        add_bytes(tar, "FILES.json", files_json)
        for entry in entries[1:]:
            if entry["ftype"] == "dir":
                member = tarfile.TarInfo(entry["name"])
                member.type, member.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(member)
        for rel, data in files:
            add_bytes(tar, rel, data)
PY
}

if [ ! -x "$VENV/bin/python" ]; then
  python=$(pick_python)
  log "creating $VENV with $python"
  "$python" -m venv "$VENV"
fi

if [ "$(cat "$VENV/.gpc-stamp" 2>/dev/null)" != "$(stamp_of)" ]; then
  log "installing pinned tooling"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q -r "$REQUIREMENTS" 2> >(grep -v "^WARNING: Location .file:" >&2)

  log "installing collections from the ansible==$ANSIBLE_BUNDLE_VERSION bundle"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for version in $(printf '%s\n' "$ANSIBLE_BUNDLE_VERSION" "$MARIADB_BUNDLE_VERSION" | sort -u); do
    "$VENV/bin/pip" download -q --no-deps 2> >(grep -v "^WARNING: Location .file:" >&2) \
      --only-binary=:all: --python-version 3.12 -d "$tmp" "ansible==$version"
  done
  rm -rf "$VENV/collections"
  mkdir -p "$COLL_ROOT"
  extract_bundle "$tmp/ansible-$ANSIBLE_BUNDLE_VERSION-py3-none-any.whl" "$VENV/collections" "${COLLECTIONS[@]}"
  extract_bundle "$tmp/ansible-$MARIADB_BUNDLE_VERSION-py3-none-any.whl" "$VENV/collections" ansible/mariadb
  make_artifacts "$VENV/collection-artifacts"
  stamp_of >"$VENV/.gpc-stamp"
fi

# This checkout is gpucluster.core.
mkdir -p "$COLL_ROOT/gpucluster"
ln -sfn "$ROOT" "$COLL_ROOT/gpucluster/core"

core=$("$VENV/bin/ansible" --version)
log "ready: source $VENV/bin/activate (${core%%$'\n'*}; collections in $VENV/collections)"
