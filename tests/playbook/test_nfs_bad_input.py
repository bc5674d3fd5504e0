# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nfs: bad input is refused before any host is touched.

One playbook-level test proves the ordering; every rule is a unit test of
plugins/plugin_utils/nfs/_rules.py (tests/unit/plugins/plugin_utils/nfs/test_rules_nfs.py)."""

from __future__ import annotations

from roleplay import assert_passes_validation, assert_refused_untouched, run_role

HOSTS = ["master", "worker1", "worker2"]
GROUPS = {"cluster": HOSTS, "head": ["master"], "compute": HOSTS}
EXPORT = {"path": "/data/shared", "clients": ["192.168.1.0/24"], "group": "gpuusers", "mode": "2775"}
MOUNT = {"src": "master:/data/shared", "path": "/data/shared"}


def run_nfs(tmp_path, exports=None, mounts=None, master_vars=None, **group_vars):
    """The lab's shape: master exports (host var), every node mounts (group var)."""
    master = {"nfs_exports": [EXPORT] if exports is None else exports, **(master_vars or {})}
    return run_role(
        tmp_path, "gpucluster.core.nfs",
        hosts={"master": master, "worker1": {}, "worker2": {}},
        groups=GROUPS,
        group_vars={"nfs_mounts": [MOUNT] if mounts is None else mounts,
                    "nfs_groups": [{"name": "gpuusers", "gid": 2000}], **group_vars},
    )


def test_good_data_passes_preflight_validation(tmp_path):
    # The control: the same inventory with good data gets past the validation and only
    # then fails, at the first task that needs a host, because the hosts do not exist.
    assert_passes_validation(run_nfs(tmp_path), HOSTS, "nfs_")


def test_bad_data_is_refused_before_any_host_is_contacted(tmp_path):
    # A per-host error and a cross-host error, reported together, with zero hosts contacted.
    result = run_nfs(tmp_path, exports=[{**EXPORT, "clients": ["192.168.1.7/24"]}],
                     mounts=[{"src": "master:/data/scratch", "path": "/data/scratch"}])
    assert_refused_untouched(
        result,
        "host 'master': nfs_exports '/data/shared': client '192.168.1.7/24' is not a CIDR with no host bits set "
        "(10.0.0.0/24), an address, a host name or wildcard, or an @netgroup",
    )
    assert_refused_untouched(
        result,
        "host 'worker1': nfs_mounts 'master:/data/scratch': server 'master' does not export /data/scratch "
        "(its nfs_exports: /data/shared)",
    )
