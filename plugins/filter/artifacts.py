# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The artifact list of playbooks/artifacts.yml: artifacts_host_plan, artifacts_document and artifacts_table.

Documented in artifacts_host_plan.yml, artifacts_document.yml and artifacts_table.yml beside this
file; the logic is plugins/plugin_utils/_artifacts.py."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._artifacts import document, host_plan, table
from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter


class FilterModule:
    """What the site playbook downloads, per host and merged."""

    def filters(self):
        return {
            "artifacts_host_plan": as_filter("artifacts_host_plan", host_plan),
            "artifacts_document": as_filter("artifacts_document", document),
            "artifacts_table": as_filter("artifacts_table", table),
        }
