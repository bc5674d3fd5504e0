# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nfs role's input rules (controller side, pure, no Ansible imports).

``nfs_errors`` takes every inventory host's nfs variables and the hosts of the play, and
returns every error at once: each host's exports, mounts, groups and server settings, and
across hosts that every mount's server is an inventory host (or marked external) that
exports the path over a version it serves.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Dict, Iterable, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RoleInput, RuleError, int_range

_PATH_RE = re.compile(r"^(/[^/\s]+)+$")
_DOTS_RE = re.compile(r"(^|/)[.]{1,2}(/|$)")
_MODE_RE = re.compile(r"^[0-7]{3,4}$")
_OPTION_RE = re.compile(r"^[^\s(),]+$")
_SRC_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?:(/|(/[^/\s]+)+)$")
_NAME_CLIENT_RE = re.compile(r"^(@[A-Za-z0-9._-]+|[A-Za-z0-9*?\[\]]([A-Za-z0-9*?\[\]._-]*[A-Za-z0-9*?\[\]])?)$")
_IPV4ISH_RE = re.compile(r"^[0-9.]+(/[0-9]*)?$")
_EXPORTS_FILE_RE = re.compile(r"^/etc/exports[.]d/[^/]+[.]exports$")
_DOMAIN_RE = re.compile(r"^[^\s=]+$")

PATH_REASON = "the path must be absolute, with no trailing slash, no empty, . or .. parts and no spaces"
MOUNT_POINT_REASON = "the mount point must be absolute, with no trailing slash, no empty, . or .. parts and no spaces"


def _good_path(value: Any) -> bool:
    return isinstance(value, str) and bool(_PATH_RE.match(value)) and not _DOTS_RE.search(value)


def client_ok(client: str) -> bool:
    """A CIDR with no host bits set, an IPv4 or IPv6 address, a host name or wildcard, or an @netgroup."""
    if _IPV4ISH_RE.match(client) or ":" in client:
        address, sep, prefix = client.partition("/")
        if sep and not prefix.isdigit():
            return False
        try:
            ipaddress.ip_network(client, strict=True)
        except ValueError:
            return False
        # ipaddress accepts leading zeros nowhere and integers as IPv4; require the written form.
        return ":" in address or address.count(".") == 3
    return bool(_NAME_CLIENT_RE.match(client)) and ".." not in client


def _mode_ok(value: Any) -> bool:
    return bool(_MODE_RE.match(str(value)))


def _as_list(value: Any, var: str) -> List[Any]:
    if not isinstance(value, (list, tuple)):
        raise RuleError("%s must be a list (got %r)" % (var, value))
    return list(value)


def host_errors(host: str, v: Mapping[str, Any]) -> List[str]:
    """Every error in one host's own nfs variables."""
    errors: List[str] = []
    pre = "host '%s': " % host
    exports = _as_list(v.get("nfs_exports", []), "nfs_exports")
    mounts = _as_list(v.get("nfs_mounts", []), "nfs_mounts")
    groups = _as_list(v.get("nfs_groups", []), "nfs_groups")

    seen: List[str] = []
    for e in exports:
        path = e.get("path")
        name = "%snfs_exports '%s'" % (pre, path)
        if not _good_path(path):
            errors.append("%s: %s" % (name, PATH_REASON))
        if path in seen:
            errors.append("%s is listed twice" % name)
        seen.append(path)
        clients = [str(c) for c in e.get("clients") or []]
        if not clients:
            errors.append("%s has no clients" % name)
        for client in clients:
            if not client_ok(client):
                errors.append("%s: client '%s' is not a CIDR with no host bits set (10.0.0.0/24), an address,"
                              " a host name or wildcard, or an @netgroup" % (name, client))
        options = [str(o) for o in e.get("options", v.get("nfs_export_options", []))]
        for option in options:
            if not _OPTION_RE.match(option):
                errors.append("%s: option '%s' is not one exports option"
                              " (one per item, no spaces, commas or parentheses)" % (name, option))
        if "no_root_squash" in options and not v.get("nfs_allow_no_root_squash", False):
            errors.append("%s: no_root_squash makes root on every client root on the export;"
                          " set nfs_allow_no_root_squash: true to allow it" % name)
        if not _mode_ok(e.get("mode", "0755")):
            errors.append("%s: mode '%s' is not an octal mode such as '2775'"
                          " (quote it: unquoted 0755 is the number 493)" % (name, e.get("mode")))

    seen = []
    for m in mounts:
        src, path = m.get("src"), m.get("path")
        name = "%snfs_mounts '%s' on '%s'" % (pre, src, path)
        if not isinstance(src, str) or not _SRC_RE.match(src) or _DOTS_RE.search(src):
            errors.append("%s: src must be <server>:<absolute path>, for example master:/data/shared" % name)
        if not _good_path(path):
            errors.append("%s: %s" % (name, MOUNT_POINT_REASON))
        if path in seen:
            errors.append("%s: mount point '%s' is listed twice" % (name, path))
        seen.append(path)
        for option in (str(o) for o in m.get("options", v.get("nfs_mount_options", []))):
            if not _OPTION_RE.match(option):
                errors.append("%s: option '%s' is not one mount option"
                              " (one per item, no spaces, commas or parentheses)" % (name, option))
            elif re.match(r"^(nfs)?vers=", option):
                errors.append("%s: option '%s' sets the NFS version; set the mount's version instead" % (name, option))
        if not _mode_ok(m.get("mode", "0755")):
            errors.append("%s: mode '%s' is not an octal mode such as '0755'"
                          " (quote it: unquoted 0755 is the number 493)" % (name, m.get("mode")))

    if mounts:
        # x-systemd.mount-timeout=0 turns the timeout off (a dead server hangs the boot); idle 0 never unmounts.
        for var, low in (("nfs_mount_timeout", 1), ("nfs_mount_idle_timeout", 0)):
            if var in v:
                reason = int_range(v[var], low, 86400)
                if reason:
                    errors.append("%s%s: seconds, %s" % (pre, var, reason))
    names = [g.get("name") for g in groups]
    gids = [g.get("gid") for g in groups]
    if len(set(map(str, names))) != len(groups) or len(set(map(str, gids))) != len(groups):
        errors.append("%snfs_groups names and gids must be unique: %s"
                      % (pre, ", ".join("%s:%s" % (n, g) for n, g in zip(names, gids))))

    if exports:
        exports_file = v.get("nfs_exports_file", "")
        if not isinstance(exports_file, str) or not _EXPORTS_FILE_RE.match(exports_file):
            errors.append("%snfs_exports_file '%s' must be /etc/exports.d/<name>.exports"
                          " (exportfs reads no other file there)" % (pre, exports_file))
        ports = [v.get("nfs_server_mountd_port"), v.get("nfs_server_statd_port"), v.get("nfs_server_lockd_port")]
        if v.get("nfs_server_nfsv3", False):
            numbers = all(isinstance(p, int) and not isinstance(p, bool) for p in ports)
            if (not numbers or len(set(ports)) != 3 or min(ports) < 1 or max(ports) > 65535
                    or 111 in ports or 2049 in ports):
                errors.append("%snfs_server_mountd_port, nfs_server_statd_port and nfs_server_lockd_port must be"
                              " different ports from 1 to 65535, not 111 or 2049: %s"
                              % (pre, ", ".join(str(p) for p in ports)))
        for section, settings in (v.get("nfs_conf_settings") or {}).items():
            if not isinstance(settings, Mapping):
                errors.append("%snfs_conf_settings '%s' must map option names to values,"
                              " for example {nfsd: {threads: 32}}" % (pre, section))

    domain = v.get("nfs_idmapd_domain", "")
    if not isinstance(domain, str) or not _DOMAIN_RE.match(domain):
        errors.append("%snfs_idmapd_domain '%s' must be a domain name, the same on every node" % (pre, domain))
    return errors


