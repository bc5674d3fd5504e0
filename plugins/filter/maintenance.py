# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/maintenance.yml's filters: its input rules and the nodes to drain.

Each filter is documented in plugins/filter/<filter>.yml."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._checks import maintenance_errors, maintenance_to_drain


class FilterModule:
    """The maintenance filters."""

    def filters(self):
        return {
            "maintenance_errors": as_filter("maintenance_errors", maintenance_errors),
            "maintenance_to_drain": as_filter("maintenance_to_drain", maintenance_to_drain),
        }
