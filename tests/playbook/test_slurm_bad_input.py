# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""slurm: bad inventory data fails before any host is touched, with a message naming it.

The rules themselves (plugins/plugin_utils/slurm/_rules.py) are unit tested in
tests/unit/plugins/plugin_utils/slurm/test_rules_slurm.py; these playbook runs prove the ordering
(refused with no host contacted) and the --limit refusal, which needs a play.
"""

from __future__ import annotations

from roleplay import assert_passes_validation, assert_refused_untouched, run_role

HOSTS = ["ctl", "gpu01", "gpu02"]
GROUPS = {"slurm_controller": ["ctl"], "slurm_dbd": ["ctl"], "slurm_compute": ["gpu01", "gpu02"]}
GOOD_VARS = {"slurm_dbd_password": "test-only"}


def run_slurm(tmp_path, groups=None, extra_args=(), **group_vars):
    return run_role(tmp_path, "gpucluster.core.slurm", hosts={h: {} for h in HOSTS},
                    groups=groups or GROUPS, group_vars={**GOOD_VARS, **group_vars}, extra_args=extra_args)


def test_good_data_passes_preflight_validation(tmp_path):
    assert_passes_validation(run_slurm(tmp_path), HOSTS, "slurm_")


def test_bad_data_is_refused_all_at_once_before_any_host_is_touched(tmp_path):
    result = run_slurm(tmp_path, slurm_dbd_password="", slurm_srun_port_range="63000-60001",
                       slurm_partitions=[{"name": "gpu", "groups": ["a100_nodes"]}])
    assert_refused_untouched(
        result,
        "slurm: bad variables, no host was changed: "
        "slurm_partitions[0].groups: group 'a100_nodes' is not in the inventory; "
        "slurm_srun_port_range: must be \"first-last\" with 1024 <= first < last <= 65535 (got '63000-60001'); "
        "slurm_dbd_password: must be set (from the vault) when slurm_dbd_group 'slurm_dbd' has a host; "
        "the value is not shown",
    )
