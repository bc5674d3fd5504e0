# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ofed filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/ofed/."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters
from ansible_collections.gpucluster.core.plugins.plugin_utils.ofed._state import (
    artifacts, kernel_report, nccl_conf_lines, nccl_settings, port_problem, source_names,
)


def _nccl_conf(infiniband, expected_ports, min_rate_gbps, socket_ifname, roce_gid_index, settings):
    """/etc/nccl.conf's KEY=value lines (ofed_nccl_conf.yml)."""
    return nccl_conf_lines(nccl_settings(infiniband, expected_ports, min_rate_gbps, socket_ifname,
                                         roce_gid_index, settings))


class FilterModule:
    """The ofed filters."""

    def filters(self):
        return as_filters({
            "ofed_port_problem": port_problem,
            "ofed_nccl_conf": _nccl_conf,
            "ofed_kernel_report": kernel_report,
            "ofed_source_names": source_names,
            "ofed_artifacts": artifacts,
        })
