#!/usr/bin/env bash
# What the harness scripts that build test images from scratch (busybox-image.sh, k8s/images.sh) share.
# Sourced after the script defines log (its own prefix on stderr).
#   gpc_image_cached ARCHIVE        when ARCHIVE exists: logs it, prints its path (the script's last
#                                   stdout line) and exits the script
#   gpc_image_workdir               W, a temporary folder removed when the script exits
#   gpc_image_context CTX PATH      CTX/rootfs with /tmp and an /etc/passwd of root, and CTX/Dockerfile:
#                                   FROM scratch, the rootfs copied in, ENV PATH=PATH

gpc_image_cached() {
  [ -f "$1" ] || return 0
  log "cached: $1"
  echo "$1"
  exit 0
}

gpc_image_workdir() {
  W=$(mktemp -d)
  trap 'rm -rf "$W"' EXIT
}

gpc_image_context() {
  mkdir -p "$1/rootfs/tmp" "$1/rootfs/etc"
  printf 'root:x:0:0:root:/root:/sbin/nologin\n' >"$1/rootfs/etc/passwd"
  printf 'FROM scratch\nCOPY rootfs/ /\nENV PATH=%s\n' "$2" >"$1/Dockerfile"
}
