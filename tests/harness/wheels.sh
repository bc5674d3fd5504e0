#!/usr/bin/env bash
# Put torch's CPU wheel and its dependencies into a folder the test nodes install from with
# pip --no-index --find-links (as an air-gapped site's wheel folder). This machine's pip
# configuration names a find-links folder that holds the CPU wheel (../shared/TESTBED.md); a
# plain index would pull the CUDA build. Prints "downloaded" when it fetched anything.
#   tests/harness/wheels.sh /var/tmp/gpc-wheels
set -euo pipefail
dest=${1:?usage: $0 DIR}
mkdir -p "$dest"
if compgen -G "$dest/torch-*+cpu-*.whl" >/dev/null && [ -f "$dest/.complete" ]; then
  exit 0
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
"$ROOT/.venv/bin/python" -m pip download --quiet --dest "$dest" --only-binary=:all: \
  --python-version 3.11 --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux_2_17_x86_64 --platform any 'torch==2.13.0+cpu'
touch "$dest/.complete"
echo downloaded
