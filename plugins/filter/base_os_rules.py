# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base_os role's filters: base_os_errors (every error in its input besides the hosts table, at
once), base_os_known_hosts and base_os_node_state.

Documented in the .yml files of the same names beside this file."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._base_os_state import known_hosts_lines, node_state
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_base_os import base_os_errors, per_host


def _base_os_errors(hostvars, hosts, groups, defaults):
    """The messages over every host's values (its own, else the play's)."""
    hosts = list(hosts)
    return base_os_errors(per_host(hostvars, hosts, defaults), hosts,
                          {k: list(v) for k, v in groups.items()},
                          defaults.get("base_os_cluster_group", "cluster"),
                          defaults.get("base_os_head_group", "head"))


def _known_hosts(host_keys, entries):
    return known_hosts_lines(dict(host_keys), entries)


class FilterModule:
    """The base_os role's input rules, the parse of its node read and known_hosts lines."""

    def filters(self):
        return {"base_os_errors": as_filter("base_os_errors", _base_os_errors),
                "base_os_known_hosts": as_filter("base_os_known_hosts", _known_hosts),
                "base_os_node_state": as_filter("base_os_node_state", node_state)}
