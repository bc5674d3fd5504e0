# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nfs role's derived data: client mounts with their fstab options, and the verify checks."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.nfs._state import (
    client_mounts, dir_entries, fstab_pending, group_clashes, node_state, server_plan, unknown_owners, unmounted, unpublished)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

SETTINGS = {"nfs_mount_version": "4.2", "nfs_mount_options": ["rw", "hard", "noatime"], "nfs_mount_automount": True,
            "nfs_mount_timeout": 30, "nfs_mount_idle_timeout": 0}
SHARED = {"src": "master:/data/shared", "path": "/data/shared"}
AUTO = "x-systemd.automount,x-systemd.mount-timeout=30"


def mount(opts, version="4.2", src="master:/data/shared", path="/data/shared", owner="root", group="root", mode="0755"):
    return {"src": src, "path": path, "version": version, "opts": opts, "owner": owner, "group": group, "mode": mode}


@pytest.mark.parametrize("mounts, host, settings, expected", [
    # The server of a share does not mount it; every other host does.
    ([SHARED], "master", SETTINGS, []),
    ([SHARED], "worker1", SETTINGS, [mount("rw,hard,noatime,nfsvers=4.2,_netdev," + AUTO)]),
    # A share served from outside the cluster under the same name is mounted everywhere.
    ([dict(SHARED, server_external=True)], "master", SETTINGS, [mount("rw,hard,noatime,nfsvers=4.2,_netdev," + AUTO)]),
    # Per-mount version, options, owner and mode; the version as a string even when given as a number.
    ([dict(SHARED, version=3, options=["ro"], owner="alice", group="gpuusers", mode="2775")], "worker1", SETTINGS,
     [mount("ro,nfsvers=3,_netdev," + AUTO, version="3", owner="alice", group="gpuusers", mode="2775")]),
    # No automount: no systemd options.
    ([dict(SHARED, automount=False)], "worker1", SETTINGS, [mount("rw,hard,noatime,nfsvers=4.2,_netdev")]),
    ([SHARED], "worker1", dict(SETTINGS, nfs_mount_automount=False), [mount("rw,hard,noatime,nfsvers=4.2,_netdev")]),
    # An idle timeout above 0 unmounts an idle share.
    ([SHARED], "worker1", dict(SETTINGS, nfs_mount_idle_timeout=600),
     [mount("rw,hard,noatime,nfsvers=4.2,_netdev," + AUTO + ",x-systemd.idle-timeout=600")]),
    ([], "worker1", SETTINGS, []),
])
def test_client_mounts(mounts, host, settings, expected):
    assert client_mounts(mounts, host, settings) == expected


EXPORTFS = ("/data/shared  192.168.1.0/24(sync,wdelay,hide,no_subtree_check,sec=sys,rw,secure,root_squash,no_all_squash)\n"
            "/data/scratch  worker1(sync,wdelay,hide,no_subtree_check,sec=sys,rw,secure,root_squash,no_all_squash)\n")


@pytest.mark.parametrize("exports, exportfs, expected", [
    ([{"path": "/data/shared", "clients": ["192.168.1.0/24"]}], EXPORTFS, []),
    ([{"path": "/data/shared", "clients": ["192.168.1.0/24", "10.0.0.0/24"]},
      {"path": "/data/scratch", "clients": ["worker1", "worker2"]}], EXPORTFS,
     ["/data/shared to 10.0.0.0/24", "/data/scratch to worker2"]),
    # A path that only starts like an exported one is not exported.
    ([{"path": "/data", "clients": ["192.168.1.0/24"]}], EXPORTFS, ["/data to 192.168.1.0/24"]),
    ([{"path": "/data/shared", "clients": ["192.168.1.0/24"]}], "", ["/data/shared to 192.168.1.0/24"]),
])
def test_unpublished(exports, exportfs, expected):
    assert unpublished(exports, exportfs) == expected


PROC_MOUNTS = ("sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
               "systemd-1 /data/shared autofs rw,relatime,fd=45,pgrp=1,timeout=0,minproto=5,maxproto=5,direct 0 0\n"
               "master:/data/shared /data/shared nfs4 rw,relatime,vers=4.2,rsize=1048576,hard,proto=tcp 0 0\n"
               "master:/data/old /data/old nfs rw,relatime,vers=3,hard,proto=tcp 0 0\n")


