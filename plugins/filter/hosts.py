# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""first_host_in: the host of a group that does a play's one-off work.

Documentation lives beside this file in first_host_in.yml; the code in
plugins/plugin_utils/_hosts.py.
"""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._hosts import first_host_in


class FilterModule:
    """Inventory hosts."""

    def filters(self):
        return {"first_host_in": as_filter("first_host_in", first_host_in)}