def _exported(path: str, exported: Iterable[str]) -> bool:
    return any(path == p or p == "/" or path.startswith(p + "/") for p in exported)


def nfs_errors(hostvars: Mapping[str, Mapping[str, Any]], hosts: Iterable[str]) -> List[str]:
    """Every error of the play's ``hosts``; ``hostvars`` holds every inventory host's nfs variables."""
    errors: List[str] = []
    for host in hosts:
        v = hostvars.get(host, {})
        own = host_errors(host, v)
        errors.extend(own)
        for m in _as_list(v.get("nfs_mounts", []), "nfs_mounts"):
            src = m.get("src")
            if m.get("server_external", False) or not isinstance(src, str) or ":" not in src:
                continue
            server, path = src.split(":", 1)
            name = "host '%s': nfs_mounts '%s'" % (host, src)
            if server not in hostvars:
                errors.append("%s: server '%s' is not an inventory host"
                              " (for a server outside the inventory set server_external: true on the mount)"
                              % (name, server))
                continue
            served = hostvars[server]
            exported = [str(e.get("path")) for e in served.get("nfs_exports", []) or []]
            version = str(m.get("version", v.get("nfs_mount_version", "4.2")))
            if not _exported(path, exported):
                errors.append("%s: server '%s' does not export %s (its nfs_exports: %s)"
                              % (name, server, path, ", ".join(exported) if exported else "none"))
            elif version == "3" and not served.get("nfs_server_nfsv3", False):
                errors.append("%s: the mount uses NFSv3, but server '%s' has nfs_server_nfsv3: false"
                              % (name, server))
            elif server == host and m.get("path") != path:
                errors.append("%s: '%s' is the server, where the mount is skipped (the data is local),"
                              " so the mount point must be the exported path %s, not %s"
                              % (name, host, path, m.get("path")))
    return errors


def input_errors(given: RoleInput) -> List[str]:
    """The rules over the play's hosts (``ansible_play_hosts``); the values of every inventory host,
    for the mounts' servers."""
    return nfs_errors(given.hosts, given.play.hosts)


def conf_options(role: Mapping[str, Mapping[str, Any]],
                 settings: Mapping[str, Mapping[str, Any]]) -> List[Dict[str, str]]:
    """/etc/nfs.conf as ``{section, option, value}`` items, sorted: ``settings`` merged over ``role``.

    Booleans become ``y``/``n`` (nfs.conf's spelling); the items are set key by key, so the
    distribution's file and an admin's other settings stay.
    """
    merged: Dict[str, Dict[str, Any]] = {}
    for source in (role, settings):
        for section, options in (source or {}).items():
            if not isinstance(options, Mapping):
                raise RuleError("nfs_conf_settings '%s' must map option names to values" % section)
            merged.setdefault(str(section), {}).update({str(k): v for k, v in options.items()})
    out: List[Dict[str, str]] = []
    for section in sorted(merged):
        for option in sorted(merged[section]):
            value = merged[section][option]
            text = ("y" if value else "n") if isinstance(value, bool) else str(value)
            out.append({"section": section, "option": option, "value": text})
    return out
