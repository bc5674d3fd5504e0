# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""slurm_plan: what the slurm role's tasks derive from the inventory, its variables and the
cluster's Slurm release (configuration, directories, ports, packages, accounting commands);
slurm_node_definition: a compute node's definition from slurmd -C;
slurm_nodes: every compute node's slurm.conf and gres.conf lines, failed nodes kept;
slurm_restart_changes: the settings a running daemon takes only from a restart that changed.

Documentation lives beside this file in slurm_plan.yml, slurm_node_definition.yml, slurm_nodes.yml
and slurm_restart_changes.yml; the code in plugins/plugin_utils/_slurm_plan.py and _slurm_nodes.py.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Mapping, Sequence

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._slurm_nodes import node_definition, node_lines, restart_changes
from ansible_collections.gpucluster.core.plugins.plugin_utils._slurm_plan import plan


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
    """The slurm role's plan and node lines."""

    def filters(self):
        return {"slurm_plan": as_filter("slurm_plan", plan),
                "slurm_node_definition": as_filter("slurm_node_definition", node_definition),
                "slurm_nodes": as_filter("slurm_nodes", _slurm_nodes),
                "slurm_restart_changes": as_filter("slurm_restart_changes", restart_changes)}
