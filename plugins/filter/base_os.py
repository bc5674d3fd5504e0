# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base_os filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/base_os/."""

from __future__ import annotations

import re

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.gpucluster.core.plugins.plugin_utils.base_os._reported import reported
from ansible_collections.gpucluster.core.plugins.plugin_utils.base_os._state import known_hosts_lines, node_state
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters


try:
    import netaddr

    HAS_NETADDR = True
except ImportError:  # pragma: no cover - exercised only without netaddr
    HAS_NETADDR = False


def _known_hosts(host_keys, entries):
    return known_hosts_lines(dict(host_keys), entries)


# What /etc/hosts and ssh_known_hosts can carry as a name: dot-separated labels of letters,
# digits, "-" and "_" (blanks or "#" would split or end the line).
_NAME_RE = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_-]*)(\.[A-Za-z0-9_][A-Za-z0-9_-]*)*\Z")


def _strict_bool(value, where):
    try:
        return boolean(value, strict=True)
    except TypeError:
        raise AnsibleFilterError(f"{where} must be true or false, not {value!r}") from None


def _check_networks(networks, networks_var):
    if not isinstance(networks, list) or not networks:
        raise AnsibleFilterError(f"{networks_var} must be a non-empty list of networks")
    parsed = {}
    for i, net in enumerate(networks):
        where = f"{networks_var}[{i}]"
        if not isinstance(net, dict):
            raise AnsibleFilterError(f"{where} must be a dict with name, cidr and suffix")
        name = net.get("name")
        if not name or not isinstance(name, str):
            raise AnsibleFilterError(f"{where} has no name")
        where = f"{networks_var}[{i}] ({name})"
        if name in parsed:
            raise AnsibleFilterError(f"{where}: network name '{name}' is defined twice")
        cidr = net.get("cidr")
        try:
            if not isinstance(cidr, str) or "/" not in cidr:
                raise ValueError("a CIDR needs a prefix length, as in 10.0.0.0/24")
            ipnet = netaddr.IPNetwork(cidr)
        except (netaddr.AddrFormatError, ValueError, TypeError) as exc:
            raise AnsibleFilterError(f"{where}: cidr {cidr!r} is not a network: {exc}") from None
        if ipnet.ip != ipnet.network:
            raise AnsibleFilterError(
                f"{where}: cidr {cidr} has host bits set; the network is {ipnet.cidr}"
            )
        suffix = net.get("suffix", "") or ""
        if not isinstance(suffix, str):
            raise AnsibleFilterError(f"{where}: suffix must be a string")
        parsed[name] = {
            "net": ipnet,
            "suffix": suffix,
            "required": _strict_bool(net.get("required", True), f"{where}: required"),
        }
    return parsed


def _check_address(host, net_name, value, net, addresses_var):
    var = f"{addresses_var}.{net_name}"
    try:
        if not isinstance(value, str):
            raise ValueError("not a string")
        ip = netaddr.IPAddress(value, flags=netaddr.INET_PTON)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise AnsibleFilterError(f"host '{host}': {var} {value!r} is not an IP address") from None
    ipnet = net["net"]
    if ip not in ipnet:
        raise AnsibleFilterError(
            f"host '{host}': {var} {ip} is outside network '{net_name}' ({ipnet.cidr})"
        )
    if ipnet.version == 4 and ipnet.prefixlen < 31 and ip in (ipnet.network, ipnet.broadcast):
        kind = "network" if ip == ipnet.network else "broadcast"
        raise AnsibleFilterError(
            f"host '{host}': {var} {ip} is the {kind} address of '{net_name}' ({ipnet.cidr})"
        )
    return str(ip)


def cluster_hosts_entries(nodes, networks, domain="", addresses_var="base_os_addresses",
                          networks_var="base_os_networks"):
    """Return validated hosts entries; raise AnsibleFilterError naming the bad input."""
    if not HAS_NETADDR:
        raise AnsibleFilterError("cluster_hosts_entries needs the Python library netaddr on the controller")
    if not isinstance(nodes, dict):
        raise AnsibleFilterError("cluster_hosts_entries expects a dict of host name to addresses")
    nets = _check_networks(networks, networks_var)
    domain = (domain or "").strip(".")

    entries = []
    owner_of_address = {}
    owner_of_name = {}
    for host, addresses in nodes.items():
        addresses = addresses or {}
        if not isinstance(addresses, dict):
            raise AnsibleFilterError(
                f"host '{host}': {addresses_var} must be a dict of network name to address"
            )
        unknown = sorted(set(addresses) - set(nets))
        if unknown:
            raise AnsibleFilterError(
                f"host '{host}': {addresses_var} names network '{unknown[0]}', which "
                f"{networks_var} does not define (defined: {', '.join(nets)})"
            )
        for net_name, net in nets.items():
            if net_name not in addresses or addresses[net_name] in (None, ""):
                if net["required"]:
                    raise AnsibleFilterError(
                        f"host '{host}': {addresses_var} has no address on network "
                        f"'{net_name}', which is required"
                    )
                continue
            address = _check_address(host, net_name, addresses[net_name], net, addresses_var)
            where = f"{addresses_var}.{net_name}"
            if address in owner_of_address:
                other = owner_of_address[address]
                raise AnsibleFilterError(
                    f"host '{host}': {where} {address} is also the address of host '{other}'"
                )
            owner_of_address[address] = host
            short = f"{host}{net['suffix']}"
            names = [f"{short}.{domain}", short] if domain else [short]
            for name in names:
                if not _NAME_RE.match(name) or len(name) > 253:
                    raise AnsibleFilterError(
                        f"host '{host}': name '{name}' on network '{net_name}' is not a valid host "
                        f"name (letters, digits, '-' and '_' in dot-separated labels); check the "
                        f"host name, the suffix in {networks_var} and the domain"
                    )
                # Resolvers compare names without regard to case.
                if name.lower() in owner_of_name:
                    raise AnsibleFilterError(
                        f"host '{host}': name '{name}' on network '{net_name}' is already "
                        f"the name of {owner_of_name[name.lower()]}"
                    )
                owner_of_name[name.lower()] = f"host '{host}' on network '{net_name}'"
            entries.append({"host": host, "network": net_name, "address": address, "names": names})
    return entries


class FilterModule:
    """The base_os filters."""

    def filters(self):
        return {
            **as_filters({
                "base_os_known_hosts": _known_hosts,
                "base_os_node_state": node_state,
                "cluster_reported": reported,
            }),
            "cluster_hosts_entries": cluster_hosts_entries,
        }
