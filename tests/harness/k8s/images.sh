#!/usr/bin/env bash
# The container images of the kubernetes scenario, built locally and saved as docker archives that
# `ctr -n k8s.io images import` loads on a node (no registry is reachable from the test machines),
# cached beside the Kubernetes build. The last stdout line is the archive's path.
#   tests/harness/k8s/images.sh BUILD_DIR
#       the images kubeadm 1.20 runs (control plane, etcd, pause), from the binaries of
#       build-kubernetes.sh and Debian's etcd-server, tagged as kubeadm names them under registry.k8s.io
#   tests/harness/k8s/images.sh BUILD_DIR gpu-check
#       the validation's GPU pod image (test tooling only): Debian's static busybox and the nvidia-smi
#       test double of gpu-check/ with the GPUs of the recorded capture the GPU node's own double prints
set -euo pipefail
BUILD=${1:?usage: images.sh BUILD_DIR [gpu-check] (BUILD_DIR: the last line of build-kubernetes.sh)}
WHAT=${2:-kubeadm}
HERE=$(cd "$(dirname "$0")" && pwd)
CAPTURE=$HERE/../doubles/8x-tesla-v100s-pcie-32gb-driver460-v11.xml
REPO=registry.k8s.io
K8S=v1.20.2
case $WHAT in
  kubeadm) OUT="$BUILD/images.tar" ;;
  gpu-check) ;;
  *) echo "images.sh: unknown image set $WHAT (kubeadm, gpu-check)" >&2; exit 2 ;;
esac
log() { printf '[k8s-images %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
# shellcheck source=tests/harness/scratch-image.sh
source "$HERE/../scratch-image.sh"
gpc_image_workdir
if [ "$WHAT" = gpu-check ]; then
  python3 - "$CAPTURE" >"$W/gpus" <<'PY'
import sys
import xml.etree.ElementTree as ET
for gpu in ET.parse(sys.argv[1]).getroot().findall("gpu"):
    print("%s|%s|%s" % (gpu.findtext("minor_number").strip(), gpu.findtext("product_name").strip(),
                        gpu.findtext("uuid").strip()))
PY
  bash "$HERE/../busybox-image.sh" "$BUILD" gpu-check gpc-test.local/gpu-check:v1 \
    "$HERE/gpu-check/nvidia-smi:/usr/bin/nvidia-smi:0755" "$W/gpus:/usr/share/gpc-test-double/gpus"
  exit
fi
gpc_image_cached "$OUT"
image() {  # image NAME:TAG BINARY... : a scratch image with the binaries in /usr/local/bin
  local tag=$1 ctx
  shift
  ctx="$W/ctx-${tag//[:\/]/-}"
  gpc_image_context "$ctx" /usr/local/bin:/usr/bin:/bin
  mkdir -p "$ctx/rootfs/usr/local/bin"
  for bin in "$@"; do cp -a "$bin" "$ctx/rootfs/usr/local/bin/"; done
  docker build -q -t "$REPO/$tag" "$ctx" >/dev/null 2>&1
  log "built $REPO/$tag"
}
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  image "$c:$K8S" "$BUILD/bin/$c"
done
# pause: entrypoint /pause, as the real image has it.
image "pause:3.2" "$BUILD/bin/pause"
ctx="$W/ctx-pause-3.2"
printf 'FROM %s/pause:3.2\nCOPY rootfs/usr/local/bin/pause /pause\nENTRYPOINT ["/pause"]\n' "$REPO" > "$ctx/Dockerfile"
docker build -q -t "$REPO/pause:3.2" "$ctx" >/dev/null 2>&1
# etcd: Debian bookworm's etcd-server (3.4.23), dynamically linked: its libraries go in too.
(cd "$W" && apt-get download -qq etcd-server 2>/dev/null && dpkg-deb -x etcd-server_*.deb etcd)
ctx="$W/ctx-etcd"
mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/var/lib/etcd" "$ctx/rootfs/tmp"
cp -a "$W/etcd/usr/bin/etcd" "$ctx/rootfs/usr/local/bin/"
for lib in $(ldd "$W/etcd/usr/bin/etcd" | grep -o '/[^ ]*'); do
  mkdir -p "$ctx/rootfs$(dirname "$lib")"
  cp -L "$lib" "$ctx/rootfs$lib"
done
printf 'FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/local/bin:/usr/bin:/bin\n' > "$ctx/Dockerfile"
docker build -q -t "$REPO/etcd:3.4.13-0" "$ctx" >/dev/null 2>&1
log "built $REPO/etcd:3.4.13-0 (etcd $("$W/etcd/usr/bin/etcd" --version | head -1))"
docker save -o "$OUT.new" "$REPO/kube-apiserver:$K8S" "$REPO/kube-controller-manager:$K8S" \
  "$REPO/kube-scheduler:$K8S" "$REPO/pause:3.2" "$REPO/etcd:3.4.13-0"
mv "$OUT.new" "$OUT"
log "saved $(du -h "$OUT" | cut -f1) to $OUT"
echo "$OUT"
