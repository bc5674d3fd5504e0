# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_toolkit filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/container_toolkit/."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.container_toolkit._checks import (
    artifacts, failed_hosts, missing_versions, other_engine, plan)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters


class FilterModule:
    """The container_toolkit filters."""

    def filters(self):
        return as_filters({
            "container_toolkit_missing_versions": missing_versions,
            "container_toolkit_failed_hosts": failed_hosts,
            "container_toolkit_other_engine": other_engine,
            "container_toolkit_plan": plan,
            "container_toolkit_artifacts": artifacts,
        })
