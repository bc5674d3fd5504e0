# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_reported: what every host of a group reported, this run's value or the fact cache's.

Documentation lives beside this file in cluster_reported.yml; the code in
plugins/plugin_utils/_reported.py.
"""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._reported import reported


class FilterModule:
    """Data from every host, unreachable ones included."""

    def filters(self):
        return {"cluster_reported": as_filter("cluster_reported", reported)}
