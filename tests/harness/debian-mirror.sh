#!/usr/bin/env bash
# The Debian mirror this machine's apt already uses, for the test harness (the node images of
# bootstrap-host.sh, the source packages of k8s/build-kubernetes.sh): CI machines and developers'
# machines reach their own mirror, not necessarily the public deb.debian.org.
#   source tests/harness/debian-mirror.sh
#   gpc_debian_mirror            # the archive (suites bookworm, trixie, ...): GPC_DEBIAN_MIRROR overrides
#   gpc_debian_mirror security   # the security archive (bookworm-security, ...): GPC_DEBIAN_SECURITY_MIRROR overrides
# Read from the enabled deb entries of /etc/apt/sources.list.d/*.sources (deb822), then
# /etc/apt/sources.list and /etc/apt/sources.list.d/*.list (one-line style): the first http(s) URI
# with a Debian release codename as suite (with -security for the security archive) and the main
# component. Falls back to http://deb.debian.org/debian (-security) only when none is found.
# GPC_APT_SOURCES_DIR (default /etc/apt) is for tests of this file.

# Debian's release codenames (not suite names such as "stable", which other vendors' repositories use).
GPC_DEBIAN_CODENAMES="buster bullseye bookworm trixie forky duke sid"

gpc_debian_mirror() {
  local kind=${1:-archive} etc=${GPC_APT_SOURCES_DIR:-/etc/apt} found="" file
  case "$kind" in
    archive) [ -n "${GPC_DEBIAN_MIRROR:-}" ] && { echo "$GPC_DEBIAN_MIRROR"; return; } ;;
    security) [ -n "${GPC_DEBIAN_SECURITY_MIRROR:-}" ] && { echo "$GPC_DEBIAN_SECURITY_MIRROR"; return; } ;;
    *) echo "gpc_debian_mirror: unknown kind $kind (archive, security)" >&2; return 2 ;;
  esac
  for file in "$etc"/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    found=$(awk -v kind="$kind" -v names="$GPC_DEBIAN_CODENAMES" "$_GPC_AWK_COMMON"'
      BEGIN { RS = "" }
      {
        n = split($0, lines, "\n"); delete f; key = ""
        for (i = 1; i <= n; i++) {
          line = lines[i]
          if (line ~ /^#/) continue
          if (line ~ /^[ \t]/ && key != "") { f[key] = f[key] " " line; continue }
          if (match(line, /^[A-Za-z0-9-]+:/)) {
            key = tolower(substr(line, 1, RLENGTH - 1)); f[key] = substr(line, RLENGTH + 1)
          }
        }
        if (tolower(f["enabled"]) ~ /no/) next
        if (!has_word(f["types"], "deb")) next
        if (!has_word(f["components"], "main")) next
        ns = split(f["suites"], suites, /[ \t]+/)
        ok = 0
        for (i = 1; i <= ns; i++) if (wanted_suite(suites[i])) ok = 1
        if (!ok) next
        nu = split(f["uris"], uris, /[ \t]+/)
        for (i = 1; i <= nu; i++) if (uris[i] ~ /^https?:\/\//) { sub(/\/+$/, "", uris[i]); print uris[i]; exit }
      }' "$file")
    [ -n "$found" ] && { echo "$found"; return; }
  done
  for file in "$etc"/sources.list "$etc"/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    found=$(awk -v kind="$kind" -v names="$GPC_DEBIAN_CODENAMES" "$_GPC_AWK_COMMON"'
      {
        sub(/#.*/, "")
        if ($1 != "deb") next
        i = 2
        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        uri = $i; suite = $(i + 1)
        main = 0
        for (j = i + 2; j <= NF; j++) if ($j == "main") main = 1
        if (uri ~ /^https?:\/\// && main && wanted_suite(suite)) { sub(/\/+$/, "", uri); print uri; exit }
      }' "$file")
    [ -n "$found" ] && { echo "$found"; return; }
  done
  case "$kind" in
    archive) echo "http://deb.debian.org/debian" ;;
    security) echo "http://deb.debian.org/debian-security" ;;
  esac
}

# awk helpers of both formats: a word in a space-separated field; a suite of the kind wanted.
_GPC_AWK_COMMON='
  function has_word(text, word,    n, words, i) {
    n = split(text, words, /[ \t]+/)
    for (i = 1; i <= n; i++) if (words[i] == word) return 1
    return 0
  }
  function wanted_suite(suite,    base) {
    sub(/\/+$/, "", suite)
    base = suite
    if (kind == "security") { if (!sub(/-security$/, "", base)) return 0 }
    else if (base ~ /-/) return 0
    return has_word(names, base)
  }
'
