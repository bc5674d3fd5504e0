# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nfs: bad exports and mounts fail before any host is touched, with a message naming the entry."""

from __future__ import annotations

import pytest

from roleplay import assert_passes_validation, assert_refused_untouched, failure_messages, run_role

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


def test_no_root_squash_passes_when_allowed(tmp_path):
    export = {**EXPORT, "options": ["rw", "sync", "no_subtree_check", "no_root_squash"]}
    result = run_nfs(tmp_path, exports=[export], master_vars={"nfs_allow_no_root_squash": True})
    assert_passes_validation(result, HOSTS, "nfs_")


def test_external_server_passes_when_marked(tmp_path):
    mounts = [MOUNT, {"src": "filer01:/vol/datasets", "path": "/datasets", "server_external": True}]
    assert_passes_validation(run_nfs(tmp_path, mounts=mounts), HOSTS, "nfs_")


@pytest.mark.parametrize(
    "client",
    [
        pytest.param("192.168.1.0/33", id="prefix-too-long"),
        pytest.param("192.168.300.0/24", id="octet-too-big"),
        pytest.param("192.168.1.7/24", id="host-bits-set"),
        pytest.param("192.168.1.0/", id="empty-prefix"),
        pytest.param("gpu nodes", id="space-in-name"),
    ],
)
def test_bad_client_is_refused(tmp_path, client):
    result = run_nfs(tmp_path, exports=[{**EXPORT, "clients": [client]}])
    assert_refused_untouched(
        result,
        f"host 'master': nfs_exports '/data/shared': client '{client}' is not a CIDR with no host bits set "
        "(10.0.0.0/24), an address, a host name or wildcard, or an @netgroup",
    )


def test_relative_export_path_is_refused(tmp_path):
    result = run_nfs(tmp_path, exports=[{**EXPORT, "path": "data/shared"}], mounts=[])
    assert_refused_untouched(
        result,
        "host 'master': nfs_exports 'data/shared': the path must be absolute, with no trailing slash, "
        "no empty, . or .. parts and no spaces",
    )


def test_duplicate_export_path_is_refused(tmp_path):
    result = run_nfs(tmp_path, exports=[EXPORT, {**EXPORT, "clients": ["10.0.0.0/24"]}])
    assert_refused_untouched(result, "host 'master': nfs_exports '/data/shared' is listed twice")


def test_no_root_squash_is_refused_unless_allowed(tmp_path):
    export = {**EXPORT, "options": ["rw", "sync", "no_subtree_check", "no_root_squash"]}
    assert_refused_untouched(
        run_nfs(tmp_path, exports=[export]),
        "host 'master': nfs_exports '/data/shared': no_root_squash makes root on every client root on the "
        "export; set nfs_allow_no_root_squash: true to allow it",
    )


def test_unquoted_octal_mode_is_refused(tmp_path):
    # YAML reads an unquoted 0775 as the number 509.
    assert_refused_untouched(
        run_nfs(tmp_path, exports=[{**EXPORT, "mode": 509}]),
        "host 'master': nfs_exports '/data/shared': mode '509' is not an octal mode such as '2775'",
    )


def test_mount_of_a_server_outside_the_inventory_is_refused(tmp_path):
    result = run_nfs(tmp_path, mounts=[MOUNT, {"src": "filer01:/vol/datasets", "path": "/datasets"}])
    assert_refused_untouched(
        result,
        "host 'master': nfs_mounts 'filer01:/vol/datasets': server 'filer01' is not an inventory host "
        "(for a server outside the inventory set server_external: true on the mount)",
    )


def test_mount_of_a_path_the_server_does_not_export_is_refused(tmp_path):
    result = run_nfs(tmp_path, mounts=[{"src": "master:/data/scratch", "path": "/data/scratch"}])
    assert_refused_untouched(
        result,
        "host 'master': nfs_mounts 'master:/data/scratch': server 'master' does not export /data/scratch "
        "(its nfs_exports: /data/shared)",
    )


def test_nfsv3_mount_of_an_nfsv4_only_server_is_refused(tmp_path):
    result = run_nfs(tmp_path, mounts=[{**MOUNT, "version": "3"}])
    assert_refused_untouched(
        result,
        "host 'master': nfs_mounts 'master:/data/shared': the mount uses NFSv3, but server 'master' has "
        "nfs_server_nfsv3: false",
    )


def test_relative_mount_point_is_refused(tmp_path):
    result = run_nfs(tmp_path, mounts=[{"src": "master:/data/shared", "path": "data/shared"}])
    assert_refused_untouched(
        result,
        "host 'master': nfs_mounts 'master:/data/shared' on 'data/shared': the mount point must be absolute",
    )


def test_mount_src_without_server_is_refused(tmp_path):
    result = run_nfs(tmp_path, mounts=[{"src": "/data/shared", "path": "/data/shared"}])
    assert_refused_untouched(
        result,
        "host 'master': nfs_mounts '/data/shared' on '/data/shared': src must be <server>:<absolute path>",
    )


def test_version_in_mount_options_is_refused(tmp_path):
    result = run_nfs(tmp_path, mounts=[{**MOUNT, "options": ["rw", "nfsvers=3"]}])
    assert_refused_untouched(
        result,
        "host 'master': nfs_mounts 'master:/data/shared' on '/data/shared': option 'nfsvers=3' sets the "
        "NFS version; set the mount's version instead",
    )


def test_export_without_clients_is_refused_by_the_argument_spec_on_every_host(tmp_path):
    # Only master has the bad value: Ansible's own argument check fails master alone,
    # and the role's preflight stops the other hosts before they are touched.
    result = run_nfs(tmp_path, exports=[{"path": "/data/shared"}])
    assert_refused_untouched(result, "missing required arguments: clients found in nfs_exports")
    messages = failure_messages(result)[0]
    assert ("nfs: bad variables, no host was changed: host 'master': missing required arguments: "
            "clients found in nfs_exports") in messages


def test_unknown_nfs_version_is_refused_by_the_argument_spec(tmp_path):
    result = run_nfs(tmp_path, mounts=[{**MOUNT, "version": "5"}])
    assert_refused_untouched(result, "value of version must be one of: 3, 4, 4.0, 4.1, 4.2, got: 5 found in nfs_mounts")


def test_own_export_mounted_elsewhere_on_the_server_is_refused(tmp_path):
    # master skips the mount of its own export (the data is local there), so the
    # share would be at /shared on the workers but not on master.
    result = run_nfs(tmp_path, mounts=[{"src": "master:/data/shared", "path": "/shared"}])
    assert_refused_untouched(
        result,
        "host 'master': nfs_mounts 'master:/data/shared': 'master' is the server, where the mount is skipped "
        "(the data is local), so the mount point must be the exported path /data/shared, not /shared",
    )
