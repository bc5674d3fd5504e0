# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""supported_os: whether a role supports a host's operating system, from the collection's one support
matrix. Documentation in supported_os.yml; the matrix in plugins/plugin_utils/_common_support.py."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._common_support import supported_os
from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter


class FilterModule:
    """The collection's support matrix."""

    def filters(self):
        return {"supported_os": as_filter("supported_os", supported_os)}
