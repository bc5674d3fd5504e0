# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The artifacts playbook's filters (each documented in plugins/filter/<filter>.yml): each host's plan,
the merged document and its table; the logic lives in plugins/plugin_utils/artifacts/."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.artifacts._artifacts import document, host_plan, table
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters


class FilterModule:
    """The artifacts filters."""

    def filters(self):
        return as_filters({
            "artifacts_host_plan": host_plan,
            "artifacts_document": document,
            "artifacts_table": table,
        })
