# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_operator role's filters: gpu_operator_nodes (the GPU
nodes as the role read them), gpu_operator_values (the chart's values derived from them),
gpu_operator_expected (what each must advertise) and gpu_operator_short_nodes (who does not).

Documented in the .yml files of the same names beside this file; the logic lives in
plugins/plugin_utils/_gpu_operator.py."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils import _gpu_operator as g
from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter


class FilterModule:
    """The gpu_operator role's filters."""

    def filters(self):
        return {
            "gpu_operator_nodes": as_filter("gpu_operator_nodes", g.gpu_nodes),
            "gpu_operator_values": as_filter("gpu_operator_values", g.chart_values),
            "gpu_operator_expected": as_filter("gpu_operator_expected", g.expected_gpus),
            "gpu_operator_short_nodes": as_filter("gpu_operator_short_nodes", g.short_nodes),
        }
