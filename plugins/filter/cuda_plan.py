# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cuda role's derived data: cuda_cudnn_entries (where the cuDNN archive's files go).

Documented in cuda_cudnn_entries.yml beside this file; the logic is plugins/plugin_utils/_rules_cuda.py."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_cuda import cudnn_entries


class FilterModule:
    """The cuda role's derived data."""

    def filters(self):
        return {"cuda_cudnn_entries": as_filter("cuda_cudnn_entries", cudnn_entries)}
