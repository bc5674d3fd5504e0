# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cuda filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/cuda/."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils.cuda._rules import cudnn_entries
from ansible_collections.gpucluster.core.plugins.plugin_utils.cuda._rules import packages
from ansible_collections.gpucluster.core.plugins.plugin_utils.cuda._rules import unavailable
from ansible_collections.gpucluster.core.plugins.plugin_utils.cuda._rules import verify_problems


class FilterModule:
    """The cuda filters."""

    def filters(self):
        return {
            "cuda_packages": as_filter("cuda_packages", packages),
            "cuda_unavailable": as_filter("cuda_unavailable", unavailable),
            "cuda_verify_problems": as_filter("cuda_verify_problems", verify_problems),
            "cuda_cudnn_entries": as_filter("cuda_cudnn_entries", cudnn_entries),
        }
