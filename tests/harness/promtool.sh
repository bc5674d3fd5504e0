#!/usr/bin/env bash
# promtool and amtool from Debian's own packages (prometheus, prometheus-alertmanager), unpacked
# into a cache folder: no service is installed or started on this machine. Prints nothing but
# the tool's output; the first call downloads (apt-get download, the machine's Debian mirror).
#   tests/harness/promtool.sh promtool test rules FILE
#   tests/harness/promtool.sh amtool check-config FILE
set -euo pipefail
CACHE=${GPC_PROMTOOL_CACHE:-/var/tmp/gpc-promtool}
tool=$1
shift
if [ ! -x "$CACHE/usr/bin/promtool" ] || [ ! -x "$CACHE/usr/bin/amtool" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && apt-get download -q prometheus prometheus-alertmanager >/dev/null 2>&1) || {
    apt-get update -qq >/dev/null 2>&1
    (cd "$work" && apt-get download -q prometheus prometheus-alertmanager >/dev/null)
  }
  mkdir -p "$CACHE.new"
  for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$CACHE.new"; done
  rm -rf "$CACHE"
  mv "$CACHE.new" "$CACHE"
fi
exec "$CACHE/usr/bin/$tool" "$@"
