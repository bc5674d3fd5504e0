# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base_os role's filters: base_os_known_hosts and base_os_node_state (its input rules are
called through gpucluster.core.input_rule_failure).

Documented in the .yml files of the same names beside this file."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._base_os_state import known_hosts_lines, node_state


def _known_hosts(host_keys, entries):
    return known_hosts_lines(dict(host_keys), entries)


class FilterModule:
    """The parse of the base_os role's node read and its known_hosts lines."""

    def filters(self):
        return {"base_os_known_hosts": as_filter("base_os_known_hosts", _known_hosts),
                "base_os_node_state": as_filter("base_os_node_state", node_state)}
