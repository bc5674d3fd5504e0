# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The maintenance playbook's filters: maintenance_errors (its settings checked) and
maintenance_to_drain (the batch's nodes to drain). Documented in the .yml files of the same
names beside this file; the logic lives in plugins/plugin_utils/_validation_checks.py."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._validation_checks import maintenance_errors, maintenance_to_drain


class FilterModule:
    """The rolling maintenance playbook's rules and drain list."""

    def filters(self):
        return {
            "maintenance_errors": as_filter("maintenance_errors", maintenance_errors),
            "maintenance_to_drain": as_filter("maintenance_to_drain", maintenance_to_drain),
        }
