#!/usr/bin/env bash
# Build the Kubernetes v1.20.2 node and control-plane binaries offline, from Debian bookworm's
# own source package (no Kubernetes server binary or image is reachable from the test machines;
# ../shared/K8S-TESTBED.md has the facts), plus gpc-crictl, the small CRI client kubeadm 1.20
# needs (cri-tools is in no reachable repository), gpc-pause for the pause image and gpc-device-plugin,
# the test double of NVIDIA's device plugin. Cached: a second run with the same recipe
# prints the cache folder at once.
#   tests/harness/k8s/build-kubernetes.sh        # last stdout line: the folder holding bin/
# GPC_K8S_CACHE overrides the cache root (default /var/cache/gpc-k8s).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
VERSION=v1.20.2
CACHE_ROOT=${GPC_K8S_CACHE:-/var/cache/gpc-k8s}
recipe() { cat "$0" "$HERE/crictl/main.go" "$HERE/pause/main.go" "$HERE/device-plugin/main.go"; }
STAMP=$(recipe | sha256sum | cut -c1-12)
OUT="$CACHE_ROOT/$VERSION-$STAMP"
# kube-proxy is not built: the test nodes skip its addon (its image would need iptables inside).
BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubeadm kubelet kubectl)

log() { printf '[build-kubernetes %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

if [ -f "$OUT/.complete" ]; then
  log "cached: $OUT"
  echo "$OUT"
  exit 0
fi

W="$CACHE_ROOT/work"
mkdir -p "$W/lists/partial" "$W/debs"
cd "$W"
# From the Debian mirror this machine's apt uses (../debian-mirror.sh; GPC_DEBIAN_MIRROR and
# GPC_DEBIAN_SECURITY_MIRROR override it; deb.debian.org only when none is found).
# shellcheck source=tests/harness/debian-mirror.sh
source "$HERE/../debian-mirror.sh"
DEBIAN_MIRROR=$(gpc_debian_mirror archive)
DEBIAN_SECURITY_MIRROR=$(gpc_debian_mirror security)
cat > src.list <<L
deb-src $DEBIAN_MIRROR bookworm main
deb-src $DEBIAN_MIRROR bookworm-updates main
deb-src $DEBIAN_SECURITY_MIRROR bookworm-security main
deb $DEBIAN_MIRROR bookworm main
L
APT=(-o Dir::Etc::sourcelist="$W/src.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$W/lists"
     -o APT::Get::List-Cleanup=0 -o Dir::Cache::archives="$W/debs")
if ! command -v dpkg-source >/dev/null || ! command -v make >/dev/null; then
  log "installing dpkg-dev and make"
  apt-get install -y -qq --no-install-recommends dpkg-dev make >/dev/null
fi
log "apt indexes for the source package"
apt-get "${APT[@]}" update -qq
if [ ! -d kubernetes-src ]; then
  log "fetching Debian's kubernetes source package"
  apt-get "${APT[@]}" source --download-only kubernetes -qq
  dpkg-source -x kubernetes_*.dsc kubernetes-src >/dev/null
fi
if [ ! -d root/usr/lib/go-1.19 ]; then
  log "fetching Go 1.19 and the reflect2 / json-iterator sources"
  (cd debs && apt-get "${APT[@]}" download -qq golang-1.19-go golang-1.19-src \
     golang-github-modern-go-reflect2-dev golang-github-json-iterator-go-dev)
  for d in debs/*.deb; do dpkg-deb -x "$d" root; done
fi
export GOROOT=$W/root/usr/lib/go-1.19 PATH=$W/root/usr/lib/go-1.19/bin:$PATH
S=$W/kubernetes-src
# Go 1.19 crashes the vendored reflect2 1.0.1 at run time: use Debian's 1.0.2 and its json-iterator.
if [ ! -f "$S/.gpc-vendor-replaced" ]; then
  rm -rf "$S/vendor/github.com/modern-go/reflect2" "$S/vendor/github.com/json-iterator/go"
  cp -a root/usr/share/gocode/src/github.com/modern-go/reflect2 "$S/vendor/github.com/modern-go/reflect2"
  cp -a root/usr/share/gocode/src/github.com/json-iterator/go "$S/vendor/github.com/json-iterator/go"
  touch "$S/.gpc-vendor-replaced"
fi
mkdir -p gopath/src/k8s.io && ln -sfn "$S" gopath/src/k8s.io/kubernetes
export GOPATH=$W/gopath GO111MODULE=off CGO_ENABLED=0 GOFLAGS='' GOCACHE=$W/gocache
cd gopath/src/k8s.io/kubernetes
[ -f pkg/generated/openapi/zz_generated.openapi.go ] || { log "make gen_openapi"; make gen_openapi >/dev/null; }
# The version goes into both packages that carry it, as Kubernetes' hack/lib/version.sh does (the API
# server's /version, which Helm's kubeVersion check reads, comes from client-go's).
LD="-s -w"
for pkg in k8s.io/kubernetes/vendor/k8s.io/component-base/version k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version; do
  LD="$LD -X $pkg.gitVersion=$VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=20 -X $pkg.gitTreeState=clean"
done
NEW="$OUT.new"
rm -rf "$NEW" && mkdir -p "$NEW/bin"
for c in "${BINARIES[@]}"; do
  log "go build $c"
  go build -tags selinux,notest -ldflags "$LD" -o "$NEW/bin/$c" "./cmd/$c"
done
# gpc-crictl, gpc-pause and gpc-device-plugin (test doubles): built inside the Kubernetes tree, against
# its vendored CRI and device plugin APIs and gRPC.
for tool in crictl pause device-plugin; do
  mkdir -p "cmd/gpc-$tool"
  cp "$HERE/$tool/main.go" "cmd/gpc-$tool/main.go"
  log "go build gpc-$tool"
  go build -ldflags "-s -w" -o "$NEW/bin/$tool" "./cmd/gpc-$tool"
done
rm -rf "$OUT" && mv "$NEW" "$OUT"
touch "$OUT/.complete"
log "built: $(cd "$OUT/bin" && echo *)"
echo "$OUT"
