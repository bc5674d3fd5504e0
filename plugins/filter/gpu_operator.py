# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_operator filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/gpu_operator/."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.gpu_operator import _gpu_operator as g
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters


class FilterModule:
    """The gpu_operator filters."""

    def filters(self):
        return as_filters({
            "gpu_operator_nodes": g.gpu_nodes,
            "gpu_operator_values": g.chart_values,
            "gpu_operator_expected": g.expected_gpus,
            "gpu_operator_short_nodes": g.short_nodes,
        })
