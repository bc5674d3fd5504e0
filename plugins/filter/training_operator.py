# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training_operator role's filter: training_operator_job_manifest (a job as data to a PyTorchJob
or TrainJob manifest).

Documented in the .yml files of the same names beside this file; the logic lives in
plugins/plugin_utils/_training.py."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils import _training as t
from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter


class FilterModule:
    """The training_operator role's filters."""

    def filters(self):
        return {
            "training_operator_job_manifest": as_filter("training_operator_job_manifest", t.job_manifest),
        }