@pytest.mark.parametrize("mounts, proc_mounts, expected", [
    ([mount("")], PROC_MOUNTS, []),
    ([mount("", version="3", src="master:/data/old", path="/data/old")], PROC_MOUNTS, []),
    # Only the automount point, not the share: not mounted.
    ([mount("", src="master:/data/shared", path="/data/shared")], PROC_MOUNTS.replace("nfs4", "ext4"),
     ["master:/data/shared on /data/shared (nfs4)"]),
    # Mounted with the wrong NFS version.
    ([mount("", version="3")], PROC_MOUNTS, ["master:/data/shared on /data/shared (nfs)"]),
    ([mount("", src="other:/data/shared")], PROC_MOUNTS, ["other:/data/shared on /data/shared (nfs4)"]),
    ([], "", []),
])
def test_unmounted(mounts, proc_mounts, expected):
    assert unmounted(mounts, proc_mounts) == expected


GETENT = {"root": ["x", "0", ""], "users": ["x", "100", ""], "gpuusers": ["x", "2000", "alice"]}


@pytest.mark.parametrize("groups, expected", [
    ([{"name": "gpuusers", "gid": 2000}], []),
    ([{"name": "gpuusers", "gid": "2000"}], []),
    ([{"name": "datasets", "gid": 2001}], []),
    ([{"name": "gpuusers", "gid": 2001}], ["group gpuusers exists with gid 2000, not 2001"]),
    ([{"name": "datasets", "gid": 100}], ["gid 100 of group datasets belongs to group users"]),
    ([{"name": "gpuusers", "gid": 100}],
     ["group gpuusers exists with gid 2000, not 100", "gid 100 of group gpuusers belongs to group users"]),
    ([], []),
])
def test_group_clashes(groups, expected):
    assert group_clashes(groups, GETENT) == expected


# The node read on a Debian 12 node container (no nfsd in its kernel; modprobe finds the nfs module).
NODE_READ = """[filesystems]
nodev\tsysfs
nodev\ttmpfs
\text4
nodev\tnfs
nodev\tnfs4
[modules]
nfs
[passwd]
root:x:0:0:root:/root:/bin/bash
alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash
[group]
root:x:0:
gpuusers:x:2000:alice,bob
[mounts]
/dev/sda1 / ext4 rw,relatime 0 0
master:/data/shared /data/shared nfs4 rw,relatime,vers=4.2 0 0
[fstab]
# /etc/fstab: static file system information.
UUID=1234 / ext4 errors=remount-ro 0 1

master:/data/shared /data/shared nfs rw,hard,nfsvers=4.2,_netdev 0 0
"""


def test_node_state_parses_the_read():
    assert node_state(NODE_READ) == {
        "filesystems": ["sysfs", "tmpfs", "ext4", "nfs", "nfs4"],
        "modules": ["nfs"],
        "passwd": {"root": ["x", "0", "0", "root", "/root", "/bin/bash"],
                   "alice": ["x", "1000", "1000", "Alice,,,", "/home/alice", "/bin/bash"]},
        "group": {"root": ["x", "0", ""], "gpuusers": ["x", "2000", "alice,bob"]},
        "mounts": ["/", "/data/shared"],
        "fstab": [["UUID=1234", "/", "ext4", "errors=remount-ro", "0", "1"],
                  ["master:/data/shared", "/data/shared", "nfs", "rw,hard,nfsvers=4.2,_netdev", "0", "0"]],
    }


def test_node_state_feeds_group_clashes():
    assert group_clashes([{"name": "gpuusers", "gid": 2001}], node_state(NODE_READ)["group"]) == [
        "group gpuusers exists with gid 2000, not 2001"]


