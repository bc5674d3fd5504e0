# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml's filters (each documented in plugins/filter/<filter>.yml): the checks over the whole site's
inventory; the logic lives in plugins/plugin_utils/site/."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters
from ansible_collections.gpucluster.core.plugins.plugin_utils.site._rules import site_errors


class FilterModule:
    """The site filters."""

    def filters(self):
        return as_filters({
            "site_errors": site_errors,
        })
