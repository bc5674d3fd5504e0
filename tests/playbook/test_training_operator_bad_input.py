# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""training_operator: a bad training job fails before any host is touched.

The rules themselves are unit-tested in tests/unit/plugins/plugin_utils/training_operator/test_training.py; this
playbook-level test proves the ordering: refused with no host contacted.
"""

from __future__ import annotations

from roleplay import assert_refused_untouched, failure_messages, run_role

HOSTS = ["cp1", "gpu01"]
GROUPS = {"k8s_control_plane": ["cp1"], "k8s_workers": ["gpu01"]}
JOB = {"name": "ddp", "image": "nvcr.io/nvidia/pytorch:24.08-py3", "command": ["torchrun", "train.py"], "nodes": 2}


def test_a_bad_job_is_refused(tmp_path):
    result = run_role(tmp_path, "gpucluster.core.training_operator", hosts={h: {} for h in HOSTS}, groups=GROUPS,
                      group_vars={"training_operator_jobs": [dict(JOB, nodes=0)]})
    assert_refused_untouched(result, "training_operator_jobs[0] (ddp).nodes: must be within 1-1024 (got 0)")


def test_good_data_passes_to_the_first_task_that_needs_a_host(tmp_path):
    result = run_role(tmp_path, "gpucluster.core.training_operator", hosts={h: {} for h in HOSTS}, groups=GROUPS,
                      group_vars={"training_operator_jobs": [JOB]})
    # Only the first control plane node has work: it is the one found unreachable.
    messages, stats = failure_messages(result)
    assert result.returncode != 0
    assert not any("training_operator_" in m for m in messages), messages
    assert {host: counts["unreachable"] for host, counts in stats.items()} == {"cp1": 1, "gpu01": 0}
