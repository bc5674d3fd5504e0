# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml's filters: the checks over the whole site's inventory.

Each filter is documented in plugins/filter/<filter>.yml."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils.site._rules import site_errors


class FilterModule:
    """The site filters."""

    def filters(self):
        return {
            "site_errors": as_filter("site_errors", site_errors),
        }
