# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nfs_errors: the nfs role's input rules, as tables of good and bad data with exact messages."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError, host_values
from ansible_collections.gpucluster.core.plugins.plugin_utils.nfs._rules import client_ok, conf_options, nfs_errors

DEFAULTS = {
    "nfs_exports": [], "nfs_export_options": ["rw", "sync", "no_subtree_check", "root_squash"],
    "nfs_exports_file": "/etc/exports.d/gpucluster.exports", "nfs_allow_no_root_squash": False,
    "nfs_server_nfsv3": False, "nfs_server_mountd_port": 20048, "nfs_server_statd_port": 32765,
    "nfs_server_lockd_port": 32768, "nfs_conf_settings": {}, "nfs_mounts": [], "nfs_mount_version": "4.2",
    "nfs_mount_options": ["rw", "hard", "noatime"], "nfs_idmapd_domain": "localdomain", "nfs_groups": [],
    "nfs_mount_timeout": 30, "nfs_mount_idle_timeout": 0,
}
EXPORT = {"path": "/data/shared", "clients": ["192.168.1.0/24"], "group": "gpuusers", "mode": "2775"}
MOUNT = {"src": "master:/data/shared", "path": "/data/shared"}
X = "host 'master': nfs_exports '/data/shared'"
M = "host 'master': nfs_mounts 'master:/data/shared' on '/data/shared'"


def errors(master=None, worker=None, exports=None, mounts=None):
    """master exports EXPORT, both hosts mount MOUNT (the lab's shape)."""
    hosts = {
        "master": {"nfs_exports": [EXPORT] if exports is None else exports,
                   "nfs_mounts": [MOUNT] if mounts is None else mounts, **(master or {})},
        "worker1": {"nfs_mounts": [MOUNT], **(worker or {})},
    }
    return nfs_errors(host_values(hosts, hosts, DEFAULTS, DEFAULTS), ["master", "worker1"])


@pytest.mark.parametrize("client", [
    "192.168.1.0/24", "10.0.0.7", "10.0.0.7/32", "0.0.0.0/0", "fd00::/8", "fd00::1", "2001:db8::/32",
    "gpu01", "gpu*.cluster", "gpu[0-9]", "@compute", "*",
])
def test_good_client(client):
    assert client_ok(client)


@pytest.mark.parametrize("client", [
    "192.168.1.0/33", "192.168.300.0/24", "192.168.1.7/24", "192.168.1.0/", "10.0.0", "gpu nodes",
    "fd00::1/8", "fd00:::1", "1:2:3:4:5:6:7:8:9", "fd00::/129", "a..b", "-gpu",
])
def test_bad_client(client):
    assert not client_ok(client)


@pytest.mark.parametrize("kwargs", [
    {},
    {"master": {"nfs_allow_no_root_squash": True},
     "exports": [{**EXPORT, "options": ["rw", "no_root_squash"]}]},
    {"mounts": [MOUNT, {"src": "filer01:/vol/datasets", "path": "/datasets", "server_external": True}]},
    {"mounts": [{"src": "master:/data/shared/sub", "path": "/data/shared/sub"}]},
    {"master": {"nfs_server_nfsv3": True}, "mounts": [{**MOUNT, "version": "3"}]},
    {"master": {"nfs_groups": [{"name": "gpuusers", "gid": 2000}, {"name": "ml", "gid": 2001}],
                "nfs_conf_settings": {"nfsd": {"threads": 32}}}},
    {"exports": [{**EXPORT, "clients": ["fd00::/8", "@compute", "gpu*"], "mode": "0755"}]},
    {"worker": {"nfs_mount_timeout": 1, "nfs_mount_idle_timeout": 600}},
    # Timeouts of a host that mounts nothing are not used.
    {"mounts": [], "master": {"nfs_mount_timeout": 0}},
], ids=str)
def test_good_input(kwargs):
    assert errors(**kwargs) == []


