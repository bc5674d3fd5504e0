# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""slurm: bad inventory data fails before any host is touched, with a message naming it."""

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


def test_accounting_without_password_is_refused(tmp_path):
    assert_refused_untouched(
        run_slurm(tmp_path, slurm_dbd_password=""),
        "slurm_dbd_password is empty, but slurm_dbd_group 'slurm_dbd' has a host (ctl): set it (from the vault).",
    )


def test_missing_compute_nodes_are_refused(tmp_path):
    result = run_slurm(tmp_path, groups={"slurm_controller": ["ctl"], "slurm_dbd": ["ctl"],
                                         "slurm_compute": []})
    assert_refused_untouched(result, "at least one in slurm_compute_group 'slurm_compute' (found 0)")


def test_short_munge_key_is_refused_without_showing_it(tmp_path):
    # base64 of 8 bytes: too short to be a munge key.
    result = run_slurm(tmp_path, slurm_munge_key="c2VjcmV0MTI=")
    assert result.returncode == 2
    assert "c2VjcmV0MTI=" not in result.stdout + result.stderr
    assert "the output has been hidden due to the fact that 'no_log: true'" in result.stdout
    assert '"unreachable": 0' in result.stdout


def test_partition_naming_an_unknown_group_is_refused(tmp_path):
    result = run_slurm(tmp_path, slurm_partitions=[{"name": "gpu", "groups": ["a100_nodes"]}])
    assert_refused_untouched(result, "every group a partition names must exist in the inventory (groups named: a100_nodes)")


def test_wrong_type_is_refused_by_the_argument_spec(tmp_path):
    result = run_slurm(tmp_path, slurm_real_memory_fraction="most")
    assert_refused_untouched(result, "slurm_real_memory_fraction")


def test_limit_without_cached_definitions_is_refused(tmp_path):
    # The controller alone, no fact cache: slurm.conf would lose gpu01 and gpu02.
    result = run_slurm(tmp_path, extra_args=["--limit", "ctl"])
    assert_refused_untouched(result, "No hardware facts for gpu01, gpu02: slurm.conf needs every compute node's definition.")


def test_bad_srun_port_range_is_refused(tmp_path):
    result = run_slurm(tmp_path, slurm_srun_port_range="63000-60001")
    assert_refused_untouched(result, "slurm_srun_port_range must be \"first-last\" within 1024-65535 (got '63000-60001')")


def test_repository_without_key_is_refused(tmp_path):
    result = run_slurm(tmp_path, slurm_repository={"url": "https://mirror.example/slurm/"})
    assert_refused_untouched(result, "needs url and key_url as http(s):// or file:// URLs "
                                     "(got url 'https://mirror.example/slurm/', key_url '')")
