# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""base_os derived data: the SSH step's node read and ssh_known_hosts lines."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils._base_os_state import known_hosts_lines, ssh_node_state
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules import RuleError

ED = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKq"
EC = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAI"
RSA = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQC"
ENTRIES = [
    {"host": "master", "names": ["master"], "address": "192.168.1.10"},
    {"host": "master", "names": ["master-ib"], "address": "10.0.0.10"},
    {"host": "worker1", "names": ["worker1", "worker1-mgmt"], "address": "192.168.1.11"},
]


@pytest.mark.parametrize("host_keys, entries, expected", [
    # Every key under the inventory name, each cluster name once and each address, in that order;
    # the comment is dropped.
    ({"master": ED + " root@master\n" + EC + " root@master\n"}, ENTRIES,
     ["master,master-ib,192.168.1.10,10.0.0.10 " + ED, "master,master-ib,192.168.1.10,10.0.0.10 " + EC]),
    ({"worker1": RSA + "\n", "master": ED}, ENTRIES,
     ["worker1,worker1-mgmt,192.168.1.11 " + RSA, "master,master-ib,192.168.1.10,10.0.0.10 " + ED]),
    # A host the hosts table does not name: its inventory name alone.
    ({"login1": ED + " root@login1"}, ENTRIES, ["login1 " + ED]),
    # Lines that are not keys (cat's errors, blanks) are left out.
    ({"master": "cat: /etc/ssh/ssh_host_dsa_key.pub: No such file or directory\n\n" + ED}, ENTRIES,
     ["master,master-ib,192.168.1.10,10.0.0.10 " + ED]),
    ({"master": ""}, ENTRIES, []),
    ({}, ENTRIES, []),
])
def test_known_hosts_lines(host_keys, entries, expected):
    assert known_hosts_lines(host_keys, entries) == expected


# The SSH read on the sandbox's head node (Debian 12) once the admin key pair exists.
SSH_READ = """[passwd]
admin:x:1000:1000::/home/admin:/bin/bash
[admin_key]
%s admin@cluster (gpucluster.core)
[authorized_keys]
%s admin@cluster (gpucluster.core)
[host_keys]
%s root@master
%s root@master
[known_hosts]
root:root:644
master,192.168.1.10 %s
""" % (ED, ED, EC, ED, ED)


def test_ssh_node_state_reads_the_user_and_the_keys():
    assert ssh_node_state(SSH_READ) == {
        "admin_user_exists": True,
        "admin_key": ED + " admin@cluster (gpucluster.core)",
        "authorized_keys": [ED + " admin@cluster (gpucluster.core)"],
        "host_keys": "%s root@master\n%s root@master" % (EC, ED),
        "known_hosts_attributes": "root:root:644",
        "known_hosts_block": ["master,192.168.1.10 " + ED],
    }


def test_ssh_node_state_of_a_fresh_node():
    assert ssh_node_state("[passwd]\n[admin_key]\n[authorized_keys]\n[host_keys]\n[known_hosts]\nabsent\n") == {
        "admin_user_exists": False, "admin_key": "", "authorized_keys": [], "host_keys": "",
        "known_hosts_attributes": "absent", "known_hosts_block": []}


@pytest.mark.parametrize("text, message", [
    (SSH_READ.replace("[admin_key]\n", "[admin_key]\n%s x\n" % RSA),
     "base_os_ssh_node_state: more than one admin_key line in the node read"),
    (SSH_READ.replace("[host_keys]\n", "[host_keys]\ncat: /etc/ssh/ssh_host_rsa_key.pub: No such file\n"),
     "base_os_ssh_node_state: not an SSH public key line: 'cat: /etc/ssh/ssh_host_rsa_key.pub: No such file'"),
    (SSH_READ.replace("root:root:644\n", ""),
     "base_os_ssh_node_state: the known_hosts section must start with owner:group:mode or absent"),
    ("[passwd]\n[admin_key]\n[authorized_keys]\n[host_keys]\n", "base_os_ssh_node_state: the node read lacks known_hosts"),
    ("admin\n" + SSH_READ, "base_os_ssh_node_state: a line before any section in the node read: 'admin'"),
])
def test_ssh_node_state_is_strict(text, message):
    with pytest.raises(RuleError) as err:
        ssh_node_state(text)
    assert str(err.value) == message