@pytest.mark.parametrize("kwargs, expected", [
    ({"exports": [{**EXPORT, "clients": ["192.168.1.7/24"]}]},
     [X + ": client '192.168.1.7/24' is not a CIDR with no host bits set (10.0.0.0/24), an address,"
      " a host name or wildcard, or an @netgroup"]),
    ({"exports": [{**EXPORT, "path": "data/shared"}], "mounts": [], "worker": {"nfs_mounts": []}},
     ["host 'master': nfs_exports 'data/shared': the path must be absolute, with no trailing slash,"
      " no empty, . or .. parts and no spaces"]),
    ({"exports": [{**EXPORT, "path": "/data/../etc"}], "mounts": [], "worker": {"nfs_mounts": []}},
     ["host 'master': nfs_exports '/data/../etc': the path must be absolute, with no trailing slash,"
      " no empty, . or .. parts and no spaces"]),
    ({"exports": [EXPORT, {**EXPORT, "clients": ["10.0.0.0/24"]}]}, [X + " is listed twice"]),
    ({"exports": [{**EXPORT, "clients": []}]}, [X + " has no clients"]),
    ({"exports": [{**EXPORT, "options": ["rw,sync"]}]},
     [X + ": option 'rw,sync' is not one exports option (one per item, no spaces, commas or parentheses)"]),
    ({"exports": [{**EXPORT, "options": ["rw", "no_root_squash"]}]},
     [X + ": no_root_squash makes root on every client root on the export;"
      " set nfs_allow_no_root_squash: true to allow it"]),
    ({"exports": [{**EXPORT, "mode": 509}]},
     [X + ": mode '509' is not an octal mode such as '2775' (quote it: unquoted 0755 is the number 493)"]),
    ({"mounts": [{**MOUNT, "path": "data/shared"}]},
     ["host 'master': nfs_mounts 'master:/data/shared' on 'data/shared': the mount point must be absolute,"
      " with no trailing slash, no empty, . or .. parts and no spaces",
      "host 'master': nfs_mounts 'master:/data/shared': 'master' is the server, where the mount is skipped"
      " (the data is local), so the mount point must be the exported path /data/shared, not data/shared"]),
    ({"mounts": [MOUNT, MOUNT]}, [M + ": mount point '/data/shared' is listed twice"]),
    ({"mounts": [{"src": "/data/shared", "path": "/data/shared"}]},
     ["host 'master': nfs_mounts '/data/shared' on '/data/shared': src must be <server>:<absolute path>,"
      " for example master:/data/shared"]),
    ({"mounts": [{**MOUNT, "options": ["rw", "nfsvers=3"]}]},
     [M + ": option 'nfsvers=3' sets the NFS version; set the mount's version instead"]),
    ({"mounts": [{**MOUNT, "options": ["rw hard"]}]},
     [M + ": option 'rw hard' is not one mount option (one per item, no spaces, commas or parentheses)"]),
    ({"mounts": [{**MOUNT, "mode": 493}]},
     [M + ": mode '493' is not an octal mode such as '0755' (quote it: unquoted 0755 is the number 493)"]),
    ({"master": {"nfs_groups": [{"name": "a", "gid": 2000}, {"name": "b", "gid": 2000}]}},
     ["host 'master': nfs_groups names and gids must be unique: a:2000, b:2000"]),
    ({"master": {"nfs_exports_file": "/etc/exports"}},
     ["host 'master': nfs_exports_file '/etc/exports' must be /etc/exports.d/<name>.exports"
      " (exportfs reads no other file there)"]),
    ({"master": {"nfs_server_nfsv3": True, "nfs_server_statd_port": 2049}},
     ["host 'master': nfs_server_mountd_port, nfs_server_statd_port and nfs_server_lockd_port must be"
      " different ports from 1 to 65535, not 111 or 2049: 20048, 2049, 32768"]),
    ({"master": {"nfs_server_nfsv3": True, "nfs_server_lockd_port": 20048}},
     ["host 'master': nfs_server_mountd_port, nfs_server_statd_port and nfs_server_lockd_port must be"
      " different ports from 1 to 65535, not 111 or 2049: 20048, 32765, 20048"]),
    ({"master": {"nfs_conf_settings": {"nfsd": 32}}},
     ["host 'master': nfs_conf_settings 'nfsd' must map option names to values, for example {nfsd: {threads: 32}}"]),
    ({"worker": {"nfs_idmapd_domain": "a b"}},
     ["host 'worker1': nfs_idmapd_domain 'a b' must be a domain name, the same on every node"]),
    ({"mounts": [MOUNT, {"src": "filer01:/vol/datasets", "path": "/datasets"}]},
     ["host 'master': nfs_mounts 'filer01:/vol/datasets': server 'filer01' is not an inventory host"
      " (for a server outside the inventory set server_external: true on the mount)"]),
    ({"mounts": [{"src": "master:/data/scratch", "path": "/data/scratch"}]},
     ["host 'master': nfs_mounts 'master:/data/scratch': server 'master' does not export /data/scratch"
      " (its nfs_exports: /data/shared)"]),
    ({"mounts": [{**MOUNT, "version": "3"}]},
     ["host 'master': nfs_mounts 'master:/data/shared': the mount uses NFSv3, but server 'master' has"
      " nfs_server_nfsv3: false"]),
    ({"worker": {"nfs_mounts": [{"src": "worker1:/x", "path": "/x"}]}},
     ["host 'worker1': nfs_mounts 'worker1:/x': server 'worker1' does not export /x (its nfs_exports: none)"]),
    ({"worker": {"nfs_mount_timeout": 0, "nfs_mount_idle_timeout": -5}},
     ["host 'worker1': nfs_mount_timeout: seconds, must be within 1-86400 (got 0)",
      "host 'worker1': nfs_mount_idle_timeout: seconds, must be within 0-86400 (got -5)"]),
], ids=str)
def test_bad_input(kwargs, expected):
    assert errors(**kwargs) == expected


def test_every_error_at_once():
    found = errors(exports=[{**EXPORT, "clients": ["bad client"], "mode": 1}], worker={"nfs_idmapd_domain": ""})
    assert len(found) == 3


def test_not_a_list_is_a_rule_error():
    with pytest.raises(RuleError, match="^nfs_exports must be a list"):
        nfs_errors({"m": {"nfs_exports": "x"}}, ["m"])


@pytest.mark.parametrize("role, settings, expected", [
    ({}, {}, []),
    ({"nfsd": {"vers3": False}}, {}, [{"section": "nfsd", "option": "vers3", "value": "n"}]),
    ({"nfsd": {"vers3": True}, "mountd": {"port": 20048}}, {"nfsd": {"threads": 32}},
     [{"section": "mountd", "option": "port", "value": "20048"},
      {"section": "nfsd", "option": "threads", "value": "32"},
      {"section": "nfsd", "option": "vers3", "value": "y"}]),
    ({"nfsd": {"vers3": False}}, {"nfsd": {"vers3": True}}, [{"section": "nfsd", "option": "vers3", "value": "y"}]),
], ids=str)
def test_conf_options(role, settings, expected):
    assert conf_options(role, settings) == expected


def test_conf_options_refuse_a_section_that_is_not_a_mapping():
    with pytest.raises(RuleError, match="^nfs_conf_settings 'nfsd' must map option names to values$"):
        conf_options({}, {"nfsd": 32})
