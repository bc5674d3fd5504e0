#!/usr/bin/env bash
# Prepare a bare Debian/Ubuntu machine to run the test nodes:
#   1. install the Docker engine and debootstrap from the distribution's mirror,
#   2. start dockerd when no init system manages it, and wait until it answers,
#   3. build the systemd node images from the Debian mirror, one per release the
#      tests run on: gpucluster/node-debian12 (bookworm) and gpucluster/node-debian13
#      (trixie); each is reused while it exists and its recipe (image_recipe) is unchanged.
# GPC_NODE_SUITES="bookworm" builds only the Debian 12 image.
# Idempotent: each step is skipped when already done.
# The node images come from the Debian mirror this machine's apt already uses (debian-mirror.sh:
# /etc/apt/sources.list.d/*.sources, /etc/apt/sources.list; deb.debian.org only when none is
# found); GPC_DEBIAN_MIRROR overrides it.
set -euo pipefail

# shellcheck source=tests/harness/debian-mirror.sh
source "$(dirname "$0")/debian-mirror.sh"
DEBIAN_MIRROR=$(gpc_debian_mirror archive)
NODE_SUITES="${GPC_NODE_SUITES:-bookworm trixie}"
# Anything that changes an image goes here: its hash is the image tag.
image_recipe() {
  printf '%s' "suite=$1 variant=minbase mirror=${DEBIAN_MIRROR}
include=systemd,systemd-sysv,python3,python3-apt,dbus,iproute2,procps,sudo,ca-certificates,gnupg,iputils-ping,netbase,libpam-systemd,locales
cmd=/lib/systemd/systemd"
}

log() { printf '[bootstrap %(%H:%M:%S)T] %s\n' -1 "$*"; }

install_packages() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  command -v rsync >/dev/null 2>&1 || missing+=(rsync)
  command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
  command -v gpg >/dev/null 2>&1 || missing+=(gnupg)  # signs the test-double apt mirror (tests/harness/mirror)
  command -v apt-ftparchive >/dev/null 2>&1 || missing+=(apt-utils)  # writes the test mirror's Packages/Release
  if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

start_docker() {
  if docker info >/dev/null 2>&1; then
    return
  fi
  if [ -d /run/systemd/system ]; then
    log "starting docker with systemd"
    systemctl start docker
  else
    # No init system manages services here: run dockerd in its own session.
    log "starting dockerd (no systemd on this machine)"
    setsid dockerd </dev/null >/var/log/dockerd.log 2>&1 &
  fi
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && { log "docker is up"; return; }
    sleep 1
  done
  log "dockerd did not answer within 60 s; last lines of its log:"
  tail -n 20 /var/log/dockerd.log >&2 || true
  exit 1
}

build_image() {
  local suite=$1 repo tag image rootfs recipe
  case "$suite" in
    bookworm) repo=gpucluster/node-debian12 ;;
    trixie) repo=gpucluster/node-debian13 ;;
    *) log "no node image is known for suite $suite (bookworm, trixie)"; exit 2 ;;
  esac
  recipe=$(image_recipe "$suite")
  tag=$(printf '%s' "$recipe" | sha256sum | cut -c1-12)
  image="${repo}:${tag}"
  if docker image inspect "$image" >/dev/null 2>&1; then
    log "node image $image is current"
  else
    log "building node image $image ($suite) from $DEBIAN_MIRROR (takes 1-2 minutes)"
    rootfs=$(mktemp -d /var/tmp/gpc-rootfs.XXXXXX)
    trap 'rm -rf "$rootfs"' RETURN
    local include
    include=$(printf '%s\n' "$recipe" | sed -n 's/^include=//p')
    debootstrap --variant=minbase --include="$include" "$suite" "$rootfs" "$DEBIAN_MIRROR" >"/var/log/gpc-debootstrap-$suite.log" 2>&1 \
      || { tail -n 30 "/var/log/gpc-debootstrap-$suite.log" >&2; exit 1; }
    # Units that make no sense in a container node and slow boot.
    rm -f "$rootfs"/etc/systemd/system/*.wants/systemd-timesyncd.service
    # Test nodes use the same mirror as the machine that built them.
    echo "deb $DEBIAN_MIRROR $suite main" >"$rootfs/etc/apt/sources.list"
    echo "deb $DEBIAN_MIRROR $suite-updates main" >>"$rootfs/etc/apt/sources.list"
    : >"$rootfs/etc/machine-id"
    tar -C "$rootfs" -c . | docker import -c 'CMD ["/lib/systemd/systemd"]' - "$image" >/dev/null
  fi
  docker tag "$image" "${repo}:latest"
  log "ready: image ${repo}:latest ($suite)"
}

install_packages
start_docker
for suite in $NODE_SUITES; do
  build_image "$suite"
done
