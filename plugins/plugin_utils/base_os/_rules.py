# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base_os role's input rules (controller side, pure, no Ansible imports).

The hosts table (networks and every host's addresses) is checked by the cluster_hosts
filter (plugins/filter/base_os.py); ``base_os_errors`` checks the rest: the
inventory groups, and each host's values that end up in a config file or a command line.
``input_errors`` is the entry the common input check calls (plugins/plugin_utils/common/_input_rules.py).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import (
    Errors, RoleInput, abs_path, cidr_with_prefix, for_hosts, hostname, int_range, ip_address, ip_network, is_int, one_line, port,
    port_range, posix_name, token,
)

_FIREWALL_RE = re.compile(r"^([0-9]+(?:-[0-9]+)?)/(tcp|udp)$")
_SYSCTL_KEY_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.*/-]*$")
_TARGET_RE = re.compile(r"^[A-Za-z0-9@_.:-]+[.]target$")
_PACKAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+._:~=*-]*$")


def firewall_port(value: Any) -> str | None:
    """``PORT/PROTO`` or ``FIRST-LAST/PROTO`` with proto tcp or udp."""
    match = _FIREWALL_RE.match(value) if isinstance(value, str) else None
    if not match:
        return "must be PORT/PROTO or FIRST-LAST/PROTO with proto tcp or udp, e.g. 8080/tcp (got %r)" % (value,)
    ports = match.group(1)
    return port_range(ports) if "-" in ports else port(int(ports))


def _limit(value: Any, high: int, unlimited: bool) -> str | None:
    if unlimited and value == "unlimited":
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    reason = int_range(value, 1, high)
    return reason if not unlimited or reason is None else reason + " or 'unlimited'"


def _check_host(errors: Errors, v: Mapping[str, Any]) -> None:
    if "base_os_hostname" in v:
        errors.check("base_os_hostname", hostname(v["base_os_hostname"]))
    if "base_os_admin_user" in v:
        errors.check("base_os_admin_user", posix_name(v["base_os_admin_user"]))
    if "base_os_admin_user_shell" in v:
        errors.check("base_os_admin_user_shell", abs_path(v["base_os_admin_user_shell"]))
    for var in ("base_os_sysctl_defaults", "base_os_sysctl"):
        for key, value in errors.mapping_items(var, v.get(var) or {}, "must map sysctl keys to values"):
            if not isinstance(key, str) or not _SYSCTL_KEY_RE.match(key):
                errors.add(var, "key %r is not a sysctl key such as net.core.rmem_max" % (key,))
            elif value is None:
                continue  # null drops a key of base_os_sysctl_defaults
            elif isinstance(value, (dict, list)) or one_line(str(value)) or str(value).strip() == "":
                errors.add("%s[%s]" % (var, key), "must be a number or text on one line (got %r)" % (value,))
    for var, where, pattern in (
            ("base_os_sysctl_file", "/etc/sysctl.d/<name>.conf", r"^/etc/sysctl[.]d/[^/]+[.]conf$"),
            ("base_os_limits_file", "/etc/security/limits.d/<name>.conf", r"^/etc/security/limits[.]d/[^/]+[.]conf$")):
        if var in v and not (isinstance(v[var], str) and re.match(pattern, v[var]) and not abs_path(v[var])):
            errors.add(var, "must be %s, the only files read there (got %r)" % (where, v[var]))
    for index, server in enumerate(v.get("base_os_time_servers") or []):
        if ip_address(server) and hostname(server):
            errors.add("base_os_time_servers[%d]" % index, "must be a host name or an IP address (got %r)" % (server,))
    if "base_os_time_local_stratum" in v:
        errors.check("base_os_time_local_stratum", int_range(v["base_os_time_local_stratum"], 1, 15))
    for index, network in enumerate(v.get("base_os_time_allow") or []):
        if ip_network(network) and ip_address(network):
            errors.add("base_os_time_allow[%d]" % index,
                       "must be a network in CIDR notation or an address (got %r)" % (network,))
    if "base_os_limits_memlock" in v:
        errors.check("base_os_limits_memlock", _limit(v["base_os_limits_memlock"], 2 ** 63 - 1, True))
    if "base_os_limits_nofile" in v:
        errors.check("base_os_limits_nofile", _limit(v["base_os_limits_nofile"], 1073741816, False))
    if "base_os_default_target" in v and not (isinstance(v["base_os_default_target"], str)
                                              and _TARGET_RE.match(v["base_os_default_target"])):
        errors.add("base_os_default_target", "must be a systemd target such as multi-user.target (got %r)"
                   % (v["base_os_default_target"],))
    for var in ("base_os_firewall_extra_ports", "base_os_firewall_public_ports"):
        for index, spec in enumerate(v.get(var) or []):
            errors.check("%s[%d]" % (var, index), firewall_port(spec))
    for index, network in enumerate(v.get("base_os_admin_networks") or []):
        errors.check("base_os_admin_networks[%d]" % index, cidr_with_prefix(network))
    options = v.get("base_os_chrony_daemon_options")
    # Written as NAME="<options>" into chrony's environment file (null keeps the distribution's).
    if options is not None and errors.check("base_os_chrony_daemon_options", one_line(options)) \
            and re.search(r"[\"'\\$`]", options):
        errors.add("base_os_chrony_daemon_options", "must not hold quotes, \\, $ or ` (it is written inside double"
                   " quotes into chrony's environment file) (got %r)" % (options,))
    for index, entry in enumerate(v.get("base_os_limits_extra") or []):
        # One line of limits.conf: <domain> <type> <item> <value>, each one word.
        where = "base_os_limits_extra[%d]" % index
        if not isinstance(entry, Mapping):
            errors.add(where, "must be a dict with domain, type, item and value (got %r)" % (entry,))
            continue
        for key in ("domain", "type", "item", "value"):
            value = entry.get(key)
            errors.check("%s.%s" % (where, key), token(str(value) if is_int(value) else value))
    for index, package in enumerate(v.get("base_os_packages_extra") or []):
        if not isinstance(package, str) or not _PACKAGE_RE.match(package):
            errors.add("base_os_packages_extra[%d]" % index, "must be a package name (got %r)" % (package,))


def base_os_errors(hostvars: Mapping[str, Mapping[str, Any]], hosts: Iterable[str],
                   groups: Mapping[str, List[str]], cluster_group: str, head_group: str) -> List[str]:
    """Every error of the play's ``hosts``: the groups first, then each host's values."""
    hosts = list(hosts)
    out: List[str] = []
    members = groups.get(cluster_group) or []
    heads = groups.get(head_group) or []
    if not members:
        out.append("base_os_cluster_group: inventory group '%s' must exist and hold every node" % cluster_group)
    if not heads:
        out.append("base_os_head_group: inventory group '%s' must exist and hold the head node" % head_group)
    elif members and heads[0] not in members:
        out.append("base_os_head_group: the first host of '%s' (%s) must be in base_os_cluster_group '%s'"
                   % (head_group, heads[0], cluster_group))
    if members:
        for host in hosts:
            if host not in members:
                out.append("host '%s': base_os_cluster_group: the host must be in inventory group '%s'"
                           % (host, cluster_group))
    out.extend(for_hosts(hostvars, hosts, _check_host))
    return out


def input_errors(given: RoleInput) -> List[str]:
    """The rules over the play's hosts (``ansible_play_hosts``), each with its values of the role's
    options; the groups named by the play's values."""
    return base_os_errors(given.hosts, list(given.hosts), given.groups,
                          given.shared.get("base_os_cluster_group", "cluster"), given.shared.get("base_os_head_group", "head"))
