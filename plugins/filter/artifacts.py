# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The artifacts playbook's filters: each host's plan, the merged document and its table.

Each filter is documented in plugins/filter/<filter>.yml."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.artifacts._artifacts import document, host_plan, table
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filter


class FilterModule:
    """The artifacts filters."""

    def filters(self):
        return {
            "artifacts_host_plan": as_filter("artifacts_host_plan", host_plan),
            "artifacts_document": as_filter("artifacts_document", document),
            "artifacts_table": as_filter("artifacts_table", table),
        }
