# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""site_errors: the site playbook's settings. Documentation in site_errors.yml; the rules in
plugins/plugin_utils/_rules_site.py."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_site import site_errors


class FilterModule:
    """The site playbook's input rules."""

    def filters(self):
        return {"site_errors": as_filter("site_errors", site_errors)}
