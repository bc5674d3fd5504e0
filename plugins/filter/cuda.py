# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cuda filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/cuda/."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters
from ansible_collections.gpucluster.core.plugins.plugin_utils.cuda._rules import (
    cudnn_entries, packages, unavailable, verify_problems)


class FilterModule:
    """The cuda filters."""

    def filters(self):
        return as_filters({
            "cuda_packages": packages,
            "cuda_unavailable": unavailable,
            "cuda_verify_problems": verify_problems,
            "cuda_cudnn_entries": cudnn_entries,
        })
