# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ofed role's input rules (controller side, pure, no Ansible imports).

``ofed_errors`` takes every host's values of the role's variables (as that host sees them:
the defaults are templated per host) and returns every error at once:

- per host: the pinned DOCA-OFED or MLNX_OFED release and where it comes from (URLs,
  repository and archive labels, checksum, mlnxofedinstall options, work directory), the
  package names, the expected ports and minimum rate, the interface, network, address and MTU,
  and what goes into nccl.conf;
- the fabric's network shares no address with the host's other networks;
- across hosts: every managed address is an IP address inside its network (not the network
  or broadcast address of an IPv4 network of /30 or larger), no address belongs to two hosts,
  and a network has the same CIDR on every host.

Types and choices are the argument spec's job (meta/argument_specs.yml); these rules take
what it lets through. IP math is done with ``ipaddress``.
"""

from __future__ import annotations

import ipaddress
import math
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import (
    Errors, RoleInput, RuleError, abs_path, duplicates, int_range, ip_address, overlapping, url,
)

IPNetwork = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]

_DOCA_VERSION_RE = re.compile(r"^[0-9]+([.][0-9]+){1,3}$")
_MLNX_OFED_VERSION_RE = re.compile(r"^[0-9]+[.][0-9]+-[0-9]+([.][0-9]+)*$")
_CHECKSUM_RE = re.compile(r"^(sha256|sha384|sha512):([0-9A-Fa-f]+)$")
_CHECKSUM_DIGITS = {"sha256": 64, "sha384": 96, "sha512": 128}
# One mlnxofedinstall option: --name, --name=value or -x; no blanks or shell characters.
_INSTALL_FLAG_RE = re.compile(r"^--?[A-Za-z0-9][A-Za-z0-9_.,/:=+-]*$")
# A repository or archive label (ubuntu22.04, rhel9.2, x86_64, arm64-sbsa): one URL path segment.
_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# A package name as apt and dnf take it (with an optional =version / -version / glob).
_PACKAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+._:~=*-]*$")
_PORT_RE = re.compile(r"^([A-Za-z0-9_.-]+):([0-9]+)$")
# Linux interface names: at most 15 characters (IFNAMSIZ - 1); ":" names an ifupdown alias.
_INTERFACE_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,15}$")
_NCCL_KEY_RE = re.compile(r"^NCCL_[A-Z0-9_]+$")

HCA_PORT_MAX = 255
RATE_MAX_GBPS = 10000
MTU_MIN, MTU_MAX = 576, 65520
GID_INDEX_MAX = 255
_TRUE = ("true", "yes", "on", "1", "y", "t")


def _flag(value: Any) -> bool:
    """A boolean as Ansible reads one (the argument spec has already refused anything else)."""
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


def _unset(value: Any) -> bool:
    return value is None or value == ""


def _digits(value: Any) -> Any:
    """An integer written as a string ("9000") as the integer the argument spec made of it."""
    if isinstance(value, str) and re.match(r"^-?[0-9]+$", value.strip()):
        return int(value)
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _list(errors: Errors, var: str, value: Any) -> Optional[List[Any]]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        errors.add(var, "must be a list (got %r)" % (value,))
        return None
    return list(value)


def _directory(value: Any, kind: str) -> Optional[str]:
    """An absolute path other than /."""
    if value == "/":
        return "must be an absolute %s other than / (got '/')" % kind
    return abs_path(value)


def _label(value: Any, example: str) -> Optional[str]:
    if _unset(value) or (isinstance(value, str) and _LABEL_RE.match(value)):
        return None
    return ("must be empty (derived from the facts) or one label of letters, digits, ., _ and -, "
            "such as %s (got %r)" % (example, value))


def _packages(errors: Errors, var: str, value: Any) -> None:
    for index, name in enumerate(_list(errors, var, value) or []):
        if not isinstance(name, str) or not _PACKAGE_RE.match(name):
            errors.add("%s[%d]" % (var, index), "must be a package name (got %r)" % (name,))


def checksum(value: Any) -> Optional[str]:
    """``sha256:<64 hex digits>``, ``sha384:<96>`` or ``sha512:<128>``."""
    match = _CHECKSUM_RE.match(value) if isinstance(value, str) else None
    if not match or len(match.group(2)) != _CHECKSUM_DIGITS[match.group(1)]:
        return ("must be the archive's checksum as sha256:<64 hex digits> (or sha384:<96>, sha512:<128>),"
                " from NVIDIA's download page (got %r)" % (value,))
    return None


def _doca(errors: Errors, v: Mapping[str, Any]) -> None:
    version = v.get("ofed_doca_version")
    if not _DOCA_VERSION_RE.match(_text(version)):
        errors.add("ofed_doca_version", "must pin a DOCA release such as 2.9.1, as ofed_source is doca (got %r)"
                   % (version,))
    for var in ("ofed_doca_base_url", "ofed_doca_key_url"):
        errors.check(var, url(v.get(var)))
    errors.check("ofed_doca_distro", _label(v.get("ofed_doca_distro"), "ubuntu22.04 or rhel9.2"))
    errors.check("ofed_doca_arch", _label(v.get("ofed_doca_arch"), "x86_64 or arm64-sbsa"))
    packages = v.get("ofed_doca_packages")
    if isinstance(packages, (list, tuple)) and not packages:
        errors.add("ofed_doca_packages", "must name the DOCA-Host profile to install, such as doca-ofed (got [])")
    else:
        _packages(errors, "ofed_doca_packages", packages)


def _mlnx_ofed(errors: Errors, v: Mapping[str, Any]) -> None:
    version = v.get("ofed_mlnx_ofed_version")
    if not _MLNX_OFED_VERSION_RE.match(_text(version)):
        errors.add("ofed_mlnx_ofed_version", "must pin a release such as 24.10-1.1.4.0, as ofed_source is"
                   " mlnx_ofed (got %r)" % (version,))
    errors.check("ofed_mlnx_ofed_checksum", checksum(v.get("ofed_mlnx_ofed_checksum")))
    errors.check("ofed_mlnx_ofed_base_url", url(v.get("ofed_mlnx_ofed_base_url")))
    errors.check("ofed_mlnx_ofed_distro", _label(v.get("ofed_mlnx_ofed_distro"), "ubuntu22.04 or rhel9.4"))
    errors.check("ofed_mlnx_ofed_arch", _label(v.get("ofed_mlnx_ofed_arch"), "x86_64 or aarch64"))
    var = "ofed_mlnx_ofed_install_flags"
    for index, flag in enumerate(_list(errors, var, v.get(var)) or []):
        if not _INSTALL_FLAG_RE.match(_text(flag)):
            errors.add("%s[%d]" % (var, index), "must be one mlnxofedinstall option: one per item, starting with -,"
                       " no blanks or shell characters (got %r)" % (flag,))
    errors.check("ofed_mlnx_ofed_work_dir", _directory(v.get("ofed_mlnx_ofed_work_dir"), "directory"))


def _ports(errors: Errors, v: Mapping[str, Any]) -> None:
    var = "ofed_expected_ports"
    ports = [_text(p) for p in _list(errors, var, v.get(var)) or []]
    if ports == ["all"]:
        return
    if "all" in ports:
        errors.add(var, "all stands alone (every port of every HCA), not beside named ports")
    for index, label in enumerate(ports):
        match = _PORT_RE.match(label)
        if label != "all" and not (match and 1 <= int(match.group(2)) <= HCA_PORT_MAX):
            errors.add("%s[%d]" % (var, index), "must be <ca>:<port> with port 1-%d, such as mlx5_0:1, or the"
                       " single entry all (got %r)" % (HCA_PORT_MAX, label))
    for label in duplicates(ports):
        errors.add(var, "lists %s more than once" % label)


def _rate(errors: Errors, value: Any) -> None:
    rate: Optional[float] = None
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        try:
            rate = float(value)
        except ValueError:
            rate = None
    if rate is None or not math.isfinite(rate) or not 0 <= rate <= RATE_MAX_GBPS:
        errors.add("ofed_min_rate_gbps", "must be a rate in Gb/s within 0-%d, 0 for any (got %r)"
                   % (RATE_MAX_GBPS, value))


def _interface(value: Any) -> Optional[str]:
    if isinstance(value, str) and _INTERFACE_RE.match(value) and value not in (".", ".."):
        return None
    return "must be an interface name: 1 to 15 letters, digits, _ . : - (got %r)" % (value,)


def network_cidr(value: Any) -> Tuple[Optional[IPNetwork], Optional[str]]:
    """A network in CIDR notation with its prefix length and no host bits set."""
    reason = "must be a network in CIDR notation with no host bits set, such as 10.0.0.0/24 (got %r: %s)"
    if not isinstance(value, str) or "/" not in value:
        return None, reason % (value, "no prefix length")
    kind = ipaddress.IPv6Network if ":" in value else ipaddress.IPv4Network
    try:
        return kind(value, strict=True), None
    except ValueError as exc:
        return None, reason % (value, exc)


class _Fabric:
    """What the hosts seen so far put on their networks: each address's host, each network's CIDR."""

    def __init__(self) -> None:
        self.address_owner: Dict[str, str] = {}
        self.cidr: Dict[str, Tuple[IPNetwork, str]] = {}


def _network(errors: Errors, host: str, v: Mapping[str, Any], fabric: _Fabric) -> None:
    errors.check("ofed_interface", _interface(v.get("ofed_interface")))
    mtu = _digits(v.get("ofed_interface_mtu"))
    if not _unset(mtu):
        errors.check("ofed_interface_mtu", int_range(mtu, MTU_MIN, MTU_MAX))

    name = v.get("ofed_network")
    networks = _list(errors, "ofed_networks", v.get("ofed_networks"))
    if networks is None:
        return
    names = [n.get("name") if isinstance(n, Mapping) else None for n in networks]
    if name not in names:
        defined = ", ".join(_text(n) if n is not None else "?" for n in names) or "none"
        errors.add("ofed_network", "%r is not one of ofed_networks (defined: %s; ofed_networks defaults to"
                   " base_os_networks)" % (name, defined))
        return
    if names.count(name) > 1:
        errors.add("ofed_networks", "network %r is defined %d times" % (name, names.count(name)))
    index = names.index(name)
    net, reason = network_cidr(networks[index].get("cidr"))
    errors.check("ofed_networks[%d].cidr" % index, reason)
    if net is not None:
        first = fabric.cidr.setdefault(name, (net, host))
        if first[0] != net:
            errors.add("ofed_networks", "network %r is %s here, but %s on host '%s'" % (name, net, first[0], first[1]))
        # The interface's route would take the other network's addresses (or lose them to it).
        for other_index, other in enumerate(networks):
            if other_index == index or not isinstance(other, Mapping) or other.get("name") == name:
                continue
            if overlapping(str(net), [other.get("cidr")]):
                errors.add("ofed_networks[%d].cidr" % index, "%s overlaps network %r (%s): the fabric's network must not"
                           " share addresses with the host's other networks" % (net, other.get("name"), other.get("cidr")))

    addresses = v.get("ofed_addresses")
    if not isinstance(addresses, Mapping):
        errors.add("ofed_addresses", "must be a dict of network name to address (got %r)" % (addresses,))
        return
    value = addresses.get(name)
    if _unset(value):
        errors.add("ofed_addresses", "has no address on network %r (ofed_addresses defaults to base_os_addresses);"
                   " give one, or set ofed_network_manage: false for this host" % (name,))
        return
    var = "ofed_addresses.%s" % name
    # ipaddress takes an IPv6 zone (fe80::1%ib0), which no address configuration does.
    reason = ip_address(value) or ("must be an IPv4 or IPv6 address (got %r)" % (value,) if "%" in value else None)
    if not errors.check(var, reason):
        return
    address = ipaddress.ip_address(value)
    if net is not None:
        if address not in net:
            errors.add(var, "%s is outside network %r (%s)" % (address, name, net))
        elif net.version == 4 and net.prefixlen < 31 and address in (net.network_address, net.broadcast_address):
            kind = "network" if address == net.network_address else "broadcast"
            errors.add(var, "%s is the %s address of %r (%s)" % (address, kind, name, net))
    owner = fabric.address_owner.setdefault(str(address), host)
    if owner != host:
        errors.add(var, "%s is also the address of host '%s'" % (address, owner))


def _nccl(errors: Errors, v: Mapping[str, Any]) -> None:
    errors.check("ofed_nccl_conf_path", _directory(v.get("ofed_nccl_conf_path"), "file path"))
    ifname = v.get("ofed_nccl_socket_ifname")
    if not isinstance(ifname, str) or re.search(r"\s", ifname):
        errors.add("ofed_nccl_socket_ifname", "must be one word without blanks, such as =ib0, or empty (got %r)"
                   % (ifname,))
    gid = _digits(v.get("ofed_nccl_roce_gid_index"))
    if not _unset(gid) and int_range(gid, 0, GID_INDEX_MAX):
        errors.add("ofed_nccl_roce_gid_index", "must be a GID index within 0-%d, or null to leave it to NCCL (got %r)"
                   % (GID_INDEX_MAX, gid))
    var = "ofed_nccl_settings"
    settings = v.get(var)
    if settings is None:
        return
    for key, value in errors.mapping_items(var, settings, "must be a dict of NCCL variables"):
        if not isinstance(key, str) or not _NCCL_KEY_RE.match(key):
            errors.add(var, "%r is not an NCCL variable name (NCCL_...)" % (key,))
        elif value is not None and (isinstance(value, (Mapping, list, tuple, set))
                                    or re.search(r"[\r\n\x00]", _text(value))):
            errors.add("%s.%s" % (var, key), "must be one line of text or a number, or null (got %r)" % (value,))


def _host(errors: Errors, host: str, v: Mapping[str, Any], fabric: _Fabric) -> None:
    source = v.get("ofed_source")
    if source == "doca":
        _doca(errors, v)
    elif source == "mlnx_ofed":
        _mlnx_ofed(errors, v)
    _packages(errors, "ofed_packages_extra", v.get("ofed_packages_extra"))
    path = v.get("ofed_ibstat_path")
    if not _unset(path):
        errors.check("ofed_ibstat_path", _directory(path, "file path"))
    _ports(errors, v)
    _rate(errors, v.get("ofed_min_rate_gbps"))
    if _flag(v.get("ofed_network_manage", True)):
        _network(errors, host, v, fabric)
    if _flag(v.get("ofed_nccl_conf_manage", True)):
        _nccl(errors, v)


def ofed_errors(values: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """Every error of the hosts in ``values`` (host name -> that host's values of the role's variables).

    The messages read ``host 'NAME': VARIABLE: reason``, host by host in the order given; an
    address or CIDR that clashes with an earlier host's is reported on the later host.
    """
    if not isinstance(values, Mapping):
        raise RuleError("ofed_errors: the input must be a dict of host name to the host's ofed variables")
    fabric = _Fabric()
    messages: List[str] = []
    for host, host_values in values.items():
        if not isinstance(host_values, Mapping):
            raise RuleError("ofed_errors: the values of host '%s' must be a dict of the role's variables" % host)
        errors = Errors(host)
        _host(errors, host, host_values, fabric)
        messages.extend(errors.messages)
    return messages


def input_errors(given: RoleInput) -> List[str]:
    """The rules over this batch's hosts, each with its values as it sees them (the defaults are
    templated per host: ofed_addresses is base_os_addresses)."""
    return ofed_errors(given.hosts)
