# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/slurm/."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_native
from typing import Any, Dict, Iterable, Mapping, Sequence

from ansible_collections.gpucluster.core.plugins.module_utils._hostlist import (
    HostlistError,
    compress,
    expand,
)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters
from ansible_collections.gpucluster.core.plugins.plugin_utils.slurm._nodes import node_definition, node_lines, restart_changes
from ansible_collections.gpucluster.core.plugins.plugin_utils.slurm._plan import plan


def _items(value, name):
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        for item in value:
            if not isinstance(item, str):
                raise AnsibleFilterError("%s: every item must be a string, got %r" % (name, item))
        return list(value)
    raise AnsibleFilterError("%s: expected a string or a list of strings, got %s" % (name, type(value).__name__))


def slurm_hostlist_expand(value):
    """Expand Slurm hostlist expressions into a list of host names."""
    hosts = []
    try:
        for item in _items(value, "slurm_hostlist_expand"):
            hosts.extend(expand(item))
    except HostlistError as exc:
        raise AnsibleFilterError("slurm_hostlist_expand: %s" % to_native(exc))
    return hosts


def slurm_hostlist_compress(value):
    """Compress host names (or hostlist expressions) into one Slurm hostlist expression."""
    hosts = []
    try:
        for item in _items(value, "slurm_hostlist_compress"):
            hosts.extend(expand(item))
        return compress(hosts)
    except HostlistError as exc:
        raise AnsibleFilterError("slurm_hostlist_compress: %s" % to_native(exc))


def _slurm_nodes(hostvars: Mapping[str, Any], computes: Sequence[str], live: Iterable[str],
                 current_nodes: Iterable[str], current_gres: Iterable[str]) -> Dict[str, Any]:
    """What hostvars holds for each compute node (this run's facts or the fact cache's)."""
    definitions = {}
    gres = {}
    for host in computes:
        values = hostvars[host] if host in hostvars else {}
        definitions[host] = values.get("__slurm_node_definition") or None
        gres[host] = values.get("__slurm_node_gres") or None
    return node_lines(list(computes), live, definitions, gres, current_nodes or [], current_gres or [])


class FilterModule:
    """The slurm filters."""

    def filters(self):
        return {
            **as_filters({
                "slurm_plan": plan,
                "slurm_node_definition": node_definition,
                "slurm_nodes": _slurm_nodes,
                "slurm_restart_changes": restart_changes,
            }),
            "slurm_hostlist_expand": slurm_hostlist_expand,
            "slurm_hostlist_compress": slurm_hostlist_compress,
        }
