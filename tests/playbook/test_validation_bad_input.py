# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""validation: bad input is refused before any host is touched.

One playbook-level test proves the ordering; every rule is a unit test of
plugins/plugin_utils/validation/_rules.py (tests/unit/plugins/plugin_utils/validation/test_rules_validation.py)."""

from __future__ import annotations

from roleplay import assert_refused_untouched, failure_messages, run_role

HOSTS = ["head", "gpu1", "gpu2"]
GROUPS = {"cluster": HOSTS, "slurm_controller": ["head"], "slurm_compute": ["gpu1", "gpu2"]}


def run_validation(tmp_path, gpu1_vars=None, **group_vars):
    return run_role(tmp_path, "gpucluster.core.validation",
                    hosts={"head": {"gpucluster_gpu_node": False}, "gpu1": dict(gpu1_vars or {}), "gpu2": {}},
                    groups=GROUPS, group_vars={"validation_results_dir": str(tmp_path / "results"), **group_vars})


def test_good_data_passes_preflight_validation(tmp_path):
    # The control: good data gets past the rules and then fails at the first task that needs a
    # host (Slurm's view of the nodes, read once on the controller), because the hosts do not exist.
    result = run_validation(tmp_path)
    assert result.returncode != 0
    messages, stats = failure_messages(result)
    assert not any("validation_" in m for m in messages), messages
    assert sum(counts["unreachable"] for counts in stats.values()) == 1, stats


def test_bad_data_is_refused_before_any_host_is_contacted(tmp_path):
    # A play-wide error and a per-host error, reported together, with zero hosts contacted.
    result = run_validation(tmp_path, gpu1_vars={"validation_hca": {"rate_gbps": 5000}},
                            validation_reason_prefix='drained by "validation"')
    assert_refused_untouched(
        result, "validation_reason_prefix: must be one line of text without quotes or backslashes, as Slurm keeps "
                "it in the node's reason (got 'drained by \"validation\"')")
    assert_refused_untouched(
        result, "host 'gpu1': validation_hca.rate_gbps: must be a port rate in Gb/s within 1-3200, or 0 for the "
                "fastest active port of the same adapter model (got 5000)")