@pytest.mark.parametrize("text, message", [
    ("nodev\tsysfs\n" + NODE_READ, "nfs_node_state: a line before any section in the node read: 'nodev\\tsysfs'"),
    (NODE_READ + "[modules]\n", "nfs_node_state: unexpected section '[modules]' in the node read"),
    (NODE_READ.replace("[group]", "[groups]"), "nfs_node_state: unexpected section '[groups]' in the node read"),
    (NODE_READ.replace("root:x:0:\n", "root:x:0\n"), "nfs_node_state: not a getent group line: 'root:x:0'"),
    (NODE_READ.replace("root:x:0:0:root:/root:/bin/bash", "root:x:0:0"), "nfs_node_state: not a getent passwd line: 'root:x:0:0'"),
    (NODE_READ.split("[passwd]", maxsplit=1)[0], "nfs_node_state: the node read lacks passwd, group, mounts, fstab"),
    (NODE_READ.replace("[fstab]", "proc /proc\n[fstab]"), "nfs_node_state: not a /proc/mounts line: 'proc /proc'"),
])
def test_node_state_is_strict(text, message):
    with pytest.raises(RuleError) as err:
        node_state(text)
    assert str(err.value) == message


def test_dir_entries_give_groups_by_gid_and_the_defaults():
    exports = [{"path": "/data/shared", "group": "gpuusers", "mode": "2775", "owner": "alice"},
               {"path": "/data/scratch"}]
    assert dir_entries(exports, {"gpuusers": 2000}) == [
        {"dest": "/data/shared", "state": "directory", "owner": "alice", "group": "2000", "mode": "2775"},
        {"dest": "/data/scratch", "state": "directory", "owner": "root", "group": "root", "mode": "0755"},
    ]


def test_fstab_pending_keeps_the_mounts_whose_entry_differs():
    fstab = node_state(NODE_READ)["fstab"]
    same = {"src": "master:/data/shared", "path": "/data/shared", "opts": "rw,hard,nfsvers=4.2,_netdev"}
    other_opts = dict(same, opts="ro,nfsvers=4.2,_netdev")
    new = {"src": "master:/data/scratch", "path": "/data/scratch", "opts": "rw,nfsvers=4.2,_netdev"}
    assert fstab_pending([same, other_opts, new], fstab) == [other_opts, new]


NODE = {"passwd": {"root": ["x", "0"], "bob": ["x", "1001"]}, "group": {"root": ["x", "0", ""], "staff": ["x", "50", ""]}}


@pytest.mark.parametrize("owned, group_ids, expected", [
    pytest.param([{"path": "/home"}], {}, [], id="root-by-default"),
    pytest.param([{"owner": "bob", "group": "staff"}, {"owner": 1002, "group": "3000"}], {}, [], id="known-or-numeric"),
    pytest.param([{"owner": "alice", "group": "research"}, {"owner": "alice", "group": "ghost"}], {"research": 3000},
                 ["user alice", "group ghost"], id="each-once-users-first"),
    pytest.param([{"group": "ghost"}, {"owner": "carol"}], {}, ["user carol", "group ghost"], id="users-before-groups"),
])
def test_unknown_owners(owned, group_ids, expected):
    assert unknown_owners(owned, NODE, group_ids) == expected


@pytest.mark.parametrize("values, conf, ports", [
    pytest.param({"nfsv3": False, "mountd_port": 20048, "statd_port": 32765, "lockd_port": 32768, "conf_settings": {}},
                 [{"section": "nfsd", "option": "vers3", "value": "n"}], ["2049/tcp"], id="nfsv4-only"),
    pytest.param({"nfsv3": True, "mountd_port": 20048, "statd_port": 32765, "lockd_port": 32768,
                  "conf_settings": {"nfsd": {"threads": 32}, "lockd": {"port": 4001}}},
                 [{"section": "lockd", "option": "port", "value": "4001"},
                  {"section": "lockd", "option": "udp-port", "value": "32768"},
                  {"section": "mountd", "option": "port", "value": "20048"},
                  {"section": "nfsd", "option": "threads", "value": "32"},
                  {"section": "nfsd", "option": "vers3", "value": "y"},
                  {"section": "statd", "option": "port", "value": "32765"}],
                 ["2049/tcp", "111/tcp", "111/udp", "20048/tcp", "20048/udp", "32765/tcp", "32765/udp", "32768/tcp",
                  "32768/udp"], id="nfsv3-settings-merged-over"),
])
def test_server_plan(values, conf, ports):
    assert server_plan(values) == {"conf": conf, "firewall_ports": ports}
