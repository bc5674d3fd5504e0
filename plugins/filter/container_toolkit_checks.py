# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_toolkit role's checks of what it read from the hosts (container_toolkit_missing_versions,
container_toolkit_failed_hosts, container_toolkit_other_engine), its plan (container_toolkit_plan) and its
artifact record (container_toolkit_artifacts).

Documented in the .yml files of the same names beside this file; the logic is
plugins/plugin_utils/_container_toolkit_checks.py."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._container_toolkit_checks import (
    artifacts, failed_hosts, missing_versions, other_engine, plan)


class FilterModule:
    """The container_toolkit role's checks of the hosts' state, its plan and its artifact record."""

    def filters(self):
        return {
            "container_toolkit_missing_versions": as_filter("container_toolkit_missing_versions", missing_versions),
            "container_toolkit_failed_hosts": as_filter("container_toolkit_failed_hosts", failed_hosts),
            "container_toolkit_other_engine": as_filter("container_toolkit_other_engine", other_engine),
            "container_toolkit_plan": as_filter("container_toolkit_plan", plan),
            "container_toolkit_artifacts": as_filter("container_toolkit_artifacts", artifacts),
        }
