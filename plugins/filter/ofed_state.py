# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ofed role's derived data: ofed_port_problem (the port check), ofed_nccl_conf
(/etc/nccl.conf's lines), ofed_kernel_report (OFED's modules against the running kernel),
ofed_source_names (where NVIDIA keeps the host's builds) and ofed_artifacts (what the role
downloads on a host, for playbooks/artifacts.yml).

Documented in the .yml files of the same names beside this file; the code lives in
plugins/plugin_utils/_ofed_state.py."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._ofed_state import (
    artifacts, kernel_report, nccl_conf_lines, nccl_settings, port_problem, source_names,
)


def _nccl_conf(infiniband, expected_ports, min_rate_gbps, socket_ifname, roce_gid_index, settings):
    """/etc/nccl.conf's KEY=value lines (ofed_nccl_conf.yml)."""
    return nccl_conf_lines(nccl_settings(infiniband, expected_ports, min_rate_gbps, socket_ifname,
                                         roce_gid_index, settings))


class FilterModule:
    """The ofed role's port check, NCCL settings, kernel check, source names and artifact record."""

    def filters(self):
        return {"ofed_port_problem": as_filter("ofed_port_problem", port_problem),
                "ofed_nccl_conf": as_filter("ofed_nccl_conf", _nccl_conf),
                "ofed_kernel_report": as_filter("ofed_kernel_report", kernel_report),
                "ofed_source_names": as_filter("ofed_source_names", source_names),
                "ofed_artifacts": as_filter("ofed_artifacts", artifacts)}
