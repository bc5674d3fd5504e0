#!/usr/bin/env bash
# The image of the validation's GPU pod in the kubernetes scenario (test tooling only): Debian's
# static busybox and the nvidia-smi test double of gpu-check/ with the GPUs of the recorded capture
# the GPU node's own double prints, saved as a docker archive for `ctr -n k8s.io images import`
# (no registry is reachable from the test machines). Cached beside the Kubernetes build.
#   tests/harness/k8s/gpu-check-image.sh BUILD_DIR     # last stdout line: the archive's path
set -euo pipefail
BUILD=${1:?usage: gpu-check-image.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
CAPTURE=$HERE/../doubles/8x-tesla-v100s-pcie-32gb-driver460-v11.xml
TAG=gpc-test.local/gpu-check:v1
key=$(cat "$0" "$HERE/gpu-check/nvidia-smi" "$CAPTURE" | sha256sum | cut -c1-12)
OUT="$BUILD/gpu-check-$key.tar"
log() { printf '[k8s-gpu-check %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
if [ -f "$OUT" ]; then
  log "cached: $OUT"
  echo "$OUT"
  exit 0
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
(cd "$W" && apt-get download -qq busybox-static 2>/dev/null && dpkg-deb -x busybox-static_*.deb bb)
mkdir -p "$W/ctx/rootfs/bin" "$W/ctx/rootfs/usr/bin" "$W/ctx/rootfs/usr/share/gpc-test-double" "$W/ctx/rootfs/etc"
cp -a "$W/bb/bin/busybox" "$W/ctx/rootfs/bin/busybox"
ln -s busybox "$W/ctx/rootfs/bin/sh"
cp -a "$HERE/gpu-check/nvidia-smi" "$W/ctx/rootfs/usr/bin/nvidia-smi"
python3 - "$CAPTURE" >"$W/ctx/rootfs/usr/share/gpc-test-double/gpus" <<'PY'
import sys
import xml.etree.ElementTree as ET
for gpu in ET.parse(sys.argv[1]).getroot().findall("gpu"):
    print("%s|%s|%s" % (gpu.findtext("minor_number").strip(), gpu.findtext("product_name").strip(),
                        gpu.findtext("uuid").strip()))
PY
printf 'root:x:0:0:root:/root:/sbin/nologin\n' >"$W/ctx/rootfs/etc/passwd"
printf 'FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/bin:/bin\n' >"$W/ctx/Dockerfile"
docker build -q -t "$TAG" "$W/ctx" >/dev/null
docker save -o "$OUT.new" "$TAG"
mv "$OUT.new" "$OUT"
log "built $TAG ($(wc -l <"$W/ctx/rootfs/usr/share/gpc-test-double/gpus") GPUs), saved to $OUT"
echo "$OUT"
