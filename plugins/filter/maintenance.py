# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/maintenance.yml's filters (each documented in plugins/filter/<filter>.yml): its input rules
and the nodes to drain; the logic lives in plugins/plugin_utils/validation/_checks.py."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._checks import maintenance_errors, maintenance_to_drain


class FilterModule:
    """The maintenance filters."""

    def filters(self):
        return as_filters({
            "maintenance_errors": maintenance_errors,
            "maintenance_to_drain": maintenance_to_drain,
        })
