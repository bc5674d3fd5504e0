# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_toolkit role's checks of what it read from the hosts: container_toolkit_missing_versions
and container_toolkit_failed_hosts.

Documented in container_toolkit_missing_versions.yml and container_toolkit_failed_hosts.yml beside this
file; the logic is plugins/plugin_utils/_container_toolkit_checks.py."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._container_toolkit_checks import failed_hosts, missing_versions


class FilterModule:
    """The container_toolkit role's checks of the hosts' state."""

    def filters(self):
        return {
            "container_toolkit_missing_versions": as_filter("container_toolkit_missing_versions", missing_versions),
            "container_toolkit_failed_hosts": as_filter("container_toolkit_failed_hosts", failed_hosts),
        }
