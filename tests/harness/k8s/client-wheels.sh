#!/usr/bin/env bash
# Put the Python Kubernetes client that kubernetes.core's modules need (the pins of
# plugins/plugin_utils/common/_kubernetes_client.py: kubernetes, jsonpatch) and their dependencies
# into a folder the Debian 12 test nodes install from with pip --no-index --find-links, as an
# air-gapped site's wheel folder (Debian 12's python3-kubernetes 22.6.0 is older than the 24.2.0
# kubernetes.core 6 needs). Wheels for the nodes' Python 3.11 on x86_64. Cached: a second run with
# the same pins does nothing. Prints "downloaded" when it fetched anything.
#   tests/harness/k8s/client-wheels.sh /var/tmp/gpc-k8s-mirror/repo/wheels
set -euo pipefail
dest=${1:?usage: $0 DIR}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PY="$ROOT/.venv/bin/python"
mapfile -t pins < <("$PY" - "$ROOT/.venv/collections" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._kubernetes_client import PIP_REQUIREMENTS
print("\n".join(PIP_REQUIREMENTS))
PY
)
stamp="$dest/.complete-$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-12)"
mkdir -p "$dest"
if [ -f "$stamp" ]; then
  exit 0
fi
"$PY" -m pip download --quiet --dest "$dest" --only-binary=:all: \
  --python-version 3.11 --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux_2_17_x86_64 --platform any "${pins[@]}"
touch "$stamp"
echo downloaded
