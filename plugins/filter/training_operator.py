# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training_operator filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/training_operator/."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.training_operator import _training as t
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters


class FilterModule:
    """The training_operator filters."""

    def filters(self):
        return as_filters({
            "training_operator_job_manifest": t.job_manifest,
        })
