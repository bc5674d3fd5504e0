#!/usr/bin/env bash
# A test image (test tooling only, never a role): Debian's static busybox (sh, cat) and the given
# files, from scratch, saved as a docker archive that `docker load` or `ctr images import` reads on a
# node (no registry is reachable from the test machines). Cached in OUT_DIR by the hash of its inputs.
#   tests/harness/busybox-image.sh OUT_DIR NAME TAG SOURCE:DEST[:MODE]... [-- LABEL]
# The last stdout line is the archive's path ($OUT_DIR/NAME-<hash>.tar).
set -euo pipefail
OUT_DIR=${1:?usage: busybox-image.sh OUT_DIR NAME TAG SOURCE:DEST[:MODE]... [-- LABEL]}
NAME=${2:?name}
TAG=${3:?tag}
shift 3
files=() label=""
while [ $# -gt 0 ]; do
  if [ "$1" = -- ]; then label=${2:-}; break; fi
  files+=("$1")
  shift
done
log() { printf '[busybox-image %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
LIB=$(dirname "$0")/scratch-image.sh
# shellcheck source=tests/harness/scratch-image.sh
source "$LIB"
mkdir -p "$OUT_DIR"
inputs() {  # what the image is made of: this script and its library, the tag and label, each file's place and content
  cat "$0" "$LIB"
  printf '%s\n' "$TAG" "$label"
  for spec in "${files[@]}"; do printf '%s\n' "${spec#*:}"; cat "${spec%%:*}"; done
}
OUT="$OUT_DIR/$NAME-$(inputs | sha256sum | cut -c1-12).tar"
gpc_image_cached "$OUT"
gpc_image_workdir
(cd "$W" && apt-get download -qq busybox-static 2>/dev/null && dpkg-deb -x busybox-static_*.deb bb)
gpc_image_context "$W/ctx" /usr/bin:/bin
root=$W/ctx/rootfs
mkdir -p "$root/bin"
cp -a "$W/bb/bin/busybox" "$root/bin/busybox"
for applet in sh cat; do ln -s busybox "$root/bin/$applet"; done
for spec in "${files[@]}"; do
  IFS=: read -r source dest mode <<<"$spec"
  mkdir -p "$root$(dirname "$dest")"
  cp "$source" "$root$dest"
  chmod "${mode:-0644}" "$root$dest"
done
[ -z "$label" ] || printf 'LABEL org.opencontainers.image.description="%s"\n' "$label" >>"$W/ctx/Dockerfile"
# (docker 20.10's legacy builder warns on stderr about BuildKit: shown only when the build fails)
if ! err=$(docker build -q -t "$TAG" "$W/ctx" 2>&1 >/dev/null); then
  printf '%s\n' "$err" >&2
  exit 1
fi
docker save -o "$OUT.new" "$TAG"
mv "$OUT.new" "$OUT"
log "built $TAG, saved to $OUT"
echo "$OUT"
